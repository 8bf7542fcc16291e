import Foundation
import GrowCore
import GrowHistory
import GrowLoop
import GrowTestSupport

/// The journal of phases kept for the history with 20,000 in it (a history locked, or on a full
/// disk, for a long spell): how long the recorder takes to start on it, how long a
/// phase end holds the caller (the daemon's loop) while the history is locked by the `sqlite3`
/// program, and how long writing all of them takes once the lock is gone. Only the recorder's
/// public API, so the same code measures older versions.
struct JournalBenchmark {
  struct Sample: Encodable {
    let kept: Int
    let startSeconds: Double
    /// CPU seconds of the process: the machines this runs on are shared and busy.
    let startCPUSeconds: Double
    let phaseEndMedianMilliseconds: Double
    let phaseEndSlowestMilliseconds: Double
    let drainSeconds: Double
    let drainCPUSeconds: Double
  }

  static func cpuSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }

  var kept = 20_000
  var phaseEnds = 20

  func run() throws -> Sample {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-bench-journal-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let database = directory.appendingPathComponent("history.sqlite").path
    let journal = directory.appendingPathComponent("pending-history.json").path
    _ = try HistoryStore(path: database)
    // The whole-file format every version reads.
    let first = Date().addingTimeInterval(-86_400 * 400)
    let phases = (0..<kept).map { index in
      let end = first.addingTimeInterval(Double(index) * 120)
      return PendingPhase(
        phase: PhaseRecord(
          card: "old", kind: .focus, plannedSeconds: 60, actualSeconds: 60,
          startedAt: end.addingTimeInterval(-60), endedAt: end, outcome: .completed))
    }
    try JSONEncoder().encode(phases).write(to: URL(fileURLWithPath: journal))
    func recorder() -> HistoryRecorder {
      HistoryRecorder(
        path: database, pendingPath: journal, events: EventBus(), dailyGoal: { nil },
        time: MainLoop(), log: { _, _ in })
    }
    let lock = try SQLiteTransaction(.writeLock, on: database)
    _ = recorder()  // a version that converts the file does it once, here
    var started = Date()
    var cpu = Self.cpuSeconds()
    let history = recorder()
    let startSeconds = Date().timeIntervalSince(started)
    let startCPUSeconds = Self.cpuSeconds() - cpu

    var ends: [Double] = []
    for index in 0..<phaseEnds {
      let phase = Phase(
        kind: .focus, card: "bench", cycle: 1, duration: 60,
        startedAt: Date().addingTimeInterval(Double(index - phaseEnds) * 60))
      started = Date()
      history.recordCutShort(phase)
      ends.append(Date().timeIntervalSince(started) * 1000)
    }
    lock.end()
    started = Date()
    cpu = Self.cpuSeconds()
    while true {
      history.waitForWrites()
      if history.pendingPhases.allSatisfy(\.confirmed) { break }
      Thread.sleep(forTimeInterval: 0.01)
    }
    let drainSeconds = Date().timeIntervalSince(started)
    let drainCPUSeconds = Self.cpuSeconds() - cpu
    let written = try HistoryStore(path: database).phases().count
    guard written == kept + phaseEnds else {
      throw HarnessError("the history has \(written) phases, not \(kept + phaseEnds)")
    }
    ends.sort()
    return Sample(
      kept: kept, startSeconds: startSeconds, startCPUSeconds: startCPUSeconds,
      phaseEndMedianMilliseconds: ends[ends.count / 2],
      phaseEndSlowestMilliseconds: ends.last ?? 0, drainSeconds: drainSeconds,
      drainCPUSeconds: drainCPUSeconds)
  }
}
