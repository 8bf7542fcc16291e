import Foundation
import GrowTestSupport
import Testing

/// Local days and UTC offsets come from the C library (`LocalZone.system`), not from
/// FoundationEssentials' `TimeZone.current`, which is GMT at run time on Linux. A daemon
/// started under `TZ` records its phases with that zone's offset and local day, and the
/// command line reads today in that zone.
@Suite struct LocalZoneDaemonTests {
  @Test(arguments: ["America/New_York", "Pacific/Tongatapu"])
  func aPhaseIsRecordedWithTheOffsetAndDayOfTheZoneTheDaemonRunsIn(zone: String) throws {
    let timeZone = try #require(TimeZone(identifier: zone))
    let harness = try DaemonHarness(
      config: DaemonHarness.oneSecondCycle, environment: ["TZ": zone, "NO_COLOR": "1"])
    #expect(try harness.grow("start").status == 0)
    _ = try harness.waitForStatus { ($0["completed_today"] as? Int ?? 0) >= 1 }
    #expect(try harness.grow("stop").status == 0)
    try harness.waitForHistory()

    let now = Date()
    let offset = timeZone.secondsFromGMT(for: now)
    let sign = offset < 0 ? "-" : "+"
    let expectedOffset =
      sign + String(format: "%02d:%02d", abs(offset) / 3600, abs(offset) % 3600 / 60)
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = timeZone
    formatter.dateFormat = "yyyy-MM-dd"
    let localToday = formatter.string(from: now)

    let csv = try harness.grow("history", "--all", "--csv")
    #expect(csv.status == 0, "\(csv.stderr)")
    let rows = csv.stdout.split(whereSeparator: \.isNewline).dropFirst()
    let focus = try #require(rows.first { $0.contains(",focus,") }, "\(csv.stdout)")
    // e.g. 2026-12-01T21:14:05+13:00: the zone's wall clock, day and offset.
    #expect(focus.contains(localToday + "T"), "\(focus)")
    #expect(focus.contains(expectedOffset + ","), "\(focus)")

    // `grow history` without a range shows today, the zone's today.
    let today = try harness.grow("history")
    #expect(today.status == 0, "\(today.stderr)")
    #expect(today.stdout.contains(localToday), "\(today.stdout)")
  }
}
