import GrowCore
import Testing

@Suite("CardDeck")
struct CardDeckTests {
  let deck = CardDeck(
    cards: [FocusCard(name: "work"), FocusCard(name: "math", focus: 50 * 60)],
    defaultCardName: "math")

  @Test func findsCardsByName() throws {
    #expect(try deck.card(named: "work") == FocusCard(name: "work"))
    #expect(try deck.card(named: "math").focus == 3000)
  }

  @Test func nilOrEmptyNameMeansTheDefaultCard() throws {
    #expect(try deck.card(named: nil).name == "math")
    #expect(try deck.card(named: "").name == "math")
  }

  @Test func unknownNameIsRefusedWithTheKnownCards() {
    #expect(throws: TimerError.unknownCard("mtah", known: ["work", "math"])) {
      try deck.card(named: "mtah")
    }
  }

  @Test func namesAreCaseSensitive() {
    #expect(throws: TimerError.unknownCard("Work", known: ["work", "math"])) {
      try deck.card(named: "Work")
    }
  }

  @Test func namesKeepTheDeckOrder() {
    #expect(deck.names == ["work", "math"])
    #expect(deck.defaultCardName == "math")
  }

  @Test func standardDeckIsTheClassicRhythm() throws {
    #expect(CardDeck.standard.names == ["work"])
    let work = try CardDeck.standard.card(named: nil)
    #expect(work.focus == 1500)
    #expect(work.shortBreak == 300)
    #expect(work.longBreak == 900)
    #expect(work.longBreakAfter == 4)
    #expect(work.autoStartBreaks)
    #expect(!work.autoStartFocus)
    #expect(work.dailyGoal == nil)
    #expect(work.intention == nil)
  }

  @Test func cardKnowsTheLengthOfEachPhase() {
    let card = FocusCard(name: "x", focus: 10, shortBreak: 20, longBreak: 30)
    #expect(PhaseKind.allCases.map(card.length(of:)) == [10, 20, 30])
  }

  @Test func defaultCardMustBeInTheDeck() async {
    await #expect(processExitsWith: .failure) {
      _ = CardDeck(cards: [FocusCard(name: "work")], defaultCardName: "math")
    }
  }
}
