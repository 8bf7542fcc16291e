import FoundationEssentials

/// The three kinds of phase in the focus cycle.
/// Frozen: the cycle has these kinds for good, so the daemon and plugins switch over them
/// without `@unknown default` (see "The ABI promise" in docs/writing-plugins.md).
@frozen public enum PhaseKind: String, Sendable, Codable, CaseIterable {
  case focus
  case shortBreak = "short-break"
  case longBreak = "long-break"

  public var isBreak: Bool { self != .focus }
}

/// How a phase ended: Grow's one vocabulary of outcomes. Each case's raw value is the word
/// every command, the report, the D-Bus API (`PhaseEnded`) and the exports (CSV, JSON) show
/// for it, and the word the history stores.
/// Frozen, like `PhaseKind`: a phase runs out, is skipped, is stopped, or is abandoned when
/// Grow exits under it. (`abandoned` joined in plugin API version 2.)
@frozen public enum PhaseOutcome: String, Sendable, Codable, CaseIterable {
  /// Ran until its deadline.
  case completed
  /// Ended early with `skip`; the cycle moved on.
  case skipped
  /// Ended with `stop`; the session is over.
  case stopped
  /// Cut short because Grow exited while it ran (a logout, a shutdown, a crash). Only the
  /// history records it; the timer never publishes it.
  case abandoned

  /// Grow's one definition of focus time: the seconds of focus phases that ran their course.
  /// Only they count toward "focus today", the daily goal, streaks, `grow stats`' totals, the
  /// garden's plants and the report; a focus that is running counts once it completes. Focus
  /// that was skipped, stopped or abandoned is "cut short": shown apart everywhere, never
  /// added. Why: the Pomodoro Technique's rule that a pomodoro is indivisible (an interrupted
  /// one is void) and Forest's tree that grows only when the timer runs out reward finishing
  /// what was started; and a figure that only grows at a phase's end is the same at every
  /// instant in every command, bar and D-Bus property, and never goes down when a focus is
  /// stopped.
  public var countsAsFocus: Bool { self == .completed }

  /// `1 completed, 1 skipped, 1 stopped`: counts in this vocabulary, in this order, as every
  /// command and the report print them. Outcomes other than `completed` are left out at 0.
  public static func tally(_ counts: [PhaseOutcome: Int]) -> String {
    allCases.compactMap { outcome in
      let count = counts[outcome] ?? 0
      return count == 0 && outcome != .completed ? nil : "\(count) \(outcome.rawValue)"
    }.joined(separator: ", ")
  }
}

/// One running (or paused) phase, anchored to wall-clock instants.
///
/// Time is never counted down tick by tick: a phase knows when it started, how long it is
/// planned to last and how long it has been paused, and everything else is derived.
public struct Phase: Sendable, Equatable, Codable {
  public var kind: PhaseKind
  public var card: String
  /// The focus phase of the session this belongs to (1 for the first focus phase and the
  /// break after it).
  public var cycle: Int
  /// Planned length in seconds, extensions included.
  public var duration: TimeInterval
  public var startedAt: Date
  /// Set while paused.
  public var pausedAt: Date?
  /// Seconds spent paused before `pausedAt`.
  public var pausedTotal: TimeInterval

  public init(kind: PhaseKind, card: String, cycle: Int, duration: TimeInterval, startedAt: Date) {
    self.kind = kind
    self.card = card
    self.cycle = cycle
    self.duration = duration
    self.startedAt = startedAt
    self.pausedAt = nil
    self.pausedTotal = 0
  }

  public var isPaused: Bool { pausedAt != nil }

  /// When the phase will end if nothing changes; nil while paused.
  public var deadline: Date? {
    isPaused ? nil : startedAt.addingTimeInterval(duration + pausedTotal)
  }

  /// Seconds of the phase that have run (pauses excluded).
  public func elapsed(at now: Date) -> TimeInterval {
    let end = pausedAt ?? now
    return min(duration, max(0, end.timeIntervalSince(startedAt) - pausedTotal))
  }

  public func remaining(at now: Date) -> TimeInterval { duration - elapsed(at: now) }
}
