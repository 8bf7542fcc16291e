import Foundation
import GrowPluginKit
import GrowTestSupport

/// What the x11 plugin's event-driven design buys over polling the X server once a second:
/// a private Xvfb with openbox, a private bus, a real `grow daemon` with the x11 plugin, and
/// an external plugin that appends every event line to a file. Latencies compare the
/// CLOCK_MONOTONIC time taken here just before running xdotool with the `monotonic` stamp
/// the plugin puts on the event, so the recording plugin's own delay is not counted; the
/// xdotool process start is.
struct X11Benchmark {
  struct Sample: Encodable {
    let runs: Int
    let windowSwitchMedianMilliseconds: Double
    let inputAfterIdleMedianMilliseconds: Double
    let seconds: Double
    let contextSwitches: Int
    let contextSwitchesPerSecond: Double
    /// (d) A client retitles the active window flat out while GetStatus is timed.
    let floodTitles: Int
    let floodSeconds: Double
    let floodGetStatusCalls: Int
    let floodGetStatusP50Milliseconds: Double
    let floodGetStatusP99Milliseconds: Double
    let floodGetStatusMaxMilliseconds: Double
    let rssBeforeFloodMiB: Double
    let rssAfterFloodMiB: Double
  }

  let runs: Int
  let seconds: TimeInterval

  /// What polling the X server once a second costs: on average half a period of latency,
  /// and at least one wake-up a second.
  static let pollingLatencyMilliseconds = 500.0
  static let pollingWakeUpsPerSecond = 1.0

  func run() throws -> Sample {
    let display = try PrivateDisplay(windowManager: .openbox)
    let harness = try DaemonHarness(startDaemon: false, environment: display.environment)
    defer { harness.daemon?.kill() }
    let home = harness.bus.environment["HOME", default: ""]
    let eventsPath = home + "/events.jsonl"
    let recorder = home + "/record-events.sh"
    try writeExecutable("#!/bin/sh\nexec cat >> \(eventsPath)\n", to: recorder)
    func configure(idlePause: String) throws {
      try harness.writeConfig(
        "[plugins]\nenable = x11, events\n\n[plugin.x11]\nidle-pause = \(idlePause)\n\n"
          + "[plugin.events]\nexec = \(recorder)\n")
    }
    let first = try display.openWindow(class: "BenchA", title: "first")
    let second = try display.openWindow(class: "BenchB", title: "second")
    try display.activate(first)

    // (c) first, with an idle-pause longer than the window, so focus runs the whole time
    // rather than being paused as away.
    try configure(idlePause: "10m")
    try startDaemon(harness)
    guard try harness.grow("start").status == 0 else { throw HarnessError("grow start failed") }
    guard let pid = harness.daemon?.pid else { throw HarnessError("no daemon") }
    // Let the plugins settle (the external one starts, reads its hello).
    Thread.sleep(forTimeInterval: 2)
    // Per thread, sampled every 250 ms: worker threads left over from start-up exit during
    // the window and take their counts with them, so whole-process sums can even go down. A
    // thread is counted from its first sample (from zero if it was born in the window) to
    // its last; the few switches of a thread's last 250 ms can be missed.
    let initial = StatusBarBenchmark.threadContextSwitches(of: pid)
    // A started daemon has switched many times: zero here would mean the counts went unread.
    guard initial.values.reduce(0, +) > 0 else {
      throw HarnessError("no context switches read from /proc/\(pid)/task")
    }
    var last = initial
    let start = Date()
    while Date().timeIntervalSince(start) < seconds {
      Thread.sleep(forTimeInterval: 0.25)
      last.merge(StatusBarBenchmark.threadContextSwitches(of: pid)) { $1 }
    }
    let switches = last.reduce(0) { $0 + $1.value - (initial[$1.key] ?? 0) }
    let elapsed = Date().timeIntervalSince(start)
    _ = try harness.grow("stop")
    harness.daemon?.kill()

    // (a) and (b) with a 1 s threshold, so each input run needs only 1.5 s of idleness.
    try configure(idlePause: "1s")
    try startDaemon(harness)
    Thread.sleep(forTimeInterval: 1)
    var windowLatencies: [Double] = []
    for index in 0..<runs {
      let (window, windowClass) = index % 2 == 0 ? (second, "BenchB") : (first, "BenchA")
      let seen = Self.events(eventsPath, "active-window-changed").count
      let clock = MonotonicClock.now
      try display.activate(window)
      let event = try Self.waitFor(eventsPath, "active-window-changed", after: seen) {
        $0["class"] as? String == windowClass
      }
      windowLatencies.append(try Self.latency(event, since: clock))
    }

    var inputLatencies: [Double] = []
    for index in 0..<runs {
      Thread.sleep(forTimeInterval: 1.5)
      let seen = Self.events(eventsPath, "user-active").count
      let clock = MonotonicClock.now
      try display.xdotool("mousemove", "\(100 + index * 10)", "\(100 + index * 10)")
      let event = try Self.waitFor(eventsPath, "user-active", after: seen) { _ in true }
      inputLatencies.append(try Self.latency(event, since: clock))
    }
    let flood = try titleFlood(display, harness, window: first)
    return Sample(
      runs: runs, windowSwitchMedianMilliseconds: median(windowLatencies),
      inputAfterIdleMedianMilliseconds: median(inputLatencies), seconds: elapsed,
      contextSwitches: switches, contextSwitchesPerSecond: Double(switches) / elapsed,
      floodTitles: flood.titles, floodSeconds: seconds, floodGetStatusCalls: flood.latencies.count,
      floodGetStatusP50Milliseconds: Self.percentile(flood.latencies, 0.5),
      floodGetStatusP99Milliseconds: Self.percentile(flood.latencies, 0.99),
      floodGetStatusMaxMilliseconds: flood.latencies.max() ?? 0,
      rssBeforeFloodMiB: flood.rssBefore, rssAfterFloodMiB: flood.rssAfter)
  }

  /// (d): `window` active, a TitleFlood on it for `seconds`, GetStatus over D-Bus every 50 ms.
  private func titleFlood(_ display: PrivateDisplay, _ harness: DaemonHarness, window: String)
    throws -> (titles: Int, latencies: [Double], rssBefore: Double, rssAfter: Double)
  {
    try display.activate(window)
    Thread.sleep(forTimeInterval: 0.5)
    let client = try RawBusClient(address: harness.bus.address, timeout: 60)
    let rssBefore = try harness.daemonMemoryMiB()
    let flood = try TitleFlood(display: display.display, window: window)
    var latencies: [Double] = []
    let start = Date()
    while Date().timeIntervalSince(start) < seconds {
      let clock = MonotonicClock.now
      let outcome = try client.call(
        path: GrowBusAPI.objectPath, interface: GrowBusAPI.timerInterface, member: "GetStatus",
        destination: GrowBusAPI.busName)
      guard outcome == .returned else { throw HarnessError("GetStatus: \(outcome)") }
      latencies.append((MonotonicClock.now - clock) * 1000)
      Thread.sleep(forTimeInterval: 0.05)
    }
    let rssAfter = try harness.daemonMemoryMiB()
    flood.stop()
    return (flood.count, latencies, rssBefore, rssAfter)
  }

  static func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
  }

  private func startDaemon(_ harness: DaemonHarness) throws {
    try harness.start()
    let running = try harness.daemon?.waitUntil(timeout: 10) {
      try harness.plugins()["x11"]?["state"] == "running"
    }
    guard running == true else { throw HarnessError("x11 not running: \(try harness.plugins())") }
  }

  static func events(_ path: String, _ type: String) -> [[String: Any]] {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }.filter { $0["type"] as? String == type }
  }

  /// The first event of `type` after the `seen` earlier ones that satisfies `matches`.
  static func waitFor(
    _ path: String, _ type: String, after seen: Int, _ matches: ([String: Any]) -> Bool
  ) throws -> [String: Any] {
    let deadline = Date().addingTimeInterval(5)
    while Date() < deadline {
      if let event = Self.events(path, type).dropFirst(seen).first(where: matches) { return event }
      // Polling here does not count: the latency comes from the event's own stamp.
      Thread.sleep(forTimeInterval: 0.01)
    }
    throw HarnessError("no \(type) event within 5 s")
  }

  static func latency(_ event: [String: Any], since clock: Double) throws -> Double {
    guard let stamp = event["monotonic"] as? Double else {
      throw HarnessError("event without a monotonic stamp: \(event)")
    }
    return (stamp - clock) * 1000
  }
}
