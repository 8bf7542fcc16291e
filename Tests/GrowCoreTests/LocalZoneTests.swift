import Foundation
import GrowCore
import Testing

@Suite struct LocalZoneTests {
  /// The full Foundation (this test process) reads the zone database; the shipped code asks
  /// the C library. Both must agree on every offset, DST changes included.
  @Test func theSystemZoneAgreesWithFoundationsZoneDatabase() {
    let start = Date(timeIntervalSince1970: 1_772_000_000)  // 2026-02-25
    for day in stride(from: 0, to: 400, by: 7) {
      let instant = start.addingTimeInterval(Double(day) * 86_400)
      #expect(
        LocalZone.system.secondsFromGMT(for: instant)
          == TimeZone.current.secondsFromGMT(for: instant))
    }
  }

  @Test func daysAndClockTimesFollowTheOffset() throws {
    let newYork = LocalZone(try #require(TimeZone(identifier: "America/New_York")))
    let tonga = LocalZone.fixed(secondsEast: 13 * 3600)
    // 2026-03-08 04:30 UTC: 23:30 the day before in New York, 17:30 in Tonga.
    let instant = Date(timeIntervalSince1970: 1_772_944_200)
    #expect(newYork.dayNumber(of: instant) == tonga.dayNumber(of: instant) - 1)
    #expect(newYork.clockText(of: instant) == "23:30")
    #expect(tonga.clockText(of: instant) == "17:30")
    #expect(LocalZone.utc.clockText(of: instant) == "04:30")
  }
}
