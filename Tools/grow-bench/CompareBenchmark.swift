import Foundation
import GrowDBus
import GrowDaemon
import GrowPluginKit
import GrowTestSupport

/// Grow next to Safe Eyes, Workrave and GNOME Pomodoro, in one run, on one private
/// headless desktop: Xvfb with openbox, a private session bus, dunst on it. Each tool is
/// started in turn and measured the same way over the same window, from /proc only:
///
/// - peak RSS: VmHWM from /proc/PID/status at the end of its windows; PSS: smaps_rollup.
/// - wake-ups/s: voluntary + involuntary context switches summed over all threads
///   (StatusBarBenchmark.threadContextSwitches), sampled every 100 ms over the window.
/// - child processes: new processes whose parent is the tool or one of its children, from the
///   kernel's process-events connector (ForkEvents); without CAP_NET_ADMIN, from a scan of
///   /proc every 100 ms, which misses children living less than that.
/// - start-up: posix_spawn until the bus name has an owner (NameHasOwner polled every 1 ms).
@MainActor
struct CompareBenchmark {
  struct Row: Encodable {
    var tool: String
    var version: String
    var skipped: String?
    var peakRSSMegabytes: Double?
    var rssMegabytes: Double?
    var pssMegabytes: Double?
    /// Unique set size: pages only this process maps, whoever else runs (the bench itself is a
    /// Swift process and shares the runtime's pages with Grow, which lowers Grow's PSS).
    var ussMegabytes: Double?
    /// Grow only: LeanBenchmark.pssAsOnlySwiftProcess.
    var pssAloneMegabytes: Double?
    var idleWakeUpsPerSecond: Double?
    var runningWakeUpsPerSecond: Double?
    var childrenPerMinute: Double?
    var startUpMilliseconds: Double?
    var startUpRuns: Int?
    var note: String = ""
  }

  struct Result: Encodable {
    var date: String
    var machine: String
    var windowSeconds: Double
    var rows: [Row] = []
    var growStatusRoundTripMilliseconds: Double?
    var growStatusRuns = 0
    var phaseEndLateMilliseconds: Double?
    var phaseEndMaxLateMilliseconds: Double?
    var phaseEnds = 0
    var growPlugins = ""
    var childrenCountedBy = ""
  }

  let seconds: Double
  let quick: Bool

  private var grow: String { Binaries.locate("grow") }

  func run() throws -> Result {
    var result = Result(
      date: Date().formatted(Date.ISO8601FormatStyle()), machine: Self.machine(),
      windowSeconds: seconds)
    let display = try PrivateDisplay(windowManager: .openbox)
    let bus = try PrivateSessionBus()
    defer { bus.stop() }
    let environment = bus.environment.merging(display.environment) { $1 }
      .merging(["GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"]) { $1 }
    let connection = try BusConnection.connect(address: bus.address, attachToLoop: false)
    let dunst = try BackgroundProcess("dunst", [], environment: environment)
    defer { dunst.kill() }
    guard waitForName("org.freedesktop.Notifications", connection, timeout: 10) != nil else {
      throw HarnessError("dunst did not take org.freedesktop.Notifications: \(dunst.stderr)")
    }

    progress("compare: Grow…")
    try measureGrow(into: &result, environment: environment, connection: connection, bus: bus)
    for tool in Self.competitors {
      progress("compare: \(tool.name)…")
      result.rows.append(measure(tool, environment: environment, connection: connection))
    }
    return result
  }

  // MARK: Grow

  private func measureGrow(
    into result: inout Result, environment: [String: String], connection: BusConnection,
    bus: PrivateSessionBus
  ) throws {
    let config = bus.environment["XDG_CONFIG_HOME", default: ""] + "/grow/config.ini"
    try FileManager.default.createDirectory(
      atPath: (config as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let plugins = "[plugins]\nenable = notify, dnd, x11, statusbar\n"
    let fast = "[timer]\nfocus = 1s\nshort-break = 1s\nlong-break = 1s\nauto-start-focus = true\n"
    try (plugins + fast).write(toFile: config, atomically: true, encoding: .utf8)
    var row = Row(tool: "Grow (grow daemon, 4 plugins)", version: "this build")

    // Start-up: a fresh daemon each time, stopped before the next.
    var startUps: [Double] = []
    for _ in 0..<(quick ? 3 : 10) {
      let start = Date()
      let pid = try spawn(grow, ["daemon"], environment)
      if waitForName(GrowBusAPI.busName, connection, timeout: 10) != nil {
        startUps.append(Date().timeIntervalSince(start) * 1000)
      }
      stop(pid)
    }
    row.startUpMilliseconds = median(startUps)
    row.startUpRuns = startUps.count

    let daemon = try BackgroundProcess(grow, ["daemon"], environment: environment)
    defer { daemon.kill() }
    guard waitForName(GrowBusAPI.busName, connection, timeout: 10) != nil else {
      throw HarnessError("grow daemon did not start: \(daemon.stderr)")
    }
    result.growPlugins =
      (try? Command.run(grow, ["plugins"], environment: environment).stdout)?
      .split(separator: "\n").filter { !$0.hasPrefix(" ") }
      .map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
      .joined(separator: ", ") ?? ""

    // An hour-equivalent and more of 1 s phases, then idle, then a 25 min focus phase.
    _ = try Command.run(grow, ["start"], environment: environment)
    let cycles = observe(daemon.pid, seconds: quick ? 5 : 20)
    _ = try Command.run(grow, ["stop"], environment: environment)
    // dunst expires the cycles' notifications later and tells the daemon; not the idle case.
    _ = try? Command.run("dunstctl", ["close-all"], environment: environment)
    Thread.sleep(forTimeInterval: 1)
    let idle = observe(daemon.pid, seconds: seconds)
    _ = try Command.run(grow, ["start", "--focus", "25m"], environment: environment)
    Thread.sleep(forTimeInterval: 1)
    let focus = observe(daemon.pid, seconds: seconds)
    _ = try Command.run(grow, ["stop"], environment: environment)
    let memory = Self.memory(of: daemon.pid)
    row.peakRSSMegabytes = memory.peakRSS
    row.rssMegabytes = memory.rss
    row.pssMegabytes = memory.pss
    row.ussMegabytes = memory.uss
    row.pssAloneMegabytes = LeanBenchmark.pssAsOnlySwiftProcess(of: daemon.pid)
    row.idleWakeUpsPerSecond = idle.wakeUpsPerSecond
    row.runningWakeUpsPerSecond = focus.wakeUpsPerSecond
    let children = cycles.children + idle.children + focus.children
    row.childrenPerMinute =
      Double(children) * 60 / (cycles.seconds + idle.seconds + focus.seconds)
    result.childrenCountedBy =
      cycles.exact
      ? "the kernel's process-events connector (netlink)"
      : "a scan of /proc every 100 ms (no CAP_NET_ADMIN for the process-events connector;"
        + " children living less than that are missed)"
    row.note = "running = a 25 min focus phase; memory after \(Int(cycles.seconds)) s of 1 s phases"

    // `grow status` as a whole process.
    var trips: [Double] = []
    for _ in 0..<(quick ? 10 : 50) {
      let start = Date()
      let pid = try spawn(grow, ["status"], environment)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0, errno == EINTR {}
      trips.append(Date().timeIntervalSince(start) * 1000)
    }
    result.growStatusRoundTripMilliseconds = median(trips)
    result.growStatusRuns = trips.count
    daemon.kill()
    result.rows.append(row)

    // Phase ends against their deadlines, as an exec plugin sees the phase-ended line.
    let stamps = bus.directory.path + "/stamps"
    let stamper = bus.directory.path + "/stamp.sh"
    try writeExecutable(
      "#!/bin/bash\nwhile IFS= read -r line; do printf '%s %s\\n' \"$EPOCHREALTIME\" \"$line\"; "
        + "done >> \(stamps)\n", to: stamper)
    try
      (plugins.replacingOccurrences(of: "statusbar", with: "statusbar, stamp")
      + "[plugin.stamp]\nexec = \(stamper)\n" + fast)
      .write(toFile: config, atomically: true, encoding: .utf8)
    let timed = try BackgroundProcess(grow, ["daemon"], environment: environment)
    defer { timed.kill() }
    guard waitForName(GrowBusAPI.busName, connection, timeout: 10) != nil else {
      throw HarnessError("grow daemon did not start: \(timed.stderr)")
    }
    _ = try Command.run(grow, ["start"], environment: environment)
    Thread.sleep(forTimeInterval: quick ? 4 : 11)
    _ = try Command.run(grow, ["stop"], environment: environment)
    Thread.sleep(forTimeInterval: 0.3)
    let late = Self.lateness(Self.readWhole(stamps))
    result.phaseEndLateMilliseconds = median(late)
    result.phaseEndMaxLateMilliseconds = late.max()
    result.phaseEnds = late.count
  }

  /// Milliseconds from each completed phase's `ends_at` to the arrival of its line.
  static func lateness(_ text: String) -> [Double] {
    let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    return text.split(separator: "\n").compactMap { line in
      guard let space = line.firstIndex(of: " "),
        let arrived = Double(line[..<space]),
        let object = try? JSONSerialization.jsonObject(
          with: Data(line[line.index(after: space)...].utf8)) as? [String: Any],
        object["type"] as? String == "phase-ended", object["outcome"] as? String == "completed",
        let phase = object["phase"] as? [String: Any], let endsAt = phase["ends_at"] as? String,
        let deadline = try? style.parse(endsAt)
      else { return nil }
      return (arrived - deadline.timeIntervalSince1970) * 1000
    }
  }

  // MARK: The others

  struct Tool {
    let name: String
    let package: String
    let executable: String
    let arguments: [String]
    /// Its bus name, for readiness; nil when it has none.
    let busName: String?
    /// A call (busctl arguments) that starts its timer, for a second window.
    let startTimer: [String]?
  }

  static let competitors = [
    Tool(
      name: "Safe Eyes", package: "safeeyes", executable: "safeeyes", arguments: [],
      busName: nil, startTimer: nil),
    Tool(
      name: "Workrave", package: "workrave", executable: "workrave", arguments: [],
      busName: "org.workrave.Workrave", startTimer: nil),
    Tool(
      name: "GNOME Pomodoro", package: "gnome-shell-pomodoro", executable: "gnome-pomodoro",
      arguments: ["--no-default-window"], busName: "org.gnome.Pomodoro",
      startTimer: [
        "--user", "call", "org.gnome.Pomodoro", "/org/gnome/Pomodoro", "org.gnome.Pomodoro",
        "Start",
      ]),
  ]

  private func measure(_ tool: Tool, environment: [String: String], connection: BusConnection)
    -> Row
  {
    let version =
      (try? Command.run("dpkg-query", ["-W", "-f=${Version}", tool.package]).stdout) ?? ""
    var row = Row(tool: tool.name, version: version.isEmpty ? "?" : version)
    guard Self.resolve(tool.executable) != nil else {
      row.skipped = "\(tool.executable) is not installed (make bench-deps)"
      return row
    }
    var environment = environment
    environment["HOME"] = environment["HOME"].map { $0 + "/" + tool.package }
    if let home = environment["HOME"] {
      // Safe Eyes copies its default config under $HOME/.config but reads it from
      // $XDG_CONFIG_HOME, so the two must agree.
      environment["XDG_CONFIG_HOME"] = home + "/.config"
      try? FileManager.default.createDirectory(
        atPath: home + "/.config", withIntermediateDirectories: true)
    }

    // Start-up to its bus name (fresh process each time), then one long-lived instance.
    if let name = tool.busName {
      var startUps: [Double] = []
      for _ in 0..<(quick ? 2 : 5) {
        let start = Date()
        guard let pid = try? spawn(tool.executable, tool.arguments, environment) else { break }
        if waitForName(name, connection, timeout: 15) != nil {
          startUps.append(Date().timeIntervalSince(start) * 1000)
        }
        stop(pid)
        _ = waitForName(name, connection, timeout: 2, owned: false)
      }
      row.startUpMilliseconds = median(startUps)
      row.startUpRuns = startUps.count
    }
    guard
      let process = try? BackgroundProcess(
        tool.executable, tool.arguments,
        environment: environment)
    else {
      row.skipped = "could not start \(tool.executable)"
      return row
    }
    defer { if process.terminate(timeout: 3) == nil { process.kill() } }
    if let name = tool.busName {
      guard waitForName(name, connection, timeout: 20) != nil else {
        row.skipped = "never took \(name) headless: " + Self.lastLine(process.stderr)
        return row
      }
    }
    Thread.sleep(forTimeInterval: 3)  // let it settle
    guard process.isRunning else {
      row.skipped =
        "exited headless (status \(process.exitStatus ?? -1)): "
        + Self.lastLine(process.stderr)
      return row
    }
    if tool.busName == nil {
      row.note = "no bus name: start-up not measured"
    }
    let idle = observe(process.pid, seconds: seconds)
    var windows = [idle]
    if let call = tool.startTimer {
      let started = (try? Command.run("busctl", call, environment: environment))?.status == 0
      Thread.sleep(forTimeInterval: 1)
      let running = observe(process.pid, seconds: seconds)
      windows.append(running)
      row.runningWakeUpsPerSecond = running.wakeUpsPerSecond
      row.note = started ? "running = its timer started over D-Bus" : "Start call failed"
    }
    let memory = Self.memory(of: process.pid)
    row.peakRSSMegabytes = memory.peakRSS
    row.rssMegabytes = memory.rss
    row.pssMegabytes = memory.pss
    row.ussMegabytes = memory.uss
    row.idleWakeUpsPerSecond = idle.wakeUpsPerSecond
    row.childrenPerMinute =
      Double(windows.map(\.children).reduce(0, +)) * 60 / windows.map(\.seconds).reduce(0, +)
    guard process.isRunning else {
      row.skipped = "exited while measured: " + Self.lastLine(process.stderr)
      return row
    }
    return row
  }

  private static func lastLine(_ text: String) -> String {
    String(text.split(separator: "\n").last ?? "no output")
  }

  // MARK: Measuring

  struct Window {
    let seconds: Double
    let wakeUpsPerSecond: Double
    let children: Int
    /// Counted by the process-events connector; otherwise by scanning /proc every 100 ms.
    let exact: Bool
  }

  /// Context switches of every thread of `pid` and the processes it forks, sampled every
  /// 100 ms for `seconds`.
  private func observe(_ pid: Int32, seconds: Double) -> Window {
    var first = StatusBarBenchmark.threadContextSwitches(of: pid)
    var last = first
    var family: Set<Int32> = [pid]
    let before = Set(Self.processes().keys)
    var forked: Set<Int32> = []
    let start = Date()
    let deadline = start.addingTimeInterval(seconds)
    let events = ForkEvents()
    while Date() < deadline {
      if let events {
        let tick = Date().addingTimeInterval(0.1)
        repeat {
          for fork in events.forks(waiting: max(0, tick.timeIntervalSinceNow))
          where family.contains(fork.parent) {
            family.insert(fork.child)
            forked.insert(fork.child)
          }
        } while Date() < tick
      } else {
        Thread.sleep(forTimeInterval: 0.1)
      }
      for (thread, count) in StatusBarBenchmark.threadContextSwitches(of: pid) {
        if first[thread] == nil { first[thread] = 0 }
        last[thread] = count
      }
      // Parents before children: repeat until no new member turns up.
      let table = Self.processes()
      var grew = true
      while grew {
        grew = false
        for (child, parent) in table where family.contains(parent) && !family.contains(child) {
          family.insert(child)
          if !before.contains(child) { forked.insert(child) }
          grew = true
        }
      }
    }
    let elapsed = Date().timeIntervalSince(start)
    let switches = last.reduce(0) { $0 + $1.value - (first[$1.key] ?? 0) }
    return Window(
      seconds: elapsed, wakeUpsPerSecond: Double(switches) / elapsed, children: forked.count,
      exact: events != nil)
  }

  /// Every process on the machine: pid → parent pid.
  private static func processes() -> [Int32: Int32] {
    var table: [Int32: Int32] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
      guard let pid = Int32(entry) else { continue }
      let stat = readWhole("/proc/\(entry)/stat")
      // comm may hold spaces and parentheses: the fields start after the last ')'.
      guard let close = stat.lastIndex(of: ")") else { continue }
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      if fields.count > 1, let parent = Int32(fields[1]) { table[pid] = parent }
    }
    return table
  }

  /// VmHWM (peak RSS), VmRSS, Pss and USS (Private_Clean + Private_Dirty), in MB (10^6 bytes).
  static func memory(of pid: Int32) -> (peakRSS: Double?, rss: Double?, pss: Double?, uss: Double?)
  {
    func kilobytes(_ key: String, in text: String) -> Double? {
      text.split(separator: "\n").first { $0.hasPrefix(key + ":") }
        .flatMap {
          Double(
            $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst()
              .first?.trimmingCharacters(in: .whitespaces) ?? "")
        }
        .map { $0 * 1024 / 1e6 }
    }
    let status = readWhole("/proc/\(pid)/status").replacingOccurrences(of: "\t", with: " ")
    let rollup = readWhole("/proc/\(pid)/smaps_rollup")
    let clean = kilobytes("Private_Clean", in: rollup)
    let dirty = kilobytes("Private_Dirty", in: rollup)
    return (
      kilobytes("VmHWM", in: status), kilobytes("VmRSS", in: status),
      kilobytes("Pss", in: rollup), clean.flatMap { clean in dirty.map { clean + $0 } }
    )
  }

  /// A whole file, read with read(2): String(contentsOfFile:) stops at 4 KiB on /proc.
  static func readWhole(_ path: String) -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
    defer { try? handle.close() }
    return String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
  }

  static func machine() -> String {
    let model =
      readWhole("/proc/cpuinfo").split(separator: "\n")
      .first { $0.hasPrefix("model name") }
      .map { $0.split(separator: ":", maxSplits: 1).last ?? "" }
      .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
    return "\(ProcessInfo.processInfo.activeProcessorCount) cores (nproc), \(model)"
  }

  // MARK: Processes and the bus

  /// When `name` got an owner (or lost it, with `owned: false`), polling every 1 ms.
  func waitForName(
    _ name: String, _ connection: BusConnection, timeout: Double, owned: Bool = true
  ) -> Date? {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if let message = try? BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "NameHasOwner", arguments: [.string(name)]),
        let reply = try? connection.call(message),
        case .bool(let has)? = reply.arguments.first, has == owned
      {
        return Date()
      }
      usleep(1000)
    }
    return nil
  }

  /// `executable` as given when it has a slash, else the first match on PATH.
  static func resolve(_ executable: String) -> String? {
    if executable.contains("/") { return executable }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(executable)" }
      .first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// posix_spawn with stdin, stdout and stderr on /dev/null; the caller reaps the child.
  func spawn(_ executable: String, _ arguments: [String], _ environment: [String: String])
    throws -> pid_t
  {
    let full = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    guard let path = Self.resolve(executable) else {
      throw HarnessError("\(executable) not found on PATH")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor: Int32 in [0, 1, 2] {
      posix_spawn_file_actions_addopen(
        &actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp = full.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let code = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    guard code == 0 else { throw HarnessError("cannot start \(path): errno \(code)") }
    return pid
  }

  /// SIGTERM, up to 5 s, then SIGKILL; reaps the child.
  func stop(_ pid: pid_t) {
    kill(pid, SIGTERM)
    var status: Int32 = 0
    for _ in 0..<500 {
      if waitpid(pid, &status, WNOHANG) != 0 { return }
      usleep(10_000)
    }
    kill(pid, SIGKILL)
    waitpid(pid, &status, 0)
  }

  private func median(_ values: [Double]) -> Double? {
    values.isEmpty ? nil : grow_bench.median(values)
  }
}

// MARK: The table

extension CompareBenchmark.Result {
  /// The side-by-side table, the ratios, Grow's latencies and the goals, as Markdown.
  var markdown: String {
    func number(_ value: Double?, _ digits: Int = 1) -> String {
      value.map { String(format: "%.\(digits)f", $0) } ?? "–"
    }
    var lines = [
      "Measured \(date) on \(machine); one run, same private headless desktop (Xvfb + openbox,"
        + " private session bus, dunst); windows of \(Int(windowSeconds)) s.",
      "",
      "| tool | version | peak RSS (MB) | RSS at end (MB) | PSS (MB) | wake-ups/s idle"
        + " | wake-ups/s running | child processes/min | start-up (ms, median) |",
      "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows {
      if let skipped = row.skipped {
        lines.append("| \(row.tool) | \(row.version) | skipped: \(skipped) | | | | | | |")
        continue
      }
      let startUp =
        row.startUpMilliseconds.map { String(format: "%.0f (%d runs)", $0, row.startUpRuns ?? 0) }
        ?? "–"
      lines.append(
        "| \(row.tool) | \(row.version) | \(number(row.peakRSSMegabytes))"
          + " | \(number(row.rssMegabytes))"
          + " | \(number(row.pssMegabytes)) | \(number(row.idleWakeUpsPerSecond, 2))"
          + " | \(number(row.runningWakeUpsPerSecond, 2)) | \(number(row.childrenPerMinute))"
          + " | \(startUp) |")
    }
    lines.append("")
    let notes = rows.filter { !$0.note.isEmpty }.map { "- \($0.tool): \($0.note)" }
    lines += notes
    if let grow = rows.first, grow.skipped == nil {
      lines += ["", "Each tool ÷ Grow (how many times Grow's figure; ∞ where Grow's is 0):", ""]
      lines.append("| tool | peak RSS | PSS | wake-ups/s idle | start-up |")
      lines.append("|---|---|---|---|---|")
      func ratio(_ other: Double?, _ mine: Double?) -> String {
        guard let other, let mine else { return "–" }
        if mine == 0 { return other == 0 ? "=" : "∞" }
        return String(format: "%.1f×", other / mine)
      }
      for row in rows.dropFirst() where row.skipped == nil {
        lines.append(
          "| \(row.tool) | \(ratio(row.peakRSSMegabytes, grow.peakRSSMegabytes))"
            + " | \(ratio(row.pssMegabytes, grow.pssMegabytes))"
            + " | \(ratio(row.idleWakeUpsPerSecond, grow.idleWakeUpsPerSecond))"
            + " | \(ratio(row.startUpMilliseconds, grow.startUpMilliseconds)) |")
      }
    }
    lines += [
      "",
      "Grow only: `grow status` as a whole process, median of \(growStatusRuns):"
        + " \(number(growStatusRoundTripMilliseconds, 2)) ms; a phase ends after its deadline"
        + " by \(number(phaseEndLateMilliseconds, 2)) ms median,"
        + " \(number(phaseEndMaxLateMilliseconds, 2)) ms at most, over \(phaseEnds) phases"
        + " (as an exec plugin reads the phase-ended line;"
        + " the deadline is in milliseconds). Plugins: \(growPlugins).",
      "Child processes counted by \(childrenCountedBy).",
    ]
    return lines.joined(separator: "\n") + "\n"
  }

  /// Writes `compare-latest.md`/`.json` and a dated copy of each under `directory`.
  func write(to directory: URL) throws {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
    let json = try encoder.encode(self)
    let day = String(date.prefix(10))
    for name in ["compare-latest", "compare-\(day)"] {
      try Data(markdown.utf8).write(to: directory.appendingPathComponent(name + ".md"))
      try json.write(to: directory.appendingPathComponent(name + ".json"))
    }
  }
}

// MARK: Forks, as the kernel reports them

/// The kernel's process-events connector (netlink), as the reference instrument
/// `measure-process` uses it: every fork on the machine as it happens, so children that live
/// for a few milliseconds are counted too. Needs CAP_NET_ADMIN; `init` fails without it and
/// the caller falls back to scanning /proc.
final class ForkEvents {
  private let descriptor: Int32

  init?() {
    let connector: Int32 = 11  // NETLINK_CONNECTOR
    let socketType = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    descriptor = socket(AF_NETLINK, socketType, connector)
    guard descriptor >= 0 else { return nil }
    // struct sockaddr_nl (not in Swift's Glibc module): family (u16), padding (u16), pid (u32),
    // groups (u32) = CN_IDX_PROC.
    var address: [UInt8] = [UInt8(AF_NETLINK), 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]
    let bound = address.withUnsafeMutableBytes { bytes in
      bytes.baseAddress.map { bind(descriptor, $0.assumingMemoryBound(to: sockaddr.self), 12) }
    }
    // nlmsghdr (16 bytes, type NLMSG_DONE) + cn_msg (20, CN_IDX_PROC/CN_VAL_PROC) + the op,
    // PROC_CN_MCAST_LISTEN.
    var message = [UInt8](repeating: 0, count: 40)
    func put(_ value: UInt32, at offset: Int, size: Int = 4) {
      for byte in 0..<size { message[offset + byte] = UInt8((value >> (8 * byte)) & 0xff) }
    }
    put(40, at: 0)
    put(3, at: 4, size: 2)
    put(1, at: 16)
    put(1, at: 20)
    put(4, at: 32, size: 2)
    put(1, at: 36)
    guard bound == 0, send(descriptor, message, message.count, 0) == message.count else {
      close(descriptor)
      return nil
    }
  }

  deinit { close(descriptor) }

  /// Waits up to `timeout` seconds for events, then returns the new processes (not threads)
  /// forked since the last call, as (parent, child) process ids.
  func forks(waiting timeout: Double) -> [(parent: Int32, child: Int32)] {
    var found: [(parent: Int32, child: Int32)] = []
    var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    guard poll(&ready, 1, Int32(timeout * 1000)) > 0 else { return found }
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
      guard count > 0 else { break }
      func word(_ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(buffer[offset + $1]) << (8 * $1) }
      }
      var offset = 0
      while offset + 16 <= count {
        let length = Int(word(offset))
        let event = offset + 16 + 20
        // proc_event: what, cpu, timestamp (16 bytes), then for a fork: parent pid and tgid,
        // child pid and tgid. A child whose pid is not its tgid is a thread.
        if event + 32 <= count, word(event) == 1, word(event + 24) == word(event + 28) {
          found.append((Int32(bitPattern: word(event + 20)), Int32(bitPattern: word(event + 28))))
        }
        offset = (offset + max(length, 16) + 3) & ~3
      }
    }
    return found
  }
}
