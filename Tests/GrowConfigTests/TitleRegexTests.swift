import Foundation
import GrowConfig
import GrowCore
import Testing

/// The title matcher: linear in the title whatever the pattern, the same answers as Swift's
/// `Regex` (which Grow used before) on ordinary patterns, and a budget as a second line.
@Suite struct TitleRegexTests {
  static let pathologicalTitle = String(repeating: "a", count: 24) + "!"

  /// `(a+)+$` against 24 `a`s and a `!` held the loop for minutes with Swift's
  /// backtracking `Regex`. Through the API that existed then, it must answer correctly: no
  /// match (the title does not end in `a`s). How fast is counted in work, not seconds (a
  /// loaded machine says nothing about the algorithm): decided within 5,000 steps of the
  /// matcher, where backtracking takes 2^24. The seconds are in `make bench`'s patterns section.
  @Test func thePathologicalPatternAnswersPromptlyAndCorrectly() throws {
    let pattern = try WindowPattern("xterm:/(a+)+$/")
    #expect(
      !pattern.matches(instance: "xterm", windowClass: "XTerm", title: Self.pathologicalTitle))
    #expect(
      pattern.matches(
        instance: "xterm", windowClass: "XTerm", title: String(repeating: "A", count: 24)))
    let fewSteps = MatchBudget(steps: 5_000, cpuTime: .seconds(3600))
    #expect(
      try TitleRegex("(a+)+$").firstMatch(
        in: MatchableTitle(Self.pathologicalTitle), budget: fewSteps) == .noMatch)
  }

  /// Within the standard budget, not just fast: `.noMatch` means it was decided, not cut off.
  @Test func hostilePatternsAreDecidedWithinTheBudgetOnTheLongestTitle() throws {
    let title = MatchableTitle(String(repeating: "a", count: 5000) + "!")
    for source in ["(a+)+$", "(a|a)*$", "(a|aa)+$", "(a*)*b", "(.*a){12}$", "(\\w+\\s?)*$"] {
      let regex = try TitleRegex(source)
      #expect(regex.firstMatch(in: title) == .noMatch, "\(source)")
    }
  }

  /// The same answer as Swift's `Regex` with `ignoresCase()`, on patterns that do not
  /// backtrack badly, so moving off it changed nothing a config relied on.
  @Test func answersLikeSwiftRegexOnOrdinaryPatterns() throws {
    let patterns = [
      "youtube|reddit", "^a.c$", "[a-c]+x", "\\d{2,3}", "colou?r", "\\bcat\\b", "(ab|cd){2}",
      "[^a]b", "x*", "a{2,}", "(?:foo)+bar", "\\w+\\s\\w+", "[A-Z]{3}", "^$", "a{,2}b",
      "(?<site>git(hub|lab))", "\\.com\\b", "[-.]", "\\(1\\)", "\\Bb", "é", "[à-ÿ]+", "\\x41",
      "a|", "[\\d\\s]+z", "\\W", "^(?:\\S+ - )?Mozilla Firefox$", "v\\d+\\.\\d+",
      "(a|b)*c{1,2}?$", "a+?b", "[^\\W\\d]",
    ]
    let titles = [
      "", "YouTube - Firefox", "abc", "aXc", "aabbx", "123", "Color and colour", "a cat sat",
      "concatenate", "abcd", "cdab", "xb", "ab", "foofoobar", "hello world", "ABC def", "b",
      "GitLab", "example.com/", "-", "(1)", "abb", "Café", "àéÿ", "A", "]", "1 2 z", "!",
      "Inbox - Mozilla Firefox", "Mozilla Firefox", "v1.2", "ababcc", "aaab", "_1",
    ]
    for source in patterns {
      let ours = try TitleRegex(source)
      let swift = try Regex(source).ignoresCase()
      for title in titles {
        let expected = (try swift.firstMatch(in: title)) != nil
        let got = ours.firstMatch(in: MatchableTitle(title))
        #expect(got == (expected ? .match : .noMatch), "/\(source)/ on '\(title)'")
      }
    }
  }

  @Test func aBracketFirstInAClassIsALiteral() throws {
    #expect(try TitleRegex("[]a]").firstMatch(in: MatchableTitle("x]")) == .match)
    #expect(try TitleRegex("[^]a]").firstMatch(in: MatchableTitle("]a")) == .noMatch)
  }

  @Test func onlyTheStartOfALongTitleIsMatchedAndItsEndIsNotSeen() throws {
    let long = "Inbox " + String(repeating: "x", count: 100_000) + " end"
    let title = MatchableTitle(long)
    #expect(title.isCut)
    #expect(title.count == TitleRegex.titleLimit)
    #expect(try TitleRegex("^inbox").firstMatch(in: title) == .match)
    #expect(try TitleRegex("end").firstMatch(in: title) == .noMatch)
    #expect(try TitleRegex("x$").firstMatch(in: title) == .noMatch, "$ at the cut")
    let short = MatchableTitle(String(repeating: "x", count: TitleRegex.titleLimit))
    #expect(!short.isCut)
    #expect(try TitleRegex("x$").firstMatch(in: short) == .match)
  }

  @Test func whatCannotBeMatchedInLinearTimeIsRefusedAndSaysWhy() {
    func reason(_ source: String) -> String {
      do {
        _ = try TitleRegex(source)
        return "accepted"
      } catch {
        return error.description
      }
    }
    #expect(reason("(a)\\1").hasPrefix("'\\1' is a backreference; Grow matches titles in time"))
    #expect(reason("(?<w>a)\\k<w>").contains("backreference"))
    #expect(reason("foo(?!bar)").hasPrefix("'(?!…)' is a lookaround"))
    #expect(reason("(a{1000}){1000}").hasPrefix("it is too large: its repetitions make 1000000"))
    #expect(reason("a{5,2}") == "'{5,2}' has its larger count first; write {2,5}")
    #expect(reason("a{2000}").contains("counts above 1000"))
    #expect(reason("(abc").hasPrefix("a '(' is never closed"))
    #expect(reason("abc)").hasPrefix("a ')' has no '('"))
    #expect(reason("[abc").hasPrefix("a '[' is never closed"))
    #expect(reason("*a").hasPrefix("'*' has nothing before it to repeat"))
    #expect(reason("a**").hasPrefix("'a**' repeats a repetition"))
    #expect(reason("a*+b").hasPrefix("'a*+' is a possessive quantifier"))
    #expect(reason("[z-a]").hasPrefix("the class range 'z-a' runs backwards"))
    #expect(reason("\\q").hasPrefix("'\\q' is not an escape Grow knows"))
    #expect(reason("\\p{L}").hasPrefix("'\\p{L}' (a Unicode property) is not supported"))
    #expect(reason("(?i)abc").hasPrefix("'(?i)' is not a group Grow knows"))
    #expect(reason(String(repeating: "(", count: 200)).contains("nests groups more than 100"))
    #expect(reason("a\\").hasPrefix("it ends in a lone '\\'"))
  }

  @Test func anEvaluationOverItsBudgetIsStoppedUndecided() throws {
    let regex = try TitleRegex("(a|b)*c")
    let title = MatchableTitle(String(repeating: "ab", count: 100))
    #expect(
      regex.firstMatch(in: title, budget: MatchBudget(steps: 50, cpuTime: .seconds(1)))
        == .overBudget(.steps(50)))
    #expect(regex.firstMatch(in: title) == .noMatch)
  }

  /// The second line of defence: a pattern that blows its budget is switched off once, with
  /// a message naming the file, the line and the pattern, and is not evaluated again.
  @Test func aPatternOverBudgetIsSwitchedOffWithFileLineAndPattern() throws {
    var card = FocusCard(name: "work", distractions: ["xterm:/(a|b)*c/", "Game"])
    card.distractionsLine = ConfigLine(path: "/home/me/.config/grow/config.ini", line: 7)
    var rules = DistractionRules(card: card)
    let tight = MatchBudget(steps: 50, cpuTime: .seconds(1))
    let title = String(repeating: "ab", count: 100) + "c"

    let first = rules.judge(instance: "xterm", windowClass: "XTerm", title: title, budget: tight)
    #expect(first.distraction == nil)
    #expect(
      first.switchedOff.map(\.description) == [
        "/home/me/.config/grow/config.ini:7: distractions pattern xterm:/(a|b)*c/ is switched "
          + "off: it needed more than 50 steps for one title (the limit keeps Grow responsive); "
          + "simplify it and reload the config (grow config check points at what is slow)"
      ])
    #expect(
      rules.switchedOff == [
        "/home/me/.config/grow/config.ini:7: distractions pattern "
          + "xterm:/(a|b)*c/ is off"
      ])

    let again = rules.judge(instance: "xterm", windowClass: "XTerm", title: "c")
    #expect(again.distraction == nil, "a switched-off pattern matches nothing")
    #expect(again.switchedOff.isEmpty, "said once")
    #expect(
      rules.judge(instance: "Game", windowClass: "Game", title: "").distraction?.text == "Game")
    var fresh = DistractionRules(card: card)
    #expect(
      fresh.judge(instance: "xterm", windowClass: "XTerm", title: "c").distraction?.text
        == "xterm:/(a|b)*c/", "rules compiled anew (the config changed) have it on again")
  }
}

/// Random patterns over regex metacharacters, against Swift's `Regex` on short titles (where
/// its backtracking is cheap): wherever both accept a pattern, they agree on every title; and
/// no pattern, accepted or not, crashes the parser or the matcher. `\b` and `\B` are left out: Swift's
/// is a Unicode word-segmentation boundary (it holds in an empty title, and between two
/// spaces), Grow's the classic one between \w and not \w, what `\bcat\b` means everywhere.
@Test func randomPatternsAnswerLikeSwiftRegex() throws {
  var generator = SplitMix(seed: 14)
  let pieces = [
    "a", "b", "A", "(", ")", "|", "*", "+", "?", "{2}", "{1,2}", "{,2}", "{2,}", "[ab]", "[^a]",
    "[a-c]", ".", "^", "$", "\\d", "\\w", "\\s", "1", " ", "(?:", "\\.", "-", "\\D", "\\W",
    "\\S", "{0}", "*?", "??", "[.]", "[\\d-]", "[^\\s]", "(a|b)",
  ]
  let alphabet = Array("aAb1 .-")
  var compared = 0
  for _ in 0..<3000 {
    let source = (0..<Int.random(in: 1...7, using: &generator)).map { _ in
      pieces.randomElement(using: &generator) ?? ""
    }.joined()
    guard let ours = try? TitleRegex(source) else { continue }
    guard let swift = try? Regex(source).ignoresCase() else { continue }
    for _ in 0..<8 {
      let title = String(
        (0..<Int.random(in: 0...6, using: &generator)).map { _ in
          alphabet.randomElement(using: &generator) ?? "a"
        })
      let expected = (try? swift.firstMatch(in: title)) != nil
      #expect(
        ours.firstMatch(in: MatchableTitle(title)) == (expected ? .match : .noMatch),
        "/\(source)/ on '\(title)'")
      compared += 1
    }
  }
  #expect(compared > 5000, "too few patterns both accept: \(compared / 8)")
}

/// A fixed-seed generator, so a failure names a pattern that fails again.
struct SplitMix: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
