import FoundationEssentials

/// The three kinds of phase in the focus cycle.
/// Frozen: the cycle has these kinds for good, so the daemon and plugins switch over them
/// without `@unknown default` (see "The ABI promise" in docs/writing-plugins.md).
@frozen public enum PhaseKind: String, Sendable, Codable, CaseIterable {
  case focus
  case shortBreak = "short-break"
  case longBreak = "long-break"

  public var isBreak: Bool { self != .focus }

  /// How a person would name it in a sentence.
  public var displayName: String {
    switch self {
    case .focus: "focus"
    case .shortBreak: "short break"
    case .longBreak: "long break"
    }
  }
}

/// How a phase ended.
/// Frozen, like `PhaseKind`: a phase runs out, is skipped or is stopped.
@frozen public enum PhaseOutcome: String, Sendable, Codable {
  /// Ran until its deadline.
  case completed
  /// Ended early with `skip`; the cycle moved on.
  case skipped
  /// Ended with `stop`; the session is over and the phase counts as abandoned.
  case stopped
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
