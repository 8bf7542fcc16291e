import Foundation
@_spi(GrowHost) import GrowCore
import GrowPluginTesting
import Testing

@testable import GrowHistory

/// "Today" has one owner: the recorder counts each phase as it records it, starts from the
/// history file, and the timer's status reports what it says (`FocusTimer.todayKeeper`).
@Suite struct HistoryRecorderTodayTests {
  /// A timer whose today is kept by a recorder on a fresh history, at `now` in New York.
  final class Rig {
    let directory: TemporaryDirectory
    let clock: ManualTimeSource
    let events = EventBus()
    let timer: FocusTimer
    let recorder: HistoryRecorder

    init(now: Date = local("2026-05-04 08:00"), autoStartFocus: Bool = false) throws {
      directory = try TemporaryDirectory()
      clock = ManualTimeSource(now: now, zone: newYork)
      let card = FocusCard(name: "work", autoStartFocus: autoStartFocus)
      timer = FocusTimer(
        deck: CardDeck(cards: [card], defaultCardName: "work"), bus: events, time: clock)
      recorder = HistoryRecorder(
        path: directory.databasePath, pendingPath: directory.pendingPath, events: events,
        dailyGoal: { nil }, time: clock, log: { Issue.record("\($1)") })
      timer.todayKeeper = recorder
    }

    func advance(minutes: Double) { clock.advance(by: minutes * 60) }
    var status: TimerStatus { timer.status }
  }

  /// Focus time is focus that ran its course (PhaseOutcome.countsAsFocus): the running one
  /// counts once it completes, so the figure never goes down when a focus is stopped.
  @Test func todayCountsCompletedFocusOnlyAndKeepsCutShortFocusApart() throws {
    let rig = try Rig(autoStartFocus: true)
    try rig.timer.start()
    rig.advance(minutes: 40)
    try rig.timer.skip()
    rig.advance(minutes: 8)
    try rig.timer.stop()
    try rig.timer.start()
    rig.advance(minutes: 4)
    #expect(rig.status.completedToday == 1)
    #expect(rig.status.focusToday == 25 * 60, "not the 4 minutes of the running focus")
    #expect(rig.status.cutShortToday == (10 + 3) * 60, "the skipped and the stopped focus")
    rig.recorder.waitForWrites()
  }

  @Test func theDayEndsAtLocalMidnight() throws {
    let rig = try Rig(now: local("2026-05-04 19:00"))
    try rig.timer.start()
    rig.advance(minutes: 25)
    #expect(rig.status.completedToday == 1)
    // 20:30 in New York is already the next day in UTC.
    rig.advance(minutes: 65)
    #expect(rig.status.completedToday == 1)
    #expect(rig.status.focusToday == 1500)
    try rig.timer.stop()
    rig.clock.set(now: local("2026-05-05 00:01"))
    #expect(rig.status.completedToday == 0)
    #expect(rig.status.focusToday == 0)
    rig.recorder.waitForWrites()
  }

  @Test func aFocusPhaseCountsOnTheDayItEnds() throws {
    let rig = try Rig(now: local("2026-05-04 23:50"))
    try rig.timer.start()
    rig.advance(minutes: 9)
    #expect(rig.status.focusToday == 0, "it counts once it completes")
    rig.advance(minutes: 16)
    #expect(rig.status.completedToday == 1)
    #expect(rig.status.focusToday == 1500)
    rig.recorder.waitForWrites()
  }

  /// A restarted daemon's today is the history's: what the last one recorded is there.
  @Test func aNewRecorderStartsFromWhatTheHistoryHas() throws {
    let rig = try Rig()
    try rig.timer.start()
    rig.advance(minutes: 25)
    try rig.timer.stop()
    rig.recorder.waitForWrites()

    let events = EventBus()
    let timer = FocusTimer(deck: .standard, bus: events, time: rig.clock)
    let recorder = HistoryRecorder(
      path: rig.directory.databasePath, pendingPath: rig.directory.pendingPath, events: events,
      dailyGoal: { nil }, time: rig.clock, log: { Issue.record("\($1)") })
    timer.todayKeeper = recorder
    #expect(timer.status.completedToday == 1)
    #expect(timer.status.focusToday == 1500)
  }

  /// After `grow history` changed the file, today is read again and announced once.
  @Test func aRereadReplacesTodayAndTellsTheDaemon() throws {
    let rig = try Rig()
    var told = 0
    rig.recorder.todayChanged = { told += 1 }
    try rig.timer.start()
    rig.advance(minutes: 25)
    rig.recorder.waitForWrites()
    let store = try HistoryStore(path: rig.directory.databasePath)
    try store.delete(ids: try store.phases().compactMap(\.id))
    rig.recorder.reread()
    rig.recorder.waitForWrites()
    #expect(told == 1)
    #expect(rig.status.completedToday == 0, "the deleted focus no longer counts")
  }
}
