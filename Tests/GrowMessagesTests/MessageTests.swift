import Foundation
import GrowCore
@_spi(GrowBuiltIn) import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit
import GrowTestSupport
import Testing

@Suite struct MessageTests {
  @Test func aCountChoosesTheSingularOrThePlural() {
    let minutes = Message(one: "{n} minute left", other: "{n} minutes left", countedBy: "n")
    #expect(minutes.render(["n": 1]) == "1 minute left")
    #expect(minutes.render(["n": 5]) == "5 minutes left")
    #expect(minutes.render(["n": 0]) == "0 minutes left")
    #expect(
      TimerError.intentionTooLong(limit: 1).message
        == "the intention is longer than 1 character; keep it to one short line, "
        + "such as 'Chapter 3 exercises'")
    #expect(
      TimerError.intentionTooLong(limit: 200).message.hasPrefix(
        "the intention is longer than 200 characters;"))
  }

  @Test func placeholdersAreFilledOnceEvenWhenAValueHoldsBraces() {
    let message = Message("no card named '{name}' (cards: {cards})")
    #expect(message.placeholders == ["name", "cards"])
    #expect(
      message.render(["name": "{cards}", "cards": "work"])
        == "no card named '{cards}' (cards: work)")
    #expect(message.render(["name": "x"]) == "no card named 'x' (cards: {cards})")
  }

  /// Every refusal and every state in words, as a person reads them: whole, no placeholder
  /// left unfilled.
  /// Reading back a line another Grow process rendered (`grow plugin install` reading the
  /// daemon's reload report): the known values must be there, the rest may be anything.
  @Test func aRenderedLineIsRecognisedWithItsKnownValuesAndAnythingForTheRest() {
    let moved = Message("restarted plugin '{id}': it now runs {location}")
    let line = moved.render(["id": "hello", "location": "/home/a/{x}/grow-plugin-hello"])
    #expect(moved.matches(line, ["id": "hello"]))
    #expect(!moved.matches(line, ["id": "hell"]), "the id is the whole id")
    #expect(!moved.matches(line, ["id": "other"]))
    #expect(!moved.matches("restarted plugin 'hello'", ["id": "hello"]))
    let started = Message("started plugin '{id}'")
    #expect(started.matches("started plugin 'hello'", ["id": "hello"]))
    #expect(!started.matches("started plugin 'hello' again", ["id": "hello"]))
    #expect(!started.matches("restarted plugin 'hello'", ["id": "hello"]))
    let both = Message("{a}{b} and {c}")
    #expect(both.matches("x and y", [:]))
    #expect(!both.matches("x or y", [:]))
  }

  @Test func everyRefusalAndStateIsWordedWithoutPlaceholdersLeft() {
    let refusals: [TimerError] = [
      .unknownCard("mtah", known: ["work", "math"]), .unknownCard("x", known: ["work"]),
      .alreadyRunning(.longBreak, card: "work", remaining: 61), .alreadyPaused,
      .notPaused(.shortBreak), .nothingRunning(command: "skip", waiting: .focus),
      .nothingRunning(command: "stop", waiting: nil),
      .lengthOutOfRange(option: "focus", seconds: .nan),
      .extensionOutOfRange(seconds: .infinity), .intentionTooLong(limit: 200),
      .intentionNotOneLine("\n"), .intentionNotOneLine("\u{2028}"),
      .intentionNotOneLine("\u{2029}"),
    ]
    var texts = refusals.map(\.message)
    #expect(Set(texts).count == texts.count, "each refusal says something of its own")
    texts += PhaseKind.allCases.map(\.inWords)
    texts += DisplayState.allCases.map(\.inWords)
    texts += PhaseKind.allCases.map(StatusWords.spoken.waiting)
    for text in texts {
      #expect(!text.isEmpty)
      #expect(!text.contains("{") && !text.contains("}"), "\(text)")
    }
  }

  /// Every `Message("…")` in Sources/ and Plugins/ is rendered with a value for each of its
  /// placeholders, and is one literal without interpolation (a sentence glued from pieces
  /// cannot be translated).
  @Test func everyMessageInTheCodeHasItsPlaceholdersFilled() throws {
    var checked = 0
    var problems: [String] = []
    for folder in ["Sources", "Plugins"] {
      let root = RepoPaths.root.appendingPathComponent(folder)
      let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
      while let file = files?.nextObject() as? URL {
        guard file.pathExtension == "swift" else { continue }
        let uses = try MessageUse.all(in: String(contentsOf: file, encoding: .utf8))
        for use in uses {
          checked += 1
          let place = "\(file.lastPathComponent): \(use.call)"
          if use.call.contains("\\(") { problems.append("interpolated: \(place)") }
          let missing = use.placeholders.subtracting(use.filled)
          if !missing.isEmpty { problems.append("unfilled \(missing.sorted()): \(place)") }
        }
      }
    }
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    #expect(checked > 40, "the scan finds the messages")
  }

  /// The gettext seam: with a catalogue for the reader's language (here a test catalogue under
  /// TEXTDOMAINDIR, compiled by msgfmt), the CLI says its message in that language.
  @Test func theCLISpeaksTheLanguageOfAnInstalledCatalogue() throws {
    let english =
      "the grow daemon is not running; start it with 'grow daemon &', or run "
      + "'grow install --user' once so the first command starts it (and your session at login)"
    let translated = "la demono de grow ne funkcias"
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-locale-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let messages = directory.appendingPathComponent("eo/LC_MESSAGES")
    try FileManager.default.createDirectory(at: messages, withIntermediateDirectories: true)
    let po = directory.appendingPathComponent("grow.po")
    try """
    msgid ""
    msgstr "Content-Type: text/plain; charset=UTF-8\\n"

    msgid "\(english)"
    msgstr "\(translated)"

    msgid "unknown key '{key}' in [{section}]; did you mean '{guess}'?"
    msgstr "nekonata ŝlosilo '{key}' en [{section}]; ĉu vi celis '{guess}'?"

    """.write(to: po, atomically: true, encoding: .utf8)
    let compiled = try Command.run(
      "msgfmt", ["-o", messages.appendingPathComponent("grow.mo").path, po.path])
    try #require(compiled.status == 0, "msgfmt (Debian's gettext): \(compiled.stderr)")

    let harness = try DaemonHarness(startDaemon: false)
    let language = ["LC_ALL": "C.UTF-8", "LANGUAGE": "eo", "TEXTDOMAINDIR": directory.path]
    let result = try Command.run(
      Binaries.grow, ["status"], environment: harness.environment.merging(language) { $1 })
    #expect(result.status == 3)
    #expect(result.stderr == "grow: \(translated)\n")
    // Without the catalogue's language, the English.
    let plain = try Command.run(
      Binaries.grow, ["status"],
      environment: harness.environment.merging(["LANGUAGE": "fr", "TEXTDOMAINDIR": directory.path])
      { $1 })
    #expect(plain.stderr == "grow: \(english)\n")

    // The config's problems come from the SDK as data and are worded through the catalogue too.
    let config = directory.appendingPathComponent("config.ini").path
    try "[timer]\nfocs = 25m\n".write(toFile: config, atomically: true, encoding: .utf8)
    let check = try Command.run(
      Binaries.grow, ["config", "check", config],
      environment: harness.environment.merging(language) { $1 })
    #expect(check.status != 0)
    #expect(
      check.stdout.contains("\(config):2: nekonata ŝlosilo 'focs' en [timer]; ĉu vi celis 'focus'?")
        || check.stderr.contains(
          "\(config):2: nekonata ŝlosilo 'focs' en [timer]; ĉu vi celis 'focus'?"),
      "\(check.stdout)\(check.stderr)")
  }
}

/// One `Message(…).render(…)` (or `Worded(Message(…), […])`) in a source file: the
/// placeholders of its literals and the names its render call (or the values beside it) gives
/// values for.
struct MessageUse {
  var call: String
  var placeholders: Set<String>
  var filled: Set<String>

  static func all(in source: String) throws -> [MessageUse] {
    // Comments say "Message(" too.
    let code = source.split(separator: "\n", omittingEmptySubsequences: false)
      .map { $0.trimmingCharacters(in: .whitespaces).hasPrefix("//") ? "" : String($0) }
      .joined(separator: "\n")
    let call = try Regex(#"(?:^|[^A-Za-z0-9_.])Message\("#)
    let placeholder = try Regex(#"\{([a-zA-Z]+)\}"#)
    let key = try Regex(#""([a-zA-Z]+)":"#)
    var uses: [MessageUse] = []
    for match in code.matches(of: call) {
      let open = code.index(before: match.range.upperBound)
      guard let close = balanced(code, from: open) else { continue }
      let text = String(code[match.range.lowerBound...close])
      var use = MessageUse(
        call: text,
        placeholders: Set(
          text.matches(of: placeholder).map { String($0.output[1].substring ?? "") }),
        filled: [])
      let after = code[code.index(after: close)...].drop { $0.isWhitespace }
      if after.hasPrefix(".render("),
        let renderClose = balanced(code, from: after.index(after.startIndex, offsetBy: 7))
      {
        let arguments = code[after.index(after.startIndex, offsetBy: 8)..<renderClose]
          .trimmingCharacters(in: .whitespacesAndNewlines)
        var keys = arguments
        // A dictionary made before the call: `let values = [...]`.
        if !arguments.hasPrefix("["), !arguments.isEmpty,
          let declared = code.firstRange(of: "let \(arguments)"),
          let assigned = code[declared.upperBound...].firstRange(of: "= ["),
          case let bracket = code.index(before: assigned.upperBound),
          let end = balanced(code, from: bracket)
        {
          keys = String(code[bracket...end])
        }
        use.filled = Set(keys.matches(of: key).map { String($0.output[1].substring ?? "") })
      } else if after.hasPrefix(","),
        case let values = after.dropFirst().drop(while: \.isWhitespace), values.hasPrefix("["),
        let end = balanced(code, from: values.startIndex)
      {
        // `Worded(Message("…"), ["name": value])`: the values beside the message.
        use.filled = Set(
          code[values.startIndex...end].matches(of: key).map {
            String($0.output[1].substring ?? "")
          })
      }
      uses.append(use)
    }
    return uses
  }

  /// The index of the bracket closing the one at `open`, skipping string literals.
  static func balanced(_ text: String, from open: String.Index) -> String.Index? {
    let pairs: [Character: Character] = ["(": ")", "[": "]"]
    var stack: [Character] = []
    var inString = false
    var index = open
    while index < text.endIndex {
      let character = text[index]
      if inString {
        if character == "\\" {
          index = text.index(after: index)
        } else if character == "\"" {
          inString = false
        }
      } else if character == "\"" {
        inString = true
      } else if let closing = pairs[character] {
        stack.append(closing)
      } else if character == stack.last {
        stack.removeLast()
        if stack.isEmpty { return index }
      }
      index = text.index(after: index)
    }
    return nil
  }
}
