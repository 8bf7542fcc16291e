import Foundation
import GrowConfig
import GrowCore
import Testing

@Test func unknownKeySuggestsTheNearMiss() {
  #expect(
    messages(
      """
      [timer]
      focus = 25m
      [card.math]
      fcous = 50m
      """)
      == ["config.ini:4: unknown key 'fcous' in [card.math]; did you mean 'focus'?"])
  #expect(
    messages("[timer]\nwhatever = 1", path: "/home/u/.config/grow/config.ini") == [
      "/home/u/.config/grow/config.ini:2: unknown key 'whatever' in [timer]; known keys: "
        + "default-card, focus, short-break, long-break, long-break-after, auto-start-breaks, "
        + "auto-start-focus, daily-goal, intention, distractions, allow, block, break-screen, sleep-limit"
    ])
  #expect(
    messages("[plugins]\nenabled = notify")
      == ["config.ini:2: unknown key 'enabled' in [plugins]; did you mean 'enable'?"])
}

@Test func keysInTheWrongSectionSayWhereTheyBelong() {
  #expect(
    messages("[card.math]\ndefault-card = math\n[timer]\nenable = notify") == [
      "config.ini:2: 'default-card' belongs in [timer], not in [card.math]",
      "config.ini:4: 'enable' belongs in [plugins], not in [timer]",
    ])
}

@Test func unknownSectionsSuggestTheIntendedOne() {
  #expect(
    messages(
      """
      [tmier]
      focus = 25m
      [math]
      [cards.math]
      [plugin]
      [card]
      [plugn.notify]
      [what ever]
      [x.y]
      """) == [
        "config.ini:1: unknown section [tmier]; did you mean [timer]?",
        "config.ini:3: unknown section [math]; did you mean [card.math]? "
          + "(cards are written [card.NAME])",
        "config.ini:4: unknown section [cards.math]; did you mean [card.math]?",
        "config.ini:5: unknown section [plugin]; did you mean [plugins]?",
        "config.ini:6: unknown section [card]; a card is written [card.NAME], "
          + "for example [card.math]",
        "config.ini:7: unknown section [plugn.notify]; did you mean [plugin.notify]?",
        "config.ini:8: unknown section [what ever]; "
          + "sections are [timer], [card.NAME], [plugins] and [plugin.ID]",
        "config.ini:9: unknown section [x.y]; "
          + "sections are [timer], [card.NAME], [plugins] and [plugin.ID]",
      ])
}

@Test func invalidCardAndPluginNames() {
  #expect(
    messages("[card.deep work]\nfocus = 1h\n[card.]\n[plugin.a/b]\n[timer]\ndefault-card = my card")
      == [
        "config.ini:1: invalid card name 'deep work' in [card.deep work]; "
          + "use only letters, digits, '-' and '_'",
        "config.ini:3: invalid card name '' in [card.]; use only letters, digits, '-' and '_'",
        "config.ini:4: invalid plugin id 'a/b' in [plugin.a/b]; "
          + "use only letters, digits, '-' and '_'",
        "config.ini:6: default-card = 'my card' in [timer]: "
          + "'my card' is not a valid card name; use only letters, digits, '-' and '_'",
      ])
  #expect(
    messages("[plugins]\nenable = notify, do not disturb") == [
      "config.ini:2: enable = 'notify, do not disturb' in [plugins]: "
        + "'do not disturb' is not a valid plugin id; use only letters, digits, '-' and '_'"
    ])
}

@Test func badValuesNameTheKeyTheValueAndTheFix() {
  #expect(
    messages(
      """
      [timer]
      focus = 25m
      short-break = 5m
      focus-x = 1
      """) == ["config.ini:4: unknown key 'focus-x' in [timer]; did you mean 'focus'?"])
  #expect(
    messages(
      """
      [timer]
      default-card = work
      short-break = 5m
      focus = 25x
      long-break = 0
      long-break-after = 101
      auto-start-breaks = maybe
      daily-goal = lots
      [card.math]
      short-break = 25h
      long-break-after = four
      focus =
      daily-goal = 30h
      """) == [
        "config.ini:4: focus = '25x' in [timer]: "
          + "'25x' is not a duration; write it like 25m, 90s or 1h30m",
        "config.ini:5: long-break = '0' in [timer]: must be at least 1s",
        "config.ini:6: long-break-after = '101' in [timer]: "
          + "'101' is not a whole number from 1 to 100",
        "config.ini:7: auto-start-breaks = 'maybe' in [timer]: "
          + "'maybe' is not true or false; write true/false, yes/no, on/off or 1/0",
        "config.ini:8: daily-goal = 'lots' in [timer]: "
          + "'lots' is not a duration; write it like 2h or 1h30m, or none for no goal",
        "config.ini:10: short-break = '25h' in [card.math]: '25h' is longer than 24h",
        "config.ini:11: long-break-after = 'four' in [card.math]: "
          + "'four' is not a whole number from 1 to 100",
        "config.ini:12: focus = '' in [card.math]: "
          + "empty duration; write it like 25m, 90s or 1h30m",
        "config.ini:13: daily-goal = '30h' in [card.math]: '30h' is longer than 24h",
      ])
  #expect(
    messages("[timer]\nlong-break-after = 0\nfocus = 0s")
      == [
        "config.ini:2: long-break-after = '0' in [timer]: "
          + "'0' is not a whole number from 1 to 100",
        "config.ini:3: focus = '0s' in [timer]: must be at least 1s",
      ])
}

@Test func keyOutsideAnySection() {
  #expect(
    messages("focus = 25m\nenable = x\ncolour = red\n[timer]") == [
      "config.ini:1: key 'focus' is outside any section; put it under [timer]",
      "config.ini:2: key 'enable' is outside any section; put it under [plugins]",
      "config.ini:3: key 'colour' is outside any section; put it under a [section] line",
    ])
}

@Test func duplicateKeysAndSectionsNameTheFirstLine() {
  #expect(
    messages(
      """
      [timer]
      focus = 25m
      focus = 30m
      [card.math]
      [timer]
      focus = 40m
      [plugin.notify]
      a = 1
      a = 2
      """) == [
        "config.ini:3: duplicate key 'focus' in [timer]; it was first set on line 2",
        "config.ini:5: duplicate section [timer]; it first appears on line 1",
        "config.ini:6: duplicate key 'focus' in [timer]; it was first set on line 2",
        "config.ini:9: duplicate key 'a' in [plugin.notify]; it was first set on line 8",
      ])
}

@Test func linesInihCannotRead() {
  #expect(
    messages("[timer]\nfocus 25m\n[card.math\nshort-break = 5m\n= 3") == [
      "config.ini:2: cannot read 'focus 25m'; write 'key = value' or '[section]'",
      "config.ini:3: cannot read '[card.math'; write 'key = value' or '[section]'",
      "config.ini:5: cannot read '= 3'; write 'key = value' or '[section]'",
    ])
}

@Test func tooLongLinesAreReportedNotSplit() throws {
  let long = "body = " + String(repeating: "a", count: 16 * 1024)
  let fits = "body = " + String(repeating: "b", count: 16 * 1024 - 7)
  let problems = messages("[plugin.x]\n\(long)\n[plugin.y]\n\(fits)")
  #expect(problems == ["config.ini:2: line is 16391 bytes long; a line may have at most 16384"])
  let config = try GrowConfig.parse("[plugin.y]\n\(fits)", path: "c")
  #expect(config.pluginSections["y"]?.string("body")?.count == 16 * 1024 - 7)
}

/// Lines longer than libinih's 200-byte buffer (fifty plugin ids) are read whole, by inih's
/// rules: trimmed, an inline comment dropped.
@Test func linesLongerThanInihsBufferAreReadWhole() throws {
  let ids = (1...60).map { "plugin-number-\($0)" }
  let value = String(repeating: "c", count: 4096)
  let config = try GrowConfig.parse(
    "[plugins]\nenable =  \(ids.joined(separator: ", "))   ; all of them\n"
      + "[plugin.x]\nbody =\t\(value) \n# \(value)\nsemicolon =;\(value)",
    path: "c")
  #expect(config.enabledPlugins == ids)
  #expect(config.pluginSections["x"]?.string("body") == value)
  #expect(config.pluginSections["x"]?.string("semicolon") == ";" + value)
  let header = "[card." + String(repeating: "h", count: 300) + "]"
  #expect(
    messages("\(header)\nfocus = 1h").first?.hasPrefix("config.ini:1: section name [card.hh")
      == true)
  let noSeparator = String(repeating: "k", count: 300) + " " + value
  #expect(
    messages("[timer]\n" + noSeparator).first?.hasPrefix("config.ini:2: cannot read 'kkk")
      == true)
}

@Test func longSectionNamesAreRejectedRatherThanCut() {
  let name = String(repeating: "n", count: 60)
  #expect(
    messages("[card.\(name)]\nfocus = 1h") == [
      "config.ini:1: section name [card.nnnnnnnnnnnnnnn…] is too long; at most 48 characters"
    ])
}

@Test func invalidUTF8AndControlCharacters() throws {
  var bytes = Array("[timer]\nintention = caf".utf8) + [0xE9] + Array("\nfocus = 1m\n".utf8)
  bytes += Array("short-break = 1\u{1}m\n".utf8)
  do {
    _ = try GrowConfig.parse(Data(bytes), path: "config.ini")
    Issue.record("expected an error")
  } catch {
    #expect(
      error.description == """
        config.ini:2: line is not valid UTF-8 text
        config.ini:4: line contains the control character 0x01; the config file must be plain text
        """)
  }
}

@Test func everyProblemIsReportedAtOnceOnePerLine() {
  let text = """
    focus = 1m
    [timer]
    fcous = 25m
    focus = 25x
    [tmier]
    [card.math]
    auto-start-breaks = perhaps
    long-break-after = 4
    long-break-after = 5
    """
  do {
    _ = try GrowConfig.parse(text, path: "config.ini")
    Issue.record("expected an error")
  } catch {
    #expect(error.problems.count == 6)
    let expected: [String] = [
      "config.ini:1: key 'focus' is outside any section; put it under [timer]",
      "config.ini:3: unknown key 'fcous' in [timer]; did you mean 'focus'?",
      "config.ini:4: focus = '25x' in [timer]: '25x' is not a duration; "
        + "write it like 25m, 90s or 1h30m",
      "config.ini:5: unknown section [tmier]; did you mean [timer]?",
      "config.ini:7: auto-start-breaks = 'perhaps' in [card.math]: 'perhaps' is not true "
        + "or false; write true/false, yes/no, on/off or 1/0",
      "config.ini:9: duplicate key 'long-break-after' in [card.math]; "
        + "it was first set on line 8",
    ]
    #expect(error.description == expected.joined(separator: "\n"))
  }
}

@Test func aFloodOfProblemsIsCut() {
  let text = (1...150).map { "k\($0) = v" }.joined(separator: "\n")
  let lines = messages(text)
  #expect(lines.count == 101)
  #expect(lines.last == "config.ini: 50 more problems not shown")
}

@Test func randomBytesNeverCrashAndAlwaysExplain() {
  var generator = SystemRandomNumberGenerator()
  for size in [1, 10, 100, 1000, 10_000, 100_000] {
    let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
    do {
      _ = try GrowConfig.parse(Data(bytes), path: "config.ini")
    } catch {
      #expect(!error.problems.isEmpty)
      #expect(error.problems.count <= 101)
      #expect(error.description.split(separator: "\n").allSatisfy { $0.hasPrefix("config.ini") })
    }
  }
  // Printable noise with brackets, equals signs and semicolons reaches inih itself.
  let alphabet = Array("[]=;#: \tabcfkmorstu.-_0123456789\n")
  for _ in 0..<200 {
    let text = String((0..<300).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
    _ = messages(text)
  }
}

@Test func filesOverOneMebibyteAreRefused() {
  let text = String(repeating: "; padding padding padding\n", count: 41_000)
  #expect(text.utf8.count > 1024 * 1024)
  #expect(
    messages(text) == ["config.ini: file is larger than 1 MiB; is this really a config file?"])
}

/// A card's intention in config.ini keeps the promise `grow start --intention` keeps: one
/// line. U+2028 and U+2029 are line breaks to JSON readers and bars, and C1 controls (NEL)
/// slip past the file's own check for control bytes.
@Test func anIntentionWithALineSeparatorIsRefused() {
  #expect(
    messages("[card.x]\nintention = Essay\u{2028}rm -rf\n") == [
      "config.ini:2: intention = 'Essay\u{2028}rm -rf' in [card.x]: the intention must be one "
        + "line of text; it holds the line separator U+2028"
    ])
  #expect(
    messages("[timer]\nintention = a\u{85}b\n") == [
      "config.ini:2: intention = 'a\u{85}b' in [timer]: the intention must be one line of "
        + "text; it holds the control character U+0085"
    ])
}
