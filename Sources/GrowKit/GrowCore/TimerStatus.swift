import FoundationEssentials

/// What the timer is doing, as the D-Bus API, the CLI and status bars show it.
public struct TimerStatus: Sendable, Equatable, Codable {
  /// `idle`, `waiting`, `focus`, `short-break` or `long-break`.
  @frozen public enum State: String, Sendable, Codable {
    case idle
    /// A phase ended and the card does not start the next one by itself: `next` names the
    /// phase that `resume` starts.
    case waiting
    case focus
    case shortBreak = "short-break"
    case longBreak = "long-break"

    public init(_ kind: PhaseKind) {
      switch kind {
      case .focus: self = .focus
      case .shortBreak: self = .shortBreak
      case .longBreak: self = .longBreak
      }
    }

    /// The kind of the running or paused phase; nil while idle or waiting.
    public var phaseKind: PhaseKind? {
      switch self {
      case .idle, .waiting: nil
      case .focus: .focus
      case .shortBreak: .shortBreak
      case .longBreak: .longBreak
      }
    }
  }

  public var state: State
  public var paused: Bool
  /// The card of the running or waiting session; empty when idle.
  public var card: String
  /// Planned seconds of the running phase, extensions included; 0 when idle.
  public var duration: TimeInterval
  public var remaining: TimeInterval
  public var elapsed: TimeInterval
  public var startedAt: Date?
  /// The wall-clock deadline; nil while paused or idle. Clients compute the countdown from it.
  public var endsAt: Date?
  /// The focus phase number within the current set of `longBreakAfter` (1-based); 0 when idle.
  public var cycle: Int
  public var longBreakAfter: Int
  /// The phase waiting to be started (state `waiting`); nil otherwise.
  public var next: PhaseKind?
  public var completedToday: Int
  /// Seconds of focus time today, toward the daily goal: the focus phases completed today
  /// (`PhaseOutcome.countsAsFocus`). A running focus counts once it completes, so this
  /// changes only when a phase ends and equals what `grow stats` says for today.
  public var focusToday: TimeInterval
  public var dailyGoal: TimeInterval?
  public var intention: String?
  /// Seconds of focus today in phases that did not run their course (skipped, stopped,
  /// abandoned): shown apart, never counted toward the goal.
  public var cutShortToday: TimeInterval = 0

  /// A phase runs or is paused: there is a countdown to show.
  public var hasPhase: Bool { state.phaseKind != nil }

  /// The phase that comes next: the one waiting (state `waiting`), or the one that follows the
  /// running or paused phase when it runs its course; nil when idle.
  public var nextPhase: PhaseKind? {
    if state == .waiting { return next }
    return state.phaseKind?.following(focusInSet: cycle, longBreakAfter: longBreakAfter)
  }

  public static let idle = TimerStatus(
    state: .idle, paused: false, card: "", duration: 0, remaining: 0, elapsed: 0, startedAt: nil,
    endsAt: nil, cycle: 0, longBreakAfter: 0, next: nil, completedToday: 0, focusToday: 0,
    dailyGoal: nil, intention: nil)
}

extension PhaseKind {
  /// The phase that follows one of this kind that ran its course: focus after a break; after
  /// focus the long break once `focusInSet` completed focus phases reach `longBreakAfter`,
  /// the short one before.
  func following(focusInSet: Int, longBreakAfter: Int) -> PhaseKind {
    guard self == .focus else { return .focus }
    return focusInSet >= max(1, longBreakAfter) ? .longBreak : .shortBreak
  }
}
