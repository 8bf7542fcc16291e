import FoundationEssentials
@_spi(GrowHost) import GrowCore
internal import GrowMessages

/// One key a plugin takes in its `[plugin.ID]` section, declared by the plugin itself
/// (`GrowPlugin.settings`). From these declarations `grow config check` and the daemon check
/// the section (file, line, key, did-you-mean), and `grow.ini(5)` and the completions list the
/// keys, so a plugin writes its keys once.
public struct PluginSetting: Sendable, Equatable {
  /// The key; for a per-card setting the pattern shown to people, `card.NAME`.
  public let key: String
  public let kind: ConfigValueKind
  /// The value used when the key is absent, as it would be written in the file.
  public let defaultValue: String
  /// One line for the man page.
  public let help: String
  /// One key per card, `card.NAME`, where NAME must name a card of the deck.
  public let perCard: Bool

  public init(
    _ key: String, _ kind: ConfigValueKind, default defaultValue: String, help: String,
    perCard: Bool = false
  ) {
    self.key = key
    self.kind = kind
    self.defaultValue = defaultValue
    self.help = help
    self.perCard = perCard
  }

  /// The keys the daemon reads in every `[plugin.ID]`, whatever the plugin declares.
  public static let hostSettings = [
    PluginSetting("enabled", .bool, default: "true", help: "false: the plugin is never loaded."),
    PluginSetting(
      "exec", .text, default: "",
      help: "Runs a program of your own as plugin ID: events in, commands out, as JSON lines. "
        + "~ stands for your home directory. Such a program's own keys are not checked."),
  ]

  /// The concrete keys these settings allow with the cards `cards`.
  static func keys(of settings: [PluginSetting], cards: [String]) -> [String] {
    settings.flatMap { setting in
      setting.perCard ? cards.map { "card." + $0 } : [setting.key]
    }
  }

  /// The setting `key` stands for.
  static func setting(for key: String, in settings: [PluginSetting], cards: [String])
    -> PluginSetting?
  {
    settings.first { setting in
      setting.perCard
        ? key.hasPrefix("card.") && cards.contains(String(key.dropFirst(5)))
        : setting.key == key
    }
  }
}

extension ConfigSection {
  /// Every problem of this `[plugin.ID]` section measured against what the plugin declares
  /// (plus `enabled` and `exec`), with the deck's card names for per-card keys: unknown keys
  /// with a did-you-mean, and values that do not read as their kind.
  public func problems(against declared: [PluginSetting], cards: [String]) -> [ConfigProblem] {
    let settings = PluginSetting.hostSettings + declared
    let known = PluginSetting.keys(of: settings, cards: cards)
    var problems: [ConfigProblem] = []
    for entry in entries {
      guard let setting = PluginSetting.setting(for: entry.key, in: settings, cards: cards) else {
        problems.append(
          ConfigProblem(
            path: path, line: entry.line,
            issue: .unknownKey(entry.key, section: name, known: known)))
        continue
      }
      do {
        try ValueReader.check(entry.value, as: setting.kind)
      } catch {
        problems.append(
          ConfigProblem(
            path: path, line: entry.line,
            issue: .invalidValue(
              key: entry.key, value: entry.value, section: name, reason: error.reason)))
      }
    }
    return problems
  }

  /// Throws every problem `problems(against:cards:)` finds; for a plugin reading its section.
  public func check(against declared: [PluginSetting], cards: [String]) throws(ConfigError) {
    let found = problems(against: declared, cards: cards)
    if !found.isEmpty { throw ConfigError(found) }
  }
}

extension ValueReader {
  /// Whether `text` reads as `kind`; the reason when not.
  static func check(_ text: String, as kind: ConfigValueKind) throws(ValueError) {
    switch kind {
    case .duration(let minimum): _ = try duration(text, minimum: minimum)
    case .goal: _ = try goal(text)
    case .count(let range): _ = try count(text, in: range)
    case .bool: _ = try bool(text)
    case .text, .textList, .windowPatterns: break
    case .name: _ = try name(text, what: .other)
    case .nameList: for item in list(text) { _ = try name(item, what: .other) }
    case .choice(let words): _ = try choice(text, words)
    case .choiceList(let words): for item in list(text) { _ = try choice(item, words) }
    case .durationOr(let words, let minimum):
      if !words.contains(text.lowercased()) {
        do {
          _ = try duration(text, minimum: minimum)
        } catch {
          throw ValueError(
            reason: Message("{reason}, or one of {words}").render([
              "reason": error.reason, "words": words.joined(separator: ", "),
            ]))
        }
      }
    }
  }

  static func choice(_ text: String, _ words: [String]) throws(ValueError) -> String {
    guard let word = words.first(where: { $0 == text.lowercased() }) else {
      let list = words.joined(separator: ", ")
      guard let guess = closestMatch(to: text.lowercased(), in: words) else {
        throw ValueError(
          reason: Message("'{text}' is not one of {words}").render(["text": text, "words": list]))
      }
      throw ValueError(
        reason: Message("'{text}' is not one of {words}; did you mean '{guess}'?").render([
          "text": text, "words": list, "guess": guess,
        ]))
    }
    return word
  }
}
