import Foundation
import GrowCore
import GrowLoop
import GrowPluginTesting
import Testing

/// The daemon's loop (MainLoop, on the main queue) and the test kit's manual one keep the same
/// promises.
@MainActor
@Suite struct EventLoopTests {
  func settle(until condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(5)
    while !condition(), Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
  }

  /// A plugin may fire and forget (a reply deadline, a check half a second later): the alarm
  /// it does not keep must still go off. It did not when the source was freed with the alarm.
  @Test func anAlarmNobodyKeepsStillFires() async throws {
    var fired = (after: false, at: false)
    _ = MainLoop.shared.after(seconds: 0.01) { fired.after = true }
    _ = MainLoop.shared.at(Date().addingTimeInterval(0.01)) { fired.at = true }
    try await settle { fired.after && fired.at }
    #expect(fired.after && fired.at)
  }

  @Test func aCancelledAlarmDoesNotFire() async throws {
    var fired = false
    let alarm = MainLoop.shared.after(seconds: 0.01) { fired = true }
    alarm.cancel()
    var later = false
    _ = MainLoop.shared.after(seconds: 0.05) { later = true }
    try await settle { later }
    #expect(later && !fired)
  }

  /// `after(seconds: 0)` is "on a later turn" (a reader yielding the rest of its turn asks
  /// for it many times a second): never inside the call, and not at all once cancelled.
  @Test func aZeroSecondAlarmRunsOnALaterTurnUnlessCancelled() async throws {
    var fired: [String] = []
    _ = MainLoop.shared.after(seconds: 0) { fired.append("kept") }
    let cancelled = MainLoop.shared.after(seconds: 0) { fired.append("cancelled") }
    cancelled.cancel()
    #expect(fired.isEmpty, "not inside the call")
    var later = false
    _ = MainLoop.shared.after(seconds: 0.05) { later = true }
    try await settle { later }
    #expect(fired == ["kept"])
  }

  @Test func theManualLoopFiresBothClocksInDeadlineOrder() {
    let loop = ManualLoop()
    var fired: [String] = []
    _ = loop.after(seconds: 3) { fired.append("after 3") }
    _ = loop.at(loop.now.addingTimeInterval(1)) { fired.append("at 1") }
    _ = loop.after(seconds: 2) {
      fired.append("after 2")
      _ = loop.after(seconds: 0.5) { fired.append("after 2.5") }
    }
    let cancelled = loop.after(seconds: 1.5) { fired.append("cancelled") }
    cancelled.cancel()
    loop.advance(by: 2.9)
    #expect(fired == ["at 1", "after 2", "after 2.5"])
    loop.advance(by: 0.1)
    #expect(fired.last == "after 3")
    #expect(loop.nextDue == nil)
  }

  /// A wall-clock jump (a suspend, a clock change) makes wall-clock alarms due at once, but not
  /// monotonic ones: a grace period is not cut short by a clock change.
  @Test func aWallClockJumpFiresWallAlarmsOnly() {
    let loop = ManualLoop()
    var fired: [String] = []
    _ = loop.at(loop.now.addingTimeInterval(60)) { fired.append("wall") }
    _ = loop.after(seconds: 60) { fired.append("monotonic") }
    let monotonic = loop.monotonicNow
    loop.jumpWallClock(by: 3600)
    #expect(fired == ["wall"])
    #expect(loop.monotonicNow == monotonic)
    loop.advance(by: 60)
    #expect(fired == ["wall", "monotonic"])
  }

  @Test func aManualDescriptorIsReadyWhenTheTestSaysSo() {
    let loop = ManualLoop()
    var heard: [FileWatcher.Readiness] = []
    let watch = loop.watch(5, for: .readable) { heard.append($0) }
    loop.makeReady(5, .writable)
    #expect(heard.isEmpty, "not what it waits for")
    loop.makeReady(5, [.readable, .writable])
    #expect(heard == [.readable])
    watch.cancel()
    loop.makeReady(5)
    #expect(heard.count == 1)
    #expect(loop.watchedDescriptors.isEmpty)
  }
}
