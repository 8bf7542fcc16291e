import FoundationEssentials
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

/// Today's figures in the reader's language: `FocusFigures.today`'s English (which GrowCore
/// makes without a catalogue), one message per figure, since a language words a count, a
/// duration and a goal each its own way. The figures are a list, so they are joined with
/// commas rather than made one sentence.
public enum TodayInWords {
  public static func figures(
    completed: Int, focus: TimeInterval, cutShort: TimeInterval, goal: TimeInterval?
  ) -> String {
    var text =
      Message(one: "{count} completed", other: "{count} completed", countedBy: "count")
      .render(["count": completed]) + ", "
      + Message("{time} focus").render(["time": DurationText.format(focus)])
    if let goal, goal > 0 {
      text +=
        " "
        + Message("({percent}% of the {goal} goal)").render([
          "percent": FocusFigures.percent(focus, of: goal), "goal": DurationText.format(goal),
        ])
    }
    if cutShort.rounded() >= 1 {
      text += ", " + Message("{time} cut short").render(["time": DurationText.format(cutShort)])
    }
    return text
  }
}
