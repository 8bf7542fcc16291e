@_spi(GrowHost) import GrowCore
import GrowMessages
import Testing

@Suite("TimerError")
struct TimerErrorTests {
  @Test func unknownCardSuggestsTheNearMiss() {
    let error = TimerError.unknownCard("mtah", known: ["work", "math"])
    #expect(error.message == "no card named 'mtah'; did you mean 'math'? (cards: work, math)")
  }

  @Test func unknownCardWithoutANearMissListsTheCards() {
    let error = TimerError.unknownCard("gardening", known: ["work", "math"])
    #expect(error.message == "no card named 'gardening' (cards: work, math)")
  }

  @Test func unknownCardIgnoresCaseWhenSuggesting() {
    let error = TimerError.unknownCard("MATH", known: ["work", "math"])
    #expect(error.message == "no card named 'MATH'; did you mean 'math'? (cards: work, math)")
  }

  @Test func aHugeUnknownNameIsShownShortened() {
    let error = TimerError.unknownCard(String(repeating: "x", count: 1_000_000), known: ["work"])
    #expect(
      error.message == "no card named '\(String(repeating: "x", count: 64))…' (cards: work)")
    // One character carrying a million combining marks is cut too.
    let marks = TimerError.unknownCard(
      "e" + String(repeating: "\u{301}", count: 1_000_000), known: ["work"])
    #expect(marks.message.utf8.count < 200)
  }
}

@Suite("closestMatch")
struct ClosestMatchTests {
  @Test(arguments: [
    ("mtah", "math"), ("fcous", "focus"), ("wrok", "work"), ("writting", "writing"),
    ("Work", "work"), ("mat", "math"), ("maths", "math"),
  ])
  func findsTypos(typo: String, meant: String) {
    #expect(closestMatch(to: typo, in: ["work", "math", "focus", "writing"]) == meant)
  }

  @Test(arguments: ["gardening", "x", "", "zzzz"])
  func staysQuietWhenNothingIsClose(word: String) {
    #expect(closestMatch(to: word, in: ["work", "math"]) == nil)
  }

  @Test func noCandidatesMeansNoSuggestion() {
    #expect(closestMatch(to: "work", in: []) == nil)
  }

  @Test func prefersTheNearestCandidate() {
    #expect(closestMatch(to: "reading", in: ["writing", "reding", "read"]) == "reding")
  }
}
