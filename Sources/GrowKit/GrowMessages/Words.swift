import FoundationEssentials
@_exported import GrowBasics
@_spi(GrowHost) import GrowCore

extension PhaseKind {
  /// How a person names the phase in a sentence: "short break".
  public var inWords: String { PhaseWords.inWords(rawValue) ?? rawValue }
}

/// Today's figures in the reader's language: `FocusFigures.today`'s English (which GrowCore
/// makes without a catalogue), one message per figure, since a language words a count, a
/// duration and a goal each its own way. The figures are a list, so they are joined with
/// commas rather than made one sentence.
public enum TodayInWords {
  public static func figures(
    completed: Int, focus: TimeInterval, cutShort: TimeInterval, goal: TimeInterval?
  ) -> String {
    PhaseWords.today(completed: completed, focus: focus, cutShort: cutShort, goal: goal)
  }
}

extension PhaseOutcome {
  /// How a person reads the outcome in a list ("completed"); the raw value stays the word of
  /// the exports and the D-Bus API.
  public var inWords: String {
    switch self {
    case .completed: Message("completed").render()
    case .skipped: Message("skipped").render()
    case .stopped: Message("stopped").render()
    case .abandoned: Message("abandoned").render()
    }
  }

  /// "3 completed", "1 skipped": a count of phases that ended so, in the reader's language.
  public func counted(_ count: Int) -> String {
    switch self {
    case .completed:
      Message(one: "{count} completed", other: "{count} completed", countedBy: "count")
        .render(["count": count])
    case .skipped:
      Message(one: "{count} skipped", other: "{count} skipped", countedBy: "count")
        .render(["count": count])
    case .stopped:
      Message(one: "{count} stopped", other: "{count} stopped", countedBy: "count")
        .render(["count": count])
    case .abandoned:
      Message(one: "{count} abandoned", other: "{count} abandoned", countedBy: "count")
        .render(["count": count])
    }
  }

  /// `PhaseOutcome.tally`'s list in the reader's language: "1 completed, 1 skipped", the
  /// outcomes in the same order, those other than completed left out at 0.
  public static func tallyInWords(_ counts: [PhaseOutcome: Int]) -> String {
    allCases.compactMap { outcome in
      let count = counts[outcome] ?? 0
      return count == 0 && outcome != .completed ? nil : outcome.counted(count)
    }.joined(separator: ", ")
  }
}

/// Focus and cut-short time in the reader's language: `FocusFigures.focus`'s "45s focus, 7s
/// cut short".
public enum FocusInWords {
  public static func focus(_ focus: TimeInterval, cutShort: TimeInterval) -> String {
    var text = Message("{time} focus").render(["time": DurationText.format(focus)])
    if cutShort.rounded() >= 1 {
      text += ", " + Message("{time} cut short").render(["time": DurationText.format(cutShort)])
    }
    return text
  }

  /// "1 day", "5 days".
  public static func days(_ count: Int) -> String {
    Message(one: "{count} day", other: "{count} days", countedBy: "count").render(["count": count])
  }
}
