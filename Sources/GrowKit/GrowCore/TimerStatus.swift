import Foundation

/// What the timer is doing, as the D-Bus API, the CLI and status bars show it.
public struct TimerStatus: Sendable, Equatable, Codable {
  /// `idle`, `focus`, `short-break` or `long-break`.
  public enum State: String, Sendable, Codable {
    case idle
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
  /// The phase waiting to be started, when the card does not start it by itself.
  public var next: PhaseKind?
  public var completedToday: Int
  /// Seconds of focus today, over every focus phase that ended today.
  public var focusToday: TimeInterval
  public var dailyGoal: TimeInterval?
  public var intention: String?

  public static let idle = TimerStatus(
    state: .idle, paused: false, card: "", duration: 0, remaining: 0, elapsed: 0, startedAt: nil,
    endsAt: nil, cycle: 0, longBreakAfter: 0, next: nil, completedToday: 0, focusToday: 0,
    dailyGoal: nil, intention: nil)
}
