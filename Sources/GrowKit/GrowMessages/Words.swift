@_spi(GrowHost) import GrowCore

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
