import Foundation
import GrowCore
import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import GnomePomodoroPlugin

/// Grow's timer through GNOME Pomodoro's eyes, on a manual clock: the states, what each change
/// announces (as GNOME Pomodoro 0.22.1 was seen to announce it: docs/gnome-pomodoro.md) and
/// the once-a-second Elapsed. The bus side, against the real GNOME Pomodoro, is in
/// Tests/GrowDaemonTests/GnomePomodoroDifferentialTests.swift.
@MainActor
@Suite struct PomodoroModelTests {
  let bed = PluginTestBed()
  let timer: FocusTimer
  var model: PomodoroModel

  init() {
    timer = FocusTimer(deck: .standard, bus: bed.events, time: bed.loop)
    model = PomodoroModel(status: timer.status, deck: timer.deck, now: bed.loop.now)
  }

  mutating func update() -> [PomodoroChange] {
    model.update(to: timer.status, deck: timer.deck, now: bed.loop.now)
  }

  func stateChange(_ changes: [PomodoroChange]) -> (PomodoroState, PomodoroState, Double)? {
    guard changes.count == 1,
      case .stateChanged(let state, let previous, let elapsed, _) = changes[0]
    else { return nil }
    return (state, previous, elapsed)
  }

  @Test mutating func idleIsNullAndFocusIsPomodoro() throws {
    #expect(model.state.name == "null")
    #expect(model.state.duration == 0)
    try timer.start()
    let changes = update()
    let (state, previous, _) = try #require(stateChange(changes))
    #expect(state.name == "pomodoro")
    #expect(state.duration == 1500)
    #expect(state.timestamp == bed.loop.now.timeIntervalSince1970)
    #expect(previous.name == "null")
    #expect(
      changes
        == [
          .stateChanged(
            state, previous: previous, elapsedBefore: 0,
            properties: ["State", "Elapsed", "StateDuration"])
        ])
    bed.loop.advance(by: 90)
    #expect(model.state.elapsed(at: bed.loop.now) == 90)
  }

  @Test mutating func pauseAndResumeOnlyChangeIsPaused() throws {
    try timer.start()
    _ = update()
    let timestamp = model.state.timestamp
    bed.loop.advance(by: 10)
    try timer.pause()
    #expect(update() == [.propertiesChanged(["IsPaused"])])
    bed.loop.advance(by: 100)
    #expect(model.state.elapsed(at: bed.loop.now) == 10, "a paused state does not count")
    try timer.resume()
    #expect(update() == [.propertiesChanged(["IsPaused"])])
    #expect(model.state.timestamp == timestamp)
    #expect(!model.state.isPaused)
  }

  @Test mutating func skippingFocusStartsTheBreakAndNamesWhatCameBefore() throws {
    try timer.start()
    _ = update()
    bed.loop.advance(by: 42)
    try timer.skip()
    let changes = update()
    let (state, previous, elapsed) = try #require(stateChange(changes))
    #expect(state.name == "short-break")
    #expect(state.duration == 300)
    #expect(previous.name == "pomodoro")
    #expect(previous.duration == 1500)
    #expect(elapsed == 42)
  }

  @Test mutating func aPausedStateThatIsSkippedAnnouncesIsPausedWithTheRest() throws {
    try timer.start()
    _ = update()
    try timer.pause()
    _ = update()
    try timer.skip()
    let changes = update()
    guard case .stateChanged(let state, _, _, let properties)? = changes.first else {
      Issue.record("no StateChanged: \(changes)")
      return
    }
    #expect(state.name == "short-break")
    #expect(!state.isPaused)
    #expect(properties == ["State", "Elapsed", "StateDuration", "IsPaused"])
  }

  @Test mutating func aPhaseWaitingForThePersonIsThatPhasePausedAtZero() throws {
    // The standard card starts breaks by itself but not focus: after the break, focus waits.
    try timer.start()
    _ = update()
    try timer.skip()
    _ = update()
    bed.loop.advance(by: 300)
    let changes = update()
    let (state, previous, _) = try #require(stateChange(changes))
    #expect(timer.status.state == .waiting)
    #expect(state.name == "pomodoro")
    #expect(state.isPaused)
    #expect(state.duration == 1500)
    #expect(state.elapsed(at: bed.loop.now) == 0)
    #expect(previous.name == "short-break")

    // Resume starts it: to GNOME Pomodoro's clients the paused state goes on.
    bed.loop.advance(by: 30)
    try timer.resume()
    #expect(update() == [.propertiesChanged(["IsPaused"])])
    #expect(model.state.timestamp == state.timestamp)
    bed.loop.advance(by: 5)
    #expect(model.state.elapsed(at: bed.loop.now) == 5)
  }

  @Test mutating func stopGoesBackToNull() throws {
    try timer.start()
    _ = update()
    bed.loop.advance(by: 7)
    try timer.stop()
    let changes = update()
    let (state, previous, elapsed) = try #require(stateChange(changes))
    #expect(state.name == "null")
    #expect(state.duration == 0)
    #expect(previous.name == "pomodoro")
    #expect(elapsed == 7)
  }

  @Test mutating func skipOrResetWhileIdleBeginsANewNullState() throws {
    let before = model.state
    bed.loop.advance(by: 3)
    let restarted = model.restartIdle(now: bed.loop.now)
    let change = try #require(restarted)
    guard case .stateChanged(let state, let previous, _, let properties) = change else {
      Issue.record("\(change)")
      return
    }
    #expect(state.name == "null")
    #expect(previous == before)
    #expect(state.timestamp == before.timestamp + 3)
    #expect(properties == ["State", "Elapsed", "StateDuration"])
    try timer.start()
    _ = update()
    let again = model.restartIdle(now: bed.loop.now)
    #expect(again == nil, "only while idle")
  }

  @Test mutating func aLongerPhaseAnnouncesItsDuration() throws {
    try timer.start()
    _ = update()
    try timer.extend(by: 300)
    #expect(update() == [.propertiesChanged(["Elapsed", "StateDuration"])])
    #expect(model.state.duration == 1800)
  }

  @Test mutating func elapsedTicksOnWholeSecondsWhileRunningOnly() throws {
    #expect(model.nextTick(after: bed.loop.now) == nil)
    try timer.start()
    _ = update()
    let start = bed.loop.now
    #expect(model.nextTick(after: start) == start.addingTimeInterval(1))
    bed.loop.advance(by: 1.25)
    let next = try #require(model.nextTick(after: bed.loop.now))
    #expect(abs(next.timeIntervalSince(start) - 2) < 1e-9)
    try timer.pause()
    _ = update()
    #expect(model.nextTick(after: bed.loop.now) == nil, "no wake-ups while paused")
  }
}
