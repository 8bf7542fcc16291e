import Foundation
import Testing

@testable import GrowHistory

@Suite struct LocalDayTests {
  @Test func datesReadAndPrintAsYearMonthDay() throws {
    let day = try #require(LocalDay(text: "2024-02-29"))
    #expect(day.text == "2024-02-29")
    // A Thursday (tm_wday 4); its name is the locale's (LocaleTimeTests).
    #expect(day.weekday == 4)
    #expect(day.advanced(by: 1).text == "2024-03-01")
    #expect(LocalDay(text: "1970-01-01")?.number == 0)
    for bad in ["2023-02-29", "2026-13-01", "2026-3-1", "26-03-01", "2026-03-01x", "", "today"] {
      #expect(LocalDay(text: bad) == nil, "\(bad) is refused")
    }
  }

  @Test func theDayOfAnInstantFollowsTheOffsetInForceThen() throws {
    let lateEvening = local("2026-03-07 23:30")
    #expect(LocalDay(lateEvening, in: newYork).text == "2026-03-07")
    #expect(LocalDay(lateEvening, in: .utc).text == "2026-03-08")
    let day = try #require(LocalDay(text: "2026-03-08"))
    #expect(day.start(in: newYork) == local("2026-03-08 00:00"))
    #expect(
      day.advanced(by: 1).start(in: newYork).timeIntervalSince(day.start(in: newYork)) == 23 * 3600)
  }
}
