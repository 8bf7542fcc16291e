import Foundation
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowFuzz
import Testing

/// Hostile config files: whatever the bytes, `GrowConfig.parse` returns a config the timer can
/// run on or a `ConfigError` whose lines name the file and line and say what to write
/// (`FuzzTarget.config` spells the promise out). Seeded, so a failure reproduces.
@Suite struct ConfigFuzzTests {
  static let corpus = FuzzCorpus.inputs(.config).map(\.bytes)
  static let mutator = Mutator(
    tokens: FuzzCorpus.tokens(.config), pool: corpus, maxLength: 64 * 1024)

  @Test func theCommittedCorpusHolds() async {
    #expect(Self.corpus.count >= 4, "Tests/FuzzCorpus/config is read")
    #expect(Self.mutator.tokens.count >= 30, "Tests/FuzzCorpus/config.dict is read")
    for (name, bytes) in FuzzCorpus.inputs(.config) {
      let broken = await check(.config, bytes)
      #expect(broken.isEmpty, "\(name): \(broken)")
    }
  }

  @Test func randomBytes() async {
    await fuzz(.config, seed: 0xC0FF_0001, count: 400) { random in
      random.bytes(random.int(0...600))
    }
  }

  @Test func randomLinesOfConfigCharacters() async {
    let alphabet = Array("[]=;#:. \t\r\nabcdefgikmnoprstuwxyz-_/|()\\0123456789hms".utf8)
    await fuzz(.config, seed: 0xC0FF_0002, count: 400) { random in
      (0..<random.int(0...400)).map { _ in random.pick(alphabet) }
    }
  }

  @Test func mutatedValidConfigs() async {
    await fuzz(.config, seed: 0xC0FF_0003, count: 1000) { random in
      Self.mutator.mutate(random.pick(Self.corpus), using: &random)
    }
  }

  /// Files written from the grammar with random sections, keys and values, so the checks of
  /// every value kind run on near misses, not only on noise inih rejects.
  @Test func generatedConfigs() async {
    await fuzz(.config, seed: 0xC0FF_0004, count: 600) { random in
      Array(ConfigWriter.randomFile(using: &random).utf8)
    }
  }

  @Test func duplicateSectionsAndKeysNameBothLines() throws {
    var random = SeededGenerator(seed: FuzzSettings.seed(default: 0xC0FF_0005))
    for _ in 0..<100 * FuzzSettings.rounds {
      let first = ConfigWriter.randomSection(valid: true, using: &random)
      let filler = ConfigWriter.randomSection(valid: true, using: &random)
      let text = first + filler + first
      let firstLine = 1
      let duplicateLine = (first + filler).count(where: { $0 == "\n" }) + 1
      let problems = problemsOf(text)
      let header = String(first.prefix { $0 != "\n" }.dropFirst().dropLast())
      if header == String(filler.prefix { $0 != "\n" }.dropFirst().dropLast()) { continue }
      #expect(
        problems.contains(
          "fuzz.ini:\(duplicateLine): duplicate section [\(header)]; it first appears on line \(firstLine)"
        ), "\(text.debugDescription): \(problems)")
    }
  }

  /// Changes that mean nothing to a reader mean nothing to the parser either.
  @Test func layoutDoesNotChangeTheConfig() throws {
    var random = SeededGenerator(seed: FuzzSettings.seed(default: 0xC0FF_0006))
    var compared = 0
    for _ in 0..<300 * FuzzSettings.rounds {
      let lines = ConfigWriter.randomValidFile(using: &random)
      guard let plain = try? GrowConfig.parse(lines.joined(separator: "\n"), path: "fuzz.ini")
      else { continue }
      compared += 1
      var relaid: [String] = random.chance(0.5) ? ["\u{FEFF}; written by hand"] : []
      for line in lines {
        if random.chance(0.3) { relaid.append(random.pick(["", "   ", "\t", "; note", "# note"])) }
        relaid.append(ConfigWriter.respace(line, using: &random))
      }
      let ending = random.chance(0.5) ? "\r\n" : "\n"
      let text = relaid.joined(separator: ending) + (random.chance(0.5) ? ending : "")
      let context = "\(lines.joined(separator: "\n").debugDescription) vs \(text.debugDescription)"
      #expect(throws: Never.self, "\(context)") {
        let other = try GrowConfig.parse(text, path: "fuzz.ini")
        #expect(other.deck == plain.deck, "\(context)")
        #expect(other.enabledPlugins == plain.enabledPlugins, "\(context)")
        #expect(other.pluginSections.keys.sorted() == plain.pluginSections.keys.sorted())
      }
    }
    #expect(compared >= 100, "the generator writes mostly valid files")
  }

  @Test func hugeFiles() async {
    let mebibyte = GrowConfig.maximumFileSize
    // Exactly 1 MiB of comments: read, and it is the defaults.
    let comment = Array("; \(String(repeating: "x", count: 125))\n".utf8)
    let exact = Array(Array(repeating: comment, count: mebibyte / comment.count).joined())
    #expect(exact.count == mebibyte)
    #expect((try? GrowConfig.parse(Data(exact), path: "fuzz.ini"))?.deck == .standard)
    await expectHolds(.config, exact)
    // One byte more: refused as a whole, before any line is read.
    #expect(
      problemsOf(exact + [0x0A]) == [
        "fuzz.ini: file is larger than 1 MiB; is this really a config file?"
      ])
    // A single line of 1 MiB, a million newlines, a million NUL bytes, 20,000 [timer] headers.
    for input in [
      [UInt8](repeating: 0x61, count: mebibyte), [UInt8](repeating: 0x0A, count: mebibyte),
      [UInt8](repeating: 0x00, count: mebibyte),
      Array(repeating: Array("[timer]\n".utf8), count: 20_000).joined() + [],
    ] {
      await expectHolds(.config, Array(input))
    }
    // A flood of problems is cut at 100 and summed up.
    let flood = Array(repeating: Array("[x]\n".utf8), count: 5000).joined()
    let problems = problemsOf(Array(flood))
    #expect(problems.count == 101)
    #expect(problems.last == "fuzz.ini: 4900 more problems not shown")
  }

  @Test func nulBytesOverlongLinesAndInvalidUTF8NameTheirLine() async {
    let cases: [(bytes: [UInt8], problem: String)] = [
      (
        Array("[timer]\nfocus = 2\u{0}5m\n".utf8),
        "fuzz.ini:2: line contains the control character 0x00"
      ),
      (Array("[timer]\n".utf8) + [0x66, 0xFF, 0x0A], "fuzz.ini:2: line is not valid UTF-8 text"),
      (Array("[timer]\n".utf8) + [0xED, 0xA0, 0x80], "fuzz.ini:2: line is not valid UTF-8 text"),
      // Past libinih's 200-byte buffer a line is still read whole (and its value checked);
      // past 16 KiB it is refused.
      (
        Array("[timer]\n\nfocus = \(String(repeating: "9", count: 300))m".utf8),
        "fuzz.ini:3: focus = '999"
      ),
      (
        Array("[timer]\n\nfocus = \(String(repeating: "9", count: 16400))m".utf8),
        "fuzz.ini:3: line is 16409 bytes long"
      ),
      (
        Array("\n\n[\(String(repeating: "n", count: 196))]".utf8),
        "fuzz.ini:3: section name [nnn"
      ),
    ]
    for (bytes, problem) in cases {
      let problems = problemsOf(bytes)
      #expect(problems.contains { $0.hasPrefix(problem) }, "\(shown(bytes)): \(problems)")
      await expectHolds(.config, bytes)
    }
  }

  func problemsOf(_ text: String) -> [String] { problemsOf(Array(text.utf8)) }

  func problemsOf(_ bytes: [UInt8]) -> [String] {
    do {
      _ = try GrowConfig.parse(Data(bytes), path: "fuzz.ini")
      return []
    } catch {
      return error.problems.map(\.description)
    }
  }
}

/// Writes config files from the grammar: mostly valid, with near misses mixed in.
enum ConfigWriter {
  static let cardKeys = [
    "focus", "short-break", "long-break", "long-break-after", "auto-start-breaks",
    "auto-start-focus", "daily-goal", "intention", "distractions", "allow", "block",
  ]

  static func randomValidFile(using random: inout SeededGenerator) -> [String] {
    (0..<random.int(1...4)).flatMap { index -> [String] in
      let section = randomSection(valid: true, using: &random, unique: "s\(index)")
      return section.split(separator: "\n").map(String.init)
    }
  }

  static func randomFile(using random: inout SeededGenerator) -> String {
    (0..<random.int(0...5)).map { _ in randomSection(valid: random.chance(0.6), using: &random) }
      .joined()
  }

  /// A `[section]` line and its keys, each line ending in `\n`. Valid sections have valid keys
  /// with valid values; `unique` goes into card and plugin names.
  static func randomSection(
    valid: Bool, using random: inout SeededGenerator, unique: String = ""
  ) -> String {
    let header: String
    var keys: [String]
    switch random.int(0...(valid ? 3 : 5)) {
    case 0:
      header = "timer"
      keys = cardKeys + (valid ? [] : ["default-card"])
    case 1:
      header = "card." + random.pick(["math", "writing", "a_b-9"]) + unique
      keys = cardKeys
    case 2:
      header = "plugins"
      keys = ["enable"]
    case 3:
      header = "plugin." + random.pick(["notify", "hook", "x11"]) + unique
      keys = ["warn-before", "exec", "anything"]
    case 4:
      header = random.pick(["card", "card.bad name", "timr", "plugin.", "", "card.é"])
      keys = cardKeys
    default:
      header = "card." + String(repeating: "n", count: random.int(40...60))
      keys = cardKeys
    }
    var lines = ["[\(header)]"]
    var used = Set<String>()
    for _ in 0..<random.int(0...6) {
      var key = random.pick(keys)
      if !valid, random.chance(0.2) {
        key = random.pick(["focuss", "default-card", "enable", "", "=", "k"])
      }
      if valid, !used.insert(key).inserted { continue }
      lines.append("\(key) = \(value(for: key, valid: valid, using: &random))")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  static func value(for key: String, valid: Bool, using random: inout SeededGenerator) -> String {
    let invalid = !valid && random.chance(0.4)
    switch key {
    case "focus", "short-break", "long-break", "daily-goal", "warn-before":
      if invalid {
        return random.pick(["0", "25 minutes", "24h1s", "-5", "1h1h", "m", "99999999999h", "nan"])
      }
      let parts = [("h", 0...23), ("m", 0...59), ("s", 0...59)].filter { _ in random.chance(0.5) }
      let text = parts.map { "\(random.int($0.1))\($0.0)" }.joined(
        separator: random.chance(0.2) ? " " : "")
      return text.isEmpty || text.allSatisfy({ "0hms ".contains($0) })
        ? "\(random.int(1...1440))" : text
    case "long-break-after":
      return invalid ? random.pick(["0", "101", "four", "1e2", "-1"]) : "\(random.int(1...100))"
    case "auto-start-breaks", "auto-start-focus":
      return invalid
        ? random.pick(["maybe", "2", "truee", ""])
        : random.pick(["true", "false", "yes", "no", "on", "off", "1", "0", "TRUE"])
    case "block":
      return invalid
        ? random.pick(["sometimes", "kill", ""]) : random.pick(["off", "minimize", "Minimize"])
    case "distractions", "allow":
      let patterns =
        valid
        ? ["discord", "steam", "firefox:/youtube|reddit/", "/^Grow .*$/", "code:/\\.swift$/"]
        : [
          "firefox:/(unclosed/", "/[z-a]/", "bad name", "/", "a:b", "/(?<n>x)\\k<m>/",
          "/\\p{Nope}/",
        ]
      return (0..<random.int(1...3)).map { _ in random.pick(patterns) }.joined(separator: ", ")
    case "enable":
      return (0..<random.int(0...4)).map { _ in
        random.pick(valid ? ["notify", "dnd", "x11", "statusbar"] : ["a b", "é", "-"])
      }
      .joined(separator: ", ")
    case "intention", "anything", "exec":
      return random.pick([
        "Deep work", "Chapter 3 ; not a comment?", "ünïcödé ✓", "~/bin/hook --flag", "",
      ])
    default:
      return random.pick(["25m", "x", ""])
    }
  }

  /// The same line with other spacing around `=` and at its ends.
  static func respace(_ line: String, using random: inout SeededGenerator) -> String {
    let pad = { (random: inout SeededGenerator) in random.pick(["", " ", "  ", "\t"]) }
    guard let equals = line.firstIndex(of: "="), !line.hasPrefix("[") else {
      return pad(&random) + line + pad(&random)
    }
    let key = line[..<equals].trimmingCharacters(in: .whitespaces)
    let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
    // A value that ends a line in spaces then `;` would start a comment; leave those alone.
    return pad(&random) + key + pad(&random) + "=" + pad(&random) + value
  }
}
