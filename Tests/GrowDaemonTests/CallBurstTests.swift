import Foundation
import GrowConfig
import GrowTestSupport
import Testing

/// Call bursts from one local client: a connection pipelining thousands of
/// calls, or ListCards of 42,000 cards, must not hold another client's call behind it. All
/// of them come to the daemon over its one bus connection, in the order the bus forwarded
/// them; the assertions are about that order and about what the daemon sends, never about
/// seconds (those are in `make bench`, section `calls`).
@Suite(.serialized)
struct CallBurstTests {
  static let burst = 3000

  /// A call the bus answers itself: once its reply is back, the bus has forwarded every call
  /// sent before it on the same connection (it handles a connection's messages in order).
  static let busBarrier = RawBusClient.MethodCall(
    path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId",
    destination: "org.freedesktop.DBus")

  /// GetStatus's `Duration` now, from `client`.
  static func duration(_ client: RawBusClient) throws -> UInt32 {
    let serial = try client.send([RawBusClient.MethodCall.timer("GetStatus")])[0]
    while let message = try client.receive() {
      guard message.replySerial == serial else { continue }
      guard let duration = message.uint32Entries["Duration"] else {
        throw HarnessError("GetStatus without Duration: \(message.errorName ?? "?")")
      }
      return duration
    }
    throw HarnessError("the bus closed the connection")
  }

  /// 3,000 pipelined Extend(1) from one client, all forwarded to the daemon before another
  /// client asks GetStatus: the daemon answers GetStatus while most of the burst still waits
  /// (before, it answered after the whole burst: Duration showed every second added), every
  /// Extend is still applied, and PropertiesChanged goes out now and then with the latest
  /// values, not once per call.
  @Test func anotherClientIsAnsweredInTheMiddleOfABurst() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start").status == 0)
    let prober = try RawBusClient(address: harness.bus.address, timeout: 120)
    let watcher = try RawBusClient(address: harness.bus.address, timeout: 120)
    try watcher.addMatch(
      "type='signal',sender='org.grow.Grow1',interface='org.freedesktop.DBus.Properties',"
        + "member='PropertiesChanged'")
    let before = try Self.duration(prober)

    let burster = try RawBusClient(address: harness.bus.address, timeout: 120)
    let calls = Array(
      repeating: RawBusClient.MethodCall.timer("Extend", seconds: 1), count: Self.burst)
    let serials = try burster.send(calls + [Self.busBarrier])
    var replies = 0
    var failures: [String] = []
    func read(until serial: UInt32?) throws {
      while let message = try burster.receive() {
        guard let reply = message.replySerial else { continue }
        if reply == serials.last { return }
        replies += 1
        if let error = message.errorName { failures.append(error) }
        if replies == Self.burst, serial == nil { return }
      }
      throw HarnessError("the bus closed the burst's connection")
    }
    try read(until: serials.last)
    let during = try Self.duration(prober)
    if replies < Self.burst { try read(until: nil) }
    let after = try Self.duration(prober)

    // Signals gather while properties keep changing; the last one has the final values.
    var signals = 0
    var lastDuration: UInt32?
    while lastDuration != after, let message = try watcher.receive() {
      guard message.member == "PropertiesChanged" else { continue }
      signals += 1
      if let duration = message.uint32Entries["Duration"] { lastDuration = duration }
    }
    print("burst of \(Self.burst) Extend: GetStatus saw +\(during - before) s, \(signals) signals")

    #expect(failures.isEmpty, "\(failures.prefix(3))")
    #expect(during < before + UInt32(Self.burst), "GetStatus waited for the whole burst")
    #expect(after == before + UInt32(Self.burst))
    // At most one per turn and one per 50 ms (BusObject.changesInterval).
    #expect(signals >= 1 && signals <= Self.burst / 4, "\(signals) PropertiesChanged")
    #expect(lastDuration == after)
  }

  /// ListCards of as many cards as a config may have, twice, then GetStatus, pipelined on one
  /// connection: GetStatus is answered first (the reply is encoded off the loop; before, with
  /// 42,000 cards, each ListCards held the loop for seconds and the replies came in order),
  /// and both ListCards carry every card.
  @Test func listCardsOfTheMostCardsLetsGetStatusThrough() throws {
    let cards = GrowConfig.maximumCards
    let config =
      "[timer]\nfocus = 25m\n" + (0..<cards).map { "[card.c\($0)]\nfocus = 1m\n" }.joined()
    let harness = try DaemonHarness(config: config)
    let client = try RawBusClient(address: harness.bus.address, timeout: 120)
    let serials = try client.send([
      RawBusClient.MethodCall.timer("ListCards"), RawBusClient.MethodCall.timer("ListCards"),
      RawBusClient.MethodCall.timer("GetStatus"),
    ])
    var order: [UInt32] = []
    var bodies: [UInt32: Int] = [:]
    while order.count < 3, let message = try client.receive() {
      guard let reply = message.replySerial, serials.contains(reply) else { continue }
      #expect(message.errorName == nil, "\(message.errorName ?? "")")
      order.append(reply)
      bodies[reply] = message.body.count
    }
    #expect(order.first == serials[2], "GetStatus was answered after ListCards: \(order)")
    // Every card's dict is more than 200 bytes on the wire.
    #expect((bodies[serials[0]] ?? 0) > 200 * cards)
    #expect(bodies[serials[0]] == bodies[serials[1]])
    // Another deck after a reload: the cached reply is not served for it.
    try harness.writeConfig("[timer]\nfocus = 25m\n[card.only]\nfocus = 1m\n")
    #expect(try harness.grow("reload").status == 0)
    #expect(
      try harness.eventually(timeout: 30) {
        let listed = try harness.run(
          "busctl",
          [
            "--user", "call", "org.grow.Grow1", "/org/grow/Grow1", "org.grow.Grow1.Timer",
            "ListCards",
          ])
        return listed.stdout.contains("\"only\"") && !listed.stdout.contains("\"c\(cards - 1)\"")
      })
  }
}
