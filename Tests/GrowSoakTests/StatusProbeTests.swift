import Foundation
import GrowSoak
import GrowTestSupport
import Testing

/// The soak's latency probe must see a loop that stands still, and file it under
/// the fault under way: a real daemon stopped with SIGSTOP for 1.5 s while the probe calls
/// `GetStatus`.
struct StatusProbeTests {
  @Test func aStoppedDaemonCountsAsTimeoutsUnderItsFault() throws {
    let harness = try DaemonHarness(config: "[plugins]\nenable =\n")
    let probe = StatusProbe(address: harness.bus.address, interval: 0.05, timeout: 0.3)
    probe.start()
    Thread.sleep(forTimeInterval: 0.5)
    probe.daemonPID = harness.daemon?.pid
    Thread.sleep(forTimeInterval: 0.5)
    probe.fault = "stopped"
    let pid = try #require(harness.daemon?.pid)
    kill(pid, SIGSTOP)
    Thread.sleep(forTimeInterval: 1.5)
    kill(pid, SIGCONT)
    Thread.sleep(forTimeInterval: 0.5)
    probe.fault = nil
    Thread.sleep(forTimeInterval: 0.5)
    let figures = probe.stop()
    let stopped = try #require(figures.byFault["stopped"])
    let between = try #require(figures.byFault[StatusProbe.betweenFaults])
    #expect(stopped.timeouts >= 2, "\(figures)")
    #expect(stopped.p99 == 300, "\(figures)")
    #expect(stopped.longestSilenceMilliseconds >= 1200, "\(figures)")
    #expect(between.timeouts == 0 && between.samples >= 5, "\(figures)")
    #expect(figures.rssMaxKiB > 0, "\(figures)")
    #expect(figures.descriptorsMax > 0, "\(figures)")
    #expect(figures.descriptorsMaxByFault["stopped"] ?? 0 > 0, "\(figures)")
  }

  @Test func descriptorsPastTheLimitFailTheRun() {
    var report = SoakReport()
    report.descriptorLimit = 256
    report.probe.descriptorsMax = 256
    #expect(report.descriptorsWithinLimit)
    report.probe.descriptorsMax = 257
    #expect(!report.descriptorsWithinLimit)
    #expect(!report.passed)
  }

  @Test func percentilesAreNearestRank() {
    let summary = LatencySummary(milliseconds: (1...200).map(Double.init), timeouts: 0)
    #expect(summary.p50 == 100)
    #expect(summary.p99 == 198)
    #expect(summary.max == 200)
    #expect(LatencySummary(milliseconds: [], timeouts: 0).p99 == 0)
  }

  @Test func theHangTheStartUpAndAFewCallsAreNotHeldToTheBound() {
    let fast = [Double](repeating: 1, count: 150)
    var report = SoakReport()
    report.probe.byFault = [
      SoakReport.hangLabel: LatencySummary(milliseconds: fast + [1000, 1000], timeouts: 2),
      StatusProbe.starting: LatencySummary(milliseconds: fast + [400, 400], timeouts: 0),
      FaultKind.skip.rawValue: LatencySummary(milliseconds: [1, 2, 300], timeouts: 0),
    ]
    #expect(report.slowFaults.isEmpty)
    report.probe.byFault[FaultKind.dunstStall.rawValue] = LatencySummary(
      milliseconds: fast + [500, 500], timeouts: 0)
    #expect(report.slowFaults == [FaultKind.dunstStall.rawValue])
    #expect(!report.passed)
  }
}
