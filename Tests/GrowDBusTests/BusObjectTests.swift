import Foundation
import FoundationXML
import GrowDBus
import GrowTestSupport
import Testing

/// GrowDBus against a real dbus-daemon: one connection serves an object, another calls it,
/// both on the main queue as in the daemon.
@MainActor
@Suite struct BusObjectTests {
  let bus: PrivateSessionBus
  let server: BusConnection
  let client: BusConnection
  let object: BusObject

  init() async throws {
    // Started off the main actor: starting dbus-daemon blocks, and the main queue is where
    // every @MainActor suite's descriptors and timers are served.
    bus = try await Task.detached { try PrivateSessionBus() }.value
    // Not setenv: other tests start processes meanwhile, and changing the environment while
    // another thread copies it crashes.
    server = try BusConnection.connect(address: bus.address)
    client = try BusConnection.connect(address: bus.address)
    object = try BusObject(path: "/test/Echo", on: server)
    var mode = "quiet"
    object.add(
      BusInterface(
        name: "test.Echo",
        methods: [
          .init("Echo", inputs: [.init("value", "v")], outputs: [.init("value", "v")]) {
            arguments, _ in arguments
          },
          .init("Fail") { _, _ throws(BusError) in
            throw BusError(name: "test.Error.Nope", message: "nope, said the server")
          },
        ],
        properties: [
          .init(
            "Mode", "s", get: { .string(mode) }, set: { value in mode = value.stringValue ?? "" })
        ],
        signals: [.init("Said", [.init("text", "s")])]))
  }

  /// Calls `member` on the test object and waits for the reply on the main queue.
  func call(_ member: String, interface: String = "test.Echo", _ arguments: [BusValue] = [])
    async throws -> Result<BusMessage, BusError>
  {
    let message = try BusMessage.methodCall(
      destination: server.uniqueName, path: "/test/Echo", interface: interface, member: member,
      arguments: arguments)
    return await withCheckedContinuation { continuation in
      client.call(message, timeout: 5000) { continuation.resume(returning: $0) }
    }
  }

  @Test(arguments: [
    BusValue.byte(200), .bool(true), .int32(-7), .uint32(7), .int64(-1 << 40), .uint64(1 << 63),
    .double(2.5), .string("grüße 🌱"), .objectPath("/a/b"), .signature("a{sv}"),
    .array(element: "s", []), .array(element: "i", [.int32(1), .int32(2)]),
    .vardict(["focus": .uint32(1500), "intention": .string("write")]),
    .structure([.string("x"), .array(element: "u", [.uint32(3)])]),
    .array(element: "a{sv}", [.vardict(["Name": .string("work")])]),
  ])
  func valuesSurviveTheRoundTrip(_ value: BusValue) async throws {
    let reply = try await call("Echo", [.variant(value)]).get()
    #expect(reply.arguments == [.variant(value)])
  }

  @Test func stringsWithNulBytesAreSentInsteadOfAbortingTheProcess() async throws {
    let reply = try await call("Echo", [.variant(.string("a\0b"))]).get()
    #expect(reply.arguments == [.variant(.string("a\u{FFFD}b"))])
  }

  @Test func aWrongSignatureIsRefusedBeforeTheHandlerRuns() async throws {
    let result = try await call("Echo", [.string("not a variant")])
    #expect(
      result.failure
        == BusError(
          name: BusError.invalidArgs, message: "Echo takes arguments of type 'v', got 's'"))
  }

  @Test func handlerErrorsKeepTheirNameAndMessage() async throws {
    let result = try await call("Fail")
    #expect(result.failure == BusError(name: "test.Error.Nope", message: "nope, said the server"))
  }

  @Test func unknownMethodsAndInterfacesAreNamed() async throws {
    #expect(try await call("Nothing").failure?.name == BusError.unknownMethod)
    #expect(
      try await call("Echo", interface: "test.Other").failure?.name == BusError.unknownInterface)
  }

  @Test func propertiesCanBeReadWrittenAndAnnounced() async throws {
    var seen: [BusMessage] = []
    try client.onSignal(
      match:
        "type='signal',sender='\(server.uniqueName)',interface='org.freedesktop.DBus.Properties'"
    ) { seen.append($0) }
    let props = "org.freedesktop.DBus.Properties"
    let get = try await call("Get", interface: props, [.string("test.Echo"), .string("Mode")])
    #expect(try get.get().arguments == [.variant(.string("quiet"))])
    _ = try await call(
      "Set", interface: props, [.string("test.Echo"), .string("Mode"), .variant(.string("loud"))]
    ).get()
    let wrongType = try await call(
      "Set", interface: props, [.string("test.Echo"), .string("Mode"), .variant(.uint32(1))])
    #expect(wrongType.failure?.name == BusError.invalidArgs)
    object.propertiesChanged(["Mode"], on: "test.Echo")
    try await waitUntil { !seen.isEmpty }
    #expect(
      seen.first?.arguments == [
        .string("test.Echo"), .vardict(["Mode": .string("loud")]), .array(element: "s", []),
      ])
  }

  @Test func introspectionDescribesTheInterfaces() async throws {
    let reply = try await call("Introspect", interface: "org.freedesktop.DBus.Introspectable").get()
    let xml = try #require(reply.arguments.first?.stringValue)
    #expect(xml.contains("<interface name=\"test.Echo\">"))
    #expect(xml.contains("<property name=\"Mode\" type=\"s\" access=\"readwrite\">"))
    #expect(xml.contains("<signal name=\"Said\">"))
    _ = try XMLDocument(xmlString: xml)
  }

  @Test func signalsReachSubscribers() async throws {
    var texts: [String] = []
    try client.onSignal(
      match: "type='signal',sender='\(server.uniqueName)',interface='test.Echo',member='Said'"
    ) { texts.append($0.arguments.first?.stringValue ?? "") }
    object.emit("Said", on: "test.Echo", [.string("hello")])
    try await waitUntil { !texts.isEmpty }
    #expect(texts == ["hello"])
  }

  /// A rule must name its sender, and a handler hears only the owner of
  /// that name, even from a signal another client addresses to this connection directly
  /// (the bus delivers those whatever the rules say).
  @Test func signalsAreHeardFromTheirSenderOnly() async throws {
    #expect(throws: BusError.self) {
      try client.onSignal(match: "type='signal',interface='test.Echo',member='Said'") { _ in }
    }
    #expect(try server.requestName("test.Echo.Server"))
    var texts: [String] = []
    try client.onSignal(
      match: "type='signal',sender='test.Echo.Server',interface='test.Echo',member='Said'"
    ) { texts.append($0.arguments.first?.stringValue ?? "") }
    let rogue = try BusConnection.connect(address: bus.address)
    var rogueDone = false
    try client.onSignal(
      match: "type='signal',sender='\(rogue.uniqueName)',interface='test.Echo',member='Done'"
    ) { _ in rogueDone = true }
    // The owner is known once the bus answered GetNameOwner.
    try await waitUntil { client.knownOwner(of: "test.Echo.Server") == server.uniqueName }
    for destination in [nil, client.uniqueName] {
      rogue.send(
        try BusMessage.signal(
          path: "/test/Echo", interface: "test.Echo", member: "Said",
          arguments: [.string("rogue")], destination: destination))
    }
    // One sender's messages arrive in order: once Done is heard, so were both of its Said.
    rogue.send(
      try BusMessage.signal(
        path: "/test/Echo", interface: "test.Echo", member: "Done",
        destination: client.uniqueName))
    try await waitUntil { rogueDone }
    #expect(texts.isEmpty)
    object.emit("Said", on: "test.Echo", [.string("owner")])
    try await waitUntil { !texts.isEmpty }
    #expect(texts == ["owner"])
  }

  /// How many match rules `name` has on the bus, as the bus counts them.
  func matchRules(of name: String) async throws -> Int64 {
    let message = try BusMessage.methodCall(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus.Debug.Stats", member: "GetConnectionStats",
      arguments: [.string(name)])
    let reply = await withCheckedContinuation { continuation in
      server.call(message, timeout: 5000) { continuation.resume(returning: $0) }
    }
    return try #require(reply.get().arguments.first?.vardictEntries?["MatchRules"]?.integerValue)
  }

  @Test func aCancelledSubscriptionHearsNothingMoreAndItsRuleLeavesTheBus() async throws {
    let rule = "type='signal',sender='\(server.uniqueName)',interface='test.Echo',member='Said'"
    var heardByCancelled: [String] = []
    var heardByKept: [String] = []
    let cancelled = try client.onSignal(match: rule) {
      heardByCancelled.append($0.arguments.first?.stringValue ?? "")
    }
    try client.onSignal(match: rule) { heardByKept.append($0.arguments.first?.stringValue ?? "") }
    let rules = try await matchRules(of: client.uniqueName)
    cancelled.cancel()
    cancelled.cancel()
    #expect(cancelled.isCancelled)
    object.emit("Said", on: "test.Echo", [.string("after")])
    try await waitUntil { !heardByKept.isEmpty }
    #expect(heardByKept == ["after"])
    #expect(heardByCancelled.isEmpty)
    // Removed without waiting for the bus: the count drops once the bus has read RemoveMatch.
    let deadline = Date().addingTimeInterval(20)
    var now = rules
    while now != rules - 1, Date() < deadline {
      try await Task.sleep(for: .milliseconds(10))
      now = try await matchRules(of: client.uniqueName)
    }
    #expect(now == rules - 1, "match rules: \(rules) before the cancel, \(now) after")
  }

  /// A method that answers later gets a `PendingReply`. An answer after the reply expired
  /// (here after 0.3 s rather than D-Bus's 25 s) goes nowhere, a second answer too, and one
  /// after the caller gave up crashes nothing; a reply dropped unanswered says so at once.
  @Test func aDeferredReplyIsSentOnceAndNotAfterItExpired() async throws {
    var held: [PendingReply] = []
    object.add(
      BusInterface(
        name: "test.Later",
        methods: [
          .init(
            "Hold", outputs: [.init("n", "u")], replyTimeout: 0.3,
            answer: { _, reply in held.append(reply) }),
          .init("Keep", outputs: [.init("n", "u")], answer: { _, reply in held.append(reply) }),
          .init("Drop", answer: { _, _ in }),
        ]))
    let expired = try await call("Hold", interface: "test.Later").failure
    #expect(expired?.name == BusError.noReply)
    #expect(expired?.message.hasPrefix("Hold was not answered within") == true)
    #expect(held.count == 1 && held[0].isPending == false)
    held[0].send([.uint32(1)])

    // The caller gives up after 0.2 s; the answer comes after that.
    let message = try BusMessage.methodCall(
      destination: server.uniqueName, path: "/test/Echo", interface: "test.Later", member: "Keep")
    let gaveUp = await withCheckedContinuation { continuation in
      client.call(message, timeout: 200) { continuation.resume(returning: $0) }
    }
    #expect(gaveUp.failure?.name == BusError.noReply)
    // On a busy machine the call may reach the server only after the caller gave up.
    try await waitUntil { held.count == 2 }
    #expect(held[1].isPending)
    held[1].send([.uint32(2)])
    held[1].fail(BusError(name: BusError.failed, message: "a second answer"))
    #expect(!held[1].isPending)

    let dropped = try await call("Drop", interface: "test.Later").failure
    #expect(dropped?.message == "the reply was dropped unanswered")
    let echoed = try await call("Echo", [.variant(.string("still here"))]).get()
    #expect(echoed.arguments.first?.unwrapped == .string("still here"))
  }

  @Test func losingTheBusIsReportedNotFatal() async throws {
    var lost = false
    client.onDisconnect = { lost = true }
    let bus = self.bus
    await Task.detached { bus.stop() }.value
    try await waitUntil { lost }
    #expect(!client.isConnected)
  }

  @Test func aSecondClaimOfANameIsRefused() throws {
    #expect(try server.requestName("test.Unique1"))
    #expect(try client.requestName("test.Unique1") == false)
    #expect(client.processID(ofOwner: "test.Unique1") == UInt32(getpid()))
  }
}

/// Lets the main queue run until `condition` holds (5 s at most).
@MainActor
func waitUntil(_ condition: () -> Bool) async throws {
  let deadline = Date().addingTimeInterval(30)
  while !condition() {
    guard Date() < deadline else { throw HarnessError("condition not met within 30 s") }
    try await Task.sleep(for: .milliseconds(10))
  }
}

extension Result {
  var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}

/// Asking for a name without taking it: `requestName(_:queue:reply:)` and `releaseName`.
@MainActor
@Suite struct NameQueueTests {
  @Test func aQueuedRequestGetsTheNameWhenItsOwnerLetsGo() async throws {
    let bus = try await Task.detached { try PrivateSessionBus() }.value
    defer { bus.stop() }
    let owner = try BusConnection.connect(address: bus.address)
    let waiter = try BusConnection.connect(address: bus.address)
    var acquired = false
    _ = try waiter.onSignal(
      match: "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
        + "member='NameAcquired',arg0='test.Queue1'"
    ) { _ in acquired = true }

    var outcomes: [BusConnection.NameRequestOutcome] = []
    owner.requestName("test.Queue1", queue: true) { outcomes.append(try! $0.get()) }
    try await waitUntil { outcomes.count == 1 }
    waiter.requestName("test.Queue1", queue: false) { outcomes.append(try! $0.get()) }
    try await waitUntil { outcomes.count == 2 }
    waiter.requestName("test.Queue1", queue: true) { outcomes.append(try! $0.get()) }
    try await waitUntil { outcomes.count == 3 }
    #expect(outcomes == [.owner, .taken, .queued])
    #expect(!acquired)
    #expect(owner.processID(ofOwner: "test.Queue1") == UInt32(getpid()))

    // The owner lets go: the name goes to the one in line, which hears NameAcquired.
    owner.releaseName("test.Queue1")
    try await waitUntil { acquired }
    let check = try BusMessage.methodCall(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string("test.Queue1")]
    )
    #expect(try owner.call(check).firstString == waiter.uniqueName)
  }
}
