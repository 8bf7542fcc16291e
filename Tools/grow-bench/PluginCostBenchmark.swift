import Foundation
import GrowDBus
@_spi(GrowHost) import GrowPluginKit
import GrowTestSupport

/// What each newer built-in plugin costs the daemon, against the daemon with `compare`'s four
/// plugins (notify, dnd, x11, statusbar) as the control, on one private desktop (Xvfb with
/// openbox, a private bus, dunst, a stand-in StatusNotifierWatcher so the tray plugin shows its
/// icon): the resident memory it adds, its wake-ups while the daemon is idle (goal 0), and the
/// loop's worst latency while it works (1 s phases following each other, so the tray redraws,
/// the sound plays and the browser plugin tells its host, while a client calls `GetStatus`
/// every 20 ms). `grow browser-host`, which the browser starts, is a process of its own: its
/// memory, CPU and wake-ups idle and while the phases run.
///
/// A newer plugin is measured once its id is in `candidates` and in `builtInPluginIDs`.
///
/// Then the daemon's own cost per `GetStatus` (CPU and context switches per call, over all its
/// threads), with the four plugins, idle.
///
/// Every configuration runs `runs` times, interleaved, so all see the same machine; figures are
/// medians with their spread (lowest–highest).
@MainActor
struct PluginCostBenchmark {
  struct Figures: Encodable {
    var peakRSSMegabytes: [Double] = []
    var rssMegabytes: [Double] = []
    var pssMegabytes: [Double] = []
    /// PSS were it the only Swift process (LeanBenchmark.pssAsOnlySwiftProcess).
    var pssAloneMegabytes: [Double] = []
    var idleWakeUpsPerSecond: [Double] = []
    var workingCPUPercent: [Double] = []
    var worstGetStatusMilliseconds: [Double] = []
    var p99GetStatusMilliseconds: [Double] = []
  }

  struct Row: Encodable {
    var name: String
    var plugins: String
    var daemon = Figures()
    /// `grow browser-host`, for the browser row.
    var host: Figures?
    var note = ""
    /// `GROW_DAEMON_IMAGE` for this row's daemon: "dynamic" for `grow` with plugin libraries;
    /// empty for what `grow daemon` chooses (the static image beside it, when built).
    var image = ""
  }

  struct CallCost: Encodable {
    var calls = 0
    var cpuMicrosecondsPerCall: [Double] = []
    var contextSwitchesPerCall: [Double] = []
    var roundTripMicroseconds: [Double] = []
    var threadsSeen: [Int] = []
  }

  struct Sample: Encodable {
    var runs = 0
    var idleSeconds = 0.0
    var workingSeconds = 0.0
    var rows: [Row] = []
    var getStatus = CallCost()
    /// The same with `GROW_DAEMON_IMAGE=dynamic`: `grow` with plugin libraries.
    var getStatusDynamic = CallCost()
    var loadAverage = ""
  }

  /// The four plugins of `compare`: the control every other row adds one plugin to.
  nonisolated static let base = ["notify", "dnd", "x11", "statusbar"]
  /// The newer plugins, each measured alone on top of `base` when it is built in.
  /// (Sync is no plugin: the daemon's GrowSync, measured by the `sync` section.)
  nonisolated static let candidates = ["tray", "sound", "browser", "breakscreen"]

  let quick: Bool
  /// Which parts to measure: each plugin's cost, the daemon's cost per GetStatus.
  var plugins = true
  var getStatus = true
  /// false: the control alone (`grow-bench control`, to compare two builds of the daemon).
  var extras = true
  private var grow: String { Binaries.locate("grow") }
  private var compare: CompareBenchmark { CompareBenchmark(seconds: 0, quick: quick) }

  func run() throws -> Sample {
    var sample = Sample()
    sample.runs = quick ? 1 : 3
    sample.idleSeconds = quick ? 5 : 10
    sample.workingSeconds = quick ? 5 : 10
    sample.loadAverage = Self.loadAverage()
    let display = try PrivateDisplay(windowManager: .openbox)
    let bus = try PrivateSessionBus()
    defer { bus.stop() }
    let environment = bus.environment.merging(display.environment) { $1 }
      .merging(["GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"]) { $1 }
    let connection = try BusConnection.connect(address: bus.address, attachToLoop: false)
    let dunst = try BackgroundProcess("dunst", [], environment: environment)
    defer { dunst.kill() }
    guard
      compare.waitForName("org.freedesktop.Notifications", connection, timeout: 10) != nil
    else { throw HarnessError("dunst did not take org.freedesktop.Notifications") }
    let watcherScript = RepoPaths.root
      .appendingPathComponent("Tests/Fixtures/SNIWatcher/fake-sni-watcher.py").path
    // An absolute interpreter: a pyenv shim on PATH fails in the bench's private HOME.
    let watcher = try? BackgroundProcess(
      "/usr/bin/python3", [watcherScript], environment: environment)
    defer { watcher?.kill() }
    let hasWatcher =
      compare.waitForName("org.kde.StatusNotifierWatcher", connection, timeout: 10) != nil

    let extras = Self.candidates.filter { builtInPluginIDs.contains($0) }
    var rows = [
      Row(name: "control", plugins: Self.base.joined(separator: ", ")),
      Row(
        name: "control", plugins: Self.base.joined(separator: ", ") + " (`grow`, plugin libraries)",
        image: "dynamic"),
    ]
    for extra in extras where plugins && self.extras {
      var row = Row(name: extra, plugins: "+ " + extra)
      if extra == "browser" { row.host = Figures() }
      if extra == "tray", !hasWatcher { row.note = "no StatusNotifierWatcher: icon not shown" }
      if extra == "sound" { row.note = "no sound server on the private desktop: plays fail" }
      rows.append(row)
    }
    let config = bus.environment["XDG_CONFIG_HOME", default: ""] + "/grow/config.ini"
    try FileManager.default.createDirectory(
      atPath: (config as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    for run in 0..<sample.runs {
      for index in rows.indices where plugins {
        progress("plugins: run \(run + 1)/\(sample.runs), \(rows[index].name)…")
        let extra = rows[index].name == "control" ? [] : [rows[index].name]
        try (Self.base + extra).joined(separator: ", ").writeConfig(to: config, fast: true)
        try measure(
          into: &rows[index], sample: sample,
          environment: environment.merging(["GROW_DAEMON_IMAGE": rows[index].image]) { $1 },
          connection: connection)
      }
      guard getStatus else { continue }
      progress("plugins: run \(run + 1)/\(sample.runs), GetStatus cost…")
      try Self.base.joined(separator: ", ").writeConfig(to: config, fast: false)
      try measureGetStatus(
        into: &sample.getStatus, environment: environment, connection: connection)
      try measureGetStatus(
        into: &sample.getStatusDynamic,
        environment: environment.merging(["GROW_DAEMON_IMAGE": "dynamic"]) { $1 },
        connection: connection)
    }
    sample.rows = plugins ? rows : []
    return sample
  }

  private func measure(
    into row: inout Row, sample: Sample, environment: [String: String],
    connection: BusConnection
  ) throws {
    let daemon = try BackgroundProcess(grow, ["daemon"], environment: environment)
    defer { daemon.kill() }
    guard compare.waitForName(GrowBusAPI.busName, connection, timeout: 10) != nil else {
      throw HarnessError("grow daemon did not start: \(daemon.stderr)")
    }
    let host =
      row.host != nil
      ? try BackgroundProcess(
        grow, ["browser-host"], environment: environment, writableStdin: true) : nil
    defer { host?.kill() }
    Thread.sleep(forTimeInterval: 3)  // let it settle: plugins started, tray registered
    let pids = [daemon.pid] + (host.map { [$0.pid] } ?? [])
    let idle = ContextSwitches.during(seconds: sample.idleSeconds, of: pids)
    row.daemon.idleWakeUpsPerSecond.append(Double(idle[0].switches) / sample.idleSeconds)
    if host != nil {
      row.host?.idleWakeUpsPerSecond.append(Double(idle[1].switches) / sample.idleSeconds)
    }

    // Working: 1 s phases, GetStatus every 20 ms; the worst answer is the loop's worst turn.
    let cpuBefore = pids.map(Self.cpuSeconds)
    _ = try Command.run(grow, ["start"], environment: environment)
    var latencies: [Double] = []
    let start = Date()
    while Date().timeIntervalSince(start) < sample.workingSeconds {
      let call = Date()
      if let message = try? BusMessage.methodCall(
        destination: GrowBusAPI.busName, path: GrowBusAPI.objectPath,
        interface: GrowBusAPI.timerInterface, member: "GetStatus"),
        (try? connection.call(message, timeout: 2000)) != nil
      {
        latencies.append(Date().timeIntervalSince(call) * 1000)
      } else {
        latencies.append(2000)
      }
      usleep(20_000)
    }
    let elapsed = Date().timeIntervalSince(start)
    let cpuAfter = pids.map(Self.cpuSeconds)
    _ = try Command.run(grow, ["stop"], environment: environment)
    row.daemon.workingCPUPercent.append((cpuAfter[0] - cpuBefore[0]) / elapsed * 100)
    row.daemon.worstGetStatusMilliseconds.append(latencies.max() ?? 0)
    row.daemon.p99GetStatusMilliseconds.append(X11Benchmark.percentile(latencies, 0.99))
    Self.addMemory(of: daemon.pid, to: &row.daemon)
    if let host {
      row.host?.workingCPUPercent.append((cpuAfter[1] - cpuBefore[1]) / elapsed * 100)
      if var figures = row.host {
        Self.addMemory(of: host.pid, to: &figures)
        row.host = figures
      }
    }
    _ = daemon.terminate(timeout: 5)
  }

  /// The daemon's CPU time and context switches for `calls` GetStatus calls in a row, one at
  /// a time, from one connection, while it is otherwise idle.
  private func measureGetStatus(
    into cost: inout CallCost, environment: [String: String], connection: BusConnection
  ) throws {
    let daemon = try BackgroundProcess(grow, ["daemon"], environment: environment)
    defer { daemon.kill() }
    guard compare.waitForName(GrowBusAPI.busName, connection, timeout: 10) != nil else {
      throw HarnessError("grow daemon did not start: \(daemon.stderr)")
    }
    let message = try BusMessage.methodCall(
      destination: GrowBusAPI.busName, path: GrowBusAPI.objectPath,
      interface: GrowBusAPI.timerInterface, member: "GetStatus")
    for _ in 0..<200 { _ = try? connection.call(message) }  // warm: pages in, threads made
    Thread.sleep(forTimeInterval: 1)
    cost.calls = quick ? 1000 : 5000
    let switchesBefore = ContextSwitches.perThread(of: daemon.pid)
    let cpuBefore = Self.cpuSeconds(daemon.pid)
    let start = Date()
    for _ in 0..<cost.calls { _ = try connection.call(message) }
    let elapsed = Date().timeIntervalSince(start)
    let cpu = Self.cpuSeconds(daemon.pid) - cpuBefore
    let switchesAfter = ContextSwitches.perThread(of: daemon.pid)
    let switches = switchesAfter.reduce(0) { $0 + $1.value - (switchesBefore[$1.key] ?? 0) }
    let calls = Double(cost.calls)
    cost.cpuMicrosecondsPerCall.append(cpu / calls * 1e6)
    cost.contextSwitchesPerCall.append(Double(switches) / calls)
    cost.roundTripMicroseconds.append(elapsed / calls * 1e6)
    cost.threadsSeen.append(switchesAfter.count)
    _ = daemon.terminate(timeout: 5)
  }

  private static func addMemory(of pid: Int32, to figures: inout Figures) {
    let memory = CompareBenchmark.memory(of: pid)
    if let peak = memory.peakRSS { figures.peakRSSMegabytes.append(peak) }
    if let rss = memory.rss { figures.rssMegabytes.append(rss) }
    if let pss = memory.pss { figures.pssMegabytes.append(pss) }
    if let alone = LeanBenchmark.pssAsOnlySwiftProcess(of: pid) {
      figures.pssAloneMegabytes.append(alone)
    }
  }

  /// utime + stime of the whole process (threads that ended included), in seconds.
  static func cpuSeconds(_ pid: Int32) -> Double {
    let stat = CompareBenchmark.readWhole("/proc/\(pid)/stat")
    guard let close = stat.lastIndex(of: ")") else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the comm: state is field 3, utime 14, stime 15.
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12])
    else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }

  static func loadAverage() -> String {
    CompareBenchmark.readWhole("/proc/loadavg").split(separator: " ").prefix(3)
      .joined(separator: " ")
  }
}

extension String {
  /// This plugin list as a config, with 1 s phases that follow each other once started.
  fileprivate func writeConfig(to path: String, fast: Bool) throws {
    var text = "[plugins]\nenable = \(self)\n"
    if fast {
      text += "[timer]\nfocus = 1s\nshort-break = 1s\nlong-break = 1s\nauto-start-focus = true\n"
    }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
  }
}

// MARK: The table

extension PluginCostBenchmark.Sample {
  var markdown: String {
    func spread(_ values: [Double], _ digits: Int = 1) -> String {
      guard !values.isEmpty else { return "–" }
      let format = "%.\(digits)f"
      let middle = String(format: format, median(values))
      guard values.count > 1, let low = values.min(), let high = values.max() else {
        return middle
      }
      return middle + " (" + String(format: format, low) + "–" + String(format: format, high)
        + ")"
    }
    func added(_ values: [Double], _ control: [Double]) -> String {
      guard !values.isEmpty, !control.isEmpty else { return "–" }
      return String(format: "%+.1f", median(values) - median(control))
    }
    let control = rows.first?.daemon
    var lines = [
      "Each plugin on top of the control (notify, dnd, x11, statusbar); medians of \(runs)"
        + " interleaved runs (lowest–highest); idle \(Int(idleSeconds)) s, working"
        + " \(Int(workingSeconds)) s of 1 s phases with GetStatus every 20 ms; load average at"
        + " the start: \(loadAverage).",
      "",
      "| process | peak RSS (MB) | added (MB) | PSS (MB) | PSS alone (MB) | wake-ups/s idle"
        + " | CPU % working | GetStatus worst (ms) | p99 (ms) | note |",
      "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows {
      let figures = row.daemon
      lines.append(
        "| daemon, \(row.plugins) | \(spread(figures.peakRSSMegabytes))"
          + " | \(row.image.isEmpty && row.name == "control" ? "" : added(figures.peakRSSMegabytes, control?.peakRSSMegabytes ?? []))"
          + " | \(spread(figures.pssMegabytes)) | \(spread(figures.pssAloneMegabytes))"
          + " | \(spread(figures.idleWakeUpsPerSecond, 2))"
          + " | \(spread(figures.workingCPUPercent)) | \(spread(figures.worstGetStatusMilliseconds))"
          + " | \(spread(figures.p99GetStatusMilliseconds)) | \(row.note) |")
      if let host = row.host {
        lines.append(
          "| `grow browser-host` (its own process) | \(spread(host.peakRSSMegabytes)) |"
            + " | \(spread(host.pssMegabytes)) | \(spread(host.pssAloneMegabytes))"
            + " | \(spread(host.idleWakeUpsPerSecond, 2))"
            + " | \(spread(host.workingCPUPercent)) | | | started as the browser would, stdin"
            + " open |")
      }
    }
    for missing in PluginCostBenchmark.candidates
    where rows.contains(where: { $0.name != "control" })
      && !rows.contains(where: { $0.name == missing })
    {
      lines.append("| daemon, + \(missing) | not built in yet | | | | | | | | |")
    }
    if getStatus.calls > 0 {
      lines += [
        "",
        "The daemon's cost per GetStatus (\(getStatus.calls) calls in a row, one connection, idle"
          + " daemon with the control's plugins): CPU "
          + spread(getStatus.cpuMicrosecondsPerCall, 0) + " µs a call, "
          + spread(getStatus.contextSwitchesPerCall, 2) + " context switches a call (all its"
          + " threads), round trip " + spread(getStatus.roundTripMicroseconds, 0) + " µs"
          + (getStatusDynamic.calls > 0
            ? "; `grow` with plugin libraries (GROW_DAEMON_IMAGE=dynamic): CPU "
              + spread(getStatusDynamic.cpuMicrosecondsPerCall, 0) + " µs, "
              + spread(getStatusDynamic.contextSwitchesPerCall, 2) + " switches, round trip "
              + spread(getStatusDynamic.roundTripMicroseconds, 0) + " µs" : "")
          + ". Goal: ≤ 50 µs and ≤ 1.5 switches (a C daemon: 37 µs, 1).",
      ]
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
