/// The cards a person has, and which one `grow start` uses without a name.
public struct CardDeck: Sendable, Equatable {
  public private(set) var cards: [FocusCard]
  public let defaultCardName: String

  /// - Precondition: `cards` holds a card named `defaultCardName`.
  public init(cards: [FocusCard], defaultCardName: String) {
    precondition(cards.contains { $0.name == defaultCardName }, "default card must be in the deck")
    self.cards = cards
    self.defaultCardName = defaultCardName
  }

  /// One default card and nothing else: what Grow runs on with no config file.
  public static let standard = CardDeck(
    cards: [.standard], defaultCardName: FocusCard.standard.name)

  public var names: [String] { cards.map(\.name) }

  /// The card named `name`, or the default card for nil or an empty name.
  public func card(named name: String?) throws(TimerError) -> FocusCard {
    let wanted = (name ?? "").isEmpty ? defaultCardName : name ?? ""
    guard let card = cards.first(where: { $0.name == wanted }) else {
      throw .unknownCard(wanted, known: names)
    }
    return card
  }
}
