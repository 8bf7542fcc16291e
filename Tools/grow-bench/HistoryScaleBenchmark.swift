import Foundation
import GrowDBus
import GrowHistory
import GrowPluginKit
import GrowTestSupport

/// The history's figures, each with a year of history (2,920 phases) and with forty
/// (116,800: 8 a day), so that what grows with the history shows as the difference:
///
/// - `grow history --all --csv` and `--json` as whole processes, output to /dev/null: wall
///   time and peak RSS (`ru_maxrss`, measured by a small Python parent);
/// - `grow stats --year` and `grow report --svg` (today's), wall time;
/// - `grow daemon` start-up: posix_spawn until the bus name has an owner (no plugins: only
///   the history differs);
/// - phase-end lateness: 1 s phases, an exec plugin stamps each `phase-ended` line on arrival
///   (`CompareBenchmark.lateness`), against the phase's `ends_at`.
@MainActor
struct HistoryScaleBenchmark {
  struct Figures: Encodable {
    var years: Int
    var phases: Int
    var csvSeconds: Double
    var csvPeakMiB: Double
    /// Each run's wall and CPU (user + system) seconds: CPU time moves less with the load.
    var csvWallRuns: [Double]
    var csvCPURuns: [Double]
    var jsonSeconds: Double
    var jsonPeakMiB: Double
    var statsYearSeconds: Double
    var reportSeconds: Double
    var startUpMilliseconds: Double
    var phaseEndLateMedianMilliseconds: Double?
    var phaseEndLateMaxMilliseconds: Double?
    var phaseEnds: Int
  }

  let quick: Bool
  private var runs: Int { quick ? 3 : 5 }
  private var grow: String { Binaries.locate("grow") }
  /// A CompareBenchmark only for its process helpers (spawn, stop, waitForName).
  private let processes = CompareBenchmark(seconds: 0, quick: true)

  func run() throws -> [Figures] {
    let bus = try PrivateSessionBus()
    defer { bus.stop() }
    let connection = try BusConnection.connect(address: bus.address, attachToLoop: false)
    return try [1, 40].map { years in
      progress("history at scale: \(years) year(s) of phases…")
      return try measure(years: years, bus: bus, connection: connection)
    }
  }

  private func measure(years: Int, bus: PrivateSessionBus, connection: BusConnection) throws
    -> Figures
  {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-bench-scale-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    var environment = bus.environment
    for (name, sub) in [
      ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"),
    ] {
      environment[name] = directory.appendingPathComponent(sub).path
    }
    let history = HistoryStore.defaultPath(environment: environment)
    let phases = HistoryBenchmark.syntheticPhases(days: years * 365)
    do {
      let store = try HistoryStore(path: history)
      try store.record(all: phases)
      // Into the file itself, as the daemon's checkpoints keep it: a reader of a 40-year
      // write-ahead log measures that log, not Grow.
      _ = try store.checkpoint()
    }
    let config = environment["XDG_CONFIG_HOME", default: ""] + "/grow/config.ini"
    try FileManager.default.createDirectory(
      atPath: (config as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let fast = "[timer]\nfocus = 1s\nshort-break = 1s\nlong-break = 1s\nauto-start-focus = true\n"
    try ("[plugins]\nenable =\n" + fast)
      .write(toFile: config, atomically: true, encoding: .utf8)

    let csv = try timeProcess(["history", "--all", "--csv"], environment)
    let json = try timeProcess(["history", "--all", "--json"], environment)
    let stats = try timeProcess(["stats", "--year"], environment)
    let svg = directory.appendingPathComponent("report.svg").path
    let report = try timeProcess(["report", "--svg", svg], environment)

    // Start-up: no plugins, so that only the history differs between the two sizes.
    try ("[plugins]\nenable =\n" + fast)
      .write(toFile: config, atomically: true, encoding: .utf8)
    var startUps: [Double] = []
    for _ in 0..<runs * 2 {
      let start = Date()
      let pid = try processes.spawn(grow, ["daemon"], environment)
      if processes.waitForName(GrowBusAPI.busName, connection, timeout: 10) != nil {
        startUps.append(Date().timeIntervalSince(start) * 1000)
      }
      processes.stop(pid)
      _ = processes.waitForName(GrowBusAPI.busName, connection, timeout: 2, owned: false)
    }

    // Phase ends, as an exec plugin sees them.
    let stamps = directory.appendingPathComponent("stamps").path
    let stamper = directory.appendingPathComponent("stamp.sh").path
    try writeExecutable(
      "#!/bin/bash\nwhile IFS= read -r line; do printf '%s %s\\n' \"$EPOCHREALTIME\" \"$line\"; "
        + "done >> \(stamps)\n", to: stamper)
    try ("[plugins]\nenable = stamp\n[plugin.stamp]\nexec = \(stamper)\n" + fast)
      .write(toFile: config, atomically: true, encoding: .utf8)
    let daemon = try BackgroundProcess(grow, ["daemon"], environment: environment)
    defer { daemon.kill() }
    guard processes.waitForName(GrowBusAPI.busName, connection, timeout: 10) != nil else {
      throw HarnessError("grow daemon did not start: \(daemon.stderr)")
    }
    _ = try Command.run(grow, ["start"], environment: environment)
    Thread.sleep(forTimeInterval: quick ? 6 : 16)
    _ = try Command.run(grow, ["stop"], environment: environment)
    Thread.sleep(forTimeInterval: 0.3)
    daemon.terminate()
    let late = CompareBenchmark.lateness(CompareBenchmark.readWhole(stamps))

    return Figures(
      years: years, phases: phases.count, csvSeconds: csv.seconds, csvPeakMiB: csv.peakMiB,
      csvWallRuns: csv.wall, csvCPURuns: csv.cpu,
      jsonSeconds: json.seconds, jsonPeakMiB: json.peakMiB, statsYearSeconds: stats.seconds,
      reportSeconds: report.seconds, startUpMilliseconds: median(startUps),
      phaseEndLateMedianMilliseconds: late.isEmpty ? nil : median(late),
      phaseEndLateMaxMilliseconds: late.max(), phaseEnds: late.count)
  }

  /// `grow ARGUMENTS` `runs` times, output to /dev/null: the median wall time and the
  /// largest peak RSS. Run from a small Python process: a child spawned by this one would
  /// report this process's own peak (Linux carries the parent's high-water mark of a vfork
  /// child across exec into `ru_maxrss`), and this one holds forty years of phases.
  private func timeProcess(_ arguments: [String], _ environment: [String: String]) throws
    -> (seconds: Double, peakMiB: Double, cpu: [Double], wall: [Double])
  {
    let script = """
      import resource, subprocess, sys, time
      start = time.perf_counter()
      code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
      seconds = time.perf_counter() - start
      usage = resource.getrusage(resource.RUSAGE_CHILDREN)
      print(code, seconds, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)
      """
    var times: [Double] = []
    var cpuTimes: [Double] = []
    var peak = 0
    for _ in 0..<runs {
      let result = try Command.run(
        "/usr/bin/python3", ["-c", script, grow] + arguments, environment: environment, timeout: 120
      )
      let fields = result.stdout.split(separator: " ").map {
        $0.trimmingCharacters(in: .whitespacesAndNewlines)
      }
      guard fields.count == 4, fields[0] == "0", let seconds = Double(fields[1]),
        let kilobytes = Int(fields[2]), let cpu = Double(fields[3])
      else {
        throw BenchmarkError(
          "grow \(arguments.joined(separator: " ")) failed: \(result.stdout) \(result.stderr)")
      }
      times.append(seconds)
      cpuTimes.append(cpu)
      peak = max(peak, kilobytes)
    }
    return (median(times), Double(peak) / 1024, cpuTimes, times)
  }

  nonisolated static func printTable(_ figures: [Figures]) {
    func number(_ value: Double?, _ digits: Int = 1) -> String {
      value.map { String(format: "%.\(digits)f", $0) } ?? "–"
    }
    Swift.print("History at scale: one year vs forty (medians; whole processes)")
    Swift.print(
      "years  phases   csv s (peak MiB)  json s (peak MiB)  stats --year s  report s  "
        + "start-up ms  phase-end late ms median / max (n)")
    for row in figures {
      Swift.print(
        String(format: "%5d  %7d  ", row.years, row.phases)
          + "\(number(row.csvSeconds, 3)) (\(number(row.csvPeakMiB)))".padding(
            toLength: 18, withPad: " ", startingAt: 0)
          + "\(number(row.jsonSeconds, 3)) (\(number(row.jsonPeakMiB)))".padding(
            toLength: 19, withPad: " ", startingAt: 0)
          + number(row.statsYearSeconds, 3).padding(toLength: 16, withPad: " ", startingAt: 0)
          + number(row.reportSeconds, 3).padding(toLength: 10, withPad: " ", startingAt: 0)
          + number(row.startUpMilliseconds).padding(toLength: 13, withPad: " ", startingAt: 0)
          + "\(number(row.phaseEndLateMedianMilliseconds)) / "
          + "\(number(row.phaseEndLateMaxMilliseconds)) (\(row.phaseEnds))")
    }
    for row in figures {
      let wall = row.csvWallRuns.sorted().map { String(format: "%.3f", $0) }
      let cpu = row.csvCPURuns.sorted().map { String(format: "%.3f", $0) }
      Swift.print(
        "\(row.years) year(s): grow history --all --csv, each run: wall s "
          + wall.joined(separator: " ") + "; CPU s " + cpu.joined(separator: " "))
    }
    Swift.print(
      "goals at 40 years: csv and json ≤ 20 MiB and ≥ 3× faster than before; start-up ≤ 20 ms;"
        + " phase-end lateness median ≤ 5 ms")
  }
}
