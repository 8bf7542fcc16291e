import Foundation
@_spi(GrowHost) import GrowCore
import Synchronization
import Testing

private struct Slow: GrowEvent {
  static let eventName = "slow"
}

/// The watchdog the daemon arms around every event handler (Daemon.stuckHandlerLimit).
@Suite struct HandlerWatchdogTests {
  @Test func aHandlerThatKeepsTheLoopIsReportedOnceWithItsSubscriberAndEvent() {
    let reports = Mutex<[String]>([])
    let returned = Mutex<[String]>([])
    let watchdog = HandlerWatchdog(
      limit: 0.3, onStuck: { running in reports.withLock { $0.append(running.subscriber) } },
      onReturned: { running in returned.withLock { $0.append(running.event) } })
    let bus = EventBus()
    bus.watchdog = watchdog
    bus.subscribe(Slow.self, as: "quick") { _ in }
    bus.subscribe(Slow.self, as: "sleeper") { _ in
      Thread.sleep(forTimeInterval: 1)
      #expect(watchdog.stuckHandler?.subscriber == "sleeper")
      #expect(watchdog.stuckHandler?.event == "slow")
    }
    bus.publish(Slow())
    #expect(watchdog.stuckHandler == nil, "nothing runs now")
    #expect(reports.withLock { $0 } == ["sleeper"])
    #expect(returned.withLock { $0 } == ["slow"])
    // Quick handlers afterwards are not reported.
    bus.unsubscribeAll(of: "sleeper")
    for _ in 0..<100 { bus.publish(Slow()) }
    Thread.sleep(forTimeInterval: 0.5)
    #expect(reports.withLock { $0 } == ["sleeper"])
  }
}
