import Foundation
import GrowTestSupport

/// Hostile compositor peers (SwayStandIn, HyprlandStandIn) against a real `grow daemon` with
/// the wayland plugin and an external plugin, while GetStatusProbe calls GetStatus every
/// 50 ms: how long the daemon's loop takes to answer under each flood.
struct PeerFloodBenchmark {
  struct Row: Encodable {
    let flood: String
    let sent: Int
    let calls: Int
    let failedCalls: Int
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    let maxMilliseconds: Double
    let maxDescriptors: Int
    let maxRSSMiB: Double
  }

  let seconds: TimeInterval

  func run() throws -> [Row] {
    var rows: [Row] = []
    do {
      let sway = try SwayStandIn()
      let harness = try daemon(sway.environment)
      defer { harness.daemon?.kill() }
      let stop = sway.startFocusFlood()
      let probe = try GetStatusProbe(harness, seconds: seconds)
      rows.append(row("sway focus events", sent: stop(), probe))
    }
    do {
      let sway = try SwayStandIn()
      let harness = try daemon(sway.environment)
      defer { harness.daemon?.kill() }
      let stop = sway.startHugeMessages()
      let probe = try GetStatusProbe(harness, seconds: seconds)
      stop()
      rows.append(row("sway 4 MiB messages", sent: sway.connections, probe))
    }
    do {
      let hyprland = try HyprlandStandIn()
      var environment = hyprland.environment
      environment["WAYLAND_DISPLAY"] = "grow-no-display"
      environment["DISPLAY"] = ""
      let harness = try daemon(environment, fileLimit: 1024)
      defer { harness.daemon?.kill() }
      hyprland.answerRequests(false)
      let stop = hyprland.startFocusFlood()
      let probe = try GetStatusProbe(harness, seconds: seconds)
      rows.append(row("Hyprland focus+title lines", sent: stop(), probe))
    }
    return rows
  }

  private func daemon(_ environment: [String: String], fileLimit: Int? = nil) throws
    -> DaemonHarness
  {
    let harness = try DaemonHarness(startDaemon: false, environment: environment)
    let home = harness.bus.environment["HOME", default: ""]
    let recorder = home + "/record-events.sh"
    try writeExecutable("#!/bin/sh\nexec cat >> \(home)/events.jsonl\n", to: recorder)
    try harness.writeConfig("[plugin.events]\nexec = \(recorder)\n")
    try harness.start(fileLimit: fileLimit)
    let running = try harness.daemon?.waitUntil(timeout: 20) {
      try harness.plugins()["wayland"]?["state"] == "running"
    }
    guard running == true else { throw HarnessError("wayland not running") }
    // Let the source connect before the flood.
    Thread.sleep(forTimeInterval: 1)
    return harness
  }

  private func row(_ flood: String, sent: Int, _ probe: GetStatusProbe) -> Row {
    Row(
      flood: flood, sent: sent, calls: probe.latencies.count, failedCalls: probe.failures.count,
      p50Milliseconds: probe.milliseconds(0.5), p99Milliseconds: probe.milliseconds(0.99),
      maxMilliseconds: probe.milliseconds(1), maxDescriptors: probe.descriptors.max() ?? 0,
      maxRSSMiB: probe.rssMiB.max() ?? 0)
  }
}
