import FoundationEssentials
import Glibc
import GrowCore
import GrowDBus

// The DND restore record and the calls that put a notification server back, in one place:
// the dnd plugin writes the record and uses the calls on its loop; `grow dnd restore` (run by
// systemd's ExecStopPost=, or by hand) and the daemon's start, before any plugin loads, put
// the server back from outside the plugin's life with the same calls. The dnd plugin's and the
// host's (`@_spi(GrowBuiltIn)`), not part of the plugin API.

/// What Grow changed on the notification server, kept on disk while it is changed, so that a
/// daemon that died without putting it back (SIGKILL, a crash, SIGTERM while the server did
/// not answer) can be undone later.
@_spi(GrowBuiltIn) public struct DoNotDisturbRestoreRecord: Codable, Equatable, Sendable {
  /// The backend that was switched (`DoNotDisturbBackend.rawValue`: `dunst`, …).
  public var backend: String
  /// The server's DND state before Grow switched it.
  public var previous: Bool
  /// What Grow set it to.
  public var set: Bool

  public init(backend: String, previous: Bool, set: Bool) {
    self.backend = backend
    self.previous = previous
    self.set = set
  }
}

/// `$XDG_STATE_HOME/grow/dnd-restore.json`, mode 0600, replaced atomically.
@_spi(GrowBuiltIn) public struct DoNotDisturbRestoreFile: Sendable {
  public let path: String

  public init(environment: [String: String]) {
    path = XDGDirectories(environment: environment).growState + "/dnd-restore.json"
  }

  /// What the file says; nil when there is none, or it cannot be read (see `read`).
  public func load() -> DoNotDisturbRestoreRecord? {
    if case .record(let record) = read() { return record }
    return nil
  }

  public enum Contents: Equatable, Sendable {
    case none
    case record(DoNotDisturbRestoreRecord)
    /// There is a file, but not a record Grow can use (why).
    case damaged(String)
  }

  /// The file, telling an absent one from a damaged one.
  public func read() -> Contents {
    guard let data = FileManager.default.contents(atPath: path) else {
      return access(path, F_OK) == 0 ? .damaged("cannot be read") : .none
    }
    do {
      return .record(try JSONDecoder().decode(DoNotDisturbRestoreRecord.self, from: data))
    } catch {
      return .damaged("not a DND restore record")
    }
  }

  /// Written to a temporary file in the same directory and renamed over the old one, so a
  /// crash mid-write never leaves half a record (`PrivateFiles.replace`).
  public func save(_ record: DoNotDisturbRestoreRecord) throws {
    try PrivateFiles.replace(path, with: try JSONEncoder().encode(record))
  }

  public func remove() { unlink(path) }
}

// MARK: The servers' switches as D-Bus calls

private let notificationsName = "org.freedesktop.Notifications"
private let notificationsPath = "/org/freedesktop/Notifications"
private let propertiesInterface = "org.freedesktop.DBus.Properties"
private let dunstInterface = "org.dunstproject.cmd0"
private let xfconfService = "org.xfce.Xfconf"
private let xfconfPath = "/org/xfce/Xfconf"
private let xfceChannel = "xfce4-notifyd"
private let xfceProperty = "/do-not-disturb"
private let swayncService = "org.erikreider.swaync.cc"
private let swayncPath = "/org/erikreider/swaync/cc"
private let makoInterface = "fr.emersion.Mako"
private let makoPath = "/fr/emersion/Mako"

extension DoNotDisturbBackend {
  /// mako's mode that Grow adds while DND is on (the person's config decides what it hides).
  public static let makoMode = "do-not-disturb"

  /// The call that reads the server's switch: dunst's `paused`, xfconf's `/do-not-disturb`,
  /// swaync's `GetDnd`, mako's `ListModes`. nil for KDE (an inhibition held by a connection)
  /// and GNOME (GSettings, not a bus call).
  public func readCall() -> BusMessage? {
    switch self {
    case .dunst:
      try? BusMessage.methodCall(
        destination: notificationsName, path: notificationsPath, interface: propertiesInterface,
        member: "Get", arguments: [.string(dunstInterface), .string("paused")])
    case .xfce:
      try? BusMessage.methodCall(
        destination: xfconfService, path: xfconfPath, interface: xfconfService,
        member: "GetProperty", arguments: [.string(xfceChannel), .string(xfceProperty)])
    case .swaync:
      try? BusMessage.methodCall(
        destination: swayncService, path: swayncPath, interface: swayncService, member: "GetDnd")
    case .mako:
      try? BusMessage.methodCall(
        destination: notificationsName, path: makoPath, interface: makoInterface,
        member: "ListModes")
    case .kde, .gnome: nil
    }
  }

  /// The switch's state in the answer to `readCall`; nil when it does not say. xfconf answers
  /// an error of its own for a property nobody has set yet, which means off.
  public func switchState(in answer: Result<BusMessage, BusError>) -> Bool? {
    switch answer {
    case .success(let reply):
      if self == .mako { return Self.makoModes(in: reply)?.contains(Self.makoMode) }
      return reply.arguments.first?.unwrapped.boolValue
    case .failure(let error):
      return self == .xfce && error.name.hasPrefix("org.xfce.Xfconf.Error") ? false : nil
    }
  }

  /// mako's modes in the answer to `ListModes`.
  public static func makoModes(in reply: BusMessage) -> [String]? {
    guard case .array(_, let items)? = reply.arguments.first else { return nil }
    return items.compactMap(\.stringValue)
  }

  /// The call that switches the server's DND to `enabled`. mako's modes are a list: Grow's
  /// mode is added to or taken out of `makoModes` (what `ListModes` said), the others stay.
  /// nil for KDE and GNOME (see `readCall`).
  public func writeCall(_ enabled: Bool, makoModes: [String] = []) -> BusMessage? {
    switch self {
    case .dunst:
      try? BusMessage.methodCall(
        destination: notificationsName, path: notificationsPath, interface: propertiesInterface,
        member: "Set",
        arguments: [.string(dunstInterface), .string("paused"), .variant(.bool(enabled))])
    case .xfce:
      try? BusMessage.methodCall(
        destination: xfconfService, path: xfconfPath, interface: xfconfService,
        member: "SetProperty",
        arguments: [.string(xfceChannel), .string(xfceProperty), .variant(.bool(enabled))])
    case .swaync:
      try? BusMessage.methodCall(
        destination: swayncService, path: swayncPath, interface: swayncService, member: "SetDnd",
        arguments: [.bool(enabled)])
    case .mako:
      try? BusMessage.methodCall(
        destination: notificationsName, path: makoPath, interface: makoInterface,
        member: "SetModes",
        arguments: [
          .array(
            element: "s",
            (makoModes.filter { $0 != Self.makoMode } + (enabled ? [Self.makoMode] : [])).map(
              BusValue.string))
        ])
    case .kde, .gnome: nil
    }
  }
}

// MARK: Putting a server back from outside the plugin

/// What putting a record back did.
@_spi(GrowBuiltIn) public enum DoNotDisturbPutBack: Equatable, Sendable {
  /// The server confirmed the switch back.
  case restored
  /// The server's switch is no longer what Grow set (changed by hand, or the server restarted
  /// and forgot): nothing of Grow's to undo.
  case alreadyBack
  /// KDE: the inhibition ended with the connection of the daemon that held it.
  case releasedWithConnection
  /// Not a switch this code can reach over D-Bus (GNOME's GSettings, or a backend a newer
  /// Grow wrote).
  case notOnTheBus
  /// The server did not answer (a stopped server times out), or refused: why.
  case failed(String)
}

extension DoNotDisturbRestoreRecord {
  /// Reads the server's switch and, if it still has what Grow set, switches it back: two calls
  /// on a connection of its own, each waiting at most `timeout` milliseconds; from any thread.
  /// Blocks; for a command or the daemon's start, never the event loop.
  public func putBack(busAddress: String, timeout: Int32) -> DoNotDisturbPutBack {
    guard let backend = DoNotDisturbBackend(rawValue: backend) else { return .notOnTheBus }
    if backend == .kde { return .releasedWithConnection }
    guard let read = backend.readCall() else { return .notOnTheBus }
    let answer: Result<BusMessage, BusError>
    do {
      answer = .success(try BusConnection.callOnce(read, address: busAddress, timeout: timeout))
    } catch {
      answer = .failure(error)
    }
    guard let current = backend.switchState(in: answer) else {
      if case .failure(let error) = answer {
        return .failed("\(backend.rawValue) did not answer reading its Do-Not-Disturb (\(error))")
      }
      return .failed("\(backend.rawValue) gave an answer Grow cannot read")
    }
    guard current == set else { return .alreadyBack }
    var modes: [String] = []
    if case .success(let reply) = answer, backend == .mako {
      modes = DoNotDisturbBackend.makoModes(in: reply) ?? []
    }
    guard let write = backend.writeCall(previous, makoModes: modes) else { return .notOnTheBus }
    do {
      _ = try BusConnection.callOnce(write, address: busAddress, timeout: timeout)
      return .restored
    } catch {
      return .failed("\(backend.rawValue) did not confirm switching Do-Not-Disturb back (\(error))")
    }
  }
}
