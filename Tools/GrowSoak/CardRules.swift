import Foundation
import GrowCore

/// The card's rules as a person reads them in the docs, written out independently of
/// FocusTimer: what follows a phase, and where a saved session must be some time later.
public struct CardRules: Sendable {
  public var lengths: [PhaseKind: Double]
  public var longBreakAfter: Int

  public init(lengths: [PhaseKind: Double], longBreakAfter: Int) {
    self.lengths = lengths
    self.longBreakAfter = longBreakAfter
  }

  /// The phase after one of `kind`; a completed focus counts toward the long break, which
  /// starts the count again.
  public func next(
    after kind: PhaseKind, completed: Bool, focusSinceLongBreak count: inout Int
  ) -> PhaseKind {
    guard kind == .focus else { return .focus }
    if completed { count += 1 }
    guard completed, count >= max(1, longBreakAfter) else { return .shortBreak }
    count = 0
    return .longBreak
  }

  /// One phase of a prediction; `end` is nil for a paused phase.
  public struct Predicted: Equatable, Sendable {
    public var key: PhaseKey
    public var start: Double
    public var end: Double?
    public var paused: Bool
  }

  /// The phases a session saved as `saved` runs through up to `until`, with auto-start on.
  /// `recordedEnd` is the history's row for the saved phase, when it has one: the daemon died
  /// after recording the end but before saving what followed, and the history is right.
  /// Empty when the session is over.
  public func chain(
    from saved: SessionSnapshot, recordedEnd: (outcome: String, endedAt: Double)?,
    until: Double
  ) -> [Predicted] {
    guard let phase = saved.phase else { return [] }
    var count = saved.focusSinceLongBreak
    var result: [Predicted] = []
    var kind: PhaseKind
    var start: Double
    if let recordedEnd {
      guard recordedEnd.outcome == "completed" || recordedEnd.outcome == "skipped" else {
        return []
      }
      kind = next(
        after: phase.kind, completed: recordedEnd.outcome == "completed",
        focusSinceLongBreak: &count)
      start = recordedEnd.endedAt
    } else {
      result.append(
        Predicted(
          key: phase.key, start: phase.startedAt, end: phase.deadline, paused: phase.isPaused))
      guard let deadline = phase.deadline else { return result }
      kind = next(after: phase.kind, completed: true, focusSinceLongBreak: &count)
      start = deadline
    }
    while start <= until, result.count < 10_000 {
      let length = lengths[kind] ?? 1
      let end = Date(timeIntervalSince1970: start).addingTimeInterval(length)
        .timeIntervalSince1970
      result.append(
        Predicted(
          key: PhaseKey(kind: kind, startedAt: start), start: start, end: end, paused: false))
      kind = next(after: kind, completed: true, focusSinceLongBreak: &count)
      start = end
    }
    return result
  }
}
