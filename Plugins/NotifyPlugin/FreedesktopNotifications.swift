import GrowCore
import GrowDBus
import GrowLoop
import GrowPluginKit

/// The freedesktop Desktop Notifications protocol (spec 1.2) spoken directly over the daemon's
/// bus connection: `Notify`, `CloseNotification`, `GetCapabilities`, `GetServerInformation`,
/// and the `ActionInvoked` and `NotificationClosed` signals.
///
/// Every call is asynchronous with a timeout of `timeoutMilliseconds`: a server that stopped
/// (dunst blocks while X stalls) costs a log line, never the loop. The
/// connection that calls `Notify` is the one the signals come to: dunst sends them to the
/// caller only.
@MainActor
final class FreedesktopNotifications: NotificationServer {
  static let busName = "org.freedesktop.Notifications"
  static let path = "/org/freedesktop/Notifications"
  static let interface = "org.freedesktop.Notifications"
  /// The longest any call may wait for its answer.
  static let timeoutMilliseconds: Int32 = 3000
  /// How long a Notify's answer is still heard after the plugin went on without it: a
  /// stopped server shows the notification once it runs again, and only the answer says its
  /// id, which the plugin needs to close it when it no longer applies.
  static let lateAnswerMilliseconds: Int32 = 120_000

  private let bus: BusConnection
  /// Where the calls' own deadlines are kept.
  private let loop: any EventLoop
  private let appName: String
  /// The unique name of the server now owning the name; signals from anyone else are ignored.
  private var owner: String?

  var onAction: ((UInt32, String) -> Void)?
  var onClosed: ((UInt32, NotificationClosedReason) -> Void)?
  var onServerChanged: ((Bool) -> Void)?

  /// Subscribes to the server's signals and to its coming and going (the bus daemon answers
  /// those subscriptions itself, at once), through `context` so they end with the plugin.
  init(bus: BusConnection, appName: String, context: PluginContext) throws(BusError) {
    self.bus = bus
    self.loop = context.loop
    self.appName = appName
    // sender=: the bus delivers only the server's own signals (any client can emit signals
    // with this interface, and a flood of them cost half a core when they all came here).
    try context.onSignal(
      match: "type='signal',sender='\(Self.busName)',interface='\(Self.interface)',"
        + "path='\(Self.path)'"
    ) { [weak self] message in self?.signal(message) }
    try context.onSignal(
      match: "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
        + "member='NameOwnerChanged',arg0='\(Self.busName)'"
    ) { [weak self] message in
      guard let self, message.arguments.count == 3,
        let newOwner = message.arguments[2].stringValue
      else { return }
      owner = newOwner.isEmpty ? nil : newOwner
      onServerChanged?(!newOwner.isEmpty)
    }
    call(
      "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
      [.string(Self.busName)]
    ) { [weak self] result in
      if case .success(let arguments) = result, let name = arguments.first?.stringValue {
        self?.owner = name
      }
    }
  }

  func notify(
    _ request: NotificationRequest, replacing: UInt32,
    reply: @escaping (Result<UInt32, NotificationError>) -> Void
  ) {
    var hints: [String: BusValue] = [:]
    for (name, hint) in request.hints {
      switch hint {
      case .string(let text): hints[name] = .string(text)
      case .bool(let flag): hints[name] = .bool(flag)
      case .byte(let value): hints[name] = .byte(value)
      }
    }
    let arguments: [BusValue] = [
      .string(appName), .uint32(replacing), .string(request.icon), .string(request.summary),
      .string(request.body),
      .array(
        element: "s", request.actions.flatMap { [BusValue.string($0.key), .string($0.label)] }),
      .vardict(hints), .int32(request.expireTimeout),
    ]
    call(
      Self.busName, Self.path, Self.interface, "Notify", arguments,
      lateAnswersFor: Self.lateAnswerMilliseconds
    ) { result in
      reply(
        result.flatMap { arguments in
          guard case .uint32(let id)? = arguments.first else {
            return .failure(.refused("Notify answered without an id"))
          }
          return .success(id)
        })
    }
  }

  func close(_ id: UInt32) {
    // The answer (or an error for an id already gone) changes nothing.
    call(Self.busName, Self.path, Self.interface, "CloseNotification", [.uint32(id)]) { _ in }
  }

  func capabilities(reply: @escaping (Set<String>?) -> Void) {
    call(Self.busName, Self.path, Self.interface, "GetCapabilities", []) { result in
      guard case .success(let arguments) = result, case .array(_, let items)? = arguments.first
      else { return reply(nil) }
      reply(Set(items.compactMap(\.stringValue)))
    }
  }

  func serverInformation(reply: @escaping ((name: String, version: String)?) -> Void) {
    call(Self.busName, Self.path, Self.interface, "GetServerInformation", []) { result in
      guard case .success(let arguments) = result, arguments.count == 4,
        let name = arguments[0].stringValue, let version = arguments[2].stringValue
      else { return reply(nil) }
      reply((name, version))
    }
  }

  private func signal(_ message: BusMessage) {
    // A signal addressed to Grow reaches it whatever the rules say: only the server's count,
    // and with no server known there are none.
    guard let owner, message.sender == owner else { return }
    let arguments = message.arguments
    switch (message.member, arguments.first) {
    case ("ActionInvoked", .uint32(let id)?):
      guard arguments.count == 2, let key = arguments[1].stringValue else { return }
      onAction?(id, key)
    case ("NotificationClosed", .uint32(let id)?):
      guard arguments.count == 2, case .uint32(let code) = arguments[1] else { return }
      onClosed?(id, NotificationClosedReason(rawValue: code) ?? .undefined)
    default:
      break
    }
  }

  /// One asynchronous call with the timeout; the reply's arguments or why there are none.
  /// With `lateAnswersFor`, `noAnswer` still comes after the timeout, and a success that comes
  /// later (within that many milliseconds) is delivered as a second reply.
  private func call(
    _ destination: String, _ path: String, _ interface: String, _ member: String,
    _ arguments: [BusValue], lateAnswersFor lateMilliseconds: Int32? = nil,
    reply: @escaping (Result<[BusValue], NotificationError>) -> Void
  ) {
    let message: BusMessage
    do {
      message = try BusMessage.methodCall(
        destination: destination, path: path, interface: interface, member: member,
        arguments: arguments)
    } catch {
      return reply(.failure(.refused(error.description)))
    }
    var timedOut = false
    var deadline: (any Alarm)?
    if lateMilliseconds != nil {
      deadline = loop.after(seconds: Double(Self.timeoutMilliseconds) / 1000) {
        timedOut = true
        deadline = nil
        reply(.failure(.noAnswer(milliseconds: Self.timeoutMilliseconds)))
      }
    }
    bus.call(message, timeout: lateMilliseconds ?? Self.timeoutMilliseconds) { result in
      deadline?.cancel()
      deadline = nil
      if timedOut {
        if case .success(let answer) = result { reply(.success(answer.arguments)) }
        return
      }
      switch result {
      case .success(let answer): reply(.success(answer.arguments))
      case .failure(let error) where error.name == BusError.noReply:
        reply(.failure(.noAnswer(milliseconds: Self.timeoutMilliseconds)))
      case .failure(let error)
      where error.name == BusError.serviceUnknown || error.name == BusError.nameHasNoOwner
        || error.name == BusError.noServer:
        reply(.failure(.noServer(error.description)))
      case .failure(let error): reply(.failure(.refused(error.description)))
      }
    }
  }
}
