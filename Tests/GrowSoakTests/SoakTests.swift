import Foundation
import GrowSoak
import GrowTestSupport
import Testing

/// The soak in the shortened form `make test` runs (`make soak` runs 500 faults): thirty faults
/// against the real daemon, its notify, dnd and x11 plugins (with a real dunst) and its
/// external plugins.
@Suite(.enabled(if: NotificationServers.haveDisplay, "dunst needs an X display"))
struct SoakTests {
  @Test func thirtyFaultsLoseNoPhaseAndLeaveDNDOff() throws {
    var options = SoakOptions()
    options.faults = 30
    // A bound for a soak that hangs, not a speed: 30 faults take about a minute here, and
    // waiting for openbox to catch up with a title flood can take minutes beside stress-ng.
    options.timeLimit = 480
    // The classic and stress kinds and one plugin-hang round; of the trust kinds,
    // each costing seconds, one reload storm and one plugin crashing in init, so CI sees the
    // two that once left DND on for good (make soak draws them all); of the sync kinds, one
    // of each: another machine's phases must arrive once through a real Syncthing stopped and
    // restarted, and through its journal cut short.
    options.kinds = Set(FaultKind.classic + FaultKind.stress)
    options.fixedCounts = [
      .reloadStorm: 1, .pluginCrashesInInit: 1, .syncthingStopped: 1, .journalTruncated: 1,
    ]
    options.hangRounds = 1
    // Here the bound is behavioural, a loop that never freezes (one froze for 50 s): make test
    // runs on busy machines too, where a 100 ms p99 is not the daemon's doing. make soak
    // reports the p99 against 100 ms. Set before the run, which decides pass or fail (and
    // keeps the evidence of a failure) with it.
    options.latencyBoundMilliseconds = 1000
    let report = try Soak(options: options).run()
    let table = Comment(rawValue: "grow-soak --seed \(report.seed):\n\(report.table)")
    // One line that survives where a long failure message is cut (CI shows part of the log).
    print(
      "soak of 30 faults, seed \(report.seed): \(report.passed ? "PASS" : "FAIL")",
      report.failedChecks.isEmpty ? "" : "failing: \(report.failedChecks.joined(separator: ", "))",
      "problems: \(report.problems.prefix(3))")
    #expect(!report.stoppedAtTimeLimit, table)
    #expect(report.faultsInjected == 30, table)
    #expect(report.audit?.lost == 0, table)
    #expect(report.audit?.duplicated == 0, table)
    #expect(report.integrityCheck == "ok", table)
    #expect(report.dndLeftOn == 0, table)
    #expect(report.daemonRestarts > 0 && report.pluginCrashes > 0, table)
    #expect(report.faults[FaultKind.reloadStorm.rawValue] == 1, table)
    #expect(report.faults[FaultKind.pluginCrashesInInit.rawValue] == 1, table)
    #expect(report.journalsTruncated == 1 && report.syncCatchUpSeconds.count == 2, table)
    #expect(
      report.peerPhasesWritten > 0 && report.audit?.fromOtherMachines == report.peerPhasesWritten,
      table)
    #expect(report.passed, table)
  }
}
