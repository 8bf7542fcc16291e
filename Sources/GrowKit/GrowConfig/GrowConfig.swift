import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
internal import GrowMessages

/// The settings in config.ini: the cards, and which plugins to load with what settings.
///
/// ```ini
/// [timer]
/// default-card = work
/// focus = 25m
///
/// [card.math]
/// focus = 50m
///
/// [plugins]
/// enable = notify, dnd
///
/// [plugin.notify]
/// warn-before = 1m
/// ```
public struct GrowConfig: Sendable, Equatable {
  /// The cards: one per `[card.NAME]`, each inheriting what it leaves out from `[timer]`, plus
  /// the default card made from `[timer]` alone when it has no section of its own.
  public var deck: CardDeck
  /// The plugin ids of `[plugins] enable`, in order; nil when the key is absent.
  public var enabledPlugins: [String]?
  /// The line of `[plugins] enable`; nil when the key is absent (`grow plugin install` adds
  /// an id there).
  public var enabledPluginsLine: Int?
  /// `[plugin.ID]` sections by id: `"notify"` holds `[plugin.notify]`.
  public var pluginSections: [String: ConfigSection]
  /// The file these settings came from; nil when running on the defaults.
  public var path: String?
  /// `[timer] sleep-limit`: a suspend this long ends the session (see
  /// `FocusTimer.sleepLimit`).
  public var sleepLimit: TimeInterval
  /// What is allowed but probably a mistake; `grow config check` shows these and still says
  /// ok. (None is produced now: Grow's title matcher is linear, so a pattern that would stall
  /// a backtracking engine costs Grow nothing and is not worth a warning.)
  public var warnings: [ConfigProblem]
  /// `[sync] folder`, as written (`~/` not expanded); nil when sync is off.
  public var syncFolder: String?
  /// `[sync] name`: what the other machines call this one; nil for its host name.
  public var syncName: String?

  public init(
    deck: CardDeck, enabledPlugins: [String]? = nil,
    pluginSections: [String: ConfigSection] = [:], path: String? = nil,
    sleepLimit: TimeInterval = GrowConfig.standardSleepLimit, warnings: [ConfigProblem] = []
  ) {
    self.deck = deck
    self.sleepLimit = sleepLimit
    self.warnings = warnings
    self.enabledPlugins = enabledPlugins
    self.pluginSections = pluginSections
    self.path = path
  }

  /// Ten minutes: a coffee with the lid closed pauses focus, a lunch break ends the session.
  public static let standardSleepLimit: TimeInterval = 10 * 60

  /// What Grow runs on without a config file: the standard deck, no plugin settings.
  public static let defaults = GrowConfig(deck: .standard)

  /// The largest config file Grow reads: 1 MiB.
  public static let maximumFileSize = 1024 * 1024
  /// Most `[card.NAME]` sections. Every card goes whole into ListCards' reply, which the bus
  /// daemon relays and checks byte by byte: 42,000 cards made 12 MB replies that kept the
  /// session bus itself busy for 300 ms a burst (make soak, "call burst"); a thousand is
  /// more than anyone plans with and a reply of about 0.3 MB.
  public static let maximumCards = 1000

  /// `$XDG_CONFIG_HOME/grow/config.ini`, or `$HOME/.config/grow/config.ini` when
  /// XDG_CONFIG_HOME is unset, empty or relative (as the XDG spec says).
  public static func defaultPath(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    XDGDirectories(environment: environment).growConfig + "/config.ini"
  }

  /// Reads and checks the config file.
  ///
  /// - Parameter path: the file to read; nil for `defaultPath(environment:)`. A missing file at
  ///   the default path means the defaults; a missing file given explicitly is an error.
  /// - Throws: `ConfigError` listing every problem in the file.
  /// - Parameter pluginSettings: what a plugin declares (`GrowPlugin.settings`), asked only for
  ///   the plugins that would start (see `pluginProblems`); nil leaves its section unchecked.
  public static func load(
    path: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
    pluginSettings: @escaping PluginSettingsLookup = { _ in nil }
  ) throws(ConfigError) -> GrowConfig {
    let target = path ?? defaultPath(environment: environment)
    switch RawFile.contents(of: target, limit: maximumFileSize) {
    case .bytes(let bytes):
      return try parse(bytes: bytes, path: target, pluginSettings: pluginSettings)
    case .missing:
      if path == nil { return .defaults }
      throw ConfigError(ConfigProblem(path: target, line: nil, issue: .fileNotFound))
    case .tooLarge:
      throw ConfigError(
        ConfigProblem(path: target, line: nil, issue: .fileTooLarge(limit: maximumFileSize)))
    case .notRegular(let kind):
      throw ConfigError(ConfigProblem(path: target, line: nil, issue: .notARegularFile(kind: kind)))
    case .failed(let reason):
      throw ConfigError(ConfigProblem(path: target, line: nil, issue: .unreadable(reason: reason)))
    }
  }

  /// Checks `text` as the contents of the config file at `path` (used in messages only).
  /// - Throws: `ConfigError` listing every problem.
  public static func parse(
    _ text: String, path: String, pluginSettings: @escaping PluginSettingsLookup = { _ in nil }
  ) throws(ConfigError) -> GrowConfig {
    try parse(bytes: Array(text.utf8), path: path, pluginSettings: pluginSettings)
  }

  /// Checks raw file contents, which need not be valid UTF-8.
  /// - Throws: `ConfigError` listing every problem.
  public static func parse(_ data: Data, path: String) throws(ConfigError) -> GrowConfig {
    try parse(bytes: [UInt8](data), path: path)
  }

  static func parse(
    bytes: [UInt8], path: String, pluginSettings: @escaping PluginSettingsLookup = { _ in nil }
  ) throws(ConfigError) -> GrowConfig {
    guard bytes.count <= maximumFileSize else {
      throw ConfigError(
        ConfigProblem(path: path, line: nil, issue: .fileTooLarge(limit: maximumFileSize)))
    }
    var builder = ConfigBuilder(path: path, pluginSettings: pluginSettings)
    builder.readLines(bytes)
    let config = builder.build()
    if !builder.problems.isEmpty { throw builder.error }
    return config
  }
}

/// What a plugin declares about its `[plugin.ID]` keys, by id; nil when it is not known.
public typealias PluginSettingsLookup = (_ id: String) -> [PluginSetting]?

extension GrowConfig {
  /// The problems of the `[plugin.ID]` sections of the plugins that would start (enabled, not
  /// `enabled = false`, not a program run with `exec`, whose own keys are not known), measured
  /// against what each declares. A disabled plugin is never opened to ask.
  public func pluginProblems(declared: PluginSettingsLookup) -> [ConfigProblem] {
    Self.pluginProblems(
      sections: pluginSections, enabled: enabledPlugins, cards: deck.names, declared: declared)
  }

  static func pluginProblems(
    sections: [String: ConfigSection], enabled: [String]?, cards: [String],
    declared: PluginSettingsLookup
  ) -> [ConfigProblem] {
    sections.sorted { $0.value.line < $1.value.line }.flatMap { id, section -> [ConfigProblem] in
      let wanted = enabled?.contains(id) ?? true
      guard wanted, section["exec"] == nil,
        (try? section.bool("enabled", default: true)) ?? true,
        let settings = declared(id)
      else { return [] }
      return section.problems(against: settings, cards: cards)
    }
  }
}

/// One pass over the file: lines to sections (through inih), sections to settings.
private struct ConfigBuilder {
  /// More than this many problems are summed up in one last line.
  static let problemLimit = 100
  /// inih keeps at most 49 bytes of a section name (MAX_SECTION in ini.c) and cuts the rest.
  static let sectionNameLimit = 48

  let path: String
  let pluginSettings: PluginSettingsLookup
  private(set) var problems: [ConfigProblem] = []
  private(set) var warnings: [ConfigProblem] = []
  private var sections: [ConfigSection] = []
  /// Where each name is in `sections`: a file of 40,000 sections must not compare each new
  /// header with every one before it.
  private var sectionIndex: [String: Int] = [:]

  init(path: String, pluginSettings: @escaping PluginSettingsLookup) {
    self.path = path
    self.pluginSettings = pluginSettings
  }

  var error: ConfigError {
    let sorted = problems.enumerated().sorted { a, b in
      (a.element.line ?? 0, a.offset) < (b.element.line ?? 0, b.offset)
    }.map(\.element)
    guard sorted.count > Self.problemLimit else { return ConfigError(sorted) }
    let more = sorted.count - Self.problemLimit
    return ConfigError(
      Array(sorted.prefix(Self.problemLimit))
        + [ConfigProblem(path: path, line: nil, issue: .moreProblems(more))])
  }

  private mutating func report(_ line: Int?, _ issue: ConfigProblem.Issue) {
    problems.append(ConfigProblem(path: path, line: line, issue: issue))
  }

  // MARK: Lines to sections

  private enum Current {
    case none
    /// A header we could not use; its keys are skipped without further complaint.
    case ignored
    case section(Int)
  }

  mutating func readLines(_ bytes: [UInt8]) {
    var current = Current.none
    var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    if bytes.last == 0x0A { lines.removeLast() }
    for (index, rawLine) in lines.enumerated() {
      let number = index + 1
      var line = Array(rawLine)
      if line.last == 0x0D { line.removeLast() }
      if number == 1, line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
      // Blank lines mean nothing to inih either; skipping them keeps a file of a million
      // newlines fast.
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
      guard checkText(of: line, at: number) else { continue }

      let reading = INI.read(line: line)
      if reading.overflow {
        report(number, .lineTooLong(bytes: line.count, limit: INI.maxLineBytes))
      } else if reading.malformed || reading.entry?.name.isEmpty == true {
        let text = String(decoding: line, as: UTF8.self).trimmingWhitespace()
        report(number, .unparsableLine(text))
      } else if let header = reading.header {
        current = startSection(header, at: number)
      } else if let (key, value) = reading.entry {
        add(ConfigEntry(key: key, value: value, line: number), to: current)
      }
    }
  }

  /// Reports lines inih must not see: too long, not UTF-8, control characters.
  private mutating func checkText(of line: [UInt8], at number: Int) -> Bool {
    if line.count > INI.maxLineBytes {
      report(number, .lineTooLong(bytes: line.count, limit: INI.maxLineBytes))
      return false
    }
    if String(validating: line, as: UTF8.self) == nil {
      report(number, .invalidUTF8)
      return false
    }
    if let control = line.first(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
      report(number, .controlCharacter(control))
      return false
    }
    return true
  }

  private mutating func startSection(_ name: String, at line: Int) -> Current {
    if name.utf8.count > Self.sectionNameLimit {
      report(line, .sectionNameTooLong(name, limit: Self.sectionNameLimit))
      return .ignored
    }
    if let index = sectionIndex[name] {
      report(line, .duplicateSection(name, firstLine: sections[index].line))
      return .section(index)
    }
    sections.append(ConfigSection(name: name, path: path, line: line))
    sectionIndex[name] = sections.count - 1
    return .section(sections.count - 1)
  }

  private mutating func add(_ entry: ConfigEntry, to current: Current) {
    switch current {
    case .none:
      let home = ConfigSchema.keys.first { $0.key == entry.key }?.sections.first
      report(entry.line, .keyOutsideSection(key: entry.key, belongsIn: home?.rawValue))
    case .ignored:
      break
    case .section(let index):
      let section = sections[index]
      if let first = section[entry.key] {
        report(
          entry.line, .duplicateKey(entry.key, section: section.name, firstLine: first.line))
      } else {
        sections[index].append(entry)
      }
    }
  }

  // MARK: Sections to settings

  mutating func build() -> GrowConfig {
    var timer: ConfigSection?
    var plugins: ConfigSection?
    var sync: ConfigSection?
    var cards: [(name: String, section: ConfigSection)] = []
    var pluginSections: [String: ConfigSection] = [:]
    var cardsOverflowed = false

    for section in sections {
      let (prefix, rest) = split(section.name)
      switch (prefix, rest) {
      case ("timer", nil): timer = section
      case ("plugins", nil): plugins = section
      case ("sync", nil): sync = section
      case ("card", let name?):
        if cards.count == GrowConfig.maximumCards {
          // Once, at the first card too many: the ones after it say nothing new.
          if !cardsOverflowed {
            cardsOverflowed = true
            report(section.line, .tooManyCards(limit: GrowConfig.maximumCards))
          }
        } else if ConfigSchema.isValidName(name) {
          cards.append((name, section))
        } else {
          report(section.line, .invalidName(name, what: "card name", section: section.name))
        }
      case ("plugin", let id?):
        if ConfigSchema.isValidName(id) {
          pluginSections[id] = section
        } else {
          report(section.line, .invalidName(id, what: "plugin id", section: section.name))
        }
      default:
        report(section.line, .unknownSection(section.name))
      }
    }

    var base = FocusCard.standard
    var defaultName = FocusCard.standard.name
    var sleepLimit = GrowConfig.standardSleepLimit
    if let timer {
      for entry in timer.entries {
        guard let value = value(of: entry, in: timer, kind: .timer) else { continue }
        switch (entry.key, value) {
        case (_, .name(let name)): defaultName = name
        case ("sleep-limit", .duration(let seconds)): sleepLimit = seconds
        default: apply(value, to: &base, key: entry.key)
        }
      }
    }

    var deck: [FocusCard] = []
    for (name, section) in cards {
      var card = base
      card.name = name
      for entry in section.entries {
        if let value = value(of: entry, in: section, kind: .card) {
          apply(value, to: &card, key: entry.key)
        }
      }
      deck.append(card)
    }
    let cardNames = deck.map(\.name)
    // A default card with no [card.NAME] of its own is made from [timer] alone (documented),
    // but one whose name is a near miss of a card's is a typo: `default-card = mth` beside
    // [card.math] silently made a new card "mth".
    if !cardNames.contains(defaultName), let entry = timer?["default-card"],
      let guess = closestMatch(to: defaultName, in: cardNames)
    {
      report(
        entry.line,
        .invalidValue(
          key: entry.key, value: entry.value, section: "timer",
          reason: Message(
            "there is no [card.{name}]; did you mean '{guess}'? (cards: {cards}; a name of its "
              + "own makes a card from [timer] alone)"
          ).render([
            "name": defaultName, "guess": guess, "cards": cardNames.joined(separator: ", "),
          ])))
    }
    if !deck.contains(where: { $0.name == defaultName }) {
      var card = base
      card.name = defaultName
      deck.insert(card, at: 0)
    }

    var enabled: [String]?
    var enabledLine: Int?
    if let plugins {
      for entry in plugins.entries {
        if case .names(let ids) = value(of: entry, in: plugins, kind: .plugins) {
          enabled = ids
          enabledLine = entry.line
        }
      }
    }

    problems += GrowConfig.pluginProblems(
      sections: pluginSections, enabled: enabled, cards: cardNames, declared: pluginSettings)
    var config = GrowConfig(
      deck: CardDeck(cards: deck, defaultCardName: defaultName), enabledPlugins: enabled,
      pluginSections: pluginSections, path: path, sleepLimit: sleepLimit, warnings: warnings)
    config.enabledPluginsLine = enabledLine
    for entry in sync?.entries ?? [] {
      guard let sync, case .text(let text) = value(of: entry, in: sync, kind: .sync) else {
        continue
      }
      if entry.key == "folder" { config.syncFolder = text.isEmpty ? nil : text }
      if entry.key == "name" { config.syncName = text.isEmpty ? nil : text }
    }
    return config
  }

  /// `card.math` → ("card", "math"); `timer` → ("timer", nil).
  private func split(_ name: String) -> (String, String?) {
    guard let dot = name.firstIndex(of: ".") else { return (name, nil) }
    return (String(name[..<dot]), String(name[name.index(after: dot)...]))
  }

  private enum Value {
    case duration(TimeInterval)
    case goal(TimeInterval?)
    case count(Int)
    case bool(Bool)
    case text(String)
    case name(String)
    case names([String])
    case patterns([String], line: Int)
  }

  /// Why an intention in config.ini is refused, in config.ini's words (config errors are made
  /// here; the timer's own refusals are worded by the app's message layer).
  private static func intentionRefusal(_ error: TimerError) -> String { error.message }

  /// The entry's value read as the schema says, or nil after reporting why it can't be.
  private mutating func value(
    of entry: ConfigEntry, in section: ConfigSection, kind: ConfigSectionKind
  ) -> Value? {
    guard let key = ConfigSchema.key(entry.key, in: kind) else {
      if let home = ConfigSchema.keys.first(where: { $0.key == entry.key })?.sections.first {
        report(
          entry.line, .misplacedKey(entry.key, section: section.name, belongsIn: home.rawValue))
      } else {
        let known = ConfigSchema.keys(in: kind).map(\.key)
        report(entry.line, .unknownKey(entry.key, section: section.name, known: known))
      }
      return nil
    }
    let text = entry.value
    do throws(ValueError) {
      switch key.kind {
      case .duration(let minimum):
        return .duration(try ValueReader.duration(text, minimum: minimum))
      case .goal: return .goal(try ValueReader.goal(text))
      case .count(let range): return .count(try ValueReader.count(text, in: range))
      case .bool: return .bool(try ValueReader.bool(text))
      case .text:
        // The same promise as `grow start --intention`: one short line.
        if entry.key == "intention" {
          do {
            try SessionOverrides.check(intention: text)
          } catch {
            throw ValueError(reason: Self.intentionRefusal(error))
          }
        }
        return .text(text)
      case .name: return .name(try ValueReader.name(text, what: .card))
      case .nameList:
        let ids = ValueReader.list(text)
        for id in ids { _ = try ValueReader.name(id, what: .plugin) }
        var seen = Set<String>()
        return .names(ids.filter { seen.insert($0).inserted })
      case .choice(let words): return .text(try ValueReader.choice(text, words))
      case .textList, .choiceList, .durationOr:
        // Kinds of plugin settings only (see PluginSettings.swift).
        try ValueReader.check(text, as: key.kind)
        return .text(text)
      case .windowPatterns:
        let items = WindowPattern.split(text)
        for item in items {
          do {
            _ = try WindowPattern(item)
          } catch {
            throw ValueError(reason: error.description)
          }
        }
        return .patterns(items, line: entry.line)
      }
    } catch {
      report(
        entry.line,
        .invalidValue(key: entry.key, value: text, section: section.name, reason: error.reason))
      return nil
    }
  }

  private func apply(_ value: Value, to card: inout FocusCard, key: String) {
    switch (key, value) {
    case ("focus", .duration(let seconds)): card.focus = seconds
    case ("short-break", .duration(let seconds)): card.shortBreak = seconds
    case ("long-break", .duration(let seconds)): card.longBreak = seconds
    case ("long-break-after", .count(let count)): card.longBreakAfter = count
    case ("auto-start-breaks", .bool(let flag)): card.autoStartBreaks = flag
    case ("auto-start-focus", .bool(let flag)): card.autoStartFocus = flag
    case ("daily-goal", .goal(let goal)): card.dailyGoal = goal
    case ("intention", .text(let text)): card.intention = text.isEmpty ? nil : text
    case ("distractions", .patterns(let items, let line)):
      card.distractions = items
      card.distractionsLine = ConfigLine(path: path, line: line)
    case ("allow", .patterns(let items, let line)):
      card.allowed = items
      card.allowedLine = ConfigLine(path: path, line: line)
    case ("block", .text(let word)): card.block = DistractionBlock(rawValue: word) ?? .off
    case ("break-screen", .text(let word)):
      card.breakScreen = BreakScreenChoice(rawValue: word) ?? .off
    default: assertionFailure("schema key '\(key)' is not applied to cards")
    }
  }
}
