import GrowBasics
import GrowConfig

/// Why an `exec = …` value cannot be turned into a command.
public enum ExecSyntaxError: WordedError, Equatable {
  case empty
  case unterminatedQuote(Character)
  case trailingBackslash

  public var worded: Worded {
    switch self {
    case .empty:
      Worded(Message("exec is empty; give the program to run, such as exec = ~/bin/grow-hook.py"))
    case .unterminatedQuote(let quote):
      Worded(Message("exec has a {quote} that is never closed"), ["quote": String(quote)])
    case .trailingBackslash: Worded(Message("exec ends with a backslash that escapes nothing"))
    }
  }
}

/// The `exec` setting of an external plugin, split into an argument list the way a shell would
/// split a simple command, but without a shell: nothing is expanded except a leading `~/`, so
/// `$(…)`, `;`, `|` and `*` reach the program as written.
public enum ExecCommandLine {
  /// Splits on unquoted whitespace. `'…'` keeps everything literally; `"…"` keeps everything
  /// but `\"` and `\\`; outside quotes `\` makes the next character literal. An unquoted `~`
  /// alone or before `/` at the start of a word becomes `home`.
  public static func split(_ text: String, home: String?) throws(ExecSyntaxError) -> [String] {
    var words: [String] = []
    var word = ""
    var inWord = false
    var tildeAtStart = false
    var characters = text.makeIterator()

    func finishWord() {
      guard inWord else { return }
      if tildeAtStart, let home, word == "~" || word.hasPrefix("~/") {
        word = home + word.dropFirst()
      }
      words.append(word)
      word = ""
      inWord = false
      tildeAtStart = false
    }

    while let character = characters.next() {
      switch character {
      case _ where character.isWhitespace:
        finishWord()
      case "'":
        inWord = true
        while true {
          guard let next = characters.next() else { throw .unterminatedQuote("'") }
          if next == "'" { break }
          word.append(next)
        }
      case "\"":
        inWord = true
        while true {
          guard let next = characters.next() else { throw .unterminatedQuote("\"") }
          if next == "\"" { break }
          if next == "\\" {
            guard let escaped = characters.next() else { throw .unterminatedQuote("\"") }
            if escaped != "\"" && escaped != "\\" { word.append("\\") }
            word.append(escaped)
          } else {
            word.append(next)
          }
        }
      case "\\":
        guard let escaped = characters.next() else { throw .trailingBackslash }
        inWord = true
        word.append(escaped)
      default:
        if !inWord && character == "~" { tildeAtStart = true }
        inWord = true
        word.append(character)
      }
    }
    finishWord()
    guard !words.isEmpty else { throw .empty }
    return words
  }

  /// The argument list of `section`'s `exec` key; nil when the section has none. Errors name
  /// the file and line, like every other config problem.
  public static func arguments(of section: ConfigSection, home: String?) throws(ConfigError)
    -> [String]?
  {
    guard let entry = section["exec"] else { return nil }
    do {
      return try split(entry.value, home: home)
    } catch {
      throw ConfigError([
        ConfigProblem(
          path: section.path, line: entry.line,
          issue: .invalidValue(
            key: "exec", value: entry.value, section: section.name, reason: error.message))
      ])
    }
  }
}
