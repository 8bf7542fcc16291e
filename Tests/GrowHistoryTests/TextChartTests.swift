import Testing

@testable import GrowHistory

@Suite struct TextChartTests {
  @Test func barsAreDrawnToAnEighthOfACell() {
    #expect(TextChart.bar(10, of: 10, width: 4) == "████")
    #expect(TextChart.bar(5, of: 10, width: 3) == "█▌")
    #expect(TextChart.bar(8, of: 80, width: 10) == "█")
    #expect(TextChart.bar(0.01, of: 80, width: 10) == "▏", "any focus shows a sliver")
    #expect(TextChart.bar(0, of: 80, width: 10) == "")
  }

  @Test func colourIsOnlyAddedWhenEnabled() {
    #expect(TextChart.Style(enabled: false).green("x") == "x")
    #expect(TextChart.Style(enabled: true).green("x") == "\u{1B}[32mx\u{1B}[0m")
  }
}
