@_spi(GrowBuiltIn) import GrowPluginKit

/// Grow's own Do-Not-Disturb as the dnd plugin announces it, and what it means for a
/// notification of Grow's: one sent while it silences the server (during focus, by default)
/// reaches the person at that moment, or is not sent at all. Left in a
/// silenced server's queue it would surface at the break, out of date.
struct DoNotDisturbState: Equatable {
  var enabled = false
  /// The dnd plugin switched the server itself (false: Grow holds its own back).
  var silencesServer = false
  /// The dnd plugin's backend: dunst, xfce4-notifyd, swaync, mako, kde, gnome.
  var backend = ""
  /// mako's config shows critical notifications in its do-not-disturb mode (MakoConfig).
  var makoShowsCritical = false

  enum Passage: Equatable {
    case asIs
    /// With urgency critical, which this server's Do-Not-Disturb lets through.
    case critical
    /// Not sent: the server would only queue it.
    case withheld
  }

  /// While it is on (during focus by default; breaks too with `dnd = always` or `grow dnd on`).
  /// At a focus's end the dnd plugin turns it off before the prompt for the break is sent.
  var passage: Passage {
    guard enabled else { return .asIs }
    // Nothing silenced the server: Grow's Do-Not-Disturb is Grow holding its own back.
    guard silencesServer else { return .withheld }
    // Which servers let critical ones through: `DoNotDisturbBackend.passesCritical`, and mako
    // where its config says so.
    let server = DoNotDisturbBackend(rawValue: backend)
    if server?.passesCritical == true || (server == .mako && makoShowsCritical) {
      return .critical
    }
    return .withheld
  }
}
