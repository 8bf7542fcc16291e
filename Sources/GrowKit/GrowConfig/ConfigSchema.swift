import FoundationEssentials
@_spi(GrowHost) import GrowCore
internal import GrowMessages

/// The kinds of section config.ini has.
@frozen public enum ConfigSectionKind: String, Sendable, CaseIterable {
  case timer = "timer"
  /// `[card.NAME]`: one card; it inherits from `[timer]` whatever it leaves out.
  case card = "card.NAME"
  case plugins = "plugins"
  /// `[plugin.ID]`: settings of one plugin, read by the plugin itself.
  case plugin = "plugin.ID"
  /// `[sync]`: one history over several machines (docs/sync.md).
  case sync = "sync"
}

/// What a key's value must look like.
@frozen public enum ConfigValueKind: Sendable, Equatable {
  /// `25m`, `90s`, `1h30m`; at least `minimum` seconds.
  case duration(minimum: TimeInterval)
  /// A duration, or `0`/`none` for no goal.
  case goal
  /// A whole number in the range.
  case count(ClosedRange<Int>)
  /// true/false, yes/no, on/off, 1/0.
  case bool
  /// Free text.
  case text
  /// A card name or plugin id: letters, digits, `-` and `_`.
  case name
  /// Comma-separated names.
  case nameList
  /// One of these words.
  case choice([String])
  /// Comma-separated window patterns: `discord`, `firefox:/youtube|reddit/`, `/regex/`.
  case windowPatterns
  /// Comma-separated free text.
  case textList
  /// Comma-separated words, each one of these.
  case choiceList([String])
  /// A duration of at least `minimum` seconds, or one of the words.
  case durationOr(words: [String], minimum: TimeInterval)
}

/// One key config.ini understands.
public struct ConfigKey: Sendable, Equatable {
  /// The sections it may appear in.
  public let sections: [ConfigSectionKind]
  public let key: String
  public let kind: ConfigValueKind
  /// The value used when the key is absent, as it would be written in the file.
  public let defaultValue: String
  /// One line for `grow config --help` and the man page.
  public let help: String
}

/// The keys config.ini understands: the one source of truth for the validator, help text and
/// man pages. `[plugin.ID]` keys are declared by each plugin (`PluginSetting`).
public enum ConfigSchema {
  public static let keys: [ConfigKey] = {
    let card = FocusCard.standard
    let both: [ConfigSectionKind] = [.timer, .card]
    return [
      ConfigKey(
        sections: [.timer], key: "default-card", kind: .name, defaultValue: card.name,
        help: "The card `grow start` uses when given no name."),
      ConfigKey(
        sections: both, key: "focus", kind: .duration(minimum: 1),
        defaultValue: DurationText.format(card.focus), help: "Length of a focus phase."),
      ConfigKey(
        sections: both, key: "short-break", kind: .duration(minimum: 1),
        defaultValue: DurationText.format(card.shortBreak), help: "Length of a short break."),
      ConfigKey(
        sections: both, key: "long-break", kind: .duration(minimum: 1),
        defaultValue: DurationText.format(card.longBreak), help: "Length of a long break."),
      ConfigKey(
        sections: both, key: "long-break-after", kind: .count(1...100),
        defaultValue: String(card.longBreakAfter),
        help: "Completed focus phases before a long break replaces the short one."),
      ConfigKey(
        sections: both, key: "auto-start-breaks", kind: .bool,
        defaultValue: String(card.autoStartBreaks), help: "Start a break by itself when focus ends."
      ),
      ConfigKey(
        sections: both, key: "auto-start-focus", kind: .bool,
        defaultValue: String(card.autoStartFocus), help: "Start focus by itself when a break ends."
      ),
      ConfigKey(
        sections: both, key: "daily-goal", kind: .goal,
        defaultValue: card.dailyGoal.map(DurationText.format) ?? "none",
        help: "Focus time to aim for each day; none for no goal."),
      ConfigKey(
        sections: both, key: "intention", kind: .text, defaultValue: card.intention ?? "",
        help: "What the card is for, shown while focusing."),
      ConfigKey(
        sections: both, key: "distractions", kind: .windowPatterns, defaultValue: "",
        help:
          "Windows and sites that distract during focus: names (WM_CLASS), name:/title regex/, "
          + "/regex/, site:youtube.com."),
      ConfigKey(
        sections: both, key: "allow", kind: .windowPatterns, defaultValue: "",
        help: "Exceptions to distractions, written the same way."),
      ConfigKey(
        sections: both, key: "block", kind: .choice(DistractionBlock.allCases.map(\.rawValue)),
        defaultValue: card.block.rawValue,
        help:
          "off: only flag a distraction; minimize: also minimise its window; close: also ask it "
          + "to close, as its close button does; page: show Grow's page instead of a listed site "
          + "(minimize and close do too)."),
      ConfigKey(
        sections: both, key: "break-screen",
        kind: .choice(BreakScreenChoice.allCases.map(\.rawValue)),
        defaultValue: card.breakScreen.rawValue,
        help: "Which breaks the breakscreen plugin covers the screen for: off, short, long or all."),
      ConfigKey(
        sections: [.timer], key: "sleep-limit", kind: .duration(minimum: 1),
        defaultValue: DurationText.format(GrowConfig.standardSleepLimit),
        help: "A suspend this long ends the session; a shorter one pauses focus while asleep."),
      ConfigKey(
        sections: [.plugins], key: "enable", kind: .nameList, defaultValue: "",
        help: "Comma-separated ids of the plugins to load, in order."),
      ConfigKey(
        sections: [.sync], key: "folder", kind: .text, defaultValue: "",
        help: "A folder synced between your machines (~/Sync/grow): one history on all of "
          + "them; empty: off. 'grow sync setup' writes it."),
      ConfigKey(
        sections: [.sync], key: "name", kind: .text, defaultValue: "",
        help: "What the other machines call this one (default: its host name)."),
    ]
  }()

  /// The keys valid in sections of `kind`, in schema order.
  public static func keys(in kind: ConfigSectionKind) -> [ConfigKey] {
    keys.filter { $0.sections.contains(kind) }
  }

  /// The description of `key` in sections of `kind`, if it belongs there.
  public static func key(_ key: String, in kind: ConfigSectionKind) -> ConfigKey? {
    keys.first { $0.key == key && $0.sections.contains(kind) }
  }

  /// Whether `name` may name a card or plugin: `[A-Za-z0-9_-]+`.
  public static func isValidName(_ name: String) -> Bool {
    !name.isEmpty
      && name.unicodeScalars.allSatisfy { scalar in
        scalar.isASCII
          && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
            || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_")
      }
  }
}

/// Why a value could not be read; becomes `ConfigProblem.Issue.invalidValue`.
struct ValueError: Error {
  let reason: String
}

/// Reading values as the schema's kinds describe them. Shared by the validator and by
/// `ConfigSection`'s accessors, so both say the same things.
enum ValueReader {
  static func duration(_ text: String, minimum: TimeInterval) throws(ValueError) -> TimeInterval {
    let seconds: TimeInterval
    do {
      seconds = try DurationText.parse(text)
    } catch {
      throw ValueError(reason: error.message)
    }
    guard seconds >= minimum else {
      throw ValueError(
        reason: Message("must be at least {minimum}").render([
          "minimum": DurationText.format(minimum)
        ]))
    }
    return seconds
  }

  /// A goal: a duration, or nil for `0` and `none`.
  static func goal(_ text: String) throws(ValueError) -> TimeInterval? {
    if text.lowercased() == "none" { return nil }
    do {
      let seconds = try DurationText.parse(text)
      return seconds == 0 ? nil : seconds
    } catch .tooLong {
      throw ValueError(reason: DurationError.tooLong(text).message)
    } catch {
      throw ValueError(
        reason: Message(
          "'{text}' is not a duration; write it like 2h or 1h30m, or none for no goal"
        )
        .render(["text": text]))
    }
  }

  static func count(_ text: String, in range: ClosedRange<Int>?) throws(ValueError) -> Int {
    guard let value = Int(text), range?.contains(value) ?? true else {
      guard let range else {
        throw ValueError(
          reason: Message("'{text}' is not a whole number").render(["text": text]))
      }
      throw ValueError(
        reason: Message("'{text}' is not a whole number from {lowest} to {highest}").render([
          "text": text, "lowest": range.lowerBound, "highest": range.upperBound,
        ]))
    }
    return value
  }

  static func bool(_ text: String) throws(ValueError) -> Bool {
    switch text.lowercased() {
    case "true", "yes", "on", "1": return true
    case "false", "no", "off", "0": return false
    default:
      throw ValueError(
        reason: Message("'{text}' is not true or false; write true/false, yes/no, on/off or 1/0")
          .render(["text": text]))
    }
  }

  /// What a name names, for the sentence that refuses it.
  enum NameKind { case card, plugin, other }

  static func name(_ text: String, what: NameKind) throws(ValueError) -> String {
    guard ConfigSchema.isValidName(text) else {
      let reason =
        switch what {
        case .card:
          Message("'{text}' is not a valid card name; use only letters, digits, '-' and '_'")
            .render(["text": text])
        case .plugin:
          Message("'{text}' is not a valid plugin id; use only letters, digits, '-' and '_'")
            .render(["text": text])
        case .other:
          Message("'{text}' is not a valid name; use only letters, digits, '-' and '_'")
            .render(["text": text])
        }
      throw ValueError(reason: reason)
    }
    return text
  }

  /// Comma-separated items, trimmed, empty items dropped.
  static func list(_ text: String) -> [String] {
    text.split(separator: ",").map { $0.trimmingWhitespace() }
      .filter { !$0.isEmpty }
  }
}
