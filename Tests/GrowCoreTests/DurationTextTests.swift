import GrowCore
import Testing

@Suite("DurationText.parse")
struct DurationParseTests {
  @Test func readsMinutesSecondsAndHours() throws {
    #expect(try DurationText.parse("25m") == 1500)
    #expect(try DurationText.parse("1h30m") == 5400)
    #expect(try DurationText.parse("90s") == 90)
    #expect(try DurationText.parse("25") == 1500)
  }

  @Test(arguments: [
    ("2h", 7200.0), ("1h30m15s", 5415), ("30m1h", 5400), ("0s", 0), ("45S", 45), ("1H5M", 3900),
    ("  25m  ", 1500), ("1h 30m", 5400), ("1 h 30 m", 5400), (" 90 ", 5400), ("0", 0),
    ("24h", 86400), ("1440", 86400), ("23h59m60s", 86400),
  ])
  func readsEveryForm(text: String, seconds: Double) throws {
    #expect(try DurationText.parse(text) == seconds)
  }

  @Test(arguments: ["", "   "])
  func rejectsEmptyText(text: String) {
    #expect(throws: DurationError.empty) { try DurationText.parse(text) }
  }

  @Test(arguments: [
    "25x", "m", "1h1h", "-5", "-5m", "1.5h", "1h30", "h30m", "25 minutes", "abc", "999999x",
    "1m1M",
  ])
  func rejectsMalformedText(text: String) {
    #expect(throws: DurationError.malformed(text)) { try DurationText.parse(text) }
  }

  @Test(arguments: [
    "25h", "24h1s", "1441", "86401s", "1441m", "23h61m", "100001s", "999999m",
    "99999999999999999999", "99999999999999999999s",
  ])
  func rejectsMoreThanADay(text: String) {
    #expect(throws: DurationError.tooLong(text)) { try DurationText.parse(text) }
  }

  @Test func errorsTellHowToWriteADuration() {
    #expect(
      DurationError.empty.description == "empty duration; write it like 25m, 90s or 1h30m")
    #expect(
      DurationError.malformed("25x").description
        == "'25x' is not a duration; write it like 25m, 90s or 1h30m")
    #expect(DurationError.tooLong("25h").description == "'25h' is longer than 24h")
  }

  @Test func malformedErrorQuotesTheTextAsWritten() {
    #expect(throws: DurationError.malformed(" 25X ")) { try DurationText.parse(" 25X ") }
  }
}

@Suite("DurationText.format and clock")
struct DurationFormatTests {
  @Test(arguments: [
    (0.0, "0s"), (45, "45s"), (60, "1m"), (1500, "25m"), (3600, "1h"), (5400, "1h30m"),
    (3601, "1h1s"), (5415, "1h30m15s"), (86400, "24h"), (89.6, "1m30s"), (0.4, "0s"),
  ])
  func formatsTheWayParseReads(seconds: Double, text: String) {
    #expect(DurationText.format(seconds) == text)
  }

  @Test(arguments: [0.0, 1, 59, 60, 61, 1500, 3599, 3600, 5415, 86400])
  func formatRoundTripsThroughParse(seconds: Double) throws {
    #expect(try DurationText.parse(DurationText.format(seconds)) == seconds)
  }

  @Test(arguments: [
    (0.0, "0:00"), (5, "0:05"), (59, "0:59"), (60, "1:00"), (245, "4:05"), (1500, "25:00"),
    (3599, "59:59"), (3600, "1:00:00"), (3723, "1:02:03"), (86400, "24:00:00"),
  ])
  func clockShowsMinutesAndSeconds(seconds: Double, text: String) {
    #expect(DurationText.clock(seconds) == text)
  }

  @Test(arguments: [(0.001, "0:01"), (0.5, "0:01"), (59.01, "1:00"), (244.2, "4:05")])
  func clockRoundsFractionsUpSoItNeverShowsZeroEarly(seconds: Double, text: String) {
    #expect(DurationText.clock(seconds) == text)
  }

  @Test func clockNeverGoesNegative() {
    #expect(DurationText.clock(-5) == "0:00")
  }
}
