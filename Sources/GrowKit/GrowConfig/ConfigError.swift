@_spi(GrowHost) import GrowCore
internal import GrowMessages

/// Everything wrong with a config file, found in one pass, so `grow config check` can show
/// every problem at once. Its description is one problem per line.
public struct ConfigError: Error, CustomStringConvertible, Equatable, Sendable {
  /// The problems in file order; problems about the whole file come first.
  public var problems: [ConfigProblem]

  public init(_ problems: [ConfigProblem]) {
    self.problems = problems
  }

  init(_ problem: ConfigProblem) {
    self.problems = [problem]
  }

  public var description: String {
    problems.map(\.description).joined(separator: "\n")
  }
}

/// One thing wrong with a config file, at a line when it belongs to one.
///
/// Its description reads `PATH:LINE: what is wrong; what to write instead`.
public struct ConfigProblem: Sendable, Equatable, CustomStringConvertible {
  /// The config file's path as it was given.
  public var path: String
  /// The 1-based line, or nil when the problem concerns the whole file.
  public var line: Int?
  public var issue: Issue

  public init(path: String, line: Int?, issue: Issue) {
    self.path = path
    self.line = line
    self.issue = issue
  }

  public enum Issue: Sendable, Equatable {
    /// An explicitly given config file does not exist.
    case fileNotFound
    case unreadable(reason: String)
    case fileTooLarge(limit: Int)
    /// A FIFO, a device or a socket where the config file should be; `kind` says which.
    case notARegularFile(kind: String)
    case lineTooLong(bytes: Int, limit: Int)
    case invalidUTF8
    case controlCharacter(UInt8)
    /// inih could not read the line (`focus 25m`, `[timer`).
    case unparsableLine(String)
    case keyOutsideSection(key: String, belongsIn: String?)
    case unknownSection(String)
    /// A `[plugin.ID]` section (without `exec`) whose id names no plugin that was found.
    case unknownPlugin(String, known: [String])
    case sectionNameTooLong(String, limit: Int)
    /// `what` is "card name" or "plugin id".
    case invalidName(String, what: String, section: String)
    case unknownKey(String, section: String, known: [String])
    /// A key that exists, but in another section (`default-card` in a card).
    case misplacedKey(String, section: String, belongsIn: String)
    case invalidValue(key: String, value: String, section: String, reason: String)
    case duplicateKey(String, section: String, firstLine: Int)
    case duplicateSection(String, firstLine: Int)
    /// A card past `GrowConfig.maximumCards` (reported once, at the first one too many).
    case tooManyCards(limit: Int)
    /// The list was cut short; this many more problems were found.
    case moreProblems(Int)
  }

  public var description: String {
    let place = line.map { "\(path):\($0): " } ?? "\(path): "
    return place + message
  }

  /// What is wrong, in the reader's language (GrowMessages): whole sentences with named
  /// placeholders, never glued from pieces.
  public var message: String {
    switch issue {
    case .fileNotFound:
      return Message("no such file").render()
    case .unreadable(let reason):
      return Message("cannot read the file: {reason}").render(["reason": reason])
    case .fileTooLarge(let limit):
      return Message("file is larger than {limit} MiB; is this really a config file?")
        .render(["limit": limit / 1024 / 1024])
    case .notARegularFile(let kind):
      return Message("this is {kind}, not a regular file; give the path of the config file itself")
        .render(["kind": kind])
    case .lineTooLong(let bytes, let limit):
      return Message("line is {bytes} bytes long; a line may have at most {limit}")
        .render(["bytes": bytes, "limit": limit])
    case .invalidUTF8:
      return Message("line is not valid UTF-8 text").render()
    case .controlCharacter(let byte):
      let hex = String(byte, radix: 16, uppercase: true)
      return Message(
        "line contains the control character 0x{code}; the config file must be plain text"
      ).render(["code": hex.count < 2 ? "0" + hex : hex])
    case .unparsableLine(let text):
      let shown = text.count > 40 ? text.prefix(40) + "…" : Substring(text)
      return Message("cannot read '{line}'; write 'key = value' or '[section]'")
        .render(["line": shown])
    case .keyOutsideSection(let key, let section?):
      return Message("key '{key}' is outside any section; put it under [{section}]")
        .render(["key": key, "section": section])
    case .keyOutsideSection(let key, nil):
      return Message("key '{key}' is outside any section; put it under a [section] line")
        .render(["key": key])
    case .unknownSection(let name):
      return Self.unknownSection(name)
    case .unknownPlugin(let id, let known):
      let found = known.joined(separator: ", ")
      if let guess = closestMatch(to: id, in: known) {
        return Message(
          "no plugin '{id}' for [plugin.{id}]; did you mean [plugin.{guess}]? (plugins found: "
            + "{found}; a program plugin's section needs exec = ...)"
        ).render(["id": id, "guess": guess, "found": found])
      }
      return Message(
        "no plugin '{id}' for [plugin.{id}]; (plugins found: {found}; a program plugin's "
          + "section needs exec = ...)"
      ).render(["id": id, "found": found])
    case .sectionNameTooLong(let name, let limit):
      return Message("section name [{name}…] is too long; at most {limit} characters")
        .render(["name": name.prefix(20), "limit": limit])
    case .invalidName(let name, let what, let section):
      let values: [String: any CustomStringConvertible] = ["name": name, "section": section]
      if what == "plugin id" {
        return Message(
          "invalid plugin id '{name}' in [{section}]; use only letters, digits, "
            + "'-' and '_'"
        ).render(values)
      }
      return Message(
        "invalid card name '{name}' in [{section}]; use only letters, digits, "
          + "'-' and '_'"
      ).render(values)
    case .unknownKey(let key, let section, let known):
      if let guess = closestMatch(to: key, in: known) {
        return Message("unknown key '{key}' in [{section}]; did you mean '{guess}'?")
          .render(["key": key, "section": section, "guess": guess])
      }
      if known.isEmpty {
        return Message("unknown key '{key}' in [{section}]; it takes no keys")
          .render(["key": key, "section": section])
      }
      return Message("unknown key '{key}' in [{section}]; known keys: {known}")
        .render(["key": key, "section": section, "known": known.joined(separator: ", ")])
    case .misplacedKey(let key, let section, let home):
      return Message("'{key}' belongs in [{home}], not in [{section}]")
        .render(["key": key, "home": home, "section": section])
    case .invalidValue(let key, let value, let section, let reason):
      return Message("{key} = '{value}' in [{section}]: {reason}")
        .render(["key": key, "value": value, "section": section, "reason": reason])
    case .duplicateKey(let key, let section, let first):
      return Message("duplicate key '{key}' in [{section}]; it was first set on line {line}")
        .render(["key": key, "section": section, "line": first])
    case .duplicateSection(let name, let first):
      return Message("duplicate section [{name}]; it first appears on line {line}")
        .render(["name": name, "line": first])
    case .tooManyCards(let limit):
      return Message(
        "more than {limit} cards from here on; a config may have at most {limit}: "
          + "remove or merge cards"
      ).render(["limit": limit])
    case .moreProblems(let count):
      return Message(
        one: "{count} more problem not shown", other: "{count} more problems not shown",
        countedBy: "count"
      ).render(["count": count])
    }
  }

  /// "did you mean [timer]?" for a typo, "[card.math]" for a bare card name, else the list.
  private static func unknownSection(_ name: String) -> String {
    let all = {
      Message(
        "unknown section [{name}]; sections are [timer], [card.NAME], [plugins] and [plugin.ID]"
      ).render(["name": name])
    }
    if let dot = name.firstIndex(of: ".") {
      let prefix = String(name[..<dot])
      let rest = name[name.index(after: dot)...]
      if let guess = closestMatch(to: prefix, in: ["card", "plugin"]) {
        return Message("unknown section [{name}]; did you mean [{guess}]?")
          .render(["name": name, "guess": "\(guess).\(rest)"])
      }
      return all()
    }
    if let guess = closestMatch(to: name, in: ["timer", "plugins"]) {
      return Message("unknown section [{name}]; did you mean [{guess}]?")
        .render(["name": name, "guess": guess])
    }
    if closestMatch(to: name, in: ["card", "cards"]) != nil {
      return Message(
        "unknown section [{name}]; a card is written [card.NAME], for example [card.math]"
      ).render(["name": name])
    }
    if ConfigSchema.isValidName(name) {
      return Message(
        "unknown section [{name}]; did you mean [card.{name}]? (cards are written [card.NAME])"
      ).render(["name": name])
    }
    return all()
  }
}
