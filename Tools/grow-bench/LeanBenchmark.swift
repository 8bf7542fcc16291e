import Foundation
import GrowPluginKit
import GrowTestSupport

/// The lean goals (memory, wake-ups, start-up) in one table: the daemon's memory and wake-ups (from
/// `compare`, which measures GNOME Pomodoro, Safe Eyes and Workrave the same way), `grow status`
/// against `busctl … GetStatus`, the status-bar follower, the event bus (from `bus`), and the
/// floors: a Swift program importing only Glibc and a C loop on clock_nanosleep (bench/floors,
/// built by `make bench` into .build/bench-floors).
///
/// Short processes: wall time from posix_spawn to waitpid, median; peak RSS from GNU time's
/// `%M` (a child's maxrss via wait4 would include the spawning bench's own pages, since
/// posix_spawn's vfork-style child starts in the parent's memory).
@MainActor
struct LeanBenchmark {
  struct Sample: Encodable {
    var runs = 0
    var growStatusMilliseconds: Double?
    var busctlMilliseconds: Double?
    var growStatusPeakMegabytes: Double?
    var busctlPeakMegabytes: Double?
    /// CPU time (user + system, from wait4) of the same runs, medians.
    var growStatusCPUMilliseconds: Double?
    var busctlCPUMilliseconds: Double?
    /// bench/floors/StatusFloor.swift: the same GetStatus from Swift with only libdbus and
    /// Glibc, the stdlib static; spawned in turn with the other two.
    var statusFloorMilliseconds: Double?
    var statusFloorCPUMilliseconds: Double?
    var statusFloorPeakMegabytes: Double?
    var growStatusJSONPeakMegabytes: Double?
    /// `grow-cli status`: the whole command line (GrowKit, FoundationEssentials, the shared
    /// runtime), which `grow status` was before the static front; spawned in turn with the rest.
    var growCLIStatusMilliseconds: Double?
    var growCLIStatusCPUMilliseconds: Double?
    var growCLIStatusPeakMegabytes: Double?
    var loadAverage = ""
    var windowSeconds = 0.0
    var followerSecondsPerMinute: Double?
    var followerSecondsThreads = 0
    var followerMinutesPerMinute: Double?
    var followerIdlePerMinute: Double?
    var followerRSSMegabytes: Double?
    var followerPeakMegabytes: Double?
    var floorSwiftMilliseconds: Double?
    var floorSwiftPeakMegabytes: Double?
    var floorSwiftPSSMegabytes: Double?
    var floorSwiftPSSAloneMegabytes: Double?
    var floorSwiftUSSMegabytes: Double?
    var floorTickPerMinute: Double?
    var notes: [String] = []
  }

  let quick: Bool
  private var grow: String { Binaries.locate("grow") }
  private var growCLI: String { Binaries.locate("grow-cli") }
  private var floors: URL { RepoPaths.root.appendingPathComponent(".build/bench-floors") }
  private var tools: CompareBenchmark { CompareBenchmark(seconds: 0, quick: quick) }

  func run() throws -> Sample {
    var sample = Sample()
    sample.runs = quick ? 10 : 40
    sample.windowSeconds = quick ? 10 : 30
    let harness = try DaemonHarness()
    let environment = harness.environment
    let busctl = [
      "--user", "call", GrowBusAPI.busName, GrowBusAPI.objectPath, GrowBusAPI.timerInterface,
      "GetStatus",
    ]

    // `grow status`, busctl and the status floor, in turn, so all see the same machine.
    sample.loadAverage = PluginCostBenchmark.loadAverage()
    let statusFloor = floors.appendingPathComponent("status-floor").path
    let hasStatusFloor = FileManager.default.isExecutableFile(atPath: statusFloor)
    var growTimes: [(wall: Double, cpu: Double)] = []
    var busctlTimes: [(wall: Double, cpu: Double)] = []
    var floorTimes: [(wall: Double, cpu: Double)] = []
    var cliTimes: [(wall: Double, cpu: Double)] = []
    for _ in 0..<sample.runs {
      growTimes += try timed(grow, ["status"], environment).map { [$0] } ?? []
      cliTimes += try timed(growCLI, ["status"], environment).map { [$0] } ?? []
      busctlTimes += try timed("busctl", busctl, environment).map { [$0] } ?? []
      if hasStatusFloor {
        floorTimes += try timed(statusFloor, [], environment).map { [$0] } ?? []
      }
    }
    func medians(_ times: [(wall: Double, cpu: Double)]) -> (Double?, Double?) {
      times.isEmpty ? (nil, nil) : (median(times.map(\.wall)), median(times.map(\.cpu)))
    }
    (sample.growStatusMilliseconds, sample.growStatusCPUMilliseconds) = medians(growTimes)
    (sample.busctlMilliseconds, sample.busctlCPUMilliseconds) = medians(busctlTimes)
    (sample.statusFloorMilliseconds, sample.statusFloorCPUMilliseconds) = medians(floorTimes)
    (sample.growCLIStatusMilliseconds, sample.growCLIStatusCPUMilliseconds) = medians(cliTimes)
    sample.growCLIStatusPeakMegabytes = peak(growCLI, ["status"], environment)
    sample.growStatusPeakMegabytes = peak(grow, ["status"], environment)
    sample.growStatusJSONPeakMegabytes = peak(grow, ["status", "--json"], environment)
    sample.busctlPeakMegabytes = peak("busctl", busctl, environment)
    if hasStatusFloor {
      sample.statusFloorPeakMegabytes = peak(statusFloor, [], environment)
    } else {
      sample.notes.append("no \(statusFloor): run `make bench` to build the floors")
    }

    // The follower while a focus phase runs, beside the C floor, then idle.
    _ = try harness.grow("start", "--focus", "25m")
    let seconds = try BackgroundProcess(
      grow, ["status", "--follow", "--template", "{remaining}"], environment: environment)
    defer { seconds.kill() }
    let minutes = try BackgroundProcess(
      grow, ["status", "--follow", "--template", "{remaining_min}"], environment: environment)
    defer { minutes.kill() }
    let tickPath = floors.appendingPathComponent("tick").path
    let tick =
      FileManager.default.isExecutableFile(atPath: tickPath)
      ? try BackgroundProcess(tickPath, []) : nil
    defer { tick?.kill() }
    if tick == nil { sample.notes.append("no \(tickPath): run `make bench` to build the floors") }
    Thread.sleep(forTimeInterval: 1.5)
    let pids = [seconds.pid, minutes.pid] + (tick.map { [$0.pid] } ?? [])
    let focus = ContextSwitches.during(seconds: sample.windowSeconds, of: pids)
    let perMinute = { (switches: Int) in Double(switches) * 60 / sample.windowSeconds }
    sample.followerSecondsPerMinute = perMinute(focus[0].switches)
    sample.followerSecondsThreads = focus[0].threads
    sample.followerMinutesPerMinute = perMinute(focus[1].switches)
    if tick != nil { sample.floorTickPerMinute = perMinute(focus[2].switches) }
    let memory = CompareBenchmark.memory(of: seconds.pid)
    sample.followerRSSMegabytes = memory.rss
    sample.followerPeakMegabytes = memory.peakRSS
    _ = try harness.grow("stop")
    Thread.sleep(forTimeInterval: 1)
    let idleWindow = sample.windowSeconds / 3
    let idle = ContextSwitches.during(seconds: idleWindow, of: seconds.pid)
    sample.followerIdlePerMinute = Double(idle.switches) * 60 / idleWindow

    // A Swift program that imports only Glibc.
    let floorPath = floors.appendingPathComponent("glibc-only").path
    if FileManager.default.isExecutableFile(atPath: floorPath) {
      var times: [Double] = []
      for _ in 0..<sample.runs { times += try timed(floorPath, [], [:]).map { [$0.wall] } ?? [] }
      sample.floorSwiftMilliseconds = times.isEmpty ? nil : median(times)
      sample.floorSwiftPeakMegabytes = peak(floorPath, [], [:])
      let staying = try BackgroundProcess(floorPath, ["--stay"])
      defer { staying.kill() }
      Thread.sleep(forTimeInterval: 0.5)
      let floorMemory = CompareBenchmark.memory(of: staying.pid)
      sample.floorSwiftPSSMegabytes = floorMemory.pss
      sample.floorSwiftPSSAloneMegabytes = LeanBenchmark.pssAsOnlySwiftProcess(of: staying.pid)
      sample.floorSwiftUSSMegabytes = floorMemory.uss
    } else {
      sample.notes.append("no \(floorPath): run `make bench` to build the floors")
    }
    return sample
  }

  /// Milliseconds from posix_spawn to the child's exit, and the child's CPU time (user +
  /// system, from wait4) in milliseconds; nil when it could not start.
  private func timed(_ executable: String, _ arguments: [String], _ environment: [String: String])
    throws -> (wall: Double, cpu: Double)?
  {
    let start = Date()
    guard let pid = try? tools.spawn(executable, arguments, environment) else { return nil }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0, errno == EINTR {}
    let wall = Date().timeIntervalSince(start) * 1000
    func milliseconds(_ time: timeval) -> Double {
      Double(time.tv_sec) * 1000 + Double(time.tv_usec) / 1000
    }
    return (wall, milliseconds(usage.ru_utime) + milliseconds(usage.ru_stime))
  }

  /// The highest peak RSS of five runs, in MB, as GNU time reports it; nil without it.
  private func peak(_ executable: String, _ arguments: [String], _ environment: [String: String])
    -> Double?
  {
    let time = "/usr/bin/time"
    guard FileManager.default.isExecutableFile(atPath: time) else { return nil }
    let full = CompareBenchmark.resolve(executable) ?? executable
    let peaks = (0..<5).compactMap { _ -> Double? in
      guard
        let result = try? Command.run(
          time, ["-f", "peak-kb %M", full] + arguments, environment: environment),
        let line = result.stderr.split(separator: "\n").last(where: { $0.hasPrefix("peak-kb ") }),
        let kilobytes = Double(line.dropFirst(8))
      else { return nil }
      return kilobytes * 1024 / 1e6
    }
    return peaks.max()
  }
}

// MARK: The table

extension LeanBenchmark.Sample {
  /// Every lean goal with Grow's figure, the anchors' and the floor's, as Markdown.
  func markdown(compare: CompareBenchmark.Result?, bus: [BusBenchmark.Sample]) -> String {
    func number(_ value: Double?, _ digits: Int = 1) -> String {
      value.map { String(format: "%.\(digits)f", $0) } ?? "–"
    }
    let rows = compare?.rows ?? []
    let grow = rows.first { $0.skipped == nil && $0.tool.hasPrefix("Grow") }
    let anchorNames = ["GNOME Pomodoro", "Safe Eyes", "Workrave"]
    func anchors(_ value: (CompareBenchmark.Row) -> Double?, _ digits: Int = 1) -> [String] {
      anchorNames.map { name in
        guard let row = rows.first(where: { $0.tool == name }) else { return "not run" }
        if row.skipped != nil { return "skipped" }
        return number(value(row), digits)
      }
    }
    /// "met" or how far off, for a figure that must stay at or under `limit`.
    func verdict(_ value: Double?, atMost limit: Double, _ unit: String = "") -> String {
      guard let value else { return "not measured" }
      if value <= limit { return "met" }
      return "missed by " + String(format: "%.1f", value - limit) + unit
    }
    var lines = [
      "| figure | goal | Grow | GNOME Pomodoro | Safe Eyes | Workrave | floor | verdict |",
      "|---|---|---|---|---|---|---|---|",
    ]
    func row(_ cells: [String]) { lines.append("| " + cells.joined(separator: " | ") + " |") }
    let floorNote = "Swift + Glibc only: "
    row(
      ["daemon, 4 plugins: peak RSS (MB)", "≤ 17", number(grow?.peakRSSMegabytes)]
        + anchors(\.peakRSSMegabytes)
        + [
          floorNote + number(floorSwiftPeakMegabytes),
          verdict(grow?.peakRSSMegabytes, atMost: 17, " MB"),
        ])
    row(
      ["daemon: PSS (MB; the bench shares pages with it)", "≤ 12", number(grow?.pssMegabytes)]
        + anchors(\.pssMegabytes)
        + [
          floorNote + number(floorSwiftPSSMegabytes),
          verdict(grow?.pssMegabytes, atMost: 12, " MB"),
        ])
    row(
      [
        "daemon: PSS as the only Swift process (MB)", "≤ 12", number(grow?.pssAloneMegabytes),
        "", "", "", floorNote + number(floorSwiftPSSAloneMegabytes),
        verdict(grow?.pssAloneMegabytes, atMost: 12, " MB"),
      ])
    row(
      ["daemon: USS (MB; its own pages, whoever else runs)", "", number(grow?.ussMegabytes)]
        + anchors(\.ussMegabytes) + [floorNote + number(floorSwiftUSSMegabytes), ""])
    row(
      ["daemon: wake-ups/s idle", "0", number(grow?.idleWakeUpsPerSecond, 2)]
        + anchors(\.idleWakeUpsPerSecond, 2)
        + ["", verdict(grow?.idleWakeUpsPerSecond, atMost: 0)])
    row(
      ["daemon: wake-ups/s during focus", "0", number(grow?.runningWakeUpsPerSecond, 2)]
        + anchors(\.runningWakeUpsPerSecond, 2)
        + ["", verdict(grow?.runningWakeUpsPerSecond, atMost: 0)])
    row(
      ["daemon: child processes/min", "0", number(grow?.childrenPerMinute)]
        + anchors(\.childrenPerMinute) + ["", verdict(grow?.childrenPerMinute, atMost: 0)])
    row(
      ["daemon: start-up to its bus name (ms)", "", number(grow?.startUpMilliseconds, 0)]
        + anchors(\.startUpMilliseconds, 0) + ["", ""])
    let statusLimit = busctlMilliseconds.map { $0 * 1.2 }
    row([
      "`grow status`, whole process (ms, median of \(runs))",
      "≤ 1.2 × busctl = " + number(statusLimit, 2), number(growStatusMilliseconds, 2),
      "", "", "", "`busctl … GetStatus`: " + number(busctlMilliseconds, 2),
      statusLimit.map { verdict(growStatusMilliseconds, atMost: $0, " ms") } ?? "not measured",
    ])
    let cpuRatio = growStatusCPUMilliseconds.flatMap { grow in
      busctlCPUMilliseconds.map { grow / $0 }
    }
    let floorRatio = statusFloorCPUMilliseconds.flatMap { floor in
      busctlCPUMilliseconds.map { floor / $0 }
    }
    row([
      "`grow status`: CPU time (ms, median of \(runs); × busctl's in the same run)",
      "≤ 0.7 × busctl",
      number(growStatusCPUMilliseconds, 2) + " (" + number(cpuRatio, 2) + " ×)", "", "", "",
      "busctl: " + number(busctlCPUMilliseconds, 2) + "; Swift + libdbus, static stdlib: "
        + number(statusFloorCPUMilliseconds, 2) + " (" + number(floorRatio, 2) + " ×), "
        + number(statusFloorMilliseconds, 2) + " ms wall",
      verdict(cpuRatio, atMost: 0.7, " ×"),
    ])
    row([
      "`grow status`: peak RSS (MB)", "≤ 8", number(growStatusPeakMegabytes), "", "", "",
      "busctl: " + number(busctlPeakMegabytes) + "; " + floorNote
        + number(floorSwiftPeakMegabytes) + "; Swift + libdbus, static stdlib: "
        + number(statusFloorPeakMegabytes),
      verdict(growStatusPeakMegabytes, atMost: 8, " MB"),
    ])
    let cliRatio = growCLIStatusCPUMilliseconds.flatMap { cli in
      busctlCPUMilliseconds.map { cli / $0 }
    }
    row([
      "`grow-cli status` (the whole command line, `grow status` before the front): CPU time "
        + "(ms; × busctl's), wall (ms), peak RSS (MB)",
      "",
      number(growCLIStatusCPUMilliseconds, 2) + " (" + number(cliRatio, 2) + " ×), "
        + number(growCLIStatusMilliseconds, 2) + " ms, " + number(growCLIStatusPeakMegabytes)
        + " MB", "", "", "", "", "",
    ])
    row([
      "`grow status --json`: peak RSS (MB)", "≤ 8", number(growStatusJSONPeakMegabytes), "", "",
      "", "", verdict(growStatusJSONPeakMegabytes, atMost: 8, " MB"),
    ])
    row([
      "follower `{remaining}`: wake-ups/min (all \(followerSecondsThreads) threads)", "≤ 65",
      number(followerSecondsPerMinute, 0), "", "", "",
      "C loop on clock_nanosleep: " + number(floorTickPerMinute, 0),
      verdict(followerSecondsPerMinute, atMost: 65),
    ])
    row([
      "follower `{remaining_min}`: wake-ups/min (\(Int(windowSeconds)) s window)", "~1",
      number(followerMinutesPerMinute, 0), "", "", "", "",
      verdict(followerMinutesPerMinute, atMost: 60 / windowSeconds + 1),
    ])
    row([
      "follower, idle: wake-ups/min", "0", number(followerIdlePerMinute, 0), "", "", "", "",
      verdict(followerIdlePerMinute, atMost: 0),
    ])
    row([
      "follower: RSS (peak) (MB)", "≤ 8",
      number(followerRSSMegabytes) + " (" + number(followerPeakMegabytes) + ")", "", "", "",
      "", verdict(followerPeakMegabytes, atMost: 8, " MB"),
    ])
    let four = bus.first { $0.subscribers == 4 }?.eventsPerSecond
    row([
      "event bus, 4 subscribers (M events/s)", "≥ 1", number(four.map { $0 / 1e6 }, 2), "", "",
      "", "", four.map { $0 >= 1e6 ? "met" : "missed" } ?? "not measured",
    ])
    var text = lines.joined(separator: "\n") + "\n"
    if let compare {
      text += "\nMeasured \(compare.date) on \(compare.machine).\n"
    }
    text += "Load average when `grow status` was timed: \(loadAverage).\n"
    for note in notes { text += "- \(note)\n" }
    return text
  }
}

// MARK: PSS as the only Swift process

extension LeanBenchmark {
  /// The PSS `pid` would have were it the only Swift process on the machine, in MB: each
  /// mapping of the Swift runtime (/lib/swift/) or of Grow's own files counts whole (its Rss),
  /// every other mapping as the kernel splits it (its Pss). The bench is a Swift process too
  /// and would otherwise halve those pages on Grow's account.
  static func pssAsOnlySwiftProcess(of pid: Int32) -> Double? {
    let smaps = CompareBenchmark.readWhole("/proc/\(pid)/smaps")
    guard !smaps.isEmpty else { return nil }
    var swiftOwned = false
    var kilobytes = 0.0
    for line in smaps.split(separator: "\n") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard let first = fields.first else { continue }
      if first.contains("-"), !first.hasSuffix(":") {
        let path = fields.count > 5 ? String(fields[5]) : ""
        swiftOwned =
          path.contains("/lib/swift/") || path.contains("libGrowKit")
          || path.contains("libgrow-plugin-") || path.hasSuffix("/grow")
          || path.hasSuffix("/grow-cli")
          || path.hasSuffix("/grow-daemon")
      } else if first == (swiftOwned ? "Rss:" : "Pss:"), fields.count > 1 {
        kilobytes += Double(fields[1]) ?? 0
      }
    }
    return kilobytes * 1024 / 1e6
  }
}
