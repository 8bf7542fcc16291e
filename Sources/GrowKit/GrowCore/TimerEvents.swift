import FoundationEssentials

/// A phase began.
public struct PhaseStarted: GrowEvent {
  public static let eventName = "phase-started"
  public let phase: Phase
  public let intention: String?
  /// The task the session's focus is for (`grow start --task`), if any.
  public let task: Int64?

  public init(phase: Phase, intention: String?, task: Int64? = nil) {
    self.phase = phase
    self.intention = intention
    self.task = task
  }
}

/// A phase ended, by running out, by `skip` or by `stop`.
public struct PhaseEnded: GrowEvent {
  public static let eventName = "phase-ended"
  public let phase: Phase
  public let outcome: PhaseOutcome
  public let endedAt: Date
  /// Seconds of the phase that actually ran.
  public var elapsed: TimeInterval { phase.elapsed(at: endedAt) }
}

public struct PhasePaused: GrowEvent {
  public static let eventName = "phase-paused"
  public let phase: Phase
}

public struct PhaseResumed: GrowEvent {
  public static let eventName = "phase-resumed"
  public let phase: Phase
  /// How long the pause that just ended lasted.
  public let pausedFor: TimeInterval
}

public struct PhaseExtended: GrowEvent {
  public static let eventName = "phase-extended"
  public let phase: Phase
  /// Negative when the phase was shortened.
  public let addedSeconds: TimeInterval
}

/// The next phase is ready but waits for the person, because the card does not start it by
/// itself.
public struct PhaseAwaiting: GrowEvent {
  public static let eventName = "phase-awaiting"
  public let next: PhaseKind
  public let card: String
}

/// The session is over; the timer is idle.
public struct SessionStopped: GrowEvent {
  public static let eventName = "session-stopped"
  public let card: String
  public let completedFocusPhases: Int
}

/// The machine was asleep (suspended) from `asleepAt` to `awakeAt`.
///
/// Published before the changes the sleep causes, so a recorder sees it before the phase it
/// affected ends.
public struct SystemSlept: GrowEvent {
  public static let eventName = "system-slept"
  /// What the sleep did to the timer.
  public enum Effect: String, Sendable {
    /// Nothing was running, or the phase was paused or a break (rest is rest).
    case none
    /// Focus was running: the time asleep became a pause, so it is not counted as focus.
    case focusPaused = "focus-paused"
    /// The sleep lasted `sleep-limit` or longer: the phase ended at the moment the machine
    /// went to sleep (a break that ran out meanwhile, at its deadline) and the session is over.
    case sessionEnded = "session-ended"
  }
  public let asleepAt: Date
  public let awakeAt: Date
  /// The phase running when the machine went to sleep, if any.
  public let phase: Phase?
  public let effect: Effect
  /// Seconds asleep while the phase ran (less than the whole sleep when it began later).
  public let asleepDuringPhase: TimeInterval
}

/// Published after every change of the timer, with the status as it now is. Bridges such as
/// the D-Bus API and status bars need only this one.
public struct TimerChanged: GrowEvent {
  public static let eventName = "timer-changed"
  public let status: TimerStatus
}
