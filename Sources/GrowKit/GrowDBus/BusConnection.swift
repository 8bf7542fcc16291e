internal import CDBus
import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowLoop

/// A private connection to a message bus, driven by an event loop (the daemon's `MainLoop`
/// unless told otherwise; `EpollLoop` in the CLI).
///
/// Every libdbus watch becomes a descriptor watch on the loop and every timeout an alarm, so
/// the connection costs no wake-ups while nothing happens and replies and signals are handled
/// as soon as they arrive. All use of the connection happens on the main actor, on the loop's
/// thread; libdbus itself is never touched from another thread.
///
/// The connection never exits the process when the bus goes away (libdbus's default does):
/// `onDisconnect` is called instead.
@MainActor
public final class BusConnection {
  let raw: OpaquePointer
  private var pathHandlers: [String: PathHandler] = [:]
  private var signalHandlers:
    [Int: (text: String, rule: MatchRule, handler: (BusMessage) -> Void)] = [:]
  private var nextHandlerID = 0
  /// The unique name owning each well-known name that a match rule names as its sender
  /// (absent: no owner, or not known yet). Kept from GetNameOwner and NameOwnerChanged.
  private var owners: [String: String] = [:]
  private var trackedNames: Set<String> = []
  /// Method calls for exported objects waiting for their turn, by sender (see `serveCalls`).
  private var waitingCalls: [String: CallQueue] = [:]
  /// The senders with waiting calls, in the order they are served.
  private var callRotation: [String] = []
  private var turnScheduled = false

  /// How many calls of one sender are answered per loop turn before the other senders' calls,
  /// the loop's timers and its other descriptors get their turn: at most this many, and no
  /// more once `turnShare` seconds of the turn went to the sender (at least one call).
  public static let callsPerSenderPerTurn = 8
  public static let turnShare: Double = 0.004
  /// How many calls of one sender may wait; past that the sender is answered LimitsExceeded
  /// (a client pipelining this much is broken or hostile, and the waiting calls cost memory).
  public static let waitingCallsPerSender = 10_000
  private var isClosed = false
  private let bridge: LoopBridge

  /// The loop the connection is attached to; nil for one that only makes blocking calls.
  var loop: (any EventLoop)? { bridge.loop }

  /// Called once when the bus connection is lost.
  public var onDisconnect: (() -> Void)?

  /// Connects to the session bus of this login session.
  ///
  /// - Parameter attachToLoop: false for one-shot clients (the CLI) that only make blocking
  ///   calls; true for anything that receives calls or signals, on `MainLoop.shared`.
  public static func session(attachToLoop: Bool = true) throws(BusError) -> BusConnection {
    try session(on: attachToLoop ? MainLoop.shared : nil)
  }

  /// Connects to the session bus of this login session, handled on `loop`.
  ///
  /// - Parameter loop: where replies, signals and calls are handled; nil for one-shot clients
  ///   that only make blocking calls.
  public static func session(on loop: (any EventLoop)?) throws(BusError) -> BusConnection {
    try connect(address: sessionBusAddress(), on: loop)
  }

  /// Connects to the system bus (logind and friends).
  public static func system(attachToLoop: Bool = true) throws(BusError) -> BusConnection {
    try system(on: attachToLoop ? MainLoop.shared : nil)
  }

  /// Connects to the system bus, handled on `loop` (nil: blocking calls only).
  public static func system(on loop: (any EventLoop)?) throws(BusError) -> BusConnection {
    let address =
      nonEmpty(getenv("DBUS_SYSTEM_BUS_ADDRESS")) ?? "unix:path=/run/dbus/system_bus_socket"
    return try connect(address: address, on: loop)
  }

  /// The session bus address. Never autolaunches a bus: a client that finds no session bus
  /// must say so, not start a private bus no one else can see.
  nonisolated public static func sessionBusAddress() throws(BusError) -> String {
    if let address = nonEmpty(getenv("DBUS_SESSION_BUS_ADDRESS")) { return address }
    if let runtime = nonEmpty(getenv("XDG_RUNTIME_DIR")), access(runtime + "/bus", F_OK) == 0 {
      return "unix:path=\(runtime)/bus"
    }
    throw BusError(
      name: BusError.noServer,
      message: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and there is no "
        + "$XDG_RUNTIME_DIR/bus; run Grow inside a desktop session (or `dbus-run-session`)")
  }

  /// Connects to the bus at `address` (`unix:path=…`), for a private bus of one's own.
  public static func connect(address: String, attachToLoop: Bool = true) throws(BusError)
    -> BusConnection
  {
    try connect(address: address, on: attachToLoop ? MainLoop.shared : nil)
  }

  /// Connects to the bus at `address`, handled on `loop` (nil: blocking calls only).
  public static func connect(address: String, on loop: (any EventLoop)?) throws(BusError)
    -> BusConnection
  {
    var error = DBusError()
    dbus_error_init(&error)
    guard let raw = dbus_connection_open_private(address, &error) else {
      throw BusError(taking: &error, fallback: "cannot connect to the bus at \(address)")
    }
    dbus_connection_set_exit_on_disconnect(raw, 0)
    guard dbus_bus_register(raw, &error) != 0 else {
      dbus_connection_close(raw)
      dbus_connection_unref(raw)
      throw BusError(taking: &error, fallback: "the bus at \(address) refused to register us")
    }
    let connection = BusConnection(raw: raw)
    if let loop { connection.bridge.attach(to: loop) }
    return connection
  }

  /// Sends one call on a connection of its own and waits at most `timeout` milliseconds for
  /// the reply, from any thread. For the daemon's emergency exit only (Daemon's signal thread),
  /// when the event loop is stuck and the loop's own connection cannot be used.
  nonisolated public static func callOnce(
    _ message: BusMessage, address: String, timeout milliseconds: Int32
  ) throws(BusError) -> BusMessage {
    var error = DBusError()
    dbus_error_init(&error)
    guard let raw = dbus_connection_open_private(address, &error) else {
      throw BusError(taking: &error, fallback: "cannot connect to the bus at \(address)")
    }
    defer {
      dbus_connection_close(raw)
      dbus_connection_unref(raw)
    }
    dbus_connection_set_exit_on_disconnect(raw, 0)
    guard dbus_bus_register(raw, &error) != 0 else {
      throw BusError(taking: &error, fallback: "the bus at \(address) refused to register us")
    }
    guard
      let reply = dbus_connection_send_with_reply_and_block(raw, message.raw, milliseconds, &error)
    else { throw BusError(taking: &error, fallback: "no reply") }
    return BusMessage(taking: reply)
  }

  private init(raw: OpaquePointer) {
    self.raw = raw
    bridge = LoopBridge(raw: raw)
    bridge.connection = self
    // libdbus holds the bridge, not the connection, so its callbacks (which also run while
    // the connection is being torn down) never touch a half-deallocated object.
    dbus_connection_add_filter(
      raw,
      { _, message, data in
        guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        dbus_message_ref(message)
        let wrapped = BusMessage(taking: message)
        let bridge = Unmanaged<LoopBridge>.fromOpaque(data).takeUnretainedValue()
        let taken = MainActor.assumeIsolated { bridge.connection?.filter(wrapped) ?? false }
        return taken ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
      }, Unmanaged.passRetained(bridge).toOpaque(),
      { data in
        data.map { Unmanaged<LoopBridge>.fromOpaque($0).release() }
      })
  }

  /// Sends what is queued, then closes the connection. Called automatically when the object
  /// goes away.
  public func close() {
    guard !isClosed else { return }
    if dbus_connection_get_is_connected(raw) != 0 { dbus_connection_flush(raw) }
    isClosed = true
    bridge.cancelAll()
    dbus_connection_close(raw)
    dbus_connection_unref(raw)
  }

  isolated deinit { close() }

  public var isConnected: Bool { !isClosed && dbus_connection_get_is_connected(raw) != 0 }

  /// This connection's unique name on the bus (`:1.42`).
  public var uniqueName: String {
    dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
  }

  // MARK: Names

  /// Asks for a well-known name without queueing.
  /// - Returns: true if this connection now owns it, false if someone else does.
  public func requestName(_ name: String) throws(BusError) -> Bool {
    var error = DBusError()
    dbus_error_init(&error)
    let result = dbus_bus_request_name(raw, name, UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error)
    if result < 0 { throw BusError(taking: &error, fallback: "cannot request the name \(name)") }
    return result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER
      || result == DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER
  }

  /// What the bus said to a request for a well-known name (`requestName(_:queue:reply:)`).
  public enum NameRequestOutcome: Sendable, Equatable {
    /// This connection owns the name now (or already did).
    case owner
    /// Someone else owns it; this connection is next in line and gets `NameAcquired`
    /// (arg0: the name) from the bus when the owner lets go.
    case queued
    /// Someone else owns it, and this connection did not ask to wait.
    case taken
  }

  /// Asks for a well-known name without blocking, and without ever taking it from its owner
  /// (no `REPLACE_EXISTING`) or offering it to anyone who would take it from this connection
  /// (no `ALLOW_REPLACEMENT`). With `queue`, the request waits in the bus's line while
  /// another program owns the name: the bus hands it over when that one quits or releases it
  /// and says so with `NameAcquired`; subscribe to it with `onSignal(match:)`
  /// (`sender='org.freedesktop.DBus',member='NameAcquired',arg0='NAME'`).
  public func requestName(
    _ name: String, queue: Bool,
    reply: @escaping (Result<NameRequestOutcome, BusError>) -> Void
  ) {
    let flags = queue ? UInt32(0) : UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE)
    let request: BusMessage
    do {
      request = try BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "RequestName",
        arguments: [.string(name), .uint32(flags)])
    } catch {
      reply(.failure(error))
      return
    }
    call(request, timeout: 5000) { result in
      reply(
        result.map { message in
          switch message.arguments.first {
          case .uint32(UInt32(DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER))?,
            .uint32(UInt32(DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER))?:
            .owner
          case .uint32(UInt32(DBUS_REQUEST_NAME_REPLY_IN_QUEUE))?: .queued
          default: .taken
          }
        })
    }
  }

  /// Gives up a well-known name, or this connection's place in its queue, without waiting
  /// for the bus's answer; the next in line, if any, gets it.
  public func releaseName(_ name: String) {
    guard !isClosed,
      let release = try? BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "ReleaseName", arguments: [.string(name)])
    else { return }
    dbus_message_set_no_reply(release.raw, 1)
    send(release)
  }

  /// The process id of whoever owns `name`, if the bus will tell.
  public func processID(ofOwner name: String) -> UInt32? {
    guard
      let call = try? BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
        arguments: [.string(name)]),
      let reply = try? self.call(call, timeout: 2000),
      case .uint32(let pid)? = reply.arguments.first
    else { return nil }
    return pid
  }

  // MARK: Sending

  /// Queues a message for sending; it leaves as soon as the loop gets to it.
  public func send(_ message: BusMessage) {
    guard !isClosed else { return }
    dbus_connection_send(raw, message.raw, nil)
  }

  /// Sends a call and waits for its reply, blocking the caller. For one-shot clients only:
  /// inside the daemon use the asynchronous form.
  /// - Throws: the error the callee replied with, or NoReply after `timeout` milliseconds.
  public func call(_ message: BusMessage, timeout milliseconds: Int32 = 5000) throws(BusError)
    -> BusMessage
  {
    var error = DBusError()
    dbus_error_init(&error)
    guard
      let reply = dbus_connection_send_with_reply_and_block(raw, message.raw, milliseconds, &error)
    else { throw BusError(taking: &error, fallback: "no reply") }
    return BusMessage(taking: reply)
  }

  /// Sends a call and delivers the reply (or the error) on the loop later.
  public func call(
    _ message: BusMessage, timeout milliseconds: Int32 = 5000,
    reply: @escaping (Result<BusMessage, BusError>) -> Void
  ) {
    var pending: OpaquePointer?
    guard !isClosed, dbus_connection_send_with_reply(raw, message.raw, &pending, milliseconds) != 0,
      let pending
    else {
      reply(.failure(BusError(name: BusError.noServer, message: "not connected to the bus")))
      return
    }
    let box = Unmanaged.passRetained(ReplyBox(reply)).toOpaque()
    dbus_pending_call_set_notify(
      pending,
      { pending, data in
        guard let pending, let data else { return }
        let box = Unmanaged<ReplyBox>.fromOpaque(data).takeUnretainedValue()
        let message = dbus_pending_call_steal_reply(pending).map(BusMessage.init(taking:))
        MainActor.assumeIsolated { box.deliver(message) }
      }, box, { data in data.map { Unmanaged<ReplyBox>.fromOpaque($0).release() } })
    dbus_pending_call_unref(pending)
  }

  // MARK: Receiving

  /// Routes method calls addressed to `path` to `handler`, which must answer each call that
  /// expects a reply. Replaces an earlier handler for the same path.
  public func register(path: String, _ handler: @escaping (BusMessage) -> Void) throws(BusError) {
    if let existing = pathHandlers[path] {
      existing.handler = handler
      return
    }
    let box = PathHandler(handler)
    var vtable = DBusObjectPathVTable()
    vtable.message_function = { _, message, data in
      guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
      dbus_message_ref(message)
      let wrapped = BusMessage(taking: message)
      let box = Unmanaged<PathHandler>.fromOpaque(data).takeUnretainedValue()
      MainActor.assumeIsolated { box.handler(wrapped) }
      return DBUS_HANDLER_RESULT_HANDLED
    }
    var error = DBusError()
    dbus_error_init(&error)
    let data = Unmanaged.passUnretained(box).toOpaque()
    guard dbus_connection_try_register_object_path(raw, path, &vtable, data, &error) != 0 else {
      throw BusError(taking: &error, fallback: "cannot export \(path)")
    }
    pathHandlers[path] = box
  }

  /// Stops routing calls for `path` (a plugin's object, when the plugin stops): the bus
  /// answers them `UnknownObject` again, and a later `register` may take the path.
  public func unregister(path: String) {
    guard pathHandlers.removeValue(forKey: path) != nil else { return }
    dbus_connection_unregister_object_path(raw, path)
  }

  /// Subscribes to signals matching a D-Bus match rule
  /// (`type='signal',sender='org.example',interface='org.example'`).
  ///
  /// The rule must name its sender: without `sender=` the bus delivers the signals of that
  /// interface from any client, and a client flooding them would burn the loop. A well-known
  /// name is resolved by the bus at each signal (only its current primary owner's signals
  /// match); here the handler is also only called for signals from the name's current owner,
  /// kept from NameOwnerChanged, since a signal addressed to this connection reaches it
  /// whatever its rules say.
  ///
  /// The subscription lasts until it is cancelled or the connection closes, whether or not
  /// the returned object is kept: one that ends earlier (a plugin's, when it stops) must be
  /// cancelled, or its rule and handler stay for as long as the connection. Plugins subscribe
  /// through `PluginContext.onSignal`, which the host cancels for them.
  /// - Throws: InvalidArgs for a rule without `sender=`, or what the bus says of a bad rule.
  @discardableResult
  public func onSignal(match rule: String, _ handler: @escaping (BusMessage) -> Void)
    throws(BusError) -> SignalSubscription
  {
    let parsed = MatchRule(rule)
    guard let sender = parsed.sender else {
      throw BusError(
        name: BusError.invalidArgs,
        message: "the match rule \(rule) names no sender: add sender='NAME' with the bus name "
          + "of the service whose signals are wanted, or any client could send them")
    }
    if MatchRule.needsOwner(sender) { try track(sender) }
    try addMatch(rule)
    nextHandlerID += 1
    signalHandlers[nextHandlerID] = (rule, parsed, handler)
    return SignalSubscription(rule: rule, id: nextHandlerID, connection: self)
  }

  /// Drops a subscription's handler now and asks the bus to remove its rule without waiting
  /// for the answer (libdbus sends RemoveMatch and ignores the reply when given no error):
  /// the loop never waits for the bus daemon, and a signal already on its way finds no
  /// handler. Each AddMatch counts on the bus, so each subscription removes its own.
  fileprivate func cancelSignalHandler(_ id: Int) {
    guard let removed = signalHandlers.removeValue(forKey: id), !isClosed else { return }
    dbus_bus_remove_match(raw, removed.text, nil)
  }

  private func addMatch(_ rule: String) throws(BusError) {
    var error = DBusError()
    dbus_error_init(&error)
    dbus_bus_add_match(raw, rule, &error)
    if dbus_error_is_set(&error) != 0 {
      throw BusError(taking: &error, fallback: "bad match rule \(rule)")
    }
  }

  /// Follows who owns `name`: NameOwnerChanged from the bus itself, and GetNameOwner for the
  /// owner now. The bus sends both in the order the ownership changed, so the last one heard
  /// is the owner.
  private func track(_ name: String) throws(BusError) {
    guard !trackedNames.contains(name) else { return }
    try addMatch(
      "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
        + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'")
    trackedNames.insert(name)
    guard
      let query = try? BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string(name)])
    else { return }
    if bridge.isAttached {
      call(query, timeout: 5000) { [weak self] result in
        if case .success(let reply) = result { self?.owners[name] = reply.firstString }
      }
    } else if let reply = try? call(query, timeout: 5000) {
      owners[name] = reply.firstString
    }
  }

  /// The current owner of a well-known name a rule named, for tests and diagnostics.
  public func knownOwner(of name: String) -> String? { owners[name] }

  /// Signals go to the handlers whose rule they match; method calls for an exported object
  /// wait in their sender's queue for `serveCalls`. Returns true when the message was taken.
  fileprivate func filter(_ message: BusMessage) -> Bool {
    switch message.kind {
    case .signal: break
    case .methodCall: return queueCall(message)
    default: return false
    }
    if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
      // libdbus has closed the socket; make sure no watch outlives it, or its number, once
      // reused by another file, would still be routed here.
      bridge.cancelAll()
      let callback = onDisconnect
      onDisconnect = nil
      callback?()
      return false
    }
    if message.sender == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
      message.interface == "org.freedesktop.DBus", let name = message.firstString,
      trackedNames.contains(name)
    {
      let arguments = message.arguments
      if arguments.count == 3, let newOwner = arguments[2].stringValue {
        owners[name] = newOwner.isEmpty ? nil : newOwner
      }
    }
    // A handler may cancel subscriptions, its own or others': a cancelled one hears no more.
    for id in signalHandlers.keys.sorted() {
      guard let entry = signalHandlers[id], entry.rule.matches(message, owners: owners) else {
        continue
      }
      entry.handler(message)
    }
    return false
  }

  /// Bytes queued for sending and not yet written to the bus.
  public var sendQueueBytes: Int { Int(dbus_connection_get_outgoing_size(raw)) }

  /// Calls `action` once fewer than `bytes` wait to be sent: at once if so now, else after
  /// the bus took enough. A large reply waits so, and a small one queued after it is not
  /// held behind several large ones (replies leave in the order they were queued).
  public func whenSendQueueBelow(_ bytes: Int, _ action: @escaping () -> Void) {
    guard !isClosed, sendQueueBytes >= bytes else { return action() }
    bridge.sendQueueWaiters.append((bytes, action))
  }

  // MARK: Fair turns

  /// Takes a method call for an exported object into its sender's queue. All the calls of
  /// every client come over this one connection, in the order the bus forwarded them: answered
  /// in that order, a client pipelining thousands of calls would hold everyone else's behind
  /// them (GetStatus waited 187–462 ms behind a burst of Toggles). Queued by sender and served
  /// a few per sender per turn, another client's call waits for a few calls at most.
  private func queueCall(_ call: BusMessage) -> Bool {
    guard bridge.isAttached, let path = call.path, pathHandlers[path] != nil else { return false }
    let sender = call.sender ?? ""
    let queue = waitingCalls[sender] ?? CallQueue()
    guard queue.count < Self.waitingCallsPerSender else {
      if !call.noReplyExpected,
        let refusal = call.errorReply(
          BusError(
            name: "org.freedesktop.DBus.Error.LimitsExceeded",
            message: "\(Self.waitingCallsPerSender) calls of yours are already waiting; wait for "
              + "their replies before sending more"))
      {
        send(refusal)
      }
      return true
    }
    if queue.count == 0 {
      waitingCalls[sender] = queue
      callRotation.append(sender)
    }
    queue.append(call)
    scheduleTurn()
    return true
  }

  private func scheduleTurn() {
    guard !turnScheduled, let loop = bridge.loop else { return }
    turnScheduled = true
    // A turn of its own on the loop: whatever became ready meanwhile (the loop's timers,
    // other descriptors, more bytes on this socket) runs before the next turn.
    _ = loop.after(seconds: 0) { [weak self] in
      MainActor.assumeIsolated { self?.serveCalls() }
    }
  }

  /// One turn: up to `callsPerSenderPerTurn` calls of each waiting sender, in rotation.
  private func serveCalls() {
    turnScheduled = false
    guard !isClosed, let loop = bridge.loop else { return }
    let senders = callRotation
    callRotation.removeAll(keepingCapacity: true)
    for sender in senders {
      guard let queue = waitingCalls[sender] else { continue }
      var served = 0
      let start = loop.monotonicNow
      while served < Self.callsPerSenderPerTurn,
        served == 0 || loop.monotonicNow - start < Self.turnShare,
        let call = queue.popFirst()
      {
        served += 1
        if let path = call.path, let handler = pathHandlers[path] { handler.handler(call) }
        if isClosed { return }
      }
      if queue.count == 0 {
        waitingCalls[sender] = nil
      } else {
        callRotation.append(sender)
      }
    }
    // Calls queued by the handlers themselves (none today) joined the rotation after these.
    if !callRotation.isEmpty { scheduleTurn() }
  }

  // MARK: Event-loop integration

  fileprivate func drain() {
    guard !isClosed else { return }
    while dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS {}
  }
}

/// One `BusConnection.onSignal` subscription: `cancel()` ends it, removing its handler and its
/// match rule. Dropping the object does not end it.
@MainActor
public final class SignalSubscription {
  /// The match rule, as given.
  public let rule: String
  private let id: Int
  private weak var connection: BusConnection?
  public private(set) var isCancelled = false

  fileprivate init(rule: String, id: Int, connection: BusConnection) {
    self.rule = rule
    self.id = id
    self.connection = connection
  }

  /// Stops calling the handler at once and removes the rule from the bus (without waiting
  /// for the bus). Safe to call more than once.
  public func cancel() {
    guard !isCancelled else { return }
    isCancelled = true
    connection?.cancelSignalHandler(id)
  }
}

/// A first-in first-out queue of calls that pops in constant time.
@MainActor
private final class CallQueue {
  private var items: [BusMessage] = []
  private var head = 0
  var count: Int { items.count - head }
  func append(_ call: BusMessage) { items.append(call) }
  func popFirst() -> BusMessage? {
    guard head < items.count else { return nil }
    defer {
      head += 1
      if head > 1024, head * 2 > items.count {
        items.removeFirst(head)
        head = 0
      }
    }
    return items[head]
  }
}

/// Turns libdbus watches into the loop's descriptor watches and its timeouts into the loop's
/// alarms.
///
/// libdbus keeps a retained reference to the bridge and releases it when the connection is
/// finalised; the bridge only holds the connection weakly.
@MainActor
private final class LoopBridge {
  let raw: OpaquePointer
  weak var connection: BusConnection?
  private var watches: [OpaquePointer: any DescriptorWatch] = [:]
  private var timeouts: [OpaquePointer: TimeoutAlarm] = [:]
  private var cancelled = false
  /// The loop the connection is attached to; nil for a connection that only blocks.
  private(set) var loop: (any EventLoop)?
  var isAttached: Bool { loop != nil }
  private var drainScheduled = false

  /// Reads (of 2 KiB, libdbus's unit) from the bus per readiness of its socket, at most 512 KiB:
  /// reading only 2 KiB per turn would leave a call of another client behind everything the
  /// bus queued before it, however fair the answering (`serveCalls`). Reading and parsing a
  /// message costs a tiny fraction of answering it.
  static let readsPerTurn = 256
  /// Actions waiting for the outgoing queue to shrink (`whenSendQueueBelow`).
  var sendQueueWaiters: [(bytes: Int, action: () -> Void)] = []

  init(raw: OpaquePointer) { self.raw = raw }

  private static func from(_ data: UnsafeMutableRawPointer?) -> LoopBridge? {
    data.map { Unmanaged<LoopBridge>.fromOpaque($0).takeUnretainedValue() }
  }

  private func retained() -> UnsafeMutableRawPointer {
    Unmanaged.passRetained(self).toOpaque()
  }

  private static let release: DBusFreeFunction = { data in
    data.map { Unmanaged<LoopBridge>.fromOpaque($0).release() }
  }

  func attach(to loop: any EventLoop) {
    self.loop = loop
    dbus_connection_set_watch_functions(
      raw,
      { watch, data in
        guard let watch, let bridge = LoopBridge.from(data) else { return 0 }
        MainActor.assumeIsolated { bridge.syncWatch(watch) }
        return 1
      },
      { watch, data in
        guard let watch, let bridge = LoopBridge.from(data) else { return }
        MainActor.assumeIsolated { bridge.watches.removeValue(forKey: watch)?.cancel() }
      },
      { watch, data in
        guard let watch, let bridge = LoopBridge.from(data) else { return }
        MainActor.assumeIsolated { bridge.syncWatch(watch) }
      }, retained(), Self.release)
    dbus_connection_set_timeout_functions(
      raw,
      { timeout, data in
        guard let timeout, let bridge = LoopBridge.from(data) else { return 0 }
        MainActor.assumeIsolated { bridge.syncTimeout(timeout) }
        return 1
      },
      { timeout, data in
        guard let timeout, let bridge = LoopBridge.from(data) else { return }
        MainActor.assumeIsolated {
          bridge.timeouts.removeValue(forKey: timeout)?.alarm?.cancel()
        }
      },
      { timeout, data in
        guard let timeout, let bridge = LoopBridge.from(data) else { return }
        MainActor.assumeIsolated { bridge.syncTimeout(timeout) }
      }, retained(), Self.release)
    dbus_connection_set_dispatch_status_function(
      raw,
      { _, status, data in
        guard status == DBUS_DISPATCH_DATA_REMAINS, let bridge = LoopBridge.from(data) else {
          return
        }
        MainActor.assumeIsolated { bridge.scheduleDrain() }
      }, retained(), Self.release)
    connection?.drain()
  }

  /// Never dispatch from inside libdbus; come back on the loop's next turn. One turn drains
  /// everything, so one is enough however often libdbus says data remains.
  private func scheduleDrain() {
    guard !drainScheduled, let loop else { return }
    drainScheduled = true
    _ = loop.after(seconds: 0) { [weak self] in
      MainActor.assumeIsolated {
        guard let self else { return }
        self.drainScheduled = false
        self.connection?.drain()
      }
    }
  }

  func cancelAll() {
    cancelled = true
    for watch in watches.values { watch.cancel() }
    watches.removeAll()
    for timeout in timeouts.values { timeout.alarm?.cancel() }
    timeouts.removeAll()
  }

  /// Creates or updates the descriptor watch standing for a libdbus watch. libdbus toggles
  /// its write watch around every message it cannot send at once; that only changes the
  /// interest of an existing watch.
  private func syncWatch(_ watch: OpaquePointer) {
    var interest = FileWatcher.Readiness()
    if !cancelled, dbus_watch_get_enabled(watch) != 0 {
      let flags = dbus_watch_get_flags(watch)
      if flags & DBUS_WATCH_READABLE.rawValue != 0 { interest.insert(.readable) }
      if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { interest.insert(.writable) }
    }
    if let existing = watches[watch] {
      existing.interest = interest
      return
    }
    guard let loop else { return }
    let descriptor = dbus_watch_get_unix_fd(watch)
    watches[watch] = loop.watch(descriptor, for: interest) { [weak self] ready in
      self?.handle(watch, ready)
    }
  }

  private func handle(_ watch: OpaquePointer, _ ready: FileWatcher.Readiness) {
    guard !cancelled, watches[watch] != nil else { return }
    var flags: UInt32 = 0
    if ready.contains(.readable) { flags |= DBUS_WATCH_READABLE.rawValue }
    if ready.contains(.writable) { flags |= DBUS_WATCH_WRITABLE.rawValue }
    dbus_watch_handle(watch, flags)
    if ready.contains(.writable), !sendQueueWaiters.isEmpty { runSendQueueWaiters() }
    if ready.contains(.readable) {
      let descriptor = dbus_watch_get_unix_fd(watch)
      for _ in 1..<Self.readsPerTurn {
        guard !cancelled, watches[watch] != nil, dbus_watch_get_enabled(watch) != 0,
          Self.hasInput(descriptor)
        else { break }
        dbus_watch_handle(watch, DBUS_WATCH_READABLE.rawValue)
      }
    }
    connection?.drain()
  }

  func runSendQueueWaiters() {
    let waiting = sendQueueWaiters
    sendQueueWaiters.removeAll()
    for (bytes, action) in waiting {
      if Int(dbus_connection_get_outgoing_size(raw)) < bytes {
        action()
      } else {
        sendQueueWaiters.append((bytes, action))
      }
    }
  }

  private static func hasInput(_ descriptor: Int32) -> Bool {
    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
  }

  /// Arms an alarm for an enabled libdbus timeout. libdbus's timeouts repeat every interval
  /// until removed or disabled, and an alarm fires once: one that fired and is still the
  /// timeout's own after `dbus_timeout_handle` is armed again.
  private func syncTimeout(_ timeout: OpaquePointer) {
    timeouts.removeValue(forKey: timeout)?.alarm?.cancel()
    guard !cancelled, let loop, dbus_timeout_get_enabled(timeout) != 0 else { return }
    let seconds = Double(dbus_timeout_get_interval(timeout)) / 1000
    let entry = TimeoutAlarm()
    entry.alarm = loop.after(seconds: seconds) { [weak self, weak entry] in
      MainActor.assumeIsolated {
        guard let self, let entry, !self.cancelled, self.timeouts[timeout] === entry else {
          return
        }
        dbus_timeout_handle(timeout)
        if self.timeouts[timeout] === entry { self.syncTimeout(timeout) }
        self.connection?.drain()
      }
    }
    timeouts[timeout] = entry
  }
}

/// The alarm standing for one libdbus timeout until it fires or the timeout changes.
@MainActor
private final class TimeoutAlarm {
  var alarm: (any Alarm)?
}

@MainActor
private final class PathHandler {
  var handler: (BusMessage) -> Void
  init(_ handler: @escaping (BusMessage) -> Void) { self.handler = handler }
}

@MainActor
private final class ReplyBox {
  let reply: (Result<BusMessage, BusError>) -> Void
  init(_ reply: @escaping (Result<BusMessage, BusError>) -> Void) { self.reply = reply }
  func deliver(_ message: BusMessage?) {
    guard let message else {
      return reply(.failure(BusError(name: BusError.noReply, message: "no reply")))
    }
    if let error = message.error { return reply(.failure(error)) }
    reply(.success(message))
  }
}

extension BusError {
  /// Moves a libdbus error into a BusError and frees it.
  init(taking error: inout DBusError, fallback: String) {
    if dbus_error_is_set(&error) != 0 {
      let name = error.name.map { String(cString: $0) } ?? BusError.failed
      let message = error.message.map { String(cString: $0) } ?? fallback
      dbus_error_free(&error)
      self.init(name: name, message: message)
    } else {
      self.init(name: BusError.failed, message: fallback)
    }
  }
}

private func nonEmpty(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
  guard let pointer, pointer.pointee != 0 else { return nil }
  return String(cString: pointer)
}

/// The part of a D-Bus match rule that can be checked locally. The bus already filters by the
/// rule; this keeps one subscription from seeing the signals another subscription asked for.
struct MatchRule {
  private var fields: [String: String] = [:]

  init(_ rule: String) {
    for part in rule.split(separator: ",") {
      let pair = part.split(separator: "=", maxSplits: 1)
      guard pair.count == 2 else { continue }
      let key = pair[0].trimmingWhitespace()
      fields[key] = pair[1].trimmingWhitespace().trimming { $0 == "'" }
    }
  }

  var sender: String? { fields["sender"] }

  /// Whether a rule naming `sender` needs that name's owner to check a signal: a unique name
  /// compares as it is, and the bus's own signals carry its name as their sender.
  static func needsOwner(_ sender: String) -> Bool {
    !sender.hasPrefix(":") && sender != "org.freedesktop.DBus"
  }

  /// - Parameter owners: the unique name owning each well-known name, as far as known.
  func matches(_ message: BusMessage, owners: [String: String]) -> Bool {
    if let interface = fields["interface"], interface != message.interface { return false }
    if let member = fields["member"], member != message.member { return false }
    if let path = fields["path"], path != message.path { return false }
    // A signal arrives with its sender's unique name; a well-known name in the rule stands
    // for its owner now. Signals of a name whose owner is not known are nobody's.
    if let sender = fields["sender"] {
      let expected = Self.needsOwner(sender) ? owners[sender] : sender
      guard let expected, expected == message.sender else { return false }
    }
    if let arg0 = fields["arg0"], arg0 != message.firstString { return false }
    return true
  }
}
