/// Grow's own Do-Not-Disturb as the dnd plugin announces it, and what it means for a
/// notification of Grow's: a notification sent during Grow's own focus reaches the person at
/// that moment, or is not sent at all (issue 15, item 1). Left in a silenced server's queue it
/// would surface at the break, out of date.
struct DoNotDisturbState: Equatable {
  var enabled = false
  /// The dnd plugin switched the server itself (false: Grow holds its own back).
  var silencesServer = false
  /// The dnd plugin's backend: dunst, xfce4-notifyd, swaync, mako, kde, gnome.
  var backend = ""

  enum Passage: Equatable {
    case asIs
    /// With urgency critical, which this server's Do-Not-Disturb lets through.
    case critical
    /// Not sent: the server would only queue it.
    case withheld
  }

  /// Backends whose Do-Not-Disturb still shows critical notifications: xfce4-notifyd (run:
  /// Tests/GrowDaemonTests/NotifyPluginTests.swift), GNOME Shell 43 (`messageTray.js`: banners
  /// off, critical ones still shown), KDE Plasma and SwayNotificationCenter (their sources; not
  /// run here). dunst 1.9 queues critical ones too while paused; mako's do-not-disturb mode is
  /// whatever the person's config makes it.
  static let backendsPassingCritical: Set<String> = ["xfce4-notifyd", "gnome", "kde", "swaync"]

  func passage(duringFocus: Bool) -> Passage {
    guard enabled else { return .asIs }
    // Nothing silenced the server: Grow's Do-Not-Disturb is Grow holding its own back.
    guard silencesServer else { return .withheld }
    if Self.backendsPassingCritical.contains(backend) { return .critical }
    // Outside focus ("dnd = always", or the moment a focus ends and the server is being
    // woken) it is sent; what is still queued when its phase ends is closed then.
    return duringFocus ? .withheld : .asIs
  }
}
