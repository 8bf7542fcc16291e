import Foundation
import GrowCore
import Testing

/// The machine sleeping and its clock being set, on a manual clock: `set(now:)` jumps the wall
/// clock without firing alarms, as a suspend does; the daemon then reports the sleep.
@Suite struct SleepAndClockTests {
  /// Sleeps for `seconds`: the wall clock moves on with no alarm firing, then the timer is told.
  func sleep(_ rig: Rig, minutes: Double) {
    rig.time.set(now: rig.time.now.addingTimeInterval(minutes * minute))
    rig.timer.systemSlept(for: minutes * minute)
  }

  @Test func aShortSleepDuringFocusIsAPauseNotFocus() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    sleep(rig, minutes: 4)
    // 15 minutes were left when the lid closed, and 15 are left when it opens.
    #expect(rig.timer.status.state == .focus)
    #expect(rig.timer.status.remaining == 15 * minute)
    #expect(rig.timer.status.elapsed == 10 * minute)
    let slept = try #require(rig.log.last(SystemSlept.self))
    #expect(slept.effect == .focusPaused)
    #expect(slept.asleepDuringPhase == 4 * minute)
    #expect(rig.offset(slept.asleepAt) == 10 * minute)
    rig.advance(minutes: 15)
    #expect(rig.ends == ["focus 1 completed @29"])
    // Only the 25 minutes awake count as focus.
    #expect(rig.log.last(PhaseEnded.self)?.elapsed == 25 * minute)
  }

  @Test func aLongSleepDuringFocusEndsItWhenTheLidClosedAndClosesTheSession() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    sleep(rig, minutes: 90)
    #expect(rig.timer.status.state == .idle)
    #expect(rig.ends == ["focus 1 stopped @10"])
    #expect(rig.log.last(SystemSlept.self)?.effect == .sessionEnded)
    #expect(rig.log.last(SessionStopped.self) != nil)
    #expect(rig.log.last(PhaseEnded.self)?.elapsed == 10 * minute, "cut short when the lid closed")
    // The sleep was announced before the phase ended, so a recorder sees it first.
    let names = rig.log.names
    let slept = try #require(names.firstIndex(of: SystemSlept.eventName))
    #expect(slept < names.firstIndex(of: PhaseEnded.eventName)!)
    // Nothing starts by itself later.
    rig.advance(minutes: 60)
    #expect(rig.log.of(PhaseStarted.self).count == 1)
  }

  @Test func theLimitIsTheTimersSleepLimit() throws {
    let rig = Rig()
    rig.timer.sleepLimit = 2 * minute
    try rig.timer.start()
    rig.advance(minutes: 1)
    sleep(rig, minutes: 2)
    #expect(rig.timer.status.state == .idle)
  }

  @Test func sleepDuringABreakCountsAsRestAndTheCycleGoesOnAfterAShortOne() throws {
    let rig = Rig([card(autoFocus: true)])
    try rig.timer.start()
    rig.advance(minutes: 26)
    #expect(rig.timer.status.state == .shortBreak)
    sleep(rig, minutes: 8)
    #expect(rig.log.last(SystemSlept.self)?.effect == SystemSlept.Effect.none)
    // The break ran out at 30 while asleep; the alarm fires now and focus starts at waking
    // (34), not at the old deadline.
    rig.time.advance(by: 0)
    #expect(rig.ends == ["focus 1 completed @25", "short-break 1 completed @30"])
    #expect(rig.starts.last == "focus 2 @34")
  }

  @Test func aBreakThatRanOutDuringALongSleepClosesTheSessionInsteadOfStartingFocus() throws {
    let rig = Rig([card(autoFocus: true)])
    try rig.timer.start()
    rig.advance(minutes: 26)
    sleep(rig, minutes: 120)
    rig.time.advance(by: 0)
    #expect(rig.ends == ["focus 1 completed @25", "short-break 1 completed @30"])
    #expect(rig.timer.status.state == .idle)
    #expect(rig.starts.count == 2)
  }

  @Test func aLongBreakStillRunningAfterALongSleepGoesOn() throws {
    let rig = Rig([card(long: 60 * minute, longAfter: 1)])
    try rig.timer.start()
    rig.advance(minutes: 26)
    #expect(rig.timer.status.state == .longBreak)
    sleep(rig, minutes: 20)
    #expect(rig.timer.status.state == .longBreak)
    #expect(rig.timer.status.remaining == 39 * minute)
  }

  @Test func aPausedFocusStaysPausedWithItsTimeLeft() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 5)
    try rig.timer.pause()
    sleep(rig, minutes: 200)
    #expect(rig.timer.status.paused)
    #expect(rig.timer.status.remaining == 20 * minute)
    #expect(rig.log.last(SystemSlept.self)?.effect == SystemSlept.Effect.none)
  }

  @Test func aPhaseThatRanOutBeforeTheSleepEndsAtItsDeadline() throws {
    let rig = Rig([card(autoBreaks: false)])
    try rig.timer.start()
    // The alarm was due at 25 but the loop had not run it when the machine slept at 26.
    rig.time.set(now: rig.origin.addingTimeInterval(26 * minute + 30 * minute))
    rig.timer.systemSlept(for: 30 * minute)
    #expect(rig.ends == ["focus 1 completed @25"])
    #expect(rig.timer.status.next == .shortBreak)
  }

  @Test func idleOrWaitingTheSleepChangesNothing() throws {
    let rig = Rig([card(autoBreaks: false)])
    sleep(rig, minutes: 30)
    #expect(rig.timer.status.state == .idle)
    try rig.timer.start()
    rig.advance(minutes: 25)
    sleep(rig, minutes: 30)
    #expect(rig.timer.status.next == .shortBreak)
    #expect(rig.log.of(SystemSlept.self).map(\.effect) == [.none, .none])
  }

  @Test func aWallClockSetForwardKeepsTheTimeLeft() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    rig.time.set(now: rig.time.now.addingTimeInterval(hour))
    rig.timer.wallClockChanged(by: hour)
    #expect(rig.timer.status.remaining == 15 * minute)
    #expect(rig.timer.status.endsAt == rig.time.now.addingTimeInterval(15 * minute))
    rig.advance(minutes: 15)
    #expect(rig.log.of(PhaseEnded.self).map(\.outcome) == [.completed])
  }

  @Test func aWallClockSetBackDoesNotStretchThePhase() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    try rig.timer.pause()
    rig.time.set(now: rig.time.now.addingTimeInterval(-2 * hour))
    rig.timer.wallClockChanged(by: -2 * hour)
    rig.advance(minutes: 3)
    try rig.timer.resume()
    #expect(rig.timer.status.remaining == 15 * minute)
    rig.advance(minutes: 15)
    #expect(rig.log.of(PhaseEnded.self).map(\.outcome) == [.completed])
    #expect(rig.log.last(PhaseResumed.self)?.pausedFor == 3 * minute)
  }
}
