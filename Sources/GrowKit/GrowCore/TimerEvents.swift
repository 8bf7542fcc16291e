import Foundation

/// A phase began.
public struct PhaseStarted: GrowEvent {
  public static let eventName = "phase-started"
  public let phase: Phase
  public let intention: String?
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

/// Published after every change of the timer, with the status as it now is. Bridges such as
/// the D-Bus API and status bars need only this one.
public struct TimerChanged: GrowEvent {
  public static let eventName = "timer-changed"
  public let status: TimerStatus
}
