@_spi(GrowHost) import GrowCore
@_spi(GrowBuiltIn) import GrowPluginKit

extension PhaseKind {
  /// How a person names the phase in a sentence: "short break".
  public var inWords: String {
    switch self {
    case .focus: Message("focus").render()
    case .shortBreak: Message("short break").render()
    case .longBreak: Message("long break").render()
    }
  }
}

extension DisplayState {
  /// The state in words, for a status line's `{state}`.
  public var inWords: String {
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
  public static let spoken = StatusWords(
    state: \.inWords,
    waiting: { next in
      switch next {
      case .focus: Message("focus waiting").render()
      case .shortBreak: Message("short break waiting").render()
      case .longBreak: Message("long break waiting").render()
      }
    })
}
