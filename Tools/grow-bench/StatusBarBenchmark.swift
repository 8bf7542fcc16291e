import Foundation
import GrowTestSupport

/// Wake-ups per minute of `grow status --follow` and of the daemon it follows, while a focus
/// phase runs and while idle. A wake-up is a context switch (voluntary or not) of any of the
/// process's threads; an idle process that sleeps in epoll has none.
///
/// Everything runs as child processes on a private bus: dbus-daemon, `grow daemon`, and one
/// follower per template, their output thrown away.
struct StatusBarBenchmark {
  struct Row: Encodable {
    let process: String
    let focusPerMinute: Double
    let idlePerMinute: Double
  }

  /// Seconds measured per phase; scaled to a minute.
  let seconds: Double

  enum Failure: Error, CustomStringConvertible {
    case missing(String)
    case notReady(String)

    var description: String {
      switch self {
      case .missing(let what): "status-bar benchmark: \(what)"
      case .notReady(let what): "status-bar benchmark: \(what) did not come up"
      }
    }
  }

  func run() throws -> [Row] {
    let binDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let grow = binDirectory.appendingPathComponent("grow").path
    guard FileManager.default.isExecutableFile(atPath: grow) else {
      throw Failure.missing("no grow binary next to grow-bench (\(grow)); build the grow product")
    }
    let scratch = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: scratch) }
    var environment = ProcessInfo.processInfo.environment
    // Private directories, so neither the user's config nor their plugins take part.
    for (variable, name) in [
      ("XDG_RUNTIME_DIR", "runtime"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
      ("HOME", "home"),
    ] {
      let url = scratch.appendingPathComponent(name)
      try FileManager.default.createDirectory(
        at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      environment[variable] = url.path
    }
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil

    let bus = try startBus(environment: environment)
    defer { stop(bus.process) }
    environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address

    let daemon = try start(grow, ["daemon"], environment: environment)
    defer { stop(daemon) }
    guard waitUntil(timeout: 10, { runQuietly(grow, ["status"], environment) == 0 }) else {
      throw Failure.notReady("grow daemon")
    }
    _ = runQuietly(grow, ["start", "--focus", "25m"], environment)
    let seconds = try start(
      grow, ["status", "--follow", "--template", "{remaining}"], environment: environment)
    defer { stop(seconds) }
    let minutes = try start(
      grow, ["status", "--follow", "--template", "{remaining_min}"], environment: environment)
    defer { stop(minutes) }
    let processes = [
      ("grow daemon", daemon), ("follower {remaining}", seconds),
      ("follower {remaining_min}", minutes),
    ]

    Thread.sleep(forTimeInterval: 1)
    let focus = measure(processes.map(\.1))
    _ = runQuietly(grow, ["stop"], environment)
    Thread.sleep(forTimeInterval: 1)
    let idle = measure(processes.map(\.1))
    return processes.indices.map {
      Row(process: processes[$0].0, focusPerMinute: focus[$0], idlePerMinute: idle[$0])
    }
  }

  /// Context switches per minute of each process over `seconds`.
  ///
  /// Counted per thread and sampled every 100 ms: Dispatch's worker threads come and go, and
  /// a thread that exits takes its counts with it, so two snapshots of the sum can even go
  /// down. A thread that appears counts from 0; one that exits loses at most its last 100 ms.
  private func measure(_ processes: [Process]) -> [Double] {
    var first = processes.map { Self.threadContextSwitches(of: $0.processIdentifier) }
    var last = first
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      Thread.sleep(forTimeInterval: 0.1)
      for index in processes.indices {
        for (thread, count) in Self.threadContextSwitches(of: processes[index].processIdentifier) {
          if first[index][thread] == nil { first[index][thread] = 0 }
          last[index][thread] = count
        }
      }
    }
    return processes.indices.map { index in
      let switches = last[index].reduce(0) { $0 + $1.value - (first[index][$1.key] ?? 0) }
      return Double(switches) * 60 / seconds
    }
  }

  /// voluntary + nonvoluntary context switches of each thread of `pid`, by thread id.
  static func threadContextSwitches(of pid: Int32) -> [String: Int] {
    ContextSwitches.perThread(of: pid)
  }

  // MARK: Child processes

  private func startBus(environment: [String: String]) throws -> (process: Process, address: String)
  {
    // The project's bus config starts nothing by itself; the stock session config would.
    let config = ["scripts/dbus-session.conf", "../../scripts/dbus-session.conf"]
      .map { URL(fileURLWithPath: $0).path }
      .first { FileManager.default.fileExists(atPath: $0) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
    process.arguments =
      (config.map { ["--config-file=\($0)"] } ?? ["--session"]) + ["--nofork", "--print-address=1"]
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    var address = Data()
    while !address.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { throw Failure.notReady("dbus-daemon") }
      address.append(chunk)
    }
    let text = String(decoding: address, as: UTF8.self).split(separator: "\n").first ?? ""
    return (process, String(text))
  }

  private func start(_ executable: String, _ arguments: [String], environment: [String: String])
    throws -> Process
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }

  private func stop(_ process: Process) {
    guard process.isRunning else { return }
    process.terminate()
    process.waitUntilExit()
  }

  private func runQuietly(
    _ executable: String, _ arguments: [String], _ environment: [String: String]
  )
    -> Int32
  {
    guard let process = try? start(executable, arguments, environment: environment) else {
      return -1
    }
    process.waitUntilExit()
    return process.terminationStatus
  }

  private func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if condition() { return true }
      Thread.sleep(forTimeInterval: 0.05)
    }
    return false
  }
}
