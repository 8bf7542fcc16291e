import GrowCore
import GrowDBus
import GrowPluginKit

/// Talks to a running daemon over its D-Bus API, one blocking call at a time.
@MainActor
struct Client {
  private let connection: BusConnection

  init() throws(CLIError) {
    do {
      connection = try BusConnection.session(attachToLoop: false)
    } catch {
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

  func status() throws(CLIError) -> [String: BusValue] {
    try call("GetStatus").first?.vardictEntries ?? [:]
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
    case .usage(let message): message + " (see 'grow help')"
    case .daemonNotRunning:
      "the grow daemon is not running; start it with 'grow daemon &', or run "
        + "'grow install --user' once so the first command starts it (and your session at login)"
    case .daemonExitedAtStart(let why): why
    case .noSessionBus(let message): message
    case .refused(let message): message
    case .bus(let error): "D-Bus error \(error.name): \(error.message)"
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
