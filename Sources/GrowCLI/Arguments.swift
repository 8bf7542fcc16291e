@_spi(GrowHost) import GrowCore
import GrowMessages

/// A command line split into positional words and `--option value` pairs.
///
/// Hand-written because Grow takes no package dependencies; it understands `--name value`,
/// `--name=value` and boolean `--flag`s, and rejects anything it was not told about.
struct Arguments {
  private(set) var positionals: [String] = []
  private var values: [String: String] = [:]
  private var flags: Set<String> = []

  /// - Parameters:
  ///   - valueOptions: options that take a value (`--focus 50m`).
  ///   - flagOptions: options that stand alone (`--json`).
  init(_ words: [String], valueOptions: Set<String> = [], flagOptions: Set<String> = [])
    throws(UsageError)
  {
    var index = 0
    while index < words.count {
      let word = words[index]
      index += 1
      guard word.hasPrefix("--"), word.count > 2 else {
        positionals.append(word)
        continue
      }
      var name = String(word.dropFirst(2))
      var inlineValue: String?
      if let equals = name.firstIndex(of: "=") {
        inlineValue = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      if valueOptions.contains(name) {
        if let inlineValue {
          values[name] = inlineValue
        } else if index < words.count {
          values[name] = words[index]
          index += 1
        } else {
          throw UsageError(Message("--{option} needs a value").render(["option": name]))
        }
      } else if flagOptions.contains(name), inlineValue == nil {
        flags.insert(name)
      } else {
        let known = (valueOptions.union(flagOptions)).sorted().map { "--\($0)" }
        throw UsageError(
          known.isEmpty
            ? Message("unknown option --{option}").render(["option": shown(name)])
            : Message("unknown option --{option} (this command takes {options})").render([
              "option": shown(name), "options": known.joined(separator: ", "),
            ]))
      }
    }
  }

  func value(_ name: String) -> String? { values[name] }
  func flag(_ name: String) -> Bool { flags.contains(name) }

  /// Fails unless there are at most `count` positional words.
  func expectPositionals(atMost count: Int, usage: String) throws(UsageError) {
    guard positionals.count <= count else {
      throw UsageError(
        Message("unexpected '{word}'; usage: {usage}").render([
          "word": shown(positionals[count]), "usage": usage,
        ]))
    }
  }
}

/// The command line was wrong; the message says how to write it.
struct UsageError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
