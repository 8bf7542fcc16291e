import FoundationEssentials
internal import GrowBasics

/// Durations as people write them in config files and on the command line:
/// `25m`, `90s`, `1h30m`, `2h`. A bare number means minutes, because that is what every
/// focus-timer user means by `focus = 25`.
public enum DurationText {
  /// The longest duration Grow accepts anywhere: a phase longer than a day is a typo.
  public static let maximum: TimeInterval = 24 * 3600

  /// Parses `text` into seconds.
  /// - Throws: `DurationError` naming what was wrong.
  public static func parse(_ text: String) throws(DurationError) -> TimeInterval {
    let trimmed = text.trimmingWhitespace()
    guard !trimmed.isEmpty else { throw .empty }
    if let minutes = Int(trimmed) {
      guard minutes >= 0 else { throw .malformed(text) }
      return try checked(TimeInterval(minutes) * 60, text)
    }
    // Only digits, yet not an Int: too many of them.
    if trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) { throw .tooLong(text) }
    var total: TimeInterval = 0
    var digits = ""
    var seenUnits = Set<Character>()
    for character in trimmed.lowercased() {
      if character.isASCII, character.isNumber {
        digits.append(character)
        continue
      }
      if character == " " { continue }
      guard !digits.isEmpty, "hms".contains(character), seenUnits.insert(character).inserted
      else { throw .malformed(text) }
      // A well-formed amount this large is far past the 24h limit.
      guard let value = Int(digits), value <= 100_000 else { throw .tooLong(text) }
      switch character {
      case "h": total += TimeInterval(value) * 3600
      case "m": total += TimeInterval(value) * 60
      case "s": total += TimeInterval(value)
      default: throw .malformed(text)
      }
      digits = ""
    }
    guard digits.isEmpty else { throw .malformed(text) }
    return try checked(total, text)
  }

  private static func checked(_ seconds: TimeInterval, _ text: String) throws(DurationError)
    -> TimeInterval
  {
    guard seconds <= maximum else { throw .tooLong(text) }
    return seconds
  }

  /// Formats seconds the way `parse` reads them: `25m`, `1h30m`, `45s`.
  public static func format(_ seconds: TimeInterval) -> String { DurationWords.format(seconds) }

  /// A countdown as a clock face: `4:05`, or `1:02:03` past an hour.
  public static func clock(_ seconds: TimeInterval) -> String { DurationWords.clock(seconds) }
}

/// Why a duration could not be read.
/// Frozen: callers name each reason (docs/writing-plugins.md, "The ABI promise").
@frozen public enum DurationError: Error, Equatable, CustomStringConvertible {
  case empty
  case malformed(String)
  case tooLong(String)

  public var description: String {
    switch self {
    case .empty: "empty duration; write it like 25m, 90s or 1h30m"
    case .malformed(let text): "'\(text)' is not a duration; write it like 25m, 90s or 1h30m"
    case .tooLong(let text): "'\(text)' is longer than 24h"
    }
  }
}

/// Focus time and cut-short focus (`PhaseOutcome.countsAsFocus`) as every command, bar and
/// the report word them, so the same seconds read the same everywhere: whole seconds, written
/// by `DurationText.format` (seconds shown below a minute).
@_spi(GrowHost) public enum FocusFigures {
  /// `45s focus, 7s cut short`; the cut-short part only when there is some.
  public static func focus(_ focus: TimeInterval, cutShort: TimeInterval) -> String {
    var text = "\(DurationText.format(focus)) focus"
    if cutShort.rounded() >= 1 { text += ", \(DurationText.format(cutShort)) cut short" }
    return text
  }

  /// `1 completed, 45s focus (75% of the 1m goal), 7s cut short`: the today line of
  /// `grow status` and `grow stats`.
  public static func today(
    completed: Int, focus: TimeInterval, cutShort: TimeInterval, goal: TimeInterval?
  ) -> String {
    var text = "\(completed) completed, \(DurationText.format(focus)) focus"
    if let goal, goal > 0 {
      text += " (\(percent(focus, of: goal))% of the \(DurationText.format(goal)) goal)"
    }
    if cutShort.rounded() >= 1 { text += ", \(DurationText.format(cutShort)) cut short" }
    return text
  }

  /// Whole percent of `goal` reached, rounded down (99.9% is not done).
  public static func percent(_ focus: TimeInterval, of goal: TimeInterval) -> Int {
    DurationWords.percent(focus, of: goal)
  }
}
