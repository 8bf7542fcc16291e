import Foundation
import GrowCore
import GrowHistory

/// Times `grow stats --year` as a whole process over ten years of synthetic history.
struct HistoryBenchmark {
  struct Sample: Encodable {
    let phases: Int
    let databaseBytes: Int
    let statsYearMedianSeconds: Double
  }

  let runs: Int

  /// Builds the database in a temp directory: 29,200 phases (8 a day: 4 focus and
  /// their breaks, a stopped focus now and then), then runs the built `grow` next to us.
  func run() throws -> Sample {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-bench-history-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("grow/history.sqlite").path
    let store = try HistoryStore(path: path)
    let phases = Self.syntheticPhases(days: 3650)
    try store.record(all: phases)
    let size = [path, path + "-wal"].compactMap {
      (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int
    }.reduce(0, +)

    let grow = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("grow")
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_DATA_HOME"] = directory.path
    environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
    var times: [Double] = []
    for _ in 0..<runs {
      let process = Process()
      process.executableURL = grow
      process.arguments = ["stats", "--year"]
      process.environment = environment
      process.standardOutput = FileHandle.nullDevice
      let started = Date()
      try process.run()
      process.waitUntilExit()
      times.append(Date().timeIntervalSince(started))
      guard process.terminationStatus == 0 else {
        throw BenchmarkError("grow stats --year exited with \(process.terminationStatus)")
      }
    }
    return Sample(
      phases: phases.count, databaseBytes: size,
      statsYearMedianSeconds: times.sorted()[times.count / 2])
  }
}

extension HistoryBenchmark {
  /// `days` days of synthetic history ending today: 8 phases a day (4 focus and their
  /// breaks, a stopped focus now and then) on three cards.
  static func syntheticPhases(days: Int, now: Date = Date()) -> [PhaseRecord] {
    var phases: [PhaseRecord] = []
    phases.reserveCapacity(days * 8)
    let cards = ["work", "math", "writing"]
    for day in 0..<days {
      var start = now.addingTimeInterval(-Double(day) * 86_400 - 10 * 3600)
      for slot in 0..<4 {
        let outcome: HistoryOutcome = (day * 7 + slot) % 23 == 0 ? .stopped : .completed
        phases.append(
          PhaseRecord(
            card: cards[(day + slot) % 3], kind: .focus, plannedSeconds: 1500,
            actualSeconds: outcome == .completed ? 1500 : 600, startedAt: start,
            endedAt: start.addingTimeInterval(1500), outcome: outcome,
            intention: "synthetic"))
        start = start.addingTimeInterval(1500)
        phases.append(
          PhaseRecord(
            card: cards[(day + slot) % 3], kind: slot == 3 ? .longBreak : .shortBreak,
            plannedSeconds: 300, actualSeconds: 300, startedAt: start,
            endedAt: start.addingTimeInterval(300), outcome: .completed))
        start = start.addingTimeInterval(300)
      }
    }
    return phases
  }
}

struct BenchmarkError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
