import Foundation
import GrowConfig

/// What one evaluation of the pathological title pattern `(a+)+$` costs, on
/// a title of N `a`s and a `!`. Before: Swift's backtracking `Regex` (what Grow used), whose
/// time doubles with each `a`, so it is measured on shorter titles and the 24 of the issue is
/// extrapolated (`--swift-regex-24` measures it, in minutes). After: `TitleRegex`, on the
/// issue's title and on the longest title Grow matches, and the heaviest pattern it accepts.
struct PatternBenchmark {
  struct Sample: Encodable {
    /// N → milliseconds per evaluation with Swift's `Regex`.
    var swiftRegexMilliseconds: [String: Double] = [:]
    /// Each further `a` multiplies the time by this (from the two longest measured).
    var swiftRegexGrowthPerCharacter: Double?
    var swiftRegexExtrapolated24Milliseconds: Double?
    var titleRegexIssueTitleMicroseconds: Double = 0
    var titleRegexLongestTitleMicroseconds: Double = 0
    var titleRegexHeaviestPatternMilliseconds: Double = 0
    var heaviestPatternOutcome = ""
  }

  static let pattern = "(a+)+$"
  let quick: Bool
  let measureTwentyFour: Bool

  func run() throws -> Sample {
    var sample = Sample()
    let swift = try Regex(Self.pattern).ignoresCase()
    let lengths = measureTwentyFour ? [24] : (quick ? [10, 12, 14] : [12, 14, 16, 18])
    var last: [(Int, Double)] = []
    for length in lengths {
      let title = String(repeating: "a", count: length) + "!"
      let seconds = Self.median(runs: length >= 18 ? 1 : 3) {
        _ = try? swift.firstMatch(in: title)
      }
      sample.swiftRegexMilliseconds[String(length)] = seconds * 1000
      last.append((length, seconds))
    }
    if last.count >= 2 {
      let (shorter, before) = last[last.count - 2]
      let (longer, after) = last[last.count - 1]
      let growth = pow(after / before, 1 / Double(longer - shorter))
      sample.swiftRegexGrowthPerCharacter = growth
      sample.swiftRegexExtrapolated24Milliseconds = after * pow(growth, Double(24 - longer)) * 1000
    }

    let regex = try TitleRegex(Self.pattern)
    let issueTitle = MatchableTitle(String(repeating: "a", count: 24) + "!")
    let longest = MatchableTitle(String(repeating: "a", count: TitleRegex.titleLimit) + "!")
    let repeats = quick ? 2_000 : 20_000
    sample.titleRegexIssueTitleMicroseconds =
      Self.median(runs: 5) {
        for _ in 0..<repeats { _ = regex.firstMatch(in: issueTitle) }
      } / Double(repeats) * 1_000_000
    sample.titleRegexLongestTitleMicroseconds =
      Self.median(runs: 5) {
        for _ in 0..<(repeats / 10) { _ = regex.firstMatch(in: longest) }
      } / Double(repeats / 10) * 1_000_000
    // Many states alive at once on the longest title: the worst the caps allow, about.
    let heavy = try TitleRegex("([a-z]|[0-9]){1,600}!")
    var outcome = MatchOutcome.noMatch
    sample.titleRegexHeaviestPatternMilliseconds =
      Self.median(runs: 5) {
        outcome = heavy.firstMatch(in: MatchableTitle(String(repeating: "a", count: 512) + "?"))
      } * 1000
    sample.heaviestPatternOutcome = "\(outcome)"
    return sample
  }

  /// Median seconds of `body` over `runs`.
  static func median(runs: Int, _ body: () -> Void) -> Double {
    var times: [Double] = []
    for _ in 0..<runs {
      let start = DispatchTime.now().uptimeNanoseconds
      body()
      times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return times.sorted()[times.count / 2]
  }
}
