import Foundation
import GrowCore
import GrowHistory
import GrowTestSupport
import Testing

/// The journal of phases kept for the history (`pending-history.json`) as the world damages it:
/// garbage, a journal cut short mid-line, a symbolic link to a file of the
/// person's. The daemon moves it aside, keeps what it could read, says so, and keeps every
/// phase in a new journal: with the history locked by the `sqlite3` program and a `kill -9`,
/// no phase is lost. (It used to keep phases in memory only for its whole life.)
@Suite(.serialized) struct PendingJournalDamageTests {
  enum Damage: String, CaseIterable, Sendable {
    case garbage, truncated, symlink
  }

  func historyPath(_ harness: DaemonHarness) -> String {
    HistoryStore.defaultPath(environment: harness.environment)
  }

  /// Waits (up to 30 s) until the journal keeps `count` phases, read as `grow history` does.
  func waitForKept(_ harness: DaemonHarness, count: Int) throws -> [PendingPhase] {
    let deadline = Date().addingTimeInterval(30)
    while true {
      let kept = (try? PendingPhases(path: harness.pendingHistoryPath).phases) ?? []
      if kept.count >= count || Date() > deadline { return kept }
      Thread.sleep(forTimeInterval: 0.05)
    }
  }

  @Test(arguments: Damage.allCases)
  func aDamagedJournalIsMovedAsideAndNoPhaseIsLostAcrossKillNine(_ damage: Damage) throws {
    let harness = try DaemonHarness(config: DaemonHarness.oneSecondCycle, startDaemon: false)
    let journal = harness.pendingHistoryPath
    let state = (journal as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
    _ = try HistoryStore(path: historyPath(harness))
    // A file of the person's, beside Grow's: a link in the journal's place must not reach it.
    let decoy = harness.environment["HOME", default: state] + "/notes.txt"
    let decoyText = "a file of the person's, not Grow's\n"
    try decoyText.write(toFile: decoy, atomically: true, encoding: .utf8)
    switch damage {
    case .garbage:
      try Data((0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) })
        .write(to: URL(fileURLWithPath: journal))
    case .truncated:
      // One whole phase in the journal format, and a line cut off in its middle.
      let end = Date().addingTimeInterval(-3600)
      let whole = try JSONEncoder().encode(
        PendingPhase(phase: focus("math", minutes: 25, endingAt: end)))
      let text =
        #"{"grow_pending_journal":1}"# + "\n" + #"{"keep":"#
        + String(decoding: whole, as: UTF8.self)
        + "}\n" + #"{"keep":{"confirmed":false,"distractions":[],"phase":{"card":"ma"#
      try text.write(toFile: journal, atomically: false, encoding: .utf8)
    case .symlink:
      try FileManager.default.createSymbolicLink(atPath: journal, withDestinationPath: decoy)
    }

    let lock = try SQLiteTransaction(.writeLock, on: historyPath(harness))
    try harness.start()
    #expect(try harness.grow("start").status == 0)
    // Phases end while nothing can be written: they are only in the new journal.
    let kept = try waitForKept(harness, count: damage == .truncated ? 4 : 3)
    #expect(kept.count >= 3, "phases kept on disk: \(kept.count)\n\(harness.daemonLog)")
    let daemon = try #require(harness.daemon)
    let firstLog = daemon.stderr
    #expect(daemon.kill() == 128 + SIGKILL)
    lock.end()

    try harness.start()
    #expect(try harness.grow("stop").status == 0)
    try harness.waitForHistory(timeout: 30)
    let phases = try HistoryStore(path: historyPath(harness), create: false).phases()
    let written = Set(phases.map(\.key))
    let lost = kept.filter { !written.contains($0.key) }
    #expect(lost.isEmpty, "lost after kill -9: \(lost.map(\.phase))\n\(harness.daemonLog)")
    if damage == .truncated {
      #expect(phases.contains { $0.card == "math" }, "the whole line read from the damage")
    }
    // The session's phases follow each other with no gap (none lost at the kill either).
    let session = phases.filter { $0.card != "math" }
    for (before, after) in zip(session, session.dropFirst()) {
      #expect(abs(after.startedAt.timeIntervalSince(before.endedAt)) < 0.001, "a phase is missing")
    }

    // Moved aside, not followed, not removed; the person's file untouched.
    let aside = try FileManager.default.contentsOfDirectory(atPath: state)
      .filter { $0.hasPrefix("pending-history.json.damaged-") }
    #expect(aside.count == 1, "\(aside)")
    #expect(try String(contentsOfFile: decoy, encoding: .utf8) == decoyText)
    if damage == .symlink, let copy = aside.first {
      #expect(
        try FileManager.default.destinationOfSymbolicLink(atPath: state + "/" + copy) == decoy)
    }
    #expect(
      firstLog.contains("moved it aside to \(state)/pending-history.json.damaged-"), "\(firstLog)")
    // Said where a person looks: grow doctor and grow status, with what to do.
    let doctor = try harness.grow("doctor")
    #expect(doctor.stdout.contains("pending-history.json.damaged-"), "\(doctor.stdout)")
    #expect(doctor.stdout.contains("then delete it"), "\(doctor.stdout)")
    let status = try harness.grow("status")
    #expect(status.stdout.contains("grow doctor"), "\(status.stdout)")
  }

  /// 20,000 phases kept (the history was locked for a long spell), in the old whole-file
  /// format: the daemon converts them, keeps answering GetStatus while phases end and while
  /// it writes all of them once the lock is gone, and loses none.
  @Test func twentyThousandKeptPhasesAreConvertedWrittenAndGetStatusKeepsAnswering() throws {
    let harness = try DaemonHarness(config: DaemonHarness.oneSecondCycle, startDaemon: false)
    let journal = harness.pendingHistoryPath
    try FileManager.default.createDirectory(
      atPath: (journal as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    _ = try HistoryStore(path: historyPath(harness))
    let first = Date().addingTimeInterval(-86_400 * 400)
    let old = (0..<20_000).map { index in
      PendingPhase(
        phase: focus("old", minutes: 1, endingAt: first.addingTimeInterval(Double(index) * 120)))
    }
    try JSONEncoder().encode(old).write(to: URL(fileURLWithPath: journal))

    let lock = try SQLiteTransaction(.writeLock, on: historyPath(harness))
    try harness.start()
    #expect(try harness.grow("start").status == 0)
    let whileLocked = try GetStatusProbe(harness, seconds: 4)
    #expect(whileLocked.failures.isEmpty, "\(whileLocked)")
    lock.end()
    let whileDraining = try GetStatusProbe(harness, seconds: 4)
    #expect(whileDraining.failures.isEmpty, "\(whileDraining)")
    print("20,000 kept, locked: \(whileLocked); draining: \(whileDraining)")
    #expect(try harness.grow("stop").status == 0)
    try harness.waitForHistory(timeout: 120)
    let phases = try HistoryStore(path: historyPath(harness), create: false).phases()
    #expect(phases.filter { $0.card == "old" }.count == 20_000)
    #expect(phases.filter { $0.card != "old" }.count >= 4, "the session's own phases too")
  }
}

/// A completed focus of `minutes` on `card` that ended at `end`.
private func focus(_ card: String, minutes: Double, endingAt end: Date) -> PhaseRecord {
  PhaseRecord(
    card: card, kind: .focus, plannedSeconds: minutes * 60, actualSeconds: minutes * 60,
    startedAt: end.addingTimeInterval(-minutes * 60), endedAt: end, outcome: .completed,
    pauseCount: 0, pausedSeconds: 0, awaySeconds: 0, intention: nil, timeZone: .system)
}
