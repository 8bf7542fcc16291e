import GrowCore

// Placeholder until GrowConfig lands: the embedded defaults.
func loadConfiguration(_ path: String?) throws -> (deck: CardDeck, Void) { (CardDeck.standard, ()) }
@MainActor func loadDeck(_ path: String?) throws(CLIError) -> CardDeck { CardDeck.standard }
extension Commands {
  static func runConfig(_ words: [String]) throws(CLIError) {}
}
