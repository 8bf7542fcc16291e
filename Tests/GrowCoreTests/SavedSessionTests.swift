import Foundation
import GrowCore
import GrowPluginTesting
import Testing

/// A session saved by one daemon and taken up by the next (after a crash or kill -9).
@Suite struct SavedSessionTests {
  /// A timer on a manual clock with the standard card, plus its event log.
  func makeTimer(at now: Date = Date(timeIntervalSince1970: 1_780_000_000))
    -> (FocusTimer, ManualTimeSource, EventRecorder)
  {
    let time = ManualTimeSource(now: now)
    let bus = EventBus()
    let log = EventRecorder(bus)
    return (FocusTimer(deck: .standard, bus: bus, time: time), time, log)
  }

  /// Saves from one timer and restores into a fresh one `later` seconds on.
  func carry(_ timer: FocusTimer, _ time: ManualTimeSource, later: TimeInterval) throws
    -> (FocusTimer, ManualTimeSource, EventRecorder)
  {
    let (restored, restoredTime, log, _) = try carry(timer, time, later: later) { _ in nil }
    return (restored, restoredTime, log)
  }

  /// The same, with the history's say on how the saved phase ended.
  func carry(
    _ timer: FocusTimer, _ time: ManualTimeSource, later: TimeInterval,
    recordedEnd: (Phase) -> FocusTimer.RecordedEnd?
  ) throws -> (FocusTimer, ManualTimeSource, EventRecorder, FocusTimer.RestoreResult) {
    let saved = try #require(timer.savedSession)
    // Through JSON, as the daemon keeps it on disk.
    let data = try JSONEncoder().encode(saved)
    let decoded = try JSONDecoder().decode(FocusTimer.SavedSession.self, from: data)
    let next = makeTimer(at: time.now.addingTimeInterval(later))
    let result = next.0.restore(decoded, recordedEnd: recordedEnd)
    return (next.0, next.1, next.2, result)
  }

  @Test func aRunningPhaseGoesOnWithItsOwnDeadline() throws {
    let (timer, time, _) = makeTimer()
    try timer.start()
    time.advance(by: 10 * minute)
    let endsAt = try #require(timer.status.endsAt)
    let (restored, restoredTime, log) = try carry(timer, time, later: 2 * minute)
    #expect(restored.status.state == .focus)
    #expect(restored.status.endsAt == endsAt)
    #expect(restored.status.remaining == 13 * minute)
    restoredTime.advance(by: 13 * minute)
    #expect(log.of(PhaseEnded.self).map(\.outcome) == [.completed])
    #expect(restored.status.state == .shortBreak)
  }

  @Test func aPausedPhaseKeepsItsRemainingTime() throws {
    let (timer, time, _) = makeTimer()
    try timer.start()
    time.advance(by: 5 * minute)
    try timer.pause()
    let (restored, _, _) = try carry(timer, time, later: 3 * hour)
    #expect(restored.status.paused)
    #expect(restored.status.remaining == 20 * minute)
  }

  @Test func aPhaseThatEndedWhileTheDaemonWasGoneEndsAtItsDeadlineAndTheCycleGoesOn() throws {
    let (timer, time, _) = makeTimer()
    try timer.start()
    time.advance(by: 20 * minute)
    let deadline = try #require(timer.status.endsAt)
    let (restored, _, log) = try carry(timer, time, later: 10 * minute)
    let ended = try #require(log.last(PhaseEnded.self))
    #expect(ended.outcome == .completed)
    #expect(ended.endedAt == deadline)
    // More than a minute late: the break starts now, not at the old deadline.
    #expect(restored.status.state == .shortBreak)
    #expect(restored.status.remaining == 5 * minute)
  }

  @Test func aSessionOverAnHourPastItsDeadlineIsClosedNotResumed() throws {
    let (timer, time, _) = makeTimer()
    try timer.start()
    let (restored, _, log) = try carry(timer, time, later: 25 * minute + 61 * minute)
    #expect(restored.status.state == .idle)
    #expect(log.of(PhaseEnded.self).map(\.outcome) == [.completed])
    #expect(log.of(SessionStopped.self).count == 1)
  }

  @Test func aWaitingPhaseIsStillWaiting() throws {
    let (timer, time, _) = makeTimer()
    try timer.start()
    try timer.skip()
    try timer.skip()
    #expect(timer.status.next == .focus)
    let (restored, _, _) = try carry(timer, time, later: 3 * hour)
    #expect(restored.status.next == .focus)
    #expect(restored.status.card == "work")
  }

  // A daemon killed after the history recorded how a phase ended, but before it saved the
  // session that followed, leaves that phase in session.json. The history is right: the next
  // daemon goes on from the recorded end and neither counts nor announces the phase again
  // (found by the soak: it used to record the phase twice).

  @Test func aFocusTheHistoryHasAsCompletedIsNotEndedAgain() throws {
    let (timer, time, _) = makeTimer()
    try timer.start()
    let deadline = try #require(timer.status.endsAt)
    let (restored, _, log, result) = try carry(timer, time, later: 25 * minute + 20) {
      $0.kind == .focus ? (.completed, deadline) : nil
    }
    #expect(result == .resumed)
    #expect(log.of(PhaseEnded.self).isEmpty)
    #expect(restored.status.state == .shortBreak)
    #expect(restored.status.startedAt == deadline)
  }

  @Test func aFocusTheHistoryHasAsSkippedIsNotTakenUpAgain() throws {
    let (timer, time, _) = makeTimer()
    try timer.start()
    time.advance(by: 5 * minute)
    let skippedAt = time.now
    let (restored, _, log, _) = try carry(timer, time, later: 10) { _ in (.skipped, skippedAt) }
    #expect(restored.status.state == .shortBreak)
    #expect(restored.status.startedAt == skippedAt)
    #expect(log.of(PhaseEnded.self).isEmpty)
  }

  @Test func aPhaseTheHistoryHasAsStoppedLeavesTheTimerIdle() throws {
    let (timer, time, _) = makeTimer()
    try timer.start()
    time.advance(by: 5 * minute)
    let stoppedAt = time.now
    let (restored, _, log, result) = try carry(timer, time, later: 10) { _ in
      (.stopped, stoppedAt)
    }
    #expect(result == .alreadyOver)
    #expect(restored.status.state == .idle)
    #expect(restored.savedSession == nil)
    #expect(log.of(PhaseEnded.self).isEmpty)
    #expect(log.of(SessionStopped.self).count == 1)
  }

  @Test func idleHasNothingToSave() {
    let (timer, _, _) = makeTimer()
    #expect(timer.savedSession == nil)
  }
}
