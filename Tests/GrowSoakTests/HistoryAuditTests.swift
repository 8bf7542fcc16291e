import Foundation
import GrowCore
import GrowHistory
import GrowSoak
import Testing

/// The judge of the soak must catch what it is there to catch: each test breaks a clean
/// history in one way.
@Suite struct HistoryAuditTests {
  let start = 1_780_000_000.0

  /// Rows that tile time from `start`: each (kind, seconds it ran, outcome) starts where the
  /// one before ended; a stopped row ends the session and the next one starts a second later.
  func history(_ phases: [(PhaseKind, Double, HistoryOutcome)]) -> [PhaseRecord] {
    var at = start
    var rows: [PhaseRecord] = []
    for (kind, seconds, outcome) in phases {
      let planned = Soak.card.lengths[kind] ?? 1
      rows.append(
        PhaseRecord(
          id: Int64(rows.count + 1), card: "work", kind: kind, plannedSeconds: planned,
          actualSeconds: seconds, startedAt: Date(timeIntervalSince1970: at),
          endedAt: Date(timeIntervalSince1970: at + seconds), outcome: outcome,
          intention: kind == .focus ? Soak.intention : nil))
      at += seconds + (outcome == .stopped ? 1 : 0)
    }
    return rows
  }

  func audit(_ rows: [PhaseRecord], seen: Set<PhaseKey> = []) -> HistoryAudit {
    HistoryAudit(rows: rows, seen: seen, rules: Soak.card, intention: Soak.intention)
  }

  let clean: [(PhaseKind, Double, HistoryOutcome)] = [
    (.focus, 2, .completed), (.shortBreak, 1, .completed), (.focus, 0.5, .skipped),
    (.shortBreak, 1, .completed), (.focus, 2, .completed), (.shortBreak, 0.3, .stopped),
    (.focus, 2, .completed), (.shortBreak, 1, .completed), (.focus, 1.5, .stopped),
  ]

  @Test func aCleanHistoryPasses() {
    let result = audit(history(clean))
    #expect(result.isClean, "\(result.problems)")
    #expect(result.recorded == 9 && result.expected == 9)
  }

  /// A synced machine's phases overlap the soak's and follow no card of its own: they are
  /// counted apart, not judged as the soak's.
  @Test func phasesFromAnotherMachineAreNotTheSoaks() {
    var rows = history(clean)
    for (index, row) in rows.prefix(3).enumerated() {
      var theirs = row
      theirs.id = Int64(100 + index)
      theirs.kind = .longBreak
      theirs.startedAt.addTimeInterval(0.25)
      theirs.machine = "0123456789abcdef"
      rows.append(theirs)
    }
    let result = audit(rows)
    #expect(result.isClean, "\(result.problems)")
    #expect(result.recorded == 9 && result.fromOtherMachines == 3)
  }

  @Test func aMissingPhaseLeavesAGapThatCountsAsLost() {
    var rows = history(clean)
    rows.remove(at: 3)
    let result = audit(rows)
    #expect(result.lost == 1)
    #expect(result.expected == 9 && result.recorded == 8)
  }

  @Test func everyPhaseSeenRunningInTheGapCounts() {
    var rows = history(clean)
    let missing = rows[1...2].map {
      PhaseKey(kind: $0.kind, startedAt: $0.startedAt.timeIntervalSince1970)
    }
    rows.removeSubrange(1...2)
    #expect(audit(rows, seen: Set(missing)).lost == 2)
  }

  @Test func aPhaseRecordedTwiceIsADuplicate() {
    var rows = history(clean)
    var twin = rows[4]
    twin.id = 99
    rows.append(twin)
    let result = audit(rows)
    #expect(result.duplicated == 1 && result.lost == 0)
    #expect(result.recorded == 10 && result.expected == 9)
  }

  @Test func aPhaseThatOverlapsItsNeighbourIsUnexpected() {
    var rows = history(clean)
    rows[2].startedAt.addTimeInterval(-0.2)
    #expect(audit(rows).unexpected == 1)
  }

  @Test func aPhaseSeenRunningButNeverRecordedIsLostEvenWithoutAGap() {
    let key = PhaseKey(kind: .focus, startedAt: start - 50)
    #expect(audit(history(clean), seen: [key]).lost == 1)
  }

  @Test func aSessionWhoseEndWasNeverRecordedIsLost() {
    #expect(audit(history(Array(clean.dropLast()))).lost == 1)
  }

  @Test func aShortBreakWhereTheLongOneIsDueIsWrongOrder() {
    let rows = history([
      (.focus, 2, .completed), (.shortBreak, 1, .completed), (.focus, 2, .completed),
      (.shortBreak, 1, .completed), (.focus, 2, .completed), (.shortBreak, 1, .stopped),
    ])
    #expect(audit(rows).wrongOrder == 1)
  }

  @Test func aCompletedPhaseOfTheWrongLengthAndAFocusWithoutIntentionAreCounted() {
    var rows = history(clean)
    rows[0].endedAt.addTimeInterval(0.5)
    rows[2].intention = nil
    let result = audit(rows)
    #expect(result.wrongLength == 1)
    #expect(result.intentionLost == 1)
  }
}

/// What a saved session must become: the soak's prediction for a restarted daemon.
@Suite struct CardRulesTests {
  let saved = SessionSnapshot(
    phase: PhaseSnapshot(kind: .focus, startedAt: 100, duration: 2, pausedTotal: 0.5),
    next: nil, focusSinceLongBreak: 2, longBreakAfter: 3,
    lengths: [.focus: 2, .shortBreak: 1, .longBreak: 2])

  @Test func phasesFollowAtTheirDeadlinesAndTheThirdFocusEarnsTheLongBreak() {
    let chain = Soak.card.chain(from: saved, recordedEnd: nil, until: 107)
    #expect(chain.map(\.key.kind) == [.focus, .longBreak, .focus, .shortBreak])
    #expect(chain.map(\.start) == [100, 102.5, 104.5, 106.5])
  }

  @Test func aRecordedSkipWins() {
    let chain = Soak.card.chain(from: saved, recordedEnd: ("skipped", 101), until: 103)
    #expect(chain.map(\.key.kind) == [PhaseKind.shortBreak, .focus])
    #expect(chain.first?.start == 101)
    #expect(Soak.card.chain(from: saved, recordedEnd: ("stopped", 101), until: 103).isEmpty)
  }
}
