import Foundation
import GrowPluginKit
import GrowTestSupport

/// The wayland plugin in a real headless sway 1.7 (GrowTestSupport's WaylandSession, run as a
/// user it creates): a real `grow daemon` with the wayland plugin and an external plugin that
/// appends every event line to a file, as X11Benchmark does. Latencies compare the
/// CLOCK_MONOTONIC time taken here just before running swaymsg with the `monotonic` stamp the
/// plugin puts on the event; the swaymsg process start is counted.
struct WaylandBenchmark {
  struct Sample: Encodable {
    let runs: Int
    let windowSwitchMedianMilliseconds: Double
    let inputAfterIdleMedianMilliseconds: Double
    let seconds: Double
    let contextSwitches: Int
    let contextSwitchesPerSecond: Double
    let rssMiB: Double
  }

  let runs: Int
  let seconds: TimeInterval

  func run() throws -> Sample {
    let session = try WaylandSession()
    defer { session.stop() }
    let harness = try DaemonHarness(startDaemon: false, environment: session.environment)
    defer { harness.daemon?.kill() }
    let home = harness.bus.environment["HOME", default: ""]
    let eventsPath = home + "/events.jsonl"
    let recorder = home + "/record-events.sh"
    try writeExecutable("#!/bin/sh\nexec cat >> \(eventsPath)\n", to: recorder)
    func configure(idlePause: String) throws {
      try harness.writeConfig(
        "[plugins]\nenable = wayland, events\n\n[plugin.wayland]\nidle-pause = \(idlePause)\n"
          + "idle-respects-inhibitors = false\n\n[plugin.events]\nexec = \(recorder)\n")
    }
    let apps = ["bench-a", "bench-b"]
    for app in apps { try session.openNativeWindow(appID: app, title: app) }

    // Quiet focus first, with an idle-pause longer than the window.
    try configure(idlePause: "10m")
    try startDaemon(harness)
    guard try harness.grow("start").status == 0 else { throw HarnessError("grow start failed") }
    guard let pid = harness.daemon?.pid else { throw HarnessError("no daemon") }
    Thread.sleep(forTimeInterval: 2)
    let initial = StatusBarBenchmark.threadContextSwitches(of: pid)
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
    let rss = try harness.daemonMemoryMiB()
    _ = try harness.grow("stop")
    harness.daemon?.kill()

    // Switches and returns with a 1 s threshold: headless sway has no input, so it is idle
    // a second after each return.
    try configure(idlePause: "1s")
    try startDaemon(harness)
    Thread.sleep(forTimeInterval: 1)
    var windowLatencies: [Double] = []
    for index in 0..<runs {
      let app = apps[index % 2]
      let seen = X11Benchmark.events(eventsPath, "active-window-changed").count
      let clock = MonotonicClock.now
      try session.swaymsg("[app_id=\(app)] focus")
      let event = try X11Benchmark.waitFor(eventsPath, "active-window-changed", after: seen) {
        $0["class"] as? String == app
      }
      windowLatencies.append(try X11Benchmark.latency(event, since: clock))
    }
    var inputLatencies: [Double] = []
    for index in 0..<runs {
      Thread.sleep(forTimeInterval: 1.5)
      let seen = X11Benchmark.events(eventsPath, "user-active").count
      let clock = MonotonicClock.now
      // `--`: a negative move is not an option.
      try session.swaymsg("--", "seat", "-", "cursor", "move", "\(index % 2 == 0 ? 5 : -5)", "3")
      let event = try X11Benchmark.waitFor(eventsPath, "user-active", after: seen) { _ in true }
      inputLatencies.append(try X11Benchmark.latency(event, since: clock))
    }
    return Sample(
      runs: runs, windowSwitchMedianMilliseconds: median(windowLatencies),
      inputAfterIdleMedianMilliseconds: median(inputLatencies), seconds: elapsed,
      contextSwitches: switches, contextSwitchesPerSecond: Double(switches) / elapsed, rssMiB: rss)
  }

  private func startDaemon(_ harness: DaemonHarness) throws {
    try harness.start()
    let running = try harness.daemon?.waitUntil(timeout: 10) {
      try harness.plugins()["wayland"]?["state"] == "running"
    }
    guard running == true else {
      throw HarnessError("wayland not running: \(try harness.plugins())")
    }
  }
}
