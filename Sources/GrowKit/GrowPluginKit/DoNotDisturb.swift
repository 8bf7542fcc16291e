import GrowCore

// Grow's Do-Not-Disturb as one plugin (dnd) tells the others (notify) and the CLI (`grow
// doctor`): the event and the backend table live here, once, so that no two copies drift.
// The table is the built-in plugins' (`@_spi(GrowBuiltIn)`), not part of the plugin API; the
// event is.

/// A notification server's own Do-Not-Disturb switch that the dnd plugin drives; the raw
/// value is what `org.grow.Grow1.DoNotDisturb.Backend` and `dnd-changed` show.
@_spi(GrowBuiltIn) public enum DoNotDisturbBackend: String, CaseIterable, Sendable {
  case dunst
  case xfce = "xfce4-notifyd"
  case swaync
  case mako
  case kde
  case gnome

  /// The backend for a server, from the name its `GetServerInformation` gives; nil for a
  /// server without a switch Grow knows.
  public init?(serverName: String) {
    guard let backend = Self.allCases.first(where: { $0.serverName == serverName }) else {
      return nil
    }
    self = backend
  }

  /// The first field of the server's `GetServerInformation` reply.
  public var serverName: String {
    switch self {
    case .dunst: "dunst"
    case .xfce: "Xfce Notify Daemon"
    case .swaync: "SwayNotificationCenter"
    case .mako: "mako"
    case .kde: "Plasma"
    case .gnome: "gnome-shell"
    }
  }

  /// Whether the server's Do-Not-Disturb still shows critical notifications, so the notify
  /// plugin can send its own as critical during focus instead of holding them back.
  /// xfce4-notifyd and SwayNotificationCenter 0.7.3: run (Tests/GrowDaemonTests/
  /// NotifyPluginDesktopTests.swift, WaylandDoNotDisturbTests.swift); GNOME Shell 43
  /// (`messageTray.js`: banners off, critical ones still shown) and KDE Plasma: their sources,
  /// not run here. dunst 1.9 queues critical ones too while paused; mako's do-not-disturb mode
  /// is whatever the person's config makes it, and the mode `grow doctor` suggests
  /// (`invisible=1`) hides critical ones too and shows them when it ends.
  public var passesCritical: Bool {
    switch self {
    case .xfce, .gnome, .kde, .swaync: true
    case .dunst, .mako: false
    }
  }
}

/// Published by the dnd plugin whenever Grow's Do-Not-Disturb changes (not when only the
/// server's own state does), as `dnd-changed` for external plugins.
public struct DoNotDisturbChanged: GrowEvent, Equatable {
  public static let eventName = "dnd-changed"
  public let enabled: Bool
  /// `DoNotDisturbBackend.rawValue`; empty when no server switch is driven.
  public let backend: String
  /// True when the notification server itself is silenced, false when only Grow is.
  public let silencesServer: Bool

  public init(enabled: Bool, backend: String, silencesServer: Bool) {
    self.enabled = enabled
    self.backend = backend
    self.silencesServer = silencesServer
  }
}

extension DoNotDisturbChanged: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    [
      "enabled": .bool(enabled), "backend": .string(backend),
      "silences_server": .bool(silencesServer),
    ]
  }
}
