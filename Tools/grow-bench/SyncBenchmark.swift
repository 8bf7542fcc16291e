import Foundation
import GrowCore
import GrowHistory
import GrowSync
import GrowTestSupport

/// Sync (docs/sync.md): how long a fourth machine takes to merge the journals of three that
/// each kept `years` of history, and the memory it takes for one year and for four (merged a
/// batch at a time, so it should not grow with the history); then a real daemon with a sync
/// folder: how soon a phase of another machine that lands in the folder (renamed into place,
/// as Syncthing does) reaches `grow status`, and how often the daemon wakes while the folder
/// does not change.
struct SyncBenchmark {
  struct Sample: Encodable {
    /// Phases in all three journals, per year of history merged.
    let phasesPerYear: Int
    let writeJournalsSeconds: Double
    let mergeOneYearSeconds: Double
    let mergeOneYearCPUSeconds: Double
    let mergeOneYearPeakGrowthMiB: Double
    let mergeFourYearsSeconds: Double
    let mergeFourYearsPeakGrowthMiB: Double
    /// The merge again with nothing new: the positions say every journal is read.
    let mergeAgainMilliseconds: Double
    let arrivalToStatusMilliseconds: [Double]
    let idleSeconds: Double
    let idleContextSwitches: Int
  }

  var quick = false
  /// Phases a machine grows a day: 6 focus and 6 breaks, a heavy day of study.
  static let phasesPerDay = 12

  func run() throws -> Sample {
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-bench-sync-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)

    let folder = root.appendingPathComponent("Sync").path
    var write = 0.0
    for (index, id) in ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"].enumerated() {
      let store = try HistoryStore(path: root.appendingPathComponent("\(id).sqlite").path)
      try store.record(all: Self.phases(days: 4 * 365, offset: Double(index) * 17))
      let machine = SyncFolder(path: folder, identity: MachineIdentity(id: id, name: "m\(index)"))
      try machine.create()
      let started = Date()
      try machine.writeNewPhases(from: store)
      write += Date().timeIntervalSince(started)
    }
    let perYear = 3 * 365 * Self.phasesPerDay
    // One year: the first quarter of each journal (header included), in a folder of its own.
    let oneYear = root.appendingPathComponent("OneYear").path
    try FileManager.default.createDirectory(atPath: oneYear, withIntermediateDirectories: true)
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
      let lines = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
        .split(separator: "\n").prefix(1 + 365 * Self.phasesPerDay)
      try (lines.joined(separator: "\n") + "\n").write(
        toFile: oneYear + "/" + name, atomically: true, encoding: .utf8)
    }
    let one = try merge(folder: oneYear, into: root.appendingPathComponent("one.sqlite").path)
    let four = try merge(folder: folder, into: root.appendingPathComponent("four.sqlite").path)
    let (arrivals, idle) = try daemon(root: root)
    return Sample(
      phasesPerYear: perYear, writeJournalsSeconds: write, mergeOneYearSeconds: one.seconds,
      mergeOneYearCPUSeconds: one.cpu, mergeOneYearPeakGrowthMiB: one.peakGrowthMiB,
      mergeFourYearsSeconds: four.seconds, mergeFourYearsPeakGrowthMiB: four.peakGrowthMiB,
      mergeAgainMilliseconds: four.againSeconds * 1000, arrivalToStatusMilliseconds: arrivals,
      idleSeconds: quick ? 5 : 20, idleContextSwitches: idle)
  }

  /// A history of `days` days ending yesterday, `phasesPerDay` a day.
  static func phases(days: Int, offset: Double) -> [PhaseRecord] {
    let start = Date().addingTimeInterval(-Double(days + 1) * 86_400)
    var phases: [PhaseRecord] = []
    phases.reserveCapacity(days * phasesPerDay)
    for day in 0..<days {
      for slot in 0..<phasesPerDay {
        let begin = start.addingTimeInterval(Double(day) * 86_400 + Double(slot) * 1800 + offset)
        let focus = slot % 2 == 0
        phases.append(
          PhaseRecord(
            card: ["math", "essay", "code"][day % 3], kind: focus ? .focus : .shortBreak,
            plannedSeconds: focus ? 1500 : 300, actualSeconds: focus ? 1500 : 300,
            startedAt: begin, endedAt: begin.addingTimeInterval(focus ? 1500 : 300),
            outcome: .completed, intention: focus ? "chapter \(day % 12)" : nil))
      }
    }
    return phases
  }

  private func merge(folder: String, into path: String) throws
    -> (seconds: Double, cpu: Double, peakGrowthMiB: Double, againSeconds: Double)
  {
    let store = try HistoryStore(path: path)
    let machine = SyncFolder(
      path: folder, identity: MachineIdentity(id: "dddddddddddddddd", name: "fourth"))
    Self.resetPeak()
    let before = Self.memoryKiB("VmHWM")
    let cpu = JournalBenchmark.cpuSeconds()
    let started = Date()
    let report = machine.merge(into: store)
    let seconds = Date().timeIntervalSince(started)
    let cpuSeconds = JournalBenchmark.cpuSeconds() - cpu
    let peak = Self.memoryKiB("VmHWM") - before
    guard report.problems.isEmpty else {
      throw HarnessError("the benchmark's journals have problems: \(report.problems)")
    }
    let again = Date()
    _ = machine.merge(into: store)
    return (seconds, cpuSeconds, peak / 1024, Date().timeIntervalSince(again))
  }

  /// A daemon syncing `root/Live`; a phase of another machine arrives `runs` times.
  private func daemon(root: URL) throws -> (arrivals: [Double], idleSwitches: Int) {
    let live = root.appendingPathComponent("Live").path
    let harness = try DaemonHarness(
      config: "[plugins]\nenable =\n\n[sync]\nfolder = \(live)\n",
      environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
    defer { _ = harness.daemon?.terminate() }
    let other = MachineIdentity(id: "eeeeeeeeeeeeeeee", name: "laptop")
    let source = root.appendingPathComponent("laptop")
    let store = try HistoryStore(path: source.appendingPathComponent("history.sqlite").path)
    let outbox = SyncFolder(path: source.appendingPathComponent("Sync").path, identity: other)
    try outbox.create()
    var arrivals: [Double] = []
    for run in 0..<(quick ? 3 : 10) {
      let end = Date().addingTimeInterval(-Double(run + 1))
      try store.record(
        PhaseRecord(
          card: "math", kind: .focus, plannedSeconds: 60, actualSeconds: 60,
          startedAt: end.addingTimeInterval(-60), endedAt: end, outcome: .completed))
      try outbox.writeNewPhases(from: store)
      // Written beside and renamed into place, as Syncthing does.
      let temporary = live + "/.syncthing.\(other.journalName).tmp"
      try? FileManager.default.removeItem(atPath: temporary)
      try FileManager.default.copyItem(atPath: outbox.journalPath, toPath: temporary)
      let started = Date()
      rename(temporary, live + "/" + other.journalName)
      _ = try harness.waitForStatus(timeout: 30) { ($0["completed_today"] as? Int) == run + 1 }
      arrivals.append(Date().timeIntervalSince(started) * 1000)
    }
    guard let pid = harness.daemon?.pid else { return (arrivals, -1) }
    Thread.sleep(forTimeInterval: 1)
    let before = Self.contextSwitches(pid)
    Thread.sleep(forTimeInterval: quick ? 5 : 20)
    return (arrivals, Self.switches(from: before, to: Self.contextSwitches(pid)))
  }

  /// Context switches per thread: a thread that ends meanwhile (libdispatch lets idle workers
  /// go) takes its count with it, so only the threads there at the end are compared.
  static func contextSwitches(_ pid: Int32) -> [String: Int] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var counts: [String: Int] = [:]
    for task in tasks {
      let status =
        (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
      for line in status.split(separator: "\n") where line.contains("ctxt_switches") {
        counts[task, default: 0] +=
          Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
      }
    }
    return counts
  }

  static func switches(from before: [String: Int], to after: [String: Int]) -> Int {
    after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
  }

  /// This process's VmHWM starts again from its RSS now (clear_refs 5).
  static func resetPeak() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
  }

  static func memoryKiB(_ field: String) -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
      return Double(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
  }

  static func print(_ sample: Sample) {
    let arrivals = sample.arrivalToStatusMilliseconds.sorted()
    let median = arrivals.isEmpty ? 0 : arrivals[arrivals.count / 2]
    Swift.print(
      "Sync: 3 machines × \(sample.phasesPerYear / 3) phases a year (12 a day); writing their "
        + String(format: "4-year journals %.1f s", sample.writeJournalsSeconds))
    Swift.print(
      String(
        format: "  a fourth machine merges one year (%d phases) in %.2f s (%.2f CPU s), peak "
          + "memory +%.1f MiB; four years in %.2f s, +%.1f MiB; again with nothing new %.1f ms",
        sample.phasesPerYear, sample.mergeOneYearSeconds, sample.mergeOneYearCPUSeconds,
        sample.mergeOneYearPeakGrowthMiB, sample.mergeFourYearsSeconds,
        sample.mergeFourYearsPeakGrowthMiB, sample.mergeAgainMilliseconds))
    Swift.print(
      String(
        format: "  a phase of another machine renamed into the folder → grow status: median "
          + "%.0f ms, slowest %.0f ms (%d runs); daemon context switches while nothing "
          + "changes: %d in %.0f s", median, arrivals.last ?? 0, arrivals.count,
        sample.idleContextSwitches, sample.idleSeconds))
  }
}
