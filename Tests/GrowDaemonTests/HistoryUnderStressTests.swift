import Foundation
import GrowCore
import GrowHistory
import GrowTestSupport
import Testing

/// The history as the world breaks it: another program holding the
/// database's write lock, a full disk, the write-ahead log deleted, and `kill -9` on top. Every
/// phase the timer ran must reach the history once, in order, and the daemon must answer
/// throughout.
@Suite(.serialized) struct HistoryUnderStressTests {
  func historyPath(_ harness: DaemonHarness) -> String {
    HistoryStore.defaultPath(environment: harness.environment)
  }

  /// The history as a second program reads it.
  func history(_ harness: DaemonHarness) throws -> [PhaseRecord] {
    try HistoryStore(path: historyPath(harness), create: false).phases()
  }

  /// Stops the session and waits until nothing is kept for the history any longer.
  func stopAndWaitForTheHistory(_ harness: DaemonHarness) throws {
    #expect(try harness.grow("stop").status == 0)
    try harness.waitForHistory(timeout: 20)
  }

  /// Every phase of one session, once: each starts where the one before it ended (a lost phase
  /// leaves a gap, a repeated one overlaps), the ids rise in that order, and the last one is
  /// the stop.
  func expectEveryPhaseOnceInOrder(_ phases: [PhaseRecord], atLeast count: Int) {
    #expect(phases.count >= count, "only \(phases.count) phases")
    for (before, after) in zip(phases, phases.dropFirst()) {
      let gap = after.startedAt.timeIntervalSince(before.endedAt)
      #expect(
        abs(gap) < 0.001,
        "\(gap)s between \(before.kind) ending \(before.endedAt) and \(after.kind) starting")
      #expect(after.id > before.id, "written out of order")
    }
    #expect(Set(phases.map(\.key)).count == phases.count)
    #expect(phases.last?.outcome == .stopped)
  }

  /// `grow status` takes this long to answer now, in seconds.
  func timeStatus(_ harness: DaemonHarness) throws -> TimeInterval {
    let began = Date()
    #expect(try harness.grow("status").status == 0)
    return Date().timeIntervalSince(began)
  }

  @Test func whileAnotherProgramHoldsTheLockTheDaemonAnswersAndWritesEveryPhaseLater() throws {
    let harness = try DaemonHarness(config: DaemonHarness.oneSecondCycle)
    #expect(try harness.grow("start").status == 0)
    var unlocked: [TimeInterval] = []
    for _ in 0..<20 {
      unlocked.append(try timeStatus(harness))
      Thread.sleep(forTimeInterval: 0.1)
    }
    let lock = try SQLiteTransaction(.writeLock, on: historyPath(harness))
    var locked: [TimeInterval] = []
    let until = Date().addingTimeInterval(8)  // eight phase ends, and more
    while Date() < until {
      locked.append(try timeStatus(harness))
      Thread.sleep(forTimeInterval: 0.1)
    }
    let writtenMeanwhile = try history(harness).count
    print(
      "grow status while the history is free: median \(median(unlocked))s, slowest "
        + "\(unlocked.max() ?? 0)s; while sqlite3 holds its lock: median \(median(locked))s, "
        + "slowest \(locked.max() ?? 0)s (\(locked.count) calls)")
    // The old daemon waited out SQLite's 5 s busy timeout on its loop at every phase end, a
    // phase a second: calls piled up past the client's timeout, which `timeStatus` fails on.
    // How fast each answer came is the figure printed above, not a bound (a loaded machine
    // says nothing about the lock).
    #expect(writtenMeanwhile <= 4, "nothing written while locked (a few before the lock)")
    let log = harness.daemonLog
    #expect(log.contains("is locked by another program"), "\(log)")
    lock.end()
    try stopAndWaitForTheHistory(harness)
    let phases = try history(harness)
    expectEveryPhaseOnceInOrder(phases, atLeast: 8)
    let status = try harness.status()
    #expect(status["completed_today"] as? Int == phases.filter(\.isCompletedFocus).count)
    #expect(harness.daemonLog.contains("can be written again"))
  }

  /// The history's directory on a small tmpfs that is full: phases wait (kept beside the
  /// saved session), survive a kill -9, and are all written once space is back; today's
  /// figures of `grow status` and of the history agree throughout.
  @Test func onAFullDiskPhasesWaitSurviveKillNineAndArriveOnceSpaceIsBack() throws {
    let harness = try DaemonHarness(config: DaemonHarness.oneSecondCycle, startDaemon: false)
    let directory = (historyPath(harness) as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    // 1 MiB: a new history with every migration needs more than 256 kB of WAL to be made.
    let mounted = try Command.run("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", directory])
    try #require(mounted.status == 0, "cannot mount a tmpfs (root needed): \(mounted.stderr)")
    defer { _ = try? Command.run("umount", ["-l", directory]) }
    let filler = directory + "/filler"
    _ = try Command.run("dd", ["if=/dev/zero", "of=\(filler)", "bs=1024"])  // until it is full
    try harness.start()
    #expect(try harness.grow("start").status == 0)
    Thread.sleep(forTimeInterval: 3)  // phases end on the full disk
    let daemon = try #require(harness.daemon)
    #expect(daemon.stderr.contains("is full"), "\(daemon.stderr)")
    let kept = try PendingPhases(path: harness.pendingHistoryPath).phases
    #expect(
      kept.count >= 2 && kept.allSatisfy { !$0.confirmed },
      "phases wait for room: \(kept)\n\(daemon.stderr)")
    try expectTodayCountsTheKeptPhases(harness)

    #expect(daemon.kill() == 128 + SIGKILL)
    try harness.start()
    Thread.sleep(forTimeInterval: 2)  // more phases, still no room
    try expectTodayCountsTheKeptPhases(harness)
    try FileManager.default.removeItem(atPath: filler)
    try stopAndWaitForTheHistory(harness)
    let phases = try history(harness)
    expectEveryPhaseOnceInOrder(phases, atLeast: 5)
    let status = try harness.status()
    #expect(status["completed_today"] as? Int == phases.filter(\.isCompletedFocus).count)
    let focus = phases.filter { $0.kind == .focus }.reduce(0) { $0 + $1.actualSeconds }
    #expect(abs(Double(status["focus_today"] as? Int ?? -1) - focus) <= 0.5, "\(status)")
    try expectTodayAgrees(harness)
  }

  /// With no history yet (the disk was full from the start), `grow status` counts exactly the
  /// phases kept for it. Read twice around the file, so a phase ending meanwhile is no matter.
  func expectTodayCountsTheKeptPhases(_ harness: DaemonHarness) throws {
    var counts: (Int?, Int) = (nil, -1)
    for _ in 0..<5 {
      let status = try harness.status()["completed_today"] as? Int
      let kept = try PendingPhases(path: harness.pendingHistoryPath).phases
      counts = (status, kept.filter { $0.phase.isCompletedFocus }.count)
      if counts.0 == counts.1 { break }
    }
    #expect(counts.0 == counts.1, "grow status and the kept phases: \(counts)")
  }

  /// `grow status` and `grow stats` (which reads the history, and the phases kept for it)
  /// count the same completed focus today.
  func expectTodayAgrees(_ harness: DaemonHarness) throws {
    let status = try harness.status()
    let stats = try harness.grow("stats", "--json")
    let object = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8))
    let today = (object as? [String: Any])?["today"] as? [String: Any]
    #expect(today?["completed"] as? Int == status["completed_today"] as? Int, "\(stats)")
  }

  /// The `-wal` and `-shm` files deleted while the daemon runs: the next write notices, saves
  /// what the old log held, and the phases are all there after a kill -9 and a restart.
  @Test func aWriteAheadLogDeletedWhileRunningIsNoticedAndNothingIsLost() throws {
    let harness = try DaemonHarness(config: DaemonHarness.oneSecondCycle)
    #expect(try harness.grow("start").status == 0)
    Thread.sleep(forTimeInterval: 2.5)
    let database = historyPath(harness)
    for suffix in ["-wal", "-shm"] { try FileManager.default.removeItem(atPath: database + suffix) }
    Thread.sleep(forTimeInterval: 2.5)  // more phases end
    let daemon = try #require(harness.daemon)
    #expect(
      daemon.stderr.contains("write-ahead log \(database)-wal was deleted or replaced"),
      "\(daemon.stderr)")
    #expect(daemon.kill() == 128 + SIGKILL)
    try harness.start()
    try stopAndWaitForTheHistory(harness)
    expectEveryPhaseOnceInOrder(try history(harness), atLeast: 5)
  }

  /// A reader keeps checkpoints from copying new phases into the database file, so they are
  /// only in the write-ahead log when it is deleted and the daemon is killed: the next daemon
  /// notices the phases the history had confirmed are gone, says so, and writes them again.
  @Test func phasesLostWithTheWriteAheadLogAreNoticedAtRestartAndWrittenAgain() throws {
    let harness = try DaemonHarness(config: DaemonHarness.oneSecondCycle)
    let database = historyPath(harness)
    let reader = try SQLiteTransaction(.readSnapshot, on: database)
    #expect(try harness.grow("start").status == 0)
    Thread.sleep(forTimeInterval: 3.5)
    let daemon = try #require(harness.daemon)
    let confirmed = try PendingPhases(path: harness.pendingHistoryPath).phases.filter(\.confirmed)
    #expect(confirmed.count >= 2, "written, and held until they reach the database file")
    for suffix in ["-wal", "-shm"] { try FileManager.default.removeItem(atPath: database + suffix) }
    #expect(daemon.kill() == 128 + SIGKILL)
    // Killed too: a clean exit would copy its view of the deleted log into the file.
    reader.process.kill()
    try harness.start()
    let log = harness.daemonLog
    #expect(
      log.contains("phase(s) it had recorded (its write-ahead log \(database)-wal was lost"),
      "\(log)")
    try stopAndWaitForTheHistory(harness)
    expectEveryPhaseOnceInOrder(try history(harness), atLeast: 4)
  }
}

private func median(_ values: [TimeInterval]) -> TimeInterval {
  let sorted = values.sorted()
  return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}
