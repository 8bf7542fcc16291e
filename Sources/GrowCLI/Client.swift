import GrowCore
import GrowDBus
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// Talks to a running daemon over its D-Bus API: the commands one blocking call at a time,
/// `grow status --follow` with calls answered on the loop. The status is read through
/// `TimerStatus.fields`, the one description of its fields.
@MainActor
struct GrowClient {
  /// The session bus; attached to the loop for a client whose replies come later.
  let connection: BusConnection

  /// - Parameter loop: where replies and signals arrive (the follower's); without one every
  ///   call blocks until it is answered.
  init(on loop: (any EventLoop)? = nil) throws(CLIError) {
    do {
      connection = try BusConnection.session(on: loop)
    } catch {
      // No bus to look for at all is worded here, in the reader's language; a bus that is
      // named but does not answer keeps libdbus's words, which name the address.
      guard (try? BusConnection.sessionBusAddress()) != nil else {
        throw .noSessionBus(
          Message(
            "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and there is no "
              + "$XDG_RUNTIME_DIR/bus; run Grow inside a desktop session (or `dbus-run-session`)"
          ).render())
      }
      throw .noSessionBus(error.message)
    }
  }

  /// Calls a method of Grow's API (`org.grow.Grow1.Timer` unless told otherwise) and returns
  /// its reply's arguments; waits `timeout` milliseconds at most.
  @discardableResult
  func call(
    _ method: String, _ arguments: [BusValue] = [], interface: String = GrowBusAPI.timerInterface,
    timeout: Int32 = 5000
  ) throws(CLIError) -> [BusValue] {
    do {
      let message = try BusMessage.methodCall(
        destination: GrowBusAPI.busName, path: GrowBusAPI.objectPath,
        interface: interface, member: method, arguments: arguments)
      return try connection.call(message, timeout: timeout).arguments
    } catch {
      switch error.name {
      case BusError.serviceUnknown, BusError.nameHasNoOwner:
        throw .daemonNotRunning
      case "org.freedesktop.DBus.Error.Spawn.ChildExited":
        // The reason went to the bus daemon's stderr; the usual one is the config.
        throw .daemonExitedAtStart(whyActivationFailed(busMessage: error.message))
      case GrowBusAPI.ErrorName.unknownCard, GrowBusAPI.ErrorName.invalidState,
        GrowBusAPI.ErrorName.invalidArgument:
        throw .refused(error.message)
      case GrowBusAPI.ErrorName.invalidConfig:
        throw .failed(error.message)
      default:
        throw .bus(error)
      }
    }
  }

  /// Whether a daemon owns Grow's name now. Asking the bus, unlike calling Grow, never starts
  /// one through D-Bus activation.
  func daemonIsRunning() -> Bool {
    guard
      let message = try? BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "NameHasOwner",
        arguments: [.string(GrowBusAPI.busName)]),
      let reply = try? connection.call(message, timeout: 2000)
    else { return false }
    return reply.arguments.first?.boolValue ?? false
  }

  /// The unique name of the daemon that owns Grow's name now (`:1.42`); nil when none does.
  func daemonOwner() -> String? {
    guard
      let message = try? BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "GetNameOwner",
        arguments: [.string(GrowBusAPI.busName)]),
      let reply = try? connection.call(message, timeout: 2000)
    else { return nil }
    return reply.arguments.first?.stringValue
  }

  /// The timer's status (`GetStatus`, read through `TimerStatus.fields`).
  func status() throws(CLIError) -> TimerStatus {
    TimerStatus(busValues: try call("GetStatus").first?.vardictEntries ?? [:])
  }

  /// What a status bar shows: the status and what the plugins add (absent while they are
  /// off); a snapshot without status ("off") when no daemon runs.
  func snapshot() throws(CLIError) -> StatusSnapshot {
    do {
      return StatusSnapshot(
        status: try status(),
        doNotDisturb: property("Enabled", of: GrowBusAPI.doNotDisturbInterface)?.boolValue,
        distraction: Self.distraction(property("Distraction", of: GrowBusAPI.attentionInterface)))
    } catch .daemonNotRunning {
      return StatusSnapshot(status: nil)
    }
  }

  /// A property of one of Grow's interfaces; nil when the plugin that adds it is not running.
  func property(_ name: String, of interface: String) -> BusValue? {
    let arguments: [BusValue] = [.string(interface), .string(name)]
    let reply = try? call("Get", arguments, interface: "org.freedesktop.DBus.Properties")
    return reply?.first?.unwrapped
  }

  func cards() throws(CLIError) -> [[String: BusValue]] {
    guard case .array(_, let items)? = try call("ListCards").first else { return [] }
    return items.compactMap(\.vardictEntries)
  }

  /// The x11 plugin's `Distraction`: nil when there is none or no plugin reports one.
  static func distraction(_ value: BusValue?) -> String? {
    value?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
  }

  // MARK: Answered on the loop

  /// The same snapshot as `snapshot()`, its parts asked for at once and answered on the loop;
  /// nil when no daemon answers `GetStatus`.
  func snapshot(_ answer: @escaping @MainActor (StatusSnapshot?) -> Void) {
    var parts = (status: TimerStatus?.none, dnd: BusValue?.none, distraction: BusValue?.none)
    var waiting = 3
    let arrived = { @MainActor in
      waiting -= 1
      guard waiting == 0 else { return }
      answer(
        parts.status.map {
          StatusSnapshot(
            status: $0, doNotDisturb: parts.dnd?.boolValue,
            distraction: Self.distraction(parts.distraction))
        })
    }
    send(GrowBusAPI.timerInterface, "GetStatus") { result in
      parts.status = (try? result.get()).map {
        TimerStatus(busValues: $0.arguments.first?.vardictEntries ?? [:])
      }
      arrived()
    }
    property("Enabled", of: GrowBusAPI.doNotDisturbInterface) { value in
      parts.dnd = value
      arrived()
    }
    property("Distraction", of: GrowBusAPI.attentionInterface) { value in
      parts.distraction = value
      arrived()
    }
  }

  /// A property of one of Grow's interfaces, answered on the loop; nil when the plugin that
  /// adds it is not running.
  func property(
    _ name: String, of interface: String, _ answer: @escaping @MainActor (BusValue?) -> Void
  ) {
    send("org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)]) {
      answer((try? $0.get())?.arguments.first?.unwrapped)
    }
  }

  /// Calls a method of Grow's API; the reply comes on the loop.
  func send(
    _ interface: String, _ method: String, _ arguments: [BusValue] = [],
    reply: @escaping (Result<BusMessage, BusError>) -> Void
  ) {
    do {
      let message = try BusMessage.methodCall(
        destination: GrowBusAPI.busName, path: GrowBusAPI.objectPath, interface: interface,
        member: method, arguments: arguments)
      connection.call(message, reply: reply)
    } catch {
      reply(.failure(error))
    }
  }
}

/// Why a command failed, with the exit status scripts can rely on.
enum CLIError: Error, CustomStringConvertible {
  case usage(String)
  case daemonNotRunning
  /// D-Bus activation started the daemon and it exited before answering: why, as far as the
  /// CLI can tell.
  case daemonExitedAtStart(String)
  case noSessionBus(String)
  case refused(String)
  case bus(BusError)
  case failed(String)
  /// Failed, and the output already said why (`grow doctor`): exit 1 without a message.
  case silentFailure

  var description: String {
    switch self {
    case .usage(let message):
      Message("{problem} (see 'grow help')").render(["problem": message])
    case .daemonNotRunning:
      Message(
        "the grow daemon is not running; start it with 'grow daemon &', or run "
          + "'grow install --user' once so the first command starts it (and your session at "
          + "login)"
      ).render()
    case .daemonExitedAtStart(let why): why
    case .noSessionBus(let message): message
    case .refused(let message): message
    case .bus(let error):
      Message("D-Bus error {name}: {message}").render([
        "name": error.name, "message": error.message,
      ])
    case .failed(let message): message
    case .silentFailure: ""
    }
  }

  /// 1: the daemon refused or something failed; 2: the command line was wrong;
  /// 3: no daemon or no bus to talk to.
  var exitStatus: Int32 {
    switch self {
    case .usage: 2
    case .daemonNotRunning, .daemonExitedAtStart, .noSessionBus: 3
    case .refused, .bus, .failed, .silentFailure: 1
    }
  }
}
