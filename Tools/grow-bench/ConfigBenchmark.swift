import Foundation
import GrowConfig
import GrowPluginKit
import GrowTestSupport

/// A config of as many `[card.*]` sections as allowed (`GrowConfig.maximumCards`), filled
/// with comment lines to near the 1 MiB cap (42,000 lines, as the old 42,000 cards): how long
/// `grow config check` takes, and how long GetStatus over D-Bus waits while a real daemon
/// reloads that file on SIGHUP (the loop must not be held more than 100 ms).
struct ConfigBenchmark {
  struct Sample: Encodable {
    let sections: Int
    let bytes: Int
    let checkSeconds: Double
    let reloadSeconds: Double
    let callsDuringReload: Int
    let slowestCallMilliseconds: Double
    let medianCallMilliseconds: Double
  }

  static let sections = GrowConfig.maximumCards
  static let text =
    "[timer]\nfocus = 25m\n"
    + (0..<sections).map {
      "[card.c\($0)]\nfocus = 1m\n" + String(repeating: "; what this card is for\n", count: 40)
    }.joined()

  func run() throws -> Sample {
    let harness = try DaemonHarness(config: "[plugins]\nenable = statusbar\n")
    defer { _ = harness.daemon?.terminate(timeout: 5) }
    guard let daemon = harness.daemon else { throw HarnessError("the daemon did not start") }
    try harness.writeConfig(Self.text)

    var started = Date()
    let check = try harness.run(Binaries.grow, ["config", "check"], timeout: 600)
    let checkSeconds = Date().timeIntervalSince(started)
    guard check.status == 0 else { throw HarnessError("grow config check failed: \(check)") }

    let client = try RawBusClient(address: harness.bus.address, timeout: 600)
    var calls: [Double] = []
    started = Date()
    kill(daemon.pid, SIGHUP)
    while !daemon.stderr.contains("config reloaded") {
      let before = Date()
      let outcome = try client.call(
        path: GrowBusAPI.objectPath, interface: GrowBusAPI.timerInterface, member: "GetStatus",
        destination: GrowBusAPI.busName)
      guard outcome == .returned else { throw HarnessError("GetStatus: \(outcome)") }
      calls.append(Date().timeIntervalSince(before) * 1000)
    }
    let sorted = calls.sorted()
    return Sample(
      sections: Self.sections, bytes: Self.text.utf8.count, checkSeconds: checkSeconds,
      reloadSeconds: Date().timeIntervalSince(started), callsDuringReload: calls.count,
      slowestCallMilliseconds: sorted.last ?? 0,
      medianCallMilliseconds: sorted.isEmpty ? 0 : sorted[sorted.count / 2])
  }
}
