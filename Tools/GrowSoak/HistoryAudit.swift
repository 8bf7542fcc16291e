import Foundation
import GrowCore
import GrowHistory

/// Checks a soak's history against what must be there: every phase that ran, once.
///
/// Within a session the phases tile time: each starts at the instant the one before it ended
/// (at its deadline, or when it was skipped), even across a daemon killed and restarted, so a
/// lost phase leaves a gap, a duplicate repeats a start, and a phantom overlaps its neighbour.
/// Sessions end with a stopped (or abandoned) phase; the next one starts with a focus. On top
/// of that, every phase the soak saw persisted as running must be in the history, and the
/// order of kinds must follow the card.
public struct HistoryAudit: Codable, Equatable, Sendable {
  /// Rows in the history grown on this machine (the soak's).
  public var recorded = 0
  /// Rows other machines' journals brought (the sync faults' peer): not the soak's phases,
  /// so they neither tile its time nor follow its card.
  public var fromOtherMachines = 0
  /// Phases that ran: the distinct rows plus the ones missing.
  public var expected = 0
  /// Phases that ran but have no row.
  public var lost = 0
  /// Rows that repeat a phase already recorded (same kind and start).
  public var duplicated = 0
  /// Rows that overlap the phase before them: a phase that never ran.
  public var unexpected = 0
  /// Completed phases whose length is not the card's, or does not match start, end and pauses.
  public var wrongLength = 0
  /// Focus phases recorded without the card's intention.
  public var intentionLost = 0
  /// Phases that follow another in an order the card does not allow.
  public var wrongOrder = 0
  /// Phases seen running (in session.json) during the soak.
  public var seen = 0
  public var outcomes: [String: Int] = [:]
  /// What went wrong, one line each (the first few hundred).
  public var problems: [String] = []

  /// - Parameters:
  ///   - rows: the history, as `HistoryStore.phases()` returns it (every machine's).
  ///   - seen: phases the soak saw persisted as running.
  ///   - rules: the soak card; `intention` is its intention.
  public init(
    rows: [PhaseRecord], seen: Set<PhaseKey>, rules: CardRules, intention: String?
  ) {
    let own = rows.filter { $0.machine == nil }
    fromOtherMachines = rows.count - own.count
    recorded = own.count
    self.seen = seen.count
    let sorted = own.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
    var distinct: [PhaseRecord] = []
    var keys: Set<PhaseKey> = []
    for row in sorted {
      outcomes[row.outcome.rawValue, default: 0] += 1
      let key = Self.key(row)
      if keys.contains(key) {
        duplicated += 1
        note("recorded twice: \(key) (\(row.outcome.rawValue), row \(row.id))")
      } else {
        keys.insert(key)
        distinct.append(row)
      }
    }
    // Within two microseconds: the history and session.json keep the same Double, but a
    // Date read back from SQLite can move it by a rounding step.
    var seenUnaccounted = seen.filter { key in
      !(-2...2).contains { keys.contains(PhaseKey(kind: key.kind, micros: key.micros + $0)) }
    }
    let tolerance = 0.000_002
    var count = 0
    var previous: PhaseRecord?
    for row in distinct {
      check(row, rules: rules, intention: intention)
      defer { previous = row }
      guard let before = previous else {
        if row.kind != .focus { wrongOrder(row, "the first phase is not a focus") }
        continue
      }
      let start = row.startedAt.timeIntervalSince1970
      let end = before.endedAt.timeIntervalSince1970
      let sessionEnded = before.outcome == .stopped || before.outcome == .abandoned
      if start < end - tolerance {
        unexpected += 1
        note("\(Self.key(row)) overlaps \(Self.key(before)) by \(millis(end - start)) ms")
        continue
      }
      if sessionEnded {
        count = 0
        if row.kind != .focus { wrongOrder(row, "a session begins with a \(row.kind.rawValue)") }
        continue
      }
      if start > end + tolerance {
        // Phases the soak saw in the gap were lost; at least one was, whatever it saw.
        let inGap = seenUnaccounted.filter {
          Double($0.micros) / 1_000_000 >= end - tolerance
            && Double($0.micros) / 1_000_000 < start
        }
        seenUnaccounted.subtract(inGap)
        lost += max(1, inGap.count)
        note(
          "gap of \(millis(start - end)) ms after \(Self.key(before)) "
            + "(\(before.outcome.rawValue)): \(max(1, inGap.count)) phase(s) missing"
            + (inGap.isEmpty ? "" : ", seen: \(inGap.sorted().map(\.description))"))
        count = 0
        continue
      }
      let wanted = rules.next(
        after: before.kind, completed: before.outcome == .completed, focusSinceLongBreak: &count)
      if row.kind != wanted {
        wrongOrder(row, "\(wanted.rawValue) should follow \(Self.key(before)) (\(before.outcome))")
        count = row.kind == .longBreak ? 0 : count
      }
    }
    if let last = distinct.last, last.outcome != .stopped, last.outcome != .abandoned {
      lost += 1
      note("the session never ended in the history: the last row is \(Self.key(last))")
    }
    for key in seenUnaccounted.sorted() {
      lost += 1
      note("seen running but not recorded: \(key)")
    }
    expected = distinct.count + lost
  }

  public var isClean: Bool {
    lost == 0 && duplicated == 0 && unexpected == 0 && wrongLength == 0 && intentionLost == 0
      && wrongOrder == 0
  }

  static func key(_ row: PhaseRecord) -> PhaseKey {
    PhaseKey(kind: row.kind, startedAt: row.startedAt.timeIntervalSince1970)
  }

  private mutating func check(_ row: PhaseRecord, rules: CardRules, intention: String?) {
    let span = row.endedAt.timeIntervalSince(row.startedAt)
    if row.outcome == .completed {
      let planned = rules.lengths[row.kind] ?? row.plannedSeconds
      if abs(row.plannedSeconds - planned) > 0.001 || abs(row.actualSeconds - planned) > 0.001
        || abs(span - planned - row.pausedSeconds) > 0.001
      {
        wrongLength += 1
        note(
          "\(Self.key(row)) completed after \(row.actualSeconds)s of \(row.plannedSeconds)s "
            + "(card: \(planned)s), \(span)s from start to end with \(row.pausedSeconds)s paused")
      }
    } else if row.actualSeconds > row.plannedSeconds + 0.001 || span + 0.001 < row.actualSeconds {
      wrongLength += 1
      note("\(Self.key(row)) \(row.outcome.rawValue) after \(row.actualSeconds)s in \(span)s")
    }
    if row.kind == .focus, let intention, row.intention != intention {
      intentionLost += 1
      note("\(Self.key(row)) recorded with intention \(row.intention ?? "none")")
    }
  }

  private mutating func wrongOrder(_ row: PhaseRecord, _ why: String) {
    wrongOrder += 1
    note("\(Self.key(row)): \(why)")
  }

  private mutating func note(_ problem: String) {
    if problems.count < 300 { problems.append(problem) }
  }

  private func millis(_ seconds: Double) -> Int { Int((seconds * 1000).rounded()) }
}
