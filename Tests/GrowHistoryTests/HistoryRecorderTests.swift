import Foundation
import GrowCore
import GrowPluginTesting
import Testing

@testable import GrowHistory

/// The recorder on a real `FocusTimer` driven by a manual clock: every outcome, in
/// milliseconds.
@Suite struct HistoryRecorderTests {
  @Test func everyOutcomeIsRecordedWithPausesAndIntention() throws {
    let directory = try TemporaryDirectory()
    let store = try HistoryStore(path: directory.databasePath)
    let clock = ManualTimeSource(zone: newYork)
    let events = EventBus()
    let card = FocusCard(name: "math", focus: 60, shortBreak: 30, autoStartFocus: true)
    let timer = FocusTimer(
      deck: CardDeck(cards: [card], defaultCardName: "math"), bus: events, time: clock)
    var errors: [String] = []
    var published: [Streak] = []
    let recorder = HistoryRecorder(
      path: directory.databasePath, pendingPath: directory.pendingPath, events: events,
      dailyGoal: { nil }, time: clock,
      log: { errors.append($1) })
    events.subscribe(HistoryRecorded.self, as: "test") { published.append($0.streak) }

    try timer.start(overrides: SessionOverrides(intention: "proofs"))
    clock.advance(by: 10)
    try timer.pause()
    clock.advance(by: 5)
    try timer.resume()
    clock.advance(by: 50)  // focus completes at 65s; the break starts
    clock.advance(by: 10)
    try timer.skip()  // break skipped; focus starts by itself
    clock.advance(by: 20)
    try timer.stop()  // focus stopped after 20s
    try timer.start()
    clock.advance(by: 15)
    recorder.recordCutShort(timer.runningPhase)  // the daemon exits
    recorder.waitForWrites()

    let phases = try store.phases()
    #expect(phases.map(\.kind) == [.focus, .shortBreak, .focus, .focus])
    #expect(phases.map(\.outcome) == [.completed, .skipped, .stopped, .abandoned])
    #expect(phases.map(\.actualSeconds) == [60, 10, 20, 15])
    #expect(phases[0].pauseCount == 1)
    #expect(phases[0].pausedSeconds == 5)
    #expect(phases[0].intention == "proofs")
    #expect(phases[1].intention == nil)
    #expect(phases[0].endedAt == phases[0].startedAt.addingTimeInterval(65))
    #expect(errors.isEmpty)
    #expect(published.count == 4, "one event per recorded phase")
    #expect(recorder.streak == Streak(current: 1, longest: 1))
    #expect(
      try store.activity(on: LocalDay(clock.now, in: newYork))
        == DayActivity(focusSeconds: 60, completedFocus: 1, cutShortSeconds: 35),
      "only completed focus counts toward the goal; the rest is apart")
    #expect(recorder.pendingPhases.isEmpty, "every phase is in the database file")
  }

  @Test func aFocusThatCrossedAZoneChangeKeepsEachEndsOwnOffset() throws {
    let directory = try TemporaryDirectory()
    let store = try HistoryStore(path: directory.databasePath)
    let clock = ManualTimeSource(zone: newYork)
    let events = EventBus()
    let timer = FocusTimer(deck: .standard, bus: events, time: clock)
    let recorder = HistoryRecorder(
      path: directory.databasePath, pendingPath: directory.pendingPath, events: events,
      dailyGoal: { nil }, time: clock,
      log: { Issue.record("\($1)") })
    try timer.start()
    clock.advance(by: 600)
    // The person lands in Paris during focus: the machine's zone changes.
    let paris = LocalZone.fixed(secondsEast: 3600)
    clock.zone = paris
    clock.advance(by: 900)  // focus completes
    recorder.waitForWrites()

    let phase = try #require(try store.phases().first)
    #expect(phase.startOffset == newYork.secondsFromGMT(for: phase.startedAt))
    #expect(phase.endOffset == 3600)
  }

  @Test func timeAsleepIsRecordedAsAPauseAndAwayTimeNotAsFocus() throws {
    let directory = try TemporaryDirectory()
    let store = try HistoryStore(path: directory.databasePath)
    let clock = ManualTimeSource(zone: newYork)
    let events = EventBus()
    let timer = FocusTimer(deck: .standard, bus: events, time: clock)
    let recorder = HistoryRecorder(
      path: directory.databasePath, pendingPath: directory.pendingPath, events: events,
      dailyGoal: { nil }, time: clock,
      log: { Issue.record("\($1)") })
    try timer.start()
    clock.advance(by: 600)
    clock.set(now: clock.now.addingTimeInterval(240))  // the lid is closed for 4 minutes
    timer.systemSlept(for: 240)
    clock.advance(by: 900)  // focus completes
    try timer.stop()  // during the break
    try timer.start()
    clock.advance(by: 300)
    clock.set(now: clock.now.addingTimeInterval(7200))  // and for two hours
    timer.systemSlept(for: 7200)
    recorder.waitForWrites()

    let phases = try store.phases()
    #expect(phases.map(\.outcome) == [.completed, .stopped, .stopped])
    #expect(phases.map(\.kind) == [.focus, .shortBreak, .focus])
    #expect(phases[0].actualSeconds == 1500)
    #expect(phases[0].pausedSeconds == 240)
    #expect(phases[0].pauseCount == 1)
    #expect(phases[0].awaySeconds == 240)
    // The focus cut short by the long sleep ends when the lid closed.
    #expect(phases[2].actualSeconds == 300)
    #expect(phases[2].endedAt == phases[2].startedAt.addingTimeInterval(300))
    let today = try store.activity(on: LocalDay(clock.now, in: newYork))
    #expect(today.focusSeconds == 1500)
    #expect(today.cutShortSeconds == 300)
  }

  @Test func aFailedWriteIsReportedOnceTheTimerGoesOnAndThePhaseIsKept() throws {
    let directory = try TemporaryDirectory()
    _ = try HistoryStore(path: directory.databasePath)
    let clock = ManualTimeSource(zone: newYork)
    let events = EventBus()
    let timer = FocusTimer(deck: .standard, bus: events, time: clock)
    var errors: [String] = []
    let recorder = HistoryRecorder(
      path: directory.databasePath, pendingPath: directory.pendingPath, events: events,
      dailyGoal: { nil }, time: clock, log: { errors.append($1) })
    // The database goes away under the daemon: the table is dropped behind its back.
    try SQLiteConnection(path: directory.databasePath).execute(
      "DROP TABLE distractions; DROP TABLE phases")
    try timer.start()
    clock.advance(by: 25 * 60)
    recorder.waitForWrites()
    #expect(timer.status.state == .shortBreak)
    #expect(errors.count == 1)
    #expect(errors.first?.contains("no such table: phases") == true)
    #expect(errors.first?.contains("1 phase(s) wait for the history") == true)
    let kept = try PendingPhases(path: directory.pendingPath).phases
    #expect(kept.map(\.phase.kind) == [.focus])
    #expect(kept.map(\.confirmed) == [false])
  }
}
