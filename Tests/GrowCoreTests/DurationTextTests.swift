import GrowCore
import Testing

@Test func readsMinutesSecondsAndHours() throws {
  #expect(try DurationText.parse("25m") == 1500)
  #expect(try DurationText.parse("1h30m") == 5400)
  #expect(try DurationText.parse("90s") == 90)
  #expect(try DurationText.parse("25") == 1500)
}
