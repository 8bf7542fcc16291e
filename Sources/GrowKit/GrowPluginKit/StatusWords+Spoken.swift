internal import GrowBasics
@_spi(GrowHost) import GrowCore

// The status line's words in the reader's language (GrowBasics' `BarWords.spoken`), for the built-in bars and
// the CLI; beside `DisplayState` and `StatusWords` because GrowMessages sits below this module.

extension DisplayState {
  /// The state in words, for a status line's `{state}`.
  @_spi(GrowBuiltIn) public var inWords: String {
    BarState(rawValue: rawValue)?.inWords ?? rawValue
  }
}

extension StatusWords {
  /// A status line's `{state}` in the reader's language.
  @_spi(GrowBuiltIn) public static let spoken = StatusWords(
    state: \.inWords,
    waiting: { BarState.waitingInWords($0.rawValue) })
}
