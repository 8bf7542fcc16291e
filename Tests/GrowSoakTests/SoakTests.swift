import Foundation
import GrowSoak
import GrowTestSupport
import Testing

/// The soak in the shortened form `make test` runs (`make soak` runs 500 faults): forty faults
/// of every kind against the real daemon, dnd plugin, external plugins and dunst.
@Suite(.enabled(if: NotificationServers.haveDisplay, "dunst needs an X display"))
struct SoakTests {
  @Test func fortyFaultsLoseNoPhaseAndLeaveDNDOff() throws {
    var options = SoakOptions()
    options.faults = 40
    options.timeLimit = 150
    let report = try Soak(options: options).run()
    let table = Comment(rawValue: "grow-soak --seed \(report.seed):\n\(report.table)")
    #expect(!report.stoppedAtTimeLimit, table)
    #expect(report.faultsInjected == 40, table)
    #expect(report.audit?.lost == 0, table)
    #expect(report.audit?.duplicated == 0, table)
    #expect(report.integrityCheck == "ok", table)
    #expect(report.dndLeftOn == 0, table)
    #expect(report.daemonRestarts > 0 && report.pluginCrashes > 0, table)
    #expect(report.passed, table)
  }
}
