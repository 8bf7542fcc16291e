import Foundation
import GrowCore
import GrowPluginKit

/// Published after a phase was written to the history, with the streak as it now is.
public struct HistoryRecorded: GrowEvent {
  public static let eventName = "history-recorded"
  public let phase: PhaseRecord
  public let streak: Streak
}

/// Writes one history row per ended phase, from the timer's events.
///
/// Pauses are counted from `PhasePaused`; the intention comes from `PhaseStarted`, since the
/// ended phase does not carry it. A failed write is reported through `onError` and the timer
/// goes on: losing a row is better than losing the session. Lives on the event loop that owns
/// the bus.
public final class HistoryRecorder {
  public let store: HistoryStore
  /// The streak after the last recorded phase (or at start).
  public private(set) var streak: Streak = .none
  private let events: EventBus
  private let timeZone: () -> TimeZone
  private let clock: () -> Date
  private let dailyGoal: () -> TimeInterval?
  private let onError: (HistoryError) -> Void
  private var intention: String?
  private var pauseCount = 0
  /// When the phase now running started; distractions that began before it belong to the
  /// phase recorded last (a distraction ends just after the focus phase it happened in).
  private var phaseStartedAt: Date?
  private var lastRecordedID: Int64?
  /// Distractions and away time of the running phase, from the `x11` plugin's events.
  private var distractions: [DistractionEnded] = []
  private var awaySeconds: TimeInterval = 0

  /// - Parameters:
  ///   - dailyGoal: the default card's daily goal now (the config can be reloaded).
  ///   - timeZone, clock: where and when the person is now (tests pass fixed ones).
  ///   - onError: called with every failed write.
  public init(
    store: HistoryStore, events: EventBus, dailyGoal: @escaping () -> TimeInterval?,
    timeZone: @escaping () -> TimeZone = { .current }, clock: @escaping () -> Date = { Date() },
    onError: @escaping (HistoryError) -> Void
  ) {
    self.clock = clock
    self.store = store
    self.events = events
    self.dailyGoal = dailyGoal
    self.timeZone = timeZone
    self.onError = onError
    events.subscribe(PhaseStarted.self, as: "history") { [weak self] event in
      self?.intention = event.phase.kind == .focus ? event.intention : nil
      self?.pauseCount = 0
      self?.phaseStartedAt = event.phase.startedAt
      self?.distractions = []
      self?.awaySeconds = 0
    }
    events.subscribe(DistractionEnded.self, as: "history") { [weak self] event in
      self?.distractionEnded(event)
    }
    events.subscribe(AwayResumed.self, as: "history") { [weak self] event in
      self?.awaySeconds += event.awaySeconds
    }
    // Time asleep during focus is a pause of its own (not focus), and time away.
    events.subscribe(SystemSlept.self, as: "history") { [weak self] event in
      guard event.effect == .focusPaused else { return }
      self?.pauseCount += 1
      self?.awaySeconds += event.asleepDuringPhase
    }
    events.subscribe(PhasePaused.self, as: "history") { [weak self] _ in
      self?.pauseCount += 1
    }
    events.subscribe(PhaseEnded.self, as: "history") { [weak self] event in
      self?.record(event.phase, outcome: HistoryOutcome(event.outcome), at: event.endedAt)
    }
    refreshStreak()
  }

  /// What the timer's "today" counters should start from after a restart.
  public func today() -> DayActivity {
    do {
      return try store.activity(on: LocalDay(clock(), in: timeZone()))
    } catch {
      onError(error)
      return DayActivity()
    }
  }

  /// Takes up the phase a killed daemon left running, restored from the saved session, as if
  /// this recorder had seen it start: its row gets the card's intention.
  public func resume(_ phase: Phase?, intention: String?) {
    guard let phase else { return }
    self.intention = phase.kind == .focus ? intention : nil
    phaseStartedAt = phase.startedAt
  }

  /// How the history says `phase` ended, if it has it (for `FocusTimer.restore`): `stopped`
  /// for a phase that ended its session, stopped or abandoned.
  public func recordedEnd(of phase: Phase) -> FocusTimer.RecordedEnd? {
    do {
      guard let end = try store.recordedEnd(of: phase.kind, startedAt: phase.startedAt) else {
        return nil
      }
      let outcome: PhaseOutcome =
        switch end.outcome {
        case .completed: .completed
        case .skipped: .skipped
        case .stopped, .abandoned: .stopped
        }
      return (outcome, end.endedAt)
    } catch {
      onError(error)
      return nil
    }
  }

  /// Records `phase` as abandoned: the daemon is exiting while it runs.
  public func recordCutShort(_ phase: Phase?) {
    guard let phase else { return }
    record(phase, outcome: .abandoned, at: clock())
  }

  private func record(_ phase: Phase, outcome: HistoryOutcome, at end: Date) {
    let pausedNow = phase.pausedAt.map { max(0, end.timeIntervalSince($0)) } ?? 0
    let record = PhaseRecord(
      card: phase.card, kind: phase.kind, plannedSeconds: phase.duration,
      actualSeconds: phase.elapsed(at: end), startedAt: phase.startedAt, endedAt: end,
      outcome: outcome, pauseCount: pauseCount, pausedSeconds: phase.pausedTotal + pausedNow,
      awaySeconds: awaySeconds, intention: phase.kind == .focus ? intention : nil,
      timeZone: timeZone())
    pauseCount = 0
    phaseStartedAt = nil
    let ended = distractions
    distractions = []
    awaySeconds = 0
    do {
      var recorded = record
      recorded.id = try store.record(record)
      lastRecordedID = recorded.id
      for distraction in ended { try store.record(row(for: distraction, phase: recorded.id)) }
      refreshStreak()
      events.publish(HistoryRecorded(phase: recorded, streak: streak))
    } catch {
      onError(error)
    }
  }

  private func distractionEnded(_ event: DistractionEnded) {
    if let phaseStartedAt, event.when >= phaseStartedAt {
      distractions.append(event)
      return
    }
    guard let lastRecordedID else { return }
    do {
      try store.record(row(for: event, phase: lastRecordedID))
    } catch {
      onError(error)
    }
  }

  /// The history row: the title only when the person opted in (`record-titles`).
  private func row(for event: DistractionEnded, phase: Int64) -> Distraction {
    Distraction(
      phaseID: phase, appClass: event.app, seconds: event.duration,
      title: event.recordTitle ? event.title : nil)
  }

  private func refreshStreak() {
    do {
      streak = Streak(
        daily: try store.dailyActivity(), goal: dailyGoal(),
        today: LocalDay(clock(), in: timeZone()))
    } catch {
      onError(error)
    }
  }
}
