import Foundation
import GrowTestSupport
import Testing

/// The documentation as a reader meets it: README.md, the front door, and the manual in docs/.
/// A link that leads nowhere, an anchor that names no heading, or a `grow` command line that
/// grow refuses is a mistake the reader finds before we do, so they are checked like code.
@Suite struct DocsTests {
  /// README.md and every Markdown file under docs/, relative to the repository.
  static func documentPaths() throws -> [String] {
    let docs = RepoPaths.root.appendingPathComponent("docs")
    let enumerator = try #require(FileManager.default.enumerator(atPath: docs.path))
    var paths = ["README.md"]
    while let name = enumerator.nextObject() as? String {
      if name.hasSuffix(".md") { paths.append("docs/" + name) }
    }
    return paths.sorted()
  }

  static func read(_ path: String) throws -> String {
    try String(contentsOf: RepoPaths.root.appendingPathComponent(path), encoding: .utf8)
  }

  // MARK: 1. Links and anchors

  @Test func everyRelativeLinkLeadsToAFileAndEveryAnchorToAHeading() throws {
    var problems: [String] = []
    for path in try Self.documentPaths() {
      problems += try Self.linkProblems(in: path, text: try Self.read(path))
    }
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
  }

  /// The checker itself: a document with one link of each kind of mistake is caught on each,
  /// and the good links beside them are not.
  @Test func brokenLinksAndAnchorsAreFound() throws {
    let text = """
      # A fixture

      ## Local heading

      [fine](using.md) [fine](#local-heading) [fine](../README.md#installing)
      [fine](configuration.md#configuration) `[in code](nowhere.md)`
      [no file](nowhere.md) [no heading](#locl-heading) [no heading there](using.md#nope)

      ```md
      [in a block](also-nowhere.md)
      ```
      """
    let problems = try Self.linkProblems(in: "docs/fixture.md", text: text)
    #expect(
      problems == [
        "docs/fixture.md:7: 'nowhere.md': no such file",
        "docs/fixture.md:7: '#locl-heading': no heading with that anchor in docs/fixture.md",
        "docs/fixture.md:7: 'using.md#nope': no heading with that anchor in docs/using.md",
      ])
  }

  /// The problems of one document's links: each relative target must exist (relative to the
  /// document), and a `#fragment` must be the anchor of a heading in the target Markdown file.
  /// Links in code blocks and code spans are examples, not links, and are skipped; so are
  /// links to other sites.
  static func linkProblems(in path: String, text: String) throws -> [String] {
    let directory = RepoPaths.root.appendingPathComponent(path).deletingLastPathComponent()
    var problems: [String] = []
    for (number, line) in try prose(text) {
      let links = try groups(#"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#, in: line)
      let definitions = try groups(#"^\s{0,3}\[[^\]]+\]:\s*(\S+)"#, in: line)
      for target in (links + definitions).map({ $0[0] }) {
        if target.contains("://") || target.hasPrefix("mailto:") { continue }
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let file = String(parts[0])
        let fragment = parts.count > 1 ? String(parts[1]) : ""
        let resolved =
          file.isEmpty
          ? RepoPaths.root.appendingPathComponent(path)
          : URL(fileURLWithPath: file, relativeTo: directory).standardizedFileURL
        let shown = resolved.path.replacing(RepoPaths.root.standardizedFileURL.path + "/", with: "")
        guard file.isEmpty || FileManager.default.fileExists(atPath: resolved.path) else {
          problems.append("\(path):\(number): '\(target)': no such file")
          continue
        }
        guard !fragment.isEmpty, resolved.pathExtension == "md" else { continue }
        let targetText =
          file.isEmpty ? text : (try? String(contentsOf: resolved, encoding: .utf8)) ?? ""
        if try !anchors(of: targetText).contains(fragment) {
          problems.append(
            "\(path):\(number): '\(target)': no heading with that anchor in \(file.isEmpty ? path : shown)"
          )
        }
      }
    }
    return problems
  }

  /// The lines outside fenced code blocks, numbered from 1.
  static func linesOutsideFences(_ text: String) -> [(Int, String)] {
    var lines: [(Int, String)] = []
    var fence: String?
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
    {
      let trimmed = line.drop { $0 == " " }
      if let open = fence {
        if trimmed.hasPrefix(open) { fence = nil }
        continue
      }
      if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
        fence = String(trimmed.prefix { $0 == "`" || $0 == "~" })
        continue
      }
      lines.append((index + 1, String(line)))
    }
    return lines
  }

  /// The lines outside fenced code blocks, numbered from 1, with code spans blanked out.
  static func prose(_ text: String) throws -> [(Int, String)] {
    let span = try NSRegularExpression(pattern: "`+[^`]*`+")
    return linesOutsideFences(text).map { number, line in
      (
        number,
        span.stringByReplacingMatches(
          in: line, range: NSRange(line.startIndex..., in: line), withTemplate: "``")
      )
    }
  }

  /// The anchors GitHub gives a document's headings: the heading's text (a link's text, code
  /// without its backticks) in lower case, letters, digits, `-` and `_` kept, spaces made
  /// `-`, everything else dropped; a repeated anchor gets `-1`, `-2`, … Explicit
  /// `<a id=…>`/`<a name=…>` anchors count too.
  static func anchors(of text: String) throws -> Set<String> {
    let linkText = try NSRegularExpression(pattern: #"!?\[([^\]]*)\]\([^)]*\)"#)
    var found: Set<String> = []
    var counts: [String: Int] = [:]
    for (_, line) in linesOutsideFences(text) {
      for html in try groups(#"<a\s+(?:id|name)="([^"]+)""#, in: line) { found.insert(html[0]) }
      guard let title = try groups(#"^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$"#, in: line).first?[0]
      else { continue }
      let shown = linkText.stringByReplacingMatches(
        in: title, range: NSRange(title.startIndex..., in: title), withTemplate: "$1")
      var slug = ""
      for character in shown.lowercased() {
        if character.isLetter || character.isNumber || character == "-" || character == "_" {
          slug.append(character)
        } else if character == " " {
          slug.append("-")
        }
      }
      let seen = counts[slug, default: 0]
      counts[slug] = seen + 1
      found.insert(seen == 0 ? slug : "\(slug)-\(seen)")
    }
    return found
  }

  /// The groups of each match of `pattern` in `line` (an empty string for a group that did not
  /// take part).
  static func groups(_ pattern: String, in line: String) throws -> [[String]] {
    let expression = try NSRegularExpression(pattern: pattern)
    return expression.matches(in: line, range: NSRange(line.startIndex..., in: line)).map {
      match in
      (1..<match.numberOfRanges).map { index in
        Range(match.range(at: index), in: line).map { String(line[$0]) } ?? ""
      }
    }
  }

  // MARK: 2. The grow commands shown

  @Test func everyGrowCommandShownNamesARealCommandAndRealOptions() throws {
    let table = try GrowCommandTable()
    var problems: [String] = []
    var checked = 0
    for path in try Self.documentPaths() {
      for (number, words) in Self.growCommandLines(in: try Self.read(path)) {
        checked += 1
        if let problem = try table.problem(with: words) {
          problems.append("\(path):\(number): grow \(words.joined(separator: " ")): \(problem)")
        }
      }
    }
    #expect(checked > 20, "found only \(checked) grow command lines: is the parsing broken?")
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
  }

  /// The checker itself: a made-up command, a made-up option, a misspelt action and a
  /// misspelt short option are each caught; real ones around them are not.
  @Test func madeUpCommandsAndOptionsAreFound() throws {
    let text = """
      ```console
      $ grow start math --intention "Chapter 3" &   # fine
      $ grow strat math
      $ grow status --folow
      $ grow config chek
      $ grow logs -f -x
      $ grow help stauts
      $ echo not grow
      ```

      ```sh
      grow completions bash > ~/.local/share/bash-completion/completions/grow   # fine
      grow history delete --from 2026-03-01 --to 2026-03-07 --yes; grow stats --wek
      ```
      """
    let table = try GrowCommandTable()
    var problems: [String] = []
    for (number, words) in Self.growCommandLines(in: text) {
      if let problem = try table.problem(with: words) { problems.append("\(number): \(problem)") }
    }
    let expected = [
      "3: no command 'strat'", "4: grow status has no option '--folow'",
      "5: 'chek' is not one of grow config's actions (check, cards)",
      "6: grow logs has no option '-x'",
      "7: 'stauts' is not one of grow help's actions (daemon, start, ",
      "13: grow stats has no option '--wek'",
    ]
    #expect(problems.count == expected.count, "\(problems)")
    for (problem, start) in zip(problems, expected) {
      #expect(problem.hasPrefix(start), "\(problem)")
    }
  }

  /// Each `grow …` command of the code blocks, as the words after `grow`, with its line:
  /// the `$ grow` lines of ```console blocks and the lines of ```sh blocks that run grow.
  /// A line ending in `\` goes on on the next one; `#` starts a comment; `&`, `;`, `|`, `&&`
  /// and `||` separate commands, and redirections are dropped, as in the shell.
  static func growCommandLines(in text: String) -> [(Int, [String])] {
    var found: [(Int, [String])] = []
    var block: String?
    var pending: (Int, String)?
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
    {
      let trimmed = String(line.drop { $0 == " " })
      if block == nil {
        if trimmed.hasPrefix("```") { block = String(trimmed.dropFirst(3)) }
        continue
      }
      if trimmed.hasPrefix("```") {
        block = nil
        pending = nil
        continue
      }
      var command: String
      if let continued = pending {
        let start = continued.0
        command = continued.1 + " " + trimmed
        pending = nil
        if command.hasSuffix("\\") {
          pending = (start, String(command.dropLast()))
          continue
        }
        found += commands(in: command).map { (start, $0) }
        continue
      }
      switch block {
      case "console":
        guard trimmed.hasPrefix("$ ") else { continue }
        command = String(trimmed.dropFirst(2))
      case "sh", "bash", "shell":
        command = trimmed
      default:
        continue
      }
      if command.hasSuffix("\\") {
        pending = (index + 1, String(command.dropLast()))
        continue
      }
      found += commands(in: command).map { (index + 1, $0) }
    }
    return found
  }

  /// The grow commands of one shell line, each as the words after `grow`.
  static func commands(in line: String) -> [[String]] {
    var segments: [[String]] = [[]]
    var word = ""
    var quote: Character?
    var inWord = false
    var skipNext = false
    func endWord() {
      if inWord {
        if skipNext { skipNext = false } else { segments[segments.count - 1].append(word) }
      }
      word = ""
      inWord = false
    }
    var characters = Array(line)[...]
    while let character = characters.popFirst() {
      if let open = quote {
        if character == open { quote = nil } else { word.append(character) }
        continue
      }
      switch character {
      case "'", "\"":
        quote = character
        inWord = true
      case " ", "\t":
        endWord()
      case "#" where !inWord:
        endWord()
        characters = []
      case "&", ";", "|":
        endWord()
        while let next = characters.first, "&|".contains(next) { characters.removeFirst() }
        segments.append([])
      case ">", "<":
        // A redirection: `2>` or `>` drops the word that follows (`>file` included).
        if word.allSatisfy(\.isNumber) {
          word = ""
          inWord = false
        }
        endWord()
        while let next = characters.first, ">&".contains(next) { characters.removeFirst() }
        skipNext = true
        inWord = false
      default:
        word.append(character)
        inWord = true
      }
    }
    endWord()
    return segments.compactMap { words in
      words.first == "grow" ? Array(words.dropFirst()) : nil
    }
  }

  // MARK: 3. The front door

  @Test func theREADMEIsShortAndLeadsToTheManual() throws {
    let readme = try Self.read("README.md")
    let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
    #expect(lines < 260, "README.md has \(lines) lines; the manual belongs in docs/")
    let targets = Set(
      try Self.prose(readme).flatMap { _, line in
        line.components(separatedBy: "](").dropFirst().map {
          String($0.prefix { $0 != ")" && $0 != "#" })
        }
      })
    for page in ["docs/using.md", "docs/configuration.md"] {
      #expect(targets.contains(page), "README.md does not link \(page)")
    }
  }
}

/// grow's commands, their options and their actions, from `grow completions fish`: the
/// completions are generated from the command table `grow help` and the man page are, so this
/// is the table as the built binary has it, not a copy of the help text.
struct GrowCommandTable {
  var options: [String: Set<String>] = [:]
  var actions: [String: [String]] = [:]

  init() throws {
    let fish = try Command.run(Binaries.grow, ["completions", "fish"])
    try #require(fish.status == 0, "\(fish.stderr)")
    for line in fish.stdout.split(separator: "\n").map(String.init) {
      let subcommand = #"-n '__fish_seen_subcommand_from ([a-z-]+)'"#
      if let named = try DocsTests.groups(#"-n __fish_use_subcommand -a (\S+)"#, in: line).first {
        options[named[0], default: []].insert("--help")
      } else if let option = try DocsTests.groups(subcommand + #" -l (\S+)"#, in: line).first {
        options[option[0], default: []].insert("--" + option[1])
      } else if let words = try DocsTests.groups(subcommand + #" -a '([^(][^']*)'"#, in: line).first
      {
        actions[words[0], default: []] += words[1].split(separator: " ").map(String.init)
      }
    }
    try #require(options.count > 10, "no commands read from grow completions fish:\n\(fish.stdout)")
  }

  /// What is wrong with `grow WORDS`, or nil when grow knows the command, its options, and
  /// the action it names first.
  func problem(with words: [String]) throws -> String? {
    guard let name = words.first else { return nil }
    if ["--version", "-V", "--help", "-h"].contains(name) { return nil }
    guard let known = options[name] else { return "no command '\(name)'" }
    let rest = words.dropFirst()
    for word in rest where word.hasPrefix("-") && word.count > 1 {
      if word.hasPrefix("--") {
        let option = String(word.prefix { $0 != "=" })
        if !known.contains(option) { return "grow \(name) has no option '\(option)'" }
      } else if word.dropFirst().allSatisfy(\.isLetter) {
        // Short options are not in the completions: they are in the command's help, as
        // `-f, --follow`.
        let help = try Command.run(Binaries.grow, ["help", name])
        if !help.stdout.contains(" \(word), ") && !help.stdout.contains(" \(word) ") {
          return "grow \(name) has no option '\(word)'"
        }
      }
    }
    if let choices = actions[name], let first = rest.first, !first.hasPrefix("-"),
      !choices.contains(first)
    {
      return "'\(first)' is not one of grow \(name)'s actions (\(choices.joined(separator: ", ")))"
    }
    return nil
  }
}
