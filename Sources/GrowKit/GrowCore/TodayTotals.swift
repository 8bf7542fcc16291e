import FoundationEssentials

/// Today's focus as `TimerStatus` reports it: `CompletedToday`, `FocusToday`, `CutShortToday`.
///
/// Host wiring (`@_spi(GrowHost)`): plugins read today's figures from `TimerStatus`.
@_spi(GrowHost) public struct TodayTotals: Sendable, Equatable {
  /// Focus phases that ran their course (`PhaseOutcome.countsAsFocus`).
  public var completed: Int
  /// Their focus time: what counts toward the daily goal.
  public var focusSeconds: TimeInterval
  /// Focus in phases skipped, stopped or abandoned, kept apart from the goal.
  public var cutShortSeconds: TimeInterval

  public init(completed: Int = 0, focusSeconds: TimeInterval = 0, cutShortSeconds: TimeInterval = 0)
  {
    self.completed = completed
    self.focusSeconds = focusSeconds
    self.cutShortSeconds = cutShortSeconds
  }
}

/// The one owner of "today": in the daemon the history (`HistoryRecorder`), which counts each
/// phase as it is recorded, starts from what the history file holds and reads it again when
/// `grow history` changes it. The timer only reports what its keeper says. Both live on the
/// loop that owns the event bus.
@_spi(GrowHost) public protocol TodayKeeper: AnyObject {
  /// Today's totals now: an empty day once local midnight has passed.
  var todayTotals: TodayTotals { get }
}
