import FoundationEssentials

/// One-off changes to a card for a single session (`grow start --focus 50m`).
public struct SessionOverrides: Sendable, Equatable {
  public var focus: TimeInterval?
  public var shortBreak: TimeInterval?
  public var longBreak: TimeInterval?
  public var intention: String?
  /// The task the session's focus is for (its id in the history's task list).
  public var task: Int64?

  public init(
    focus: TimeInterval? = nil, shortBreak: TimeInterval? = nil, longBreak: TimeInterval? = nil,
    intention: String? = nil, task: Int64? = nil
  ) {
    self.focus = focus
    self.shortBreak = shortBreak
    self.longBreak = longBreak
    self.intention = intention
    self.task = task
  }

  func applied(to card: FocusCard) throws(TimerError) -> FocusCard {
    var card = card
    for (label, value) in [
      ("focus", focus), ("short-break", shortBreak), ("long-break", longBreak),
    ] {
      if let value, !(1...DurationText.maximum).contains(value) {
        throw .lengthOutOfRange(option: label, seconds: value)
      }
    }
    if let intention { try Self.check(intention: intention) }
    card.focus = focus ?? card.focus
    card.shortBreak = shortBreak ?? card.shortBreak
    card.longBreak = longBreak ?? card.longBreak
    if let intention { card.intention = intention.isEmpty ? nil : intention }
    card.task = task
    return card
  }

  /// The longest intention accepted, in characters: a line for a status bar or a notification
  /// (config.ini's lines hold no more either).
  public static let maximumIntentionLength = 200

  /// An intention is one short line: it goes into status bars, notifications, the history and
  /// the saved session, which a line break or megabytes of text would break or bloat.
  public static func check(intention: String) throws(TimerError) {
    let limit = maximumIntentionLength
    // Bytes too: one character can carry any number of combining marks.
    if intention.utf8.count > 4 * limit || intention.prefix(limit + 1).count > limit {
      throw .intentionTooLong(limit: limit)
    }
    // U+2028 and U+2029 are line breaks too: JSON, JavaScript bars and text views break there.
    for scalar in intention.unicodeScalars {
      switch scalar.properties.generalCategory {
      case .control, .lineSeparator, .paragraphSeparator: throw .intentionNotOneLine(scalar)
      default: continue
      }
    }
  }
}

/// The focus / short-break / long-break state machine, driven by deadlines.
///
/// It sleeps until the running phase's deadline (one alarm from its `TimeSource`) and never
/// ticks to count down. Every change is published on the `EventBus`: the specific event
/// first, then `TimerChanged` with the new status.
///
/// The timer is owned by one event loop; call it only from there.
public final class FocusTimer {
  private enum Mode {
    case idle
    case running(Phase)
    /// A phase ended and the card does not start the next one by itself.
    case awaiting(PhaseKind)
  }

  /// One session: a card started once and run until `stop`.
  fileprivate struct Session: Codable, Equatable {
    var card: FocusCard
    /// Completed focus phases since the last long break; decides when the long one is due.
    var focusSinceLongBreak = 0
    var completedFocus = 0
    /// The number shown for the focus phase now running or last run.
    var cycle = 0
  }

  public private(set) var deck: CardDeck
  /// Counts `replaceDeck`s: what was derived from one deck (ListCards' encoded reply) is
  /// current while this has not moved, without comparing tens of thousands of cards.
  public private(set) var deckGeneration = 0
  private let bus: EventBus
  private let time: any TimeSource
  private var mode = Mode.idle
  private var session: Session?
  private var alarm: (any Alarm)?
  /// Who keeps today's totals (the history, in the daemon); without one they read zero.
  @_spi(GrowHost) public weak var todayKeeper: (any TodayKeeper)?

  /// Phases that end more than this late (a suspended machine, a stopped daemon) start the next
  /// phase now rather than at the old deadline, so a break is never already over when it begins.
  public static let lateStartTolerance: TimeInterval = 60

  /// A sleep (suspend) this long or longer ends the session instead of pausing focus: the
  /// person has clearly left, and nothing should start by itself when the lid opens again.
  public var sleepLimit: TimeInterval = 10 * 60

  public init(deck: CardDeck, bus: EventBus, time: any TimeSource) {
    self.deck = deck
    self.bus = bus
    self.time = time
  }

  /// Replaces the cards (after the config was reloaded). A running session keeps its card.
  public func replaceDeck(_ deck: CardDeck) {
    self.deck = deck
    deckGeneration &+= 1
  }

  // MARK: Commands

  /// Starts a session on `cardName` (the default card for nil or empty).
  ///
  /// While the next phase is waiting, starts that phase instead when `cardName` is nil, empty
  /// or the session's card (and there are no overrides).
  public func start(card cardName: String? = nil, overrides: SessionOverrides = .init())
    throws(TimerError)
  {
    let card = try overrides.applied(to: deck.card(named: cardName))
    switch mode {
    case .running(let phase):
      throw .alreadyRunning(phase.kind, card: phase.card, remaining: phase.remaining(at: time.now))
    case .awaiting(let next)
    where overrides == .init() && ((cardName ?? "").isEmpty || session?.card.name == card.name):
      begin(next, at: time.now)
    case .awaiting, .idle:
      if case .awaiting = mode { endSession() }
      session = Session(card: card)
      begin(.focus, at: time.now)
    }
  }

  public func pause() throws(TimerError) {
    guard case .running(var phase) = mode else { throw notRunning("pause") }
    guard !phase.isPaused else { throw .alreadyPaused }
    phase.pausedAt = time.now
    cancelAlarm()
    mode = .running(phase)
    bus.publish(PhasePaused(phase: phase))
    publishChange()
  }

  /// Continues a paused phase, or starts the phase that is waiting.
  public func resume() throws(TimerError) {
    switch mode {
    case .awaiting(let next):
      begin(next, at: time.now)
    case .running(var phase):
      guard let pausedAt = phase.pausedAt else {
        throw .notPaused(phase.kind)
      }
      let pausedFor = time.now.timeIntervalSince(pausedAt)
      phase.pausedTotal += max(0, pausedFor)
      phase.pausedAt = nil
      mode = .running(phase)
      armAlarm(for: phase)
      bus.publish(PhaseResumed(phase: phase, pausedFor: pausedFor))
      publishChange()
    case .idle:
      throw notRunning("resume")
    }
  }

  /// Pauses a running phase, resumes a paused one, starts a waiting one; from idle, starts the
  /// default card.
  public func toggle() throws(TimerError) {
    switch mode {
    case .idle: try start()
    case .awaiting: try resume()
    case .running(let phase): try phase.isPaused ? resume() : pause()
    }
  }

  /// Ends the running phase early and moves on, following the card's auto-start rules. While a
  /// phase is waiting, skipping it starts the one after it: an explicit request to move on.
  public func skip() throws(TimerError) {
    switch mode {
    case .idle:
      throw notRunning("skip")
    case .awaiting(let next):
      // A skipped long break still closes the set; otherwise the count stays at N.
      if next == .longBreak { session?.focusSinceLongBreak = 0 }
      begin(phase(after: next, completed: false), at: time.now)
    case .running(let phase):
      finish(phase, outcome: .skipped, at: time.now)
    }
  }

  /// Ends the session; a running phase ends as `stopped`.
  public func stop() throws(TimerError) {
    switch mode {
    case .idle:
      throw notRunning("stop")
    case .awaiting:
      endSession()
    case .running(let phase):
      end(phase, outcome: .stopped, at: time.now)
      endSession()
    }
  }

  /// Adds `seconds` to the running (or paused) phase.
  public func extend(by seconds: TimeInterval) throws(TimerError) {
    guard case .running(var phase) = mode else { throw notRunning("extend") }
    guard seconds >= 1, phase.duration + seconds <= DurationText.maximum else {
      throw .extensionOutOfRange(seconds: seconds)
    }
    phase.duration += seconds
    mode = .running(phase)
    if !phase.isPaused { armAlarm(for: phase) }
    bus.publish(PhaseExtended(phase: phase, addedSeconds: seconds))
    publishChange()
  }

  /// Takes up to `seconds` off the running phase, leaving it at least
  /// `minimumLeftAfterShortening`: a phase is never ended by shortening (`skip` does that).
  /// Published as a `PhaseExtended` with a negative `addedSeconds`.
  public func shorten(by seconds: TimeInterval) throws(TimerError) {
    guard case .running(var phase) = mode else { throw notRunning("shorten") }
    let remaining = phase.remaining(at: time.now)
    let cut = min(seconds, remaining - Self.minimumLeftAfterShortening)
    guard seconds >= 1, cut >= 1 else {
      throw .cannotShorten(seconds: seconds, remaining: remaining)
    }
    phase.duration -= cut
    mode = .running(phase)
    if !phase.isPaused { armAlarm(for: phase) }
    bus.publish(PhaseExtended(phase: phase, addedSeconds: -cut))
    publishChange()
  }

  /// What `shorten` always leaves of a phase.
  public static let minimumLeftAfterShortening: TimeInterval = 60

  // MARK: Sleep and clock changes

  /// The machine was asleep for the last `seconds` (suspend, hibernation), now over.
  ///
  /// Time asleep is never focus: during a running focus phase it becomes a pause, and a sleep of
  /// `sleepLimit` or more ends the phase at the moment the machine went to sleep and closes the
  /// session. A break keeps its wall-clock deadline (rest is rest), but one that ran out during
  /// a long sleep closes the session rather than auto-starting focus on waking.
  public func systemSlept(for seconds: TimeInterval) {
    guard seconds > 0 else { return }
    let awakeAt = time.now
    let asleepAt = awakeAt.addingTimeInterval(-seconds)
    let announce = { (phase: Phase?, effect: SystemSlept.Effect) in
      let during = phase.map { min(seconds, awakeAt.timeIntervalSince($0.startedAt)) } ?? 0
      self.bus.publish(
        SystemSlept(
          asleepAt: asleepAt, awakeAt: awakeAt, phase: phase, effect: effect,
          asleepDuringPhase: max(0, during)))
    }
    guard case .running(var phase) = mode, !phase.isPaused, let deadline = phase.deadline else {
      return announce(runningPhase, .none)
    }
    // A phase that ran out before the machine slept ends as usual; sleep cannot touch it.
    if deadline <= asleepAt { return deadlineReached() }
    let isLong = seconds >= sleepLimit
    if phase.kind == .focus && !isLong {
      announce(phase, .focusPaused)
      phase.pausedTotal += min(seconds, awakeAt.timeIntervalSince(phase.startedAt))
      mode = .running(phase)
      armAlarm(for: phase)
      publishChange()
    } else if phase.kind == .focus {
      announce(phase, .sessionEnded)
      end(phase, outcome: .stopped, at: max(phase.startedAt, asleepAt))
      endSession()
    } else if isLong && deadline <= awakeAt {
      // A break that ran out during a long sleep: rest done, session over.
      announce(phase, .sessionEnded)
      end(phase, outcome: .completed, at: deadline)
      endSession()
    } else {
      announce(phase, .none)
    }
  }

  /// The wall clock was set `seconds` forward (negative: back), by hand or by a time sync.
  ///
  /// Phases are anchored to wall-clock instants, so the running phase moves with the clock:
  /// the time left stays what it was, rather than a focus ending (or lasting) an hour early.
  public func wallClockChanged(by seconds: TimeInterval) {
    guard seconds != 0, case .running(var phase) = mode else { return }
    phase.startedAt.addTimeInterval(seconds)
    phase.pausedAt?.addTimeInterval(seconds)
    mode = .running(phase)
    if !phase.isPaused { armAlarm(for: phase) }
    publishChange()
  }

  // MARK: Saving and restoring

  /// Everything needed to carry a session across a restart of the daemon (or a crash). Its
  /// phase is anchored to wall-clock instants, so it stays right whatever happened meanwhile.
  public struct SavedSession: Codable, Equatable, Sendable {
    fileprivate var session: Session
    /// The running (or paused) phase; nil while the next phase waits.
    fileprivate var phase: Phase?
    fileprivate var next: PhaseKind?

    /// The phase that was running (or paused) when the session was saved.
    public var runningPhase: Phase? { phase }
    /// The intention of the session's card.
    public var intention: String? { session.card.intention }
    /// The task of the session's card (`grow start --task`).
    public var task: Int64? { session.card.task }
  }

  /// The session as it is now, to be saved; nil when idle.
  public var savedSession: SavedSession? {
    guard let session else { return nil }
    switch mode {
    case .idle: return nil
    case .running(let phase): return SavedSession(session: session, phase: phase, next: nil)
    case .awaiting(let next): return SavedSession(session: session, phase: nil, next: next)
    }
  }

  /// What `restore` made of a saved session.
  @frozen public enum RestoreResult: Equatable, Sendable {
    /// The session goes on, at the phase real time has reached.
    case resumed
    /// Its phase ended more than the maximum age ago: the session was closed.
    case closedAsTooOld
    /// The history already has its phase ending the session (stopped, or cut short by the
    /// daemon's exit): there was nothing left to resume.
    case alreadyOver
    /// The timer was not idle; nothing was restored.
    case notIdle
  }

  /// How the history says a phase ended, for `restore`.
  public typealias RecordedEnd = (outcome: PhaseOutcome, endedAt: Date)

  /// Takes up a saved session after a restart. A phase whose deadline passed while the daemon
  /// was gone ends at its deadline and the card's auto-start rules decide what follows; one
  /// that ended more than `maximumAge` ago closes the session instead of resuming it.
  /// - Parameter recordedEnd: how the history says a phase ended, when it has it. A daemon
  ///   killed after recording a phase's end but before saving what followed leaves that phase
  ///   in the saved session; it is not ended (counted, announced, recorded) a second time, and
  ///   the session goes on from the recorded end (`stopped` and `abandoned` end the session).
  @discardableResult
  public func restore(
    _ saved: SavedSession, maximumAge: TimeInterval = 3600,
    recordedEnd: (Phase) -> RecordedEnd? = { _ in nil }
  ) -> RestoreResult {
    guard case .idle = mode else { return .notIdle }
    session = saved.session
    if let next = saved.next {
      mode = .awaiting(next)
      publishChange()
      return .resumed
    }
    guard let phase = saved.phase else {
      endSession()
      return .closedAsTooOld
    }
    let now = time.now
    if let ended = recordedEnd(phase) {
      mode = .running(phase)
      // Stopped or abandoned: that end closed the session.
      guard ended.outcome != .stopped, ended.outcome != .abandoned else {
        endSession()
        return .alreadyOver
      }
      let late = now.timeIntervalSince(ended.endedAt)
      guard late <= maximumAge else {
        endSession()
        return .closedAsTooOld
      }
      advance(after: phase, outcome: ended.outcome, at: ended.endedAt, lateBy: late)
      return .resumed
    }
    guard let deadline = phase.deadline, deadline <= now else {
      // Still running, or paused (a paused phase keeps its remaining time).
      mode = .running(phase)
      armAlarm(for: phase)
      publishChange()
      return .resumed
    }
    mode = .running(phase)
    guard now.timeIntervalSince(deadline) <= maximumAge else {
      end(phase, outcome: .completed, at: deadline)
      endSession()
      return .closedAsTooOld
    }
    finish(phase, outcome: .completed, at: deadline, lateBy: now.timeIntervalSince(deadline))
    return .resumed
  }

  // MARK: Status

  /// What the timer shows now, with today's totals as `todayKeeper` has them. Reading it
  /// changes nothing.
  public var status: TimerStatus {
    let now = time.now
    let figures = todayKeeper?.todayTotals ?? TodayTotals()
    var status = TimerStatus.idle
    status.completedToday = figures.completed
    status.focusToday = figures.focusSeconds
    status.cutShortToday = figures.cutShortSeconds
    guard let session else { return status }
    status.card = session.card.name
    status.longBreakAfter = session.card.longBreakAfter
    status.dailyGoal = session.card.dailyGoal
    status.intention = session.card.intention
    status.cycle = session.cycle
    switch mode {
    case .idle:
      break
    case .awaiting(let next):
      status.state = .waiting
      status.next = next
    case .running(let phase):
      status.state = .init(phase.kind)
      status.paused = phase.isPaused
      status.duration = phase.duration
      status.elapsed = phase.elapsed(at: now)
      status.remaining = phase.remaining(at: now)
      status.startedAt = phase.startedAt
      status.endsAt = phase.deadline
      status.cycle = phase.cycle
    }
    return status
  }

  /// The running phase, if any.
  public var runningPhase: Phase? {
    if case .running(let phase) = mode { return phase }
    return nil
  }

  // MARK: Transitions

  private func begin(_ kind: PhaseKind, at start: Date) {
    guard var session else { return }
    if kind == .focus { session.cycle = session.focusSinceLongBreak + 1 }
    if kind == .longBreak { session.focusSinceLongBreak = 0 }
    self.session = session
    let phase = Phase(
      kind: kind, card: session.card.name, cycle: session.cycle,
      duration: session.card.length(of: kind), startedAt: start)
    mode = .running(phase)
    armAlarm(for: phase)
    bus.publish(
      PhaseStarted(phase: phase, intention: session.card.intention, task: session.card.task))
    publishChange()
  }

  private func deadlineReached() {
    guard case .running(let phase) = mode, let deadline = phase.deadline else { return }
    let now = time.now
    // A wall-clock change can wake us early; wait for the real deadline.
    guard now >= deadline else { return armAlarm(for: phase) }
    finish(phase, outcome: .completed, at: deadline, lateBy: now.timeIntervalSince(deadline))
  }

  private func finish(
    _ phase: Phase, outcome: PhaseOutcome, at end: Date, lateBy: TimeInterval = 0
  ) {
    self.end(phase, outcome: outcome, at: end)
    advance(after: phase, outcome: outcome, at: end, lateBy: lateBy)
  }

  /// Ends `phase` at `end`: no more alarm, `PhaseEnded` published (the history counts it).
  private func end(_ phase: Phase, outcome: PhaseOutcome, at end: Date) {
    cancelAlarm()
    bus.publish(PhaseEnded(phase: phase, outcome: outcome, endedAt: end))
  }

  /// Starts what follows `phase`, or lines it up, as the card's auto-start rules say.
  private func advance(
    after phase: Phase, outcome: PhaseOutcome, at end: Date, lateBy: TimeInterval
  ) {
    let next = self.phase(after: phase.kind, completed: outcome == .completed)
    let autoStart =
      (next.isBreak ? session?.card.autoStartBreaks : session?.card.autoStartFocus) ?? false
    if autoStart {
      begin(next, at: lateBy > Self.lateStartTolerance ? time.now : end)
    } else {
      mode = .awaiting(next)
      bus.publish(PhaseAwaiting(next: next, card: phase.card))
      publishChange()
    }
  }

  /// Which phase follows one of `kind`, counting a completed focus toward the long break.
  private func phase(after kind: PhaseKind, completed: Bool) -> PhaseKind {
    guard kind == .focus, var session else { return .focus }
    // A focus cut short does not count toward the long break.
    guard completed else { return .shortBreak }
    session.focusSinceLongBreak += 1
    session.completedFocus += 1
    self.session = session
    return kind.following(
      focusInSet: session.focusSinceLongBreak, longBreakAfter: session.card.longBreakAfter)
  }

  private func endSession() {
    cancelAlarm()
    let ended = session
    mode = .idle
    session = nil
    if let ended {
      bus.publish(
        SessionStopped(card: ended.card.name, completedFocusPhases: ended.completedFocus))
    }
    publishChange()
  }

  private func armAlarm(for phase: Phase) {
    cancelAlarm()
    guard let deadline = phase.deadline else { return }
    alarm = time.schedule(at: deadline) { [weak self] in self?.deadlineReached() }
  }

  private func cancelAlarm() {
    alarm?.cancel()
    alarm = nil
  }

  private func publishChange() { bus.publish(TimerChanged(status: status)) }

  private func notRunning(_ command: String) -> TimerError {
    if case .awaiting(let next) = mode { return .nothingRunning(command: command, waiting: next) }
    return .nothingRunning(command: command, waiting: nil)
  }
}
