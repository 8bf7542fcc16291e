@_spi(GrowHost) import GrowCore

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

  private var message: String {
    switch issue {
    case .fileNotFound:
      return "no such file"
    case .unreadable(let reason):
      return "cannot read the file: \(reason)"
    case .fileTooLarge(let limit):
      return "file is larger than \(limit / 1024 / 1024) MiB; is this really a config file?"
    case .notARegularFile(let kind):
      return "this is \(kind), not a regular file; give the path of the config file itself"
    case .lineTooLong(let bytes, let limit):
      return "line is \(bytes) bytes long; a line may have at most \(limit)"
    case .invalidUTF8:
      return "line is not valid UTF-8 text"
    case .controlCharacter(let byte):
      let hex = String(byte, radix: 16, uppercase: true)
      return "line contains the control character 0x\(hex.count < 2 ? "0" + hex : hex); "
        + "the config file must be plain text"
    case .unparsableLine(let text):
      let shown = text.count > 40 ? text.prefix(40) + "…" : Substring(text)
      return "cannot read '\(shown)'; write 'key = value' or '[section]'"
    case .keyOutsideSection(let key, let section):
      let advice = section.map { "put it under [\($0)]" } ?? "put it under a [section] line"
      return "key '\(key)' is outside any section; \(advice)"
    case .unknownSection(let name):
      return "unknown section [\(name)]; " + Self.sectionAdvice(for: name)
    case .unknownPlugin(let id, let known):
      let guess = closestMatch(to: id, in: known).map { "did you mean [plugin.\($0)]? " } ?? ""
      return "no plugin '\(id)' for [plugin.\(id)]; \(guess)(plugins found: "
        + "\(known.joined(separator: ", ")); a program plugin's section needs exec = ...)"
    case .sectionNameTooLong(let name, let limit):
      return "section name [\(name.prefix(20))…] is too long; at most \(limit) characters"
    case .invalidName(let name, let what, let section):
      return "invalid \(what) '\(name)' in [\(section)]; use only letters, digits, '-' and '_'"
    case .unknownKey(let key, let section, let known):
      if let guess = closestMatch(to: key, in: known) {
        return "unknown key '\(key)' in [\(section)]; did you mean '\(guess)'?"
      }
      let list = known.isEmpty ? "it takes no keys" : "known keys: " + known.joined(separator: ", ")
      return "unknown key '\(key)' in [\(section)]; \(list)"
    case .misplacedKey(let key, let section, let home):
      return "'\(key)' belongs in [\(home)], not in [\(section)]"
    case .invalidValue(let key, let value, let section, let reason):
      return "\(key) = '\(value)' in [\(section)]: \(reason)"
    case .duplicateKey(let key, let section, let first):
      return "duplicate key '\(key)' in [\(section)]; it was first set on line \(first)"
    case .duplicateSection(let name, let first):
      return "duplicate section [\(name)]; it first appears on line \(first)"
    case .tooManyCards(let limit):
      return "more than \(limit) cards from here on; a config may have at most \(limit): "
        + "remove or merge cards"
    case .moreProblems(let count):
      return "\(count) more problem\(count == 1 ? "" : "s") not shown"
    }
  }

  /// "did you mean [timer]?" for a typo, "[card.math]" for a bare card name, else the list.
  private static func sectionAdvice(for name: String) -> String {
    let all = "sections are [timer], [card.NAME], [plugins] and [plugin.ID]"
    if let dot = name.firstIndex(of: ".") {
      let prefix = String(name[..<dot])
      let rest = name[name.index(after: dot)...]
      if let guess = closestMatch(to: prefix, in: ["card", "plugin"]) {
        return "did you mean [\(guess).\(rest)]?"
      }
      return all
    }
    if let guess = closestMatch(to: name, in: ["timer", "plugins"]) {
      return "did you mean [\(guess)]?"
    }
    if closestMatch(to: name, in: ["card", "cards"]) != nil {
      return "a card is written [card.NAME], for example [card.math]"
    }
    if ConfigSchema.isValidName(name) {
      return "did you mean [card.\(name)]? (cards are written [card.NAME])"
    }
    return all
  }
}
