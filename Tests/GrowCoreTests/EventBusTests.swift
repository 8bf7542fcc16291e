@_spi(GrowHost) import GrowCore
import Testing

private struct Ping: GrowEvent {
  static let eventName = "ping"
  let n: Int
}

private struct Pong: GrowEvent {
  static let eventName = "pong"
  let n: Int
}

private struct Other: GrowEvent {
  static let eventName = "other"
}

private struct Broken: Error, Equatable {
  let reason: String
}

/// What each subscriber received, as "subscriber:event-n", in delivery order.
private final class Deliveries {
  var lines: [String] = []
  func note(_ who: String, _ event: any GrowEvent) {
    switch event {
    case let ping as Ping: lines.append("\(who):ping-\(ping.n)")
    case let pong as Pong: lines.append("\(who):pong-\(pong.n)")
    default: lines.append("\(who):\(type(of: event).eventName)")
    }
  }
}

@Suite("EventBus")
struct EventBusTests {
  let bus = EventBus()
  private let seen = Deliveries()

  @Test func deliversOnlyTheSubscribedType() {
    bus.subscribe(Ping.self, as: "a") { seen.note("a", $0) }
    bus.subscribe(Pong.self, as: "b") { seen.note("b", $0) }
    bus.publish(Ping(n: 1))
    bus.publish(Pong(n: 2))
    bus.publish(Ping(n: 3))
    #expect(seen.lines == ["a:ping-1", "b:pong-2", "a:ping-3"])
  }

  @Test func publishingWithNoSubscribersDoesNothing() {
    bus.publish(Ping(n: 1))
    #expect(bus.subscriptionCount == 0)
  }

  @Test func subscribeToAllSeesEveryEventInOrder() {
    bus.subscribeToAll(as: "all") { seen.note("all", $0) }
    bus.publish(Ping(n: 1))
    bus.publish(Pong(n: 2))
    bus.publish(Other())
    #expect(seen.lines == ["all:ping-1", "all:pong-2", "all:other"])
  }

  @Test func publishingAnExistentialReachesTheTypedSubscribers() {
    bus.subscribe(Pong.self, as: "b") { seen.note("b", $0) }
    let event: any GrowEvent = Pong(n: 7)
    bus.publish(event)
    #expect(seen.lines == ["b:pong-7"])
  }

  @Test func throwingSubscriberIsReportedAndRemovedWhileOthersKeepReceiving() {
    var failures: [(String, Broken?)] = []
    bus.onSubscriberFailure = { name, error in failures.append((name, error as? Broken)) }
    bus.subscribe(Ping.self, as: "before") { seen.note("before", $0) }
    bus.subscribe(Ping.self, as: "plugin.broken") { ping in
      seen.note("broken", ping)
      throw Broken(reason: "no")
    }
    bus.subscribe(Ping.self, as: "after") { seen.note("after", $0) }
    bus.subscribeToAll(as: "all") { seen.note("all", $0) }
    #expect(bus.subscriptionCount == 4)

    bus.publish(Ping(n: 1))
    bus.publish(Ping(n: 2))

    #expect(failures.count == 1)
    #expect(failures.first?.0 == "plugin.broken")
    #expect(failures.first?.1 == Broken(reason: "no"))
    #expect(bus.subscriptionCount == 3)
    #expect(
      seen.lines == [
        "before:ping-1", "broken:ping-1", "after:ping-1", "all:ping-1",
        "before:ping-2", "after:ping-2", "all:ping-2",
      ])
  }

  @Test func throwingSubscribeToAllIsRemovedToo() {
    var failed: [String] = []
    bus.onSubscriberFailure = { name, _ in failed.append(name) }
    bus.subscribeToAll(as: "bridge") { _ in throw Broken(reason: "gone") }
    bus.subscribe(Ping.self, as: "a") { seen.note("a", $0) }
    bus.publish(Ping(n: 1))
    bus.publish(Pong(n: 2))
    bus.publish(Ping(n: 3))
    #expect(failed == ["bridge"])
    #expect(bus.subscriptionCount == 1)
    #expect(seen.lines == ["a:ping-1", "a:ping-3"])
  }

  @Test func eventsPublishedFromAHandlerWaitUntilTheCurrentOneReachedEveryone() {
    bus.subscribe(Ping.self, as: "first") { ping in
      seen.note("first", ping)
      if ping.n < 3 { bus.publish(Pong(n: ping.n)) }
    }
    bus.subscribe(Ping.self, as: "second") { seen.note("second", $0) }
    bus.subscribe(Pong.self, as: "echo") { pong in
      seen.note("echo", pong)
      bus.publish(Ping(n: pong.n + 1))
    }
    bus.subscribeToAll(as: "all") { seen.note("all", $0) }

    bus.publish(Ping(n: 1))

    #expect(
      seen.lines == [
        "first:ping-1", "second:ping-1", "all:ping-1",
        "echo:pong-1", "all:pong-1",
        "first:ping-2", "second:ping-2", "all:ping-2",
        "echo:pong-2", "all:pong-2",
        "first:ping-3", "second:ping-3", "all:ping-3",
      ])
  }

  @Test func everySubscriberSeesNestedEventsInTheSameOrder() {
    var orders: [String: [String]] = [:]
    for name in ["x", "y", "z"] {
      bus.subscribeToAll(as: name) { event in
        orders[name, default: []].append(type(of: event).eventName)
        if name == "x", let ping = event as? Ping, ping.n == 1 {
          bus.publish(Pong(n: 1))
          bus.publish(Ping(n: 2))
        }
      }
    }
    bus.publish(Ping(n: 1))
    #expect(orders["x"] == ["ping", "pong", "ping"])
    #expect(orders["y"] == orders["x"])
    #expect(orders["z"] == orders["x"])
  }

  @Test func aFailureDuringANestedEventIsHandledLikeAnyOther() {
    var failed: [String] = []
    bus.onSubscriberFailure = { name, _ in failed.append(name) }
    bus.subscribe(Ping.self, as: "relay") { bus.publish(Pong(n: $0.n)) }
    bus.subscribe(Pong.self, as: "fragile") { _ in throw Broken(reason: "pong") }
    bus.subscribe(Pong.self, as: "sturdy") { seen.note("sturdy", $0) }
    bus.publish(Ping(n: 1))
    bus.publish(Ping(n: 2))
    #expect(failed == ["fragile"])
    #expect(seen.lines == ["sturdy:pong-1", "sturdy:pong-2"])
  }

  @Test func publishingAfterADeliveryFinishedIsImmediateAgain() {
    bus.subscribe(Ping.self, as: "a") { ping in
      seen.note("a", ping)
      if ping.n == 1 { bus.publish(Pong(n: 1)) }
    }
    bus.subscribe(Pong.self, as: "b") { seen.note("b", $0) }
    bus.publish(Ping(n: 1))
    seen.lines.append("-")
    bus.publish(Pong(n: 2))
    #expect(seen.lines == ["a:ping-1", "b:pong-1", "-", "b:pong-2"])
  }

  @Test func unsubscribeStopsDelivery() {
    let typed = bus.subscribe(Ping.self, as: "a") { seen.note("a", $0) }
    let all = bus.subscribeToAll(as: "all") { seen.note("all", $0) }
    bus.subscribe(Ping.self, as: "b") { seen.note("b", $0) }
    bus.publish(Ping(n: 1))
    bus.unsubscribe(typed)
    bus.unsubscribe(all)
    #expect(bus.subscriptionCount == 1)
    bus.publish(Ping(n: 2))
    #expect(seen.lines == ["a:ping-1", "b:ping-1", "all:ping-1", "b:ping-2"])
  }

  @Test func unsubscribingTwiceIsHarmless() {
    let subscription = bus.subscribe(Ping.self, as: "a") { seen.note("a", $0) }
    bus.subscribe(Ping.self, as: "b") { seen.note("b", $0) }
    bus.unsubscribe(subscription)
    bus.unsubscribe(subscription)
    bus.publish(Ping(n: 1))
    #expect(seen.lines == ["b:ping-1"])
  }

  @Test func unsubscribeAllRemovesEverySubscriptionOfThatName() {
    bus.subscribe(Ping.self, as: "plugin.a") { seen.note("a-ping", $0) }
    bus.subscribe(Pong.self, as: "plugin.a") { seen.note("a-pong", $0) }
    bus.subscribeToAll(as: "plugin.a") { seen.note("a-all", $0) }
    bus.subscribe(Ping.self, as: "plugin.b") { seen.note("b", $0) }
    #expect(bus.subscriptionCount == 4)

    bus.unsubscribeAll(of: "plugin.a")

    #expect(bus.subscriptionCount == 1)
    bus.publish(Ping(n: 1))
    bus.publish(Pong(n: 2))
    #expect(seen.lines == ["b:ping-1"])
  }

  @Test func aSubscriptionMadeInsideAHandlerGetsTheQueuedEvents() {
    bus.subscribe(Ping.self, as: "a") { ping in
      seen.note("a", ping)
      bus.subscribe(Pong.self, as: "late") { seen.note("late", $0) }
      bus.publish(Pong(n: ping.n))
    }
    bus.publish(Ping(n: 1))
    #expect(seen.lines == ["a:ping-1", "late:pong-1"])
  }
}
