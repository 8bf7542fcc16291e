@_spi(GrowHost) import GrowCore
internal import GrowMessages

// The status line's words in the reader's language (GrowMessages), for the built-in bars and
// the CLI; beside `DisplayState` and `StatusWords` because GrowMessages sits below this module.

extension DisplayState {
  /// The state in words, for a status line's `{state}`.
  @_spi(GrowBuiltIn) public var inWords: String {
    switch self {
    case .focus: PhaseKind.focus.inWords
    case .shortBreak: PhaseKind.shortBreak.inWords
    case .longBreak: PhaseKind.longBreak.inWords
    case .paused: Message("paused").render()
    case .waiting: Message("waiting").render()
    case .idle: Message("idle").render()
    case .distracted: Message("distracted").render()
    case .off: Message("off").render()
    }
  }
}

extension StatusWords {
  /// A status line's `{state}` in the reader's language.
  @_spi(GrowBuiltIn) public static let spoken = StatusWords(
    state: \.inWords,
    waiting: { next in
      switch next {
      case .focus: Message("focus waiting").render()
      case .shortBreak: Message("short break waiting").render()
      case .longBreak: Message("long break waiting").render()
      }
    })
}
