import Foundation
@_spi(GrowHost) import GrowCore
import GrowMessages
import GrowPluginTesting
import Testing

@Suite("FocusTimer cycles")
struct FocusTimerCycleTests {
  @Test func runsFocusShortAndLongBreaksOnTheDeadlines() throws {
    let rig = Rig([card(autoFocus: true)])
    try rig.timer.start()
    rig.advance(minutes: 261)
    #expect(
      rig.starts == [
        "focus 1 @0", "short-break 1 @25", "focus 2 @30", "short-break 2 @55",
        "focus 3 @60", "short-break 3 @85", "focus 4 @90", "long-break 4 @115",
        "focus 1 @130", "short-break 1 @155", "focus 2 @160", "short-break 2 @185",
        "focus 3 @190", "short-break 3 @215", "focus 4 @220", "long-break 4 @245",
        "focus 1 @260",
      ])
    #expect(
      rig.ends.prefix(3) == [
        "focus 1 completed @25", "short-break 1 completed @30",
        "focus 2 completed @55",
      ])
    #expect(rig.log.of(PhaseEnded.self).allSatisfy { $0.outcome == .completed })
  }

  /// `TimerStatus.nextPhase` names the phase that starts when the running one runs its
  /// course, through sets cut by skips (a skipped focus does not count toward the long break).
  @Test func theNextPhaseShownIsTheOneThatStarts() throws {
    let rig = Rig([card(longAfter: 3, autoFocus: true)])
    try rig.timer.start()
    for step in 1...24 {
      guard step % 7 != 0 else {
        try rig.timer.skip()
        continue
      }
      let promised = rig.timer.status.nextPhase
      rig.time.advance(by: rig.timer.status.remaining)
      #expect(rig.log.last(PhaseStarted.self)?.phase.kind == promised, "step \(step)")
    }
    #expect(rig.log.of(PhaseStarted.self).contains { $0.phase.kind == .longBreak })

    let waiting = Rig([card(longAfter: 1)])
    #expect(waiting.timer.status.nextPhase == nil)
    try waiting.timer.start()
    #expect(waiting.timer.status.nextPhase == .longBreak)
    waiting.advance(minutes: 25 + 15)
    #expect(waiting.timer.status.state == .waiting)
    #expect(waiting.timer.status.nextPhase == .focus)
  }

  @Test func tenHoursInSmallStepsDoNotDrift() throws {
    let rig = Rig([card(autoFocus: true)])
    try rig.timer.start()
    for _ in 0..<5142 { rig.time.advance(by: 7) }
    rig.time.advance(by: 6)  // 10h exactly

    let started = rig.log.of(PhaseStarted.self)
    let ended = rig.log.of(PhaseEnded.self)
    #expect(started.count == 37)
    #expect(ended.count == 36)
    for (end, next) in zip(ended, started.dropFirst()) {
      #expect(next.phase.startedAt == end.endedAt)
      #expect(end.endedAt == end.phase.startedAt.addingTimeInterval(end.phase.duration))
    }
    #expect(
      rig.starts.suffix(5) == [
        "focus 1 @520", "short-break 1 @545", "focus 2 @550", "short-break 2 @575", "focus 3 @580",
      ])
    let status = rig.timer.status
    #expect(status.state == .focus)
    #expect(status.cycle == 3)
    #expect(status.remaining == 5 * minute)
  }

  @Test func oneBigAdvanceGivesTheSameTimelineAsManySmallOnes() throws {
    let small = Rig([card(autoFocus: true)])
    let big = Rig([card(autoFocus: true)])
    try small.timer.start()
    try big.timer.start()
    for _ in 0..<(6 * 60) { small.advance(minutes: 1) }
    big.advance(minutes: 6 * 60)
    #expect(small.starts == big.starts)
    #expect(small.ends == big.ends)
    #expect(small.starts.count == 23)
  }

  @Test func skippedFocusDoesNotCountTowardTheLongBreak() throws {
    let rig = Rig([card(longAfter: 2, autoFocus: true)])
    try rig.timer.start()
    rig.advance(minutes: 40)
    try rig.timer.skip()
    rig.advance(minutes: 50)
    #expect(
      rig.starts == [
        "focus 1 @0", "short-break 1 @25", "focus 2 @30", "short-break 2 @40", "focus 2 @45",
        "long-break 2 @70", "focus 1 @85",
      ])
    #expect(
      rig.ends == [
        "focus 1 completed @25", "short-break 1 completed @30", "focus 2 skipped @40",
        "short-break 2 completed @45", "focus 2 completed @70", "long-break 2 completed @85",
      ])
  }

  @Test func longBreakAfterEveryFocusWhenTheCardSaysOne() throws {
    let rig = Rig([card(longAfter: 1, autoFocus: true)])
    try rig.timer.start()
    rig.advance(minutes: 66)
    #expect(rig.starts == ["focus 1 @0", "long-break 1 @25", "focus 1 @40", "long-break 1 @65"])
  }
}

@Suite("FocusTimer waiting for the person")
struct FocusTimerWaitingTests {
  @Test func breakWaitsWhenAutoStartBreaksIsOff() throws {
    let rig = Rig([card(autoBreaks: false)])
    try rig.timer.start()
    rig.log.removeAll()
    rig.advance(minutes: 25)

    #expect(rig.log.names == ["phase-ended", "phase-awaiting", "timer-changed"])
    let awaiting = try #require(rig.log.last(PhaseAwaiting.self))
    #expect(awaiting.next == .shortBreak)
    #expect(awaiting.card == "work")
    let status = try #require(rig.log.last(TimerChanged.self)).status
    #expect(status.state == .waiting)
    #expect(status.next == .shortBreak)
    #expect(status.card == "work")
    #expect(status.cycle == 1)
    #expect(rig.time.nextDeadline == nil)

    rig.advance(minutes: 180)
    #expect(rig.log.names.count == 3)
    try rig.timer.resume()
    #expect(rig.starts == ["short-break 1 @205"])
    #expect(rig.timer.status.next == nil)
  }

  @Test func focusNeverStartsByItselfUnlessAutoStartFocus() throws {
    let rig = Rig([card()])
    try rig.timer.start()
    rig.advance(minutes: 30)
    #expect(rig.starts == ["focus 1 @0", "short-break 1 @25"])
    #expect(rig.log.last(PhaseAwaiting.self)?.next == .focus)
    rig.advance(minutes: 5 * 60)
    #expect(rig.starts.count == 2)
    #expect(rig.timer.status.next == .focus)
  }

  @Test func autoStartFocusWithoutAutoStartBreaks() throws {
    let rig = Rig([card(autoBreaks: false, autoFocus: true)])
    try rig.timer.start()
    rig.advance(minutes: 40)
    try rig.timer.resume()
    rig.advance(minutes: 6)
    #expect(rig.starts == ["focus 1 @0", "short-break 1 @40", "focus 2 @45"])
  }

  enum Starter: String, CaseIterable, Sendable {
    case resume, toggle, startNil, startEmpty, startSameCard
  }

  @Test(arguments: Starter.allCases)
  func theWaitingPhaseStartsOnRequest(starter: Starter) throws {
    let rig = Rig([card("work"), card("math", autoBreaks: false)])
    try rig.timer.start(card: "math")
    rig.advance(minutes: 30)
    switch starter {
    case .resume: try rig.timer.resume()
    case .toggle: try rig.timer.toggle()
    case .startNil: try rig.timer.start()
    case .startEmpty: try rig.timer.start(card: "")
    case .startSameCard: try rig.timer.start(card: "math")
    }
    #expect(rig.starts == ["focus 1 @0", "short-break 1 @30"])
    #expect(rig.log.of(SessionStopped.self).isEmpty)
    #expect(rig.timer.status.card == "math")
  }

  @Test func startingAnotherCardWhileWaitingBeginsANewSession() throws {
    let rig = Rig([card("work", autoBreaks: false), card("math", focus: 50 * minute)])
    try rig.timer.start()
    rig.advance(minutes: 30)
    rig.log.removeAll()
    try rig.timer.start(card: "math")

    #expect(
      rig.log.names == ["session-stopped", "timer-changed", "phase-started", "timer-changed"])
    let stopped = try #require(rig.log.last(SessionStopped.self))
    #expect(stopped.card == "work")
    #expect(stopped.completedFocusPhases == 1)
    let started = try #require(rig.log.last(PhaseStarted.self)).phase
    #expect(started.card == "math")
    #expect(started.kind == .focus)
    #expect(started.cycle == 1)
    #expect(started.duration == 50 * minute)
    #expect(started.startedAt == rig.origin.addingTimeInterval(30 * minute))
  }

  @Test func skipWhileABreakWaitsStartsTheNextFocus() throws {
    let rig = Rig([card(autoBreaks: false)])
    try rig.timer.start()
    rig.advance(minutes: 28)
    try rig.timer.skip()
    #expect(rig.starts == ["focus 1 @0", "focus 2 @28"])
    #expect(rig.ends == ["focus 1 completed @25"])
  }

  @Test func skipWhileFocusWaitsStartsTheBreakAfterIt() throws {
    let rig = Rig([card()])
    try rig.timer.start()
    rig.advance(minutes: 35)
    try rig.timer.skip()
    #expect(rig.starts == ["focus 1 @0", "short-break 1 @25", "short-break 1 @35"])
  }

  @Test func skippingAWaitingLongBreakStartsANewSet() throws {
    let rig = Rig([card(longAfter: 2, autoBreaks: false, autoFocus: true)])
    try rig.timer.start()
    rig.advance(minutes: 25)
    try rig.timer.resume()
    rig.advance(minutes: 30)
    #expect(rig.timer.status.next == .longBreak)
    try rig.timer.skip()
    rig.advance(minutes: 25)

    #expect(rig.starts == ["focus 1 @0", "short-break 1 @25", "focus 2 @30", "focus 1 @55"])
    #expect(rig.log.last(PhaseAwaiting.self)?.next == .shortBreak)
    #expect(rig.timer.status.cycle == 1)
  }
}

@Suite("FocusTimer pause and resume")
struct FocusTimerPauseTests {
  @Test func aSevenMinutePauseEndsThePhaseSevenMinutesLater() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    rig.log.removeAll()
    try rig.timer.pause()
    #expect(rig.log.names == ["phase-paused", "timer-changed"])
    #expect(rig.log.last(TimerChanged.self)?.status.paused == true)

    rig.advance(minutes: 7)
    let paused = rig.timer.status
    #expect(paused.state == .focus)
    #expect(paused.paused)
    #expect(paused.remaining == 15 * minute)
    #expect(paused.elapsed == 10 * minute)
    #expect(paused.endsAt == nil)
    #expect(rig.time.nextDeadline == nil)

    rig.log.removeAll()
    try rig.timer.resume()
    #expect(rig.log.names == ["phase-resumed", "timer-changed"])
    #expect(rig.log.last(PhaseResumed.self)?.pausedFor == 7 * minute)
    #expect(rig.timer.status.endsAt == rig.origin.addingTimeInterval(32 * minute))
    #expect(rig.timer.status.remaining == 15 * minute)

    rig.time.advance(by: 15 * minute - 1)
    #expect(rig.ends.isEmpty)
    rig.time.advance(by: 1)
    #expect(rig.ends == ["focus 1 completed @32"])
    #expect(rig.log.last(PhaseEnded.self)?.elapsed == 25 * minute)
    #expect(rig.starts.last == "short-break 1 @32")
  }

  @Test func severalPausesAddUp() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 5)
    try rig.timer.pause()
    rig.advance(minutes: 1)
    try rig.timer.toggle()
    rig.advance(minutes: 4)
    try rig.timer.toggle()
    rig.advance(minutes: 3)
    try rig.timer.resume()

    #expect(rig.log.of(PhaseResumed.self).map(\.pausedFor) == [60, 180])
    #expect(rig.timer.runningPhase?.pausedTotal == 4 * minute)
    #expect(rig.timer.status.elapsed == 9 * minute)
    rig.advance(minutes: 16)
    #expect(rig.ends == ["focus 1 completed @29"])
  }

  @Test func pausingABreakWorksToo() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 27)
    try rig.timer.pause()
    rig.advance(minutes: 10)
    try rig.timer.resume()
    rig.advance(minutes: 3)
    #expect(rig.ends == ["focus 1 completed @25", "short-break 1 completed @40"])
  }

  @Test func pauseAndResumeRefuseTheWrongState() throws {
    let rig = Rig()
    try rig.timer.start()
    #expect(
      refusal { try rig.timer.resume() }
        == "not paused; focus is running")
    try rig.timer.pause()
    #expect(
      refusal { try rig.timer.pause() }
        == "already paused; 'grow resume' continues")
  }
}

@Suite("FocusTimer extend")
struct FocusTimerExtendTests {
  @Test func extendMovesTheDeadline() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    rig.log.removeAll()
    try rig.timer.extend(by: 5 * minute)

    #expect(rig.log.names == ["phase-extended", "timer-changed"])
    let extended = try #require(rig.log.last(PhaseExtended.self))
    #expect(extended.addedSeconds == 300)
    #expect(extended.phase.duration == 30 * minute)
    let status = rig.timer.status
    #expect(status.duration == 30 * minute)
    #expect(status.remaining == 20 * minute)
    #expect(status.endsAt == rig.origin.addingTimeInterval(30 * minute))

    rig.advance(minutes: 15)
    #expect(rig.ends.isEmpty)
    rig.advance(minutes: 5)
    #expect(rig.ends == ["focus 1 completed @30"])
    #expect(rig.log.last(PhaseEnded.self)?.elapsed == 30 * minute)
  }

  @Test func extendWhilePaused() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    try rig.timer.pause()
    try rig.timer.extend(by: 5 * minute)
    #expect(rig.timer.status.endsAt == nil)
    #expect(rig.timer.status.remaining == 20 * minute)
    rig.advance(minutes: 10)
    try rig.timer.resume()
    rig.advance(minutes: 20)
    #expect(rig.ends == ["focus 1 completed @40"])
  }

  @Test func extendUpToExactlyADay() throws {
    let rig = Rig()
    try rig.timer.start()
    try rig.timer.extend(by: 24 * hour - 25 * minute)
    #expect(rig.timer.status.duration == 24 * hour)
    #expect(
      refusal { try rig.timer.extend(by: 1) }
        == "can only extend by 1s or more, up to a phase of 24h (asked for 1s)")
  }

  @Test(arguments: [
    (0.0, "0s"), (-60, "-60s"), (0.5, "0.5s"), (24 * hour, "86400s"),
  ])
  func extendRefusesBadAmounts(seconds: Double, shown: String) throws {
    let rig = Rig()
    try rig.timer.start()
    rig.log.removeAll()
    let message = "can only extend by 1s or more, up to a phase of 24h (asked for \(shown))"
    #expect(refusal { try rig.timer.extend(by: seconds) } == message)
    #expect(rig.log.events.isEmpty)
    #expect(rig.timer.status.endsAt == rig.origin.addingTimeInterval(25 * minute))
  }

  @Test(arguments: [Double.infinity, -.infinity, .nan, 1e20])
  func extendRefusesAbsurdAmountsWithoutCrashing(seconds: Double) throws {
    let rig = Rig()
    try rig.timer.start()
    #expect {
      try rig.timer.extend(by: seconds)
    } throws: { error in
      guard case .extensionOutOfRange = error as? TimerError else { return false }
      return true
    }
    #expect(rig.timer.status.duration == 25 * minute)
  }
}

@Suite("FocusTimer shorten")
struct FocusTimerShortenTests {
  @Test func shortenMovesTheDeadlineEarlier() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    rig.log.removeAll()
    try rig.timer.shorten(by: 5 * minute)

    #expect(rig.log.names == ["phase-extended", "timer-changed"])
    #expect(rig.log.last(PhaseExtended.self)?.addedSeconds == -300)
    #expect(rig.timer.status.remaining == 10 * minute)
    rig.advance(minutes: 10)
    #expect(rig.ends == ["focus 1 completed @20"])
  }

  @Test func aPhaseKeepsItsLastMinute() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 20)
    try rig.timer.shorten(by: 10 * minute)
    #expect(rig.timer.status.remaining == 1 * minute, "cut to a minute, not ended")
    #expect(rig.ends.isEmpty)
    rig.log.removeAll()
    #expect(
      refusal { try rig.timer.shorten(by: 1 * minute) }
        == "only 1m left; a phase keeps its last minute ('grow skip' ends it)")
    #expect(rig.log.events.isEmpty)
  }

  @Test func shortenWhilePausedKeepsItPaused() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    try rig.timer.pause()
    try rig.timer.shorten(by: 5 * minute)
    #expect(rig.timer.status.paused)
    #expect(rig.timer.status.remaining == 10 * minute)
    rig.advance(minutes: 30)
    #expect(rig.ends.isEmpty, "a paused phase does not run out")
  }

  @Test(arguments: [0.0, -60, 0.5, .nan, -.infinity])
  func shortenRefusesBadAmounts(seconds: Double) throws {
    let rig = Rig()
    try rig.timer.start()
    #expect {
      try rig.timer.shorten(by: seconds)
    } throws: { error in
      guard case .cannotShorten = error as? TimerError else { return false }
      return true
    }
    #expect(rig.timer.status.duration == 25 * minute)
  }

  @Test func nothingToShortenWhenIdle() throws {
    let rig = Rig()
    #expect(
      refusal { try rig.timer.shorten(by: 60) }
        == "nothing is running to shorten; start with 'grow start [CARD]'")
  }
}

@Suite("FocusTimer skip and stop")
struct FocusTimerSkipStopTests {
  @Test func skipEndsThePhaseAndMovesOn() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    rig.log.removeAll()
    try rig.timer.skip()
    #expect(rig.log.names == ["phase-ended", "phase-started", "timer-changed"])
    #expect(rig.ends == ["focus 1 skipped @10"])
    #expect(rig.log.last(PhaseEnded.self)?.elapsed == 10 * minute)
    #expect(rig.starts == ["short-break 1 @10"])
  }

  @Test func skippingABreakWaitsForFocus() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 26)
    rig.log.removeAll()
    try rig.timer.skip()
    #expect(rig.log.names == ["phase-ended", "phase-awaiting", "timer-changed"])
    #expect(rig.ends == ["short-break 1 skipped @26"])
    #expect(rig.timer.status.next == .focus)
  }

  @Test func stopEndsTheSession() throws {
    let rig = Rig([card(autoFocus: true)])
    try rig.timer.start()
    rig.advance(minutes: 70)
    rig.log.removeAll()
    try rig.timer.stop()

    #expect(rig.log.names == ["phase-ended", "session-stopped", "timer-changed"])
    #expect(rig.ends == ["focus 3 stopped @70"])
    #expect(rig.log.last(PhaseEnded.self)?.elapsed == 10 * minute)
    let stopped = try #require(rig.log.last(SessionStopped.self))
    #expect(stopped.card == "work")
    #expect(stopped.completedFocusPhases == 2)
    let status = try #require(rig.log.last(TimerChanged.self)).status
    #expect(status.state == .idle)
    #expect(status.card == "")
    #expect(status.cycle == 0)
    #expect(rig.time.nextDeadline == nil)

    rig.log.removeAll()
    rig.advance(minutes: 120)
    #expect(rig.log.events.isEmpty)
  }

  @Test func stopWhileWaiting() throws {
    let rig = Rig([card(autoBreaks: false)])
    try rig.timer.start()
    rig.advance(minutes: 30)
    rig.log.removeAll()
    try rig.timer.stop()
    #expect(rig.log.names == ["session-stopped", "timer-changed"])
    #expect(rig.log.last(SessionStopped.self)?.completedFocusPhases == 1)
    #expect(rig.timer.status.next == nil)
    #expect(rig.timer.status.card == "")
  }

  enum Command: String, CaseIterable, Sendable {
    case stop, skip, pause, extend, resume
    func run(_ timer: FocusTimer) throws(TimerError) {
      switch self {
      case .stop: try timer.stop()
      case .skip: try timer.skip()
      case .pause: try timer.pause()
      case .extend: try timer.extend(by: 60)
      case .resume: try timer.resume()
      }
    }
  }

  @Test(arguments: Command.allCases)
  func commandsWhileIdleSayHowToStart(command: Command) {
    let rig = Rig()
    let message = "nothing is running to \(command.rawValue); start with 'grow start [CARD]'"
    #expect(refusal { try command.run(rig.timer) } == message)
    #expect(rig.log.events.isEmpty)
  }

  @Test(arguments: [Command.pause, .extend])
  func commandsWhileWaitingNameTheWaitingPhase(command: Command) throws {
    let rig = Rig([card(autoBreaks: false)])
    try rig.timer.start()
    rig.advance(minutes: 25)
    let message =
      "nothing is running to \(command.rawValue): the short break is waiting; "
      + "'grow resume' starts it, 'grow stop' ends the session"
    #expect(refusal { try command.run(rig.timer) } == message)
  }

  @Test func startWhileRunningNamesTheCardAndTimeLeft() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    #expect(
      refusal { try rig.timer.start() }
        == "focus on 'work' is already running (15:00 left); "
        + "use 'grow stop' to end it or 'grow skip' to move on")
    rig.time.advance(by: 15 * minute + 0.5)
    #expect(
      refusal { try rig.timer.start(card: "work") }
        == "short break on 'work' is already running (5:00 left); "
        + "use 'grow stop' to end it or 'grow skip' to move on")
  }

  @Test func unknownCardSuggestsTheNearMiss() throws {
    let rig = Rig([card("work"), card("math")])
    #expect(throws: TimerError.unknownCard("mtah", known: ["work", "math"])) {
      try rig.timer.start(card: "mtah")
    }
    do {
      try rig.timer.start(card: "mtah")
    } catch {
      #expect(
        error.message == "no card named 'mtah'; did you mean 'math'? (cards: work, math)")
    }
    #expect(rig.log.events.isEmpty)
    #expect(rig.timer.status == .idle)
  }

  @Test func toggleFromIdleStartsTheDefaultCard() throws {
    let rig = Rig([card("work"), card("math")], defaultCard: "math")
    try rig.timer.toggle()
    #expect(rig.timer.status.card == "math")
    #expect(rig.timer.status.state == .focus)
  }
}

@Suite("FocusTimer session overrides")
struct FocusTimerOverrideTests {
  @Test func overridesApplyToThatSessionOnly() throws {
    let rig = Rig([card(longAfter: 2, autoFocus: true)])
    let overrides = SessionOverrides(
      focus: 50 * minute, shortBreak: 10 * minute, longBreak: 30 * minute, intention: "Ch. 3")
    try rig.timer.start(overrides: overrides)
    #expect(rig.log.last(PhaseStarted.self)?.intention == "Ch. 3")
    #expect(rig.timer.status.intention == "Ch. 3")
    rig.advance(minutes: 141)
    #expect(
      rig.starts == [
        "focus 1 @0", "short-break 1 @50", "focus 2 @60", "long-break 2 @110", "focus 1 @140",
      ])

    try rig.timer.stop()
    try rig.timer.start()
    let phase = try #require(rig.timer.runningPhase)
    #expect(phase.duration == 25 * minute)
    #expect(rig.log.last(PhaseStarted.self)?.intention == nil)
    #expect(rig.timer.status.intention == nil)
  }

  @Test func emptyIntentionClearsTheCardsIntention() throws {
    let rig = Rig([card(intention: "Essay")])
    try rig.timer.start(overrides: .init(intention: ""))
    #expect(rig.timer.status.intention == nil)
    try rig.timer.stop()
    try rig.timer.start()
    #expect(rig.timer.status.intention == "Essay")
  }

  @Test func anIntentionOfTwoHundredCharactersIsTheLongest() throws {
    let rig = Rig()
    let longest = String(repeating: "é", count: SessionOverrides.maximumIntentionLength)
    try rig.timer.start(overrides: .init(intention: longest))
    #expect(rig.timer.status.intention == longest)
  }

  @Test(arguments: [
    (
      String(repeating: "x", count: 201),
      "the intention is longer than 200 characters; keep it to one short line, "
        + "such as 'Chapter 3 exercises'"
    ),
    // One character of 10,000 bytes: "e" and as many combining acute accents.
    (
      "e" + String(repeating: "\u{301}", count: 5000),
      "the intention is longer than 200 characters; keep it to one short line, "
        + "such as 'Chapter 3 exercises'"
    ),
    (
      "Essay\nrm -rf",
      "the intention must be one line of text; it holds the control character U+000A"
    ),
    ("tab\there", "the intention must be one line of text; it holds the control character U+0009"),
    (
      "\u{1B}[31mred",
      "the intention must be one line of text; it holds the control character U+001B"
    ),
    (
      "Essay\u{2028}rm -rf",
      "the intention must be one line of text; it holds the line separator U+2028"
    ),
    (
      "Essay\u{2029}more",
      "the intention must be one line of text; it holds the paragraph separator U+2029"
    ),
  ])
  func overlongOrMultiLineIntentionsAreRefused(intention: String, message: String) {
    let rig = Rig()
    #expect(
      refusal { try rig.timer.start(overrides: .init(intention: intention)) }
        == message)
    #expect(rig.log.events.isEmpty)
    #expect(rig.timer.status == .idle)
  }

  @Test func aDayIsTheLongestOverride() throws {
    let rig = Rig()
    try rig.timer.start(overrides: .init(focus: 24 * hour))
    #expect(rig.timer.status.duration == 24 * hour)
  }

  @Test(arguments: [
    (SessionOverrides(focus: 0), "focus must be between 1s and 24h, not 0s"),
    (SessionOverrides(shortBreak: 86401), "short-break must be between 1s and 24h, not 86401s"),
    (SessionOverrides(longBreak: -60), "long-break must be between 1s and 24h, not -60s"),
  ])
  func outOfRangeOverridesAreRefused(overrides: SessionOverrides, message: String) {
    let rig = Rig()
    #expect(
      refusal { try rig.timer.start(overrides: overrides) }
        == message)
    #expect(rig.log.events.isEmpty)
    #expect(rig.timer.status == .idle)
  }

  @Test(arguments: [Double.infinity, .nan, 1e30])
  func absurdOverridesAreRefusedWithoutCrashing(seconds: Double) {
    let rig = Rig()
    #expect {
      try rig.timer.start(overrides: .init(focus: seconds))
    } throws: { error in
      guard case .lengthOutOfRange = error as? TimerError else { return false }
      return true
    }
    #expect(rig.timer.status == .idle)
  }
}

@Suite("FocusTimer status")
struct FocusTimerStatusTests {
  @Test func idleStatus() {
    #expect(Rig().timer.status == .idle)
  }

  @Test func runningStatusHasEveryField() throws {
    let work = FocusCard(name: "work", dailyGoal: 2 * hour, intention: "Essay")
    let rig = Rig([work])
    try rig.timer.start()
    rig.advance(minutes: 10)
    var expected = TimerStatus.idle
    expected.state = .focus
    expected.card = "work"
    expected.duration = 1500
    expected.remaining = 900
    expected.elapsed = 600
    expected.startedAt = rig.origin
    expected.endsAt = rig.origin.addingTimeInterval(1500)
    expected.cycle = 1
    expected.longBreakAfter = 4
    expected.dailyGoal = 7200
    expected.intention = "Essay"
    #expect(rig.timer.status == expected)
  }

  @Test func waitingStatusNamesTheNextPhase() throws {
    let rig = Rig([card(autoBreaks: false)])
    try rig.timer.start()
    rig.advance(minutes: 30)
    var expected = TimerStatus.idle
    expected.state = .waiting
    expected.card = "work"
    expected.cycle = 1
    expected.longBreakAfter = 4
    expected.next = .shortBreak
    #expect(rig.timer.status == expected)
  }

  @Test func breakStatusCarriesTheCycleOfItsFocus() throws {
    let rig = Rig([card(autoFocus: true)])
    try rig.timer.start()
    rig.advance(minutes: 57)
    let status = rig.timer.status
    #expect(status.state == .shortBreak)
    #expect(status.cycle == 2)
    #expect(status.remaining == 3 * minute)
  }

  /// The timer reports today's totals; the history keeps them (HistoryRecorderTests,
  /// "today"), so a timer without a keeper reads an empty day.
  @Test func todayIsWhatTheKeeperSays() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 25)
    #expect(rig.timer.status.completedToday == 0, "no keeper: nobody counts")
    let keeper = FixedToday(TodayTotals(completed: 3, focusSeconds: 4500, cutShortSeconds: 60))
    rig.timer.todayKeeper = keeper
    #expect(rig.timer.status.completedToday == 3)
    #expect(rig.timer.status.focusToday == 4500)
    #expect(rig.timer.status.cutShortToday == 60)
  }
}

/// A keeper that says the same totals whatever happens.
private final class FixedToday: TodayKeeper {
  let todayTotals: TodayTotals
  init(_ totals: TodayTotals) { todayTotals = totals }
}

@Suite("FocusTimer events")
struct FocusTimerEventTests {
  @Test func everyChangePublishesItsEventThenTimerChanged() throws {
    let rig = Rig([card(autoBreaks: false)])
    var checked = 0
    rig.bus.subscribe(TimerChanged.self, as: "check") { [timer = rig.timer] changed in
      #expect(changed.status == timer.status)
      checked += 1
    }
    try rig.timer.start()
    try rig.timer.pause()
    try rig.timer.resume()
    try rig.timer.extend(by: 60)
    rig.advance(minutes: 26)
    try rig.timer.resume()
    try rig.timer.skip()
    try rig.timer.stop()
    #expect(
      rig.log.names == [
        "phase-started", "timer-changed",
        "phase-paused", "timer-changed",
        "phase-resumed", "timer-changed",
        "phase-extended", "timer-changed",
        "phase-ended", "phase-awaiting", "timer-changed",
        "phase-started", "timer-changed",
        "phase-ended", "phase-awaiting", "timer-changed",
        "session-stopped", "timer-changed",
      ])
    #expect(checked == 8)
  }
}

/// A clock whose alarms fire only when the test says, early or not.
private final class ScriptedClock: TimeSource {
  final class Pending: Alarm {
    let deadline: Date
    var action: (() -> Void)?
    init(_ deadline: Date, _ action: @escaping () -> Void) {
      self.deadline = deadline
      self.action = action
    }
    func cancel() { action = nil }
  }

  var now: Date
  let zone = LocalZone.utc
  private(set) var alarms: [Pending] = []

  init(now: Date) { self.now = now }

  func schedule(at deadline: Date, _ action: @escaping () -> Void) -> any Alarm {
    let alarm = Pending(deadline, action)
    alarms.append(alarm)
    return alarm
  }

  var pendingDeadlines: [Date] { alarms.filter { $0.action != nil }.map(\.deadline) }

  /// Fires every pending alarm now, whatever its deadline.
  func fireAll() {
    let due = alarms.compactMap(\.action)
    alarms.removeAll()
    for action in due { action() }
  }
}

@Suite("FocusTimer wall-clock changes")
struct FocusTimerClockTests {
  @Test func anAlarmThatWakesEarlyDoesNotEndThePhase() throws {
    let start = date(2026, 5, 4, 8)
    let clock = ScriptedClock(now: start)
    let bus = EventBus()
    let log = EventRecorder(bus)
    let timer = FocusTimer(deck: .standard, bus: bus, time: clock)
    try timer.start()

    clock.now = start.addingTimeInterval(15 * minute)  // the clock went back 10 minutes
    clock.fireAll()
    #expect(log.of(PhaseEnded.self).isEmpty)
    #expect(timer.status.state == .focus)
    #expect(timer.status.remaining == 10 * minute)
    #expect(clock.pendingDeadlines == [start.addingTimeInterval(25 * minute)])

    clock.now = start.addingTimeInterval(25 * minute)
    clock.fireAll()
    #expect(log.of(PhaseEnded.self).map(\.endedAt) == [start.addingTimeInterval(25 * minute)])
    #expect(timer.status.state == .shortBreak)
  }

  @Test func aBackwardJumpKeepsTheWallClockDeadline() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.advance(minutes: 10)
    rig.time.set(now: rig.origin.addingTimeInterval(-50 * minute))
    #expect(rig.timer.status.remaining == 25 * minute)
    rig.advance(minutes: 74)
    #expect(rig.ends.isEmpty)
    rig.advance(minutes: 1)
    #expect(rig.ends == ["focus 1 completed @25"])
  }

  @Test func aLatePhaseStartsTheNextOneNow() throws {
    let rig = Rig()
    try rig.timer.start()
    rig.time.set(now: rig.origin.addingTimeInterval(35 * minute))  // suspended
    rig.time.advance(by: 0)
    #expect(rig.ends == ["focus 1 completed @25"])
    #expect(rig.log.last(PhaseEnded.self)?.elapsed == 25 * minute)
    #expect(rig.starts == ["focus 1 @0", "short-break 1 @35"])
    #expect(rig.timer.status.remaining == 5 * minute)
    rig.advance(minutes: 5)
    #expect(rig.ends.last == "short-break 1 completed @40")
  }

  @Test(arguments: [(30.0, 1500.0), (60, 1500), (61, 1561)])
  func slightlyLatePhasesKeepTheirDeadline(late: Double, nextStart: Double) throws {
    let rig = Rig()
    try rig.timer.start()
    rig.time.set(now: rig.origin.addingTimeInterval(25 * minute + late))
    rig.time.advance(by: 0)
    let started = try #require(rig.log.last(PhaseStarted.self)).phase
    #expect(started.kind == .shortBreak)
    #expect(started.startedAt == rig.origin.addingTimeInterval(nextStart))
    #expect(FocusTimer.lateStartTolerance == 60)
  }
}

/// The words a person reads for the refusal `body` throws (the app's message layer), or nil
/// when it is not refused.
func refusal(_ body: () throws -> Void) -> String? {
  do {
    try body()
    return nil
  } catch let error as TimerError {
    return error.message
  } catch {
    return "not a refusal: \(error)"
  }
}
