import FoundationEssentials

/// Why a timer command was refused: what stood in the way, as data. The words (and the advice
/// to use `grow stop` or `grow resume`) are made where they are shown, through the app's
/// message layer (GrowMessages), so that a person can read them in their language.
/// Not frozen: typed throws of a frozen enum through a resilient protocol requirement crashed
/// (Tests/GrowFuzzTests, ExternalPlugin.respond); switch over it with `@unknown default`.
public enum TimerError: Error, Equatable {
  /// No card has this name; `known` are the cards there are.
  case unknownCard(String, known: [String])
  /// `start` while a phase runs: its kind, its card and the seconds it has left.
  case alreadyRunning(PhaseKind, card: String, remaining: TimeInterval)
  /// `pause` while paused.
  case alreadyPaused
  /// `resume` while this kind of phase runs, unpaused.
  case notPaused(PhaseKind)
  /// `command` (pause, skip, stop, extend, resume) needs a phase; none runs. `waiting`: the
  /// phase waiting to be started, if one is.
  case nothingRunning(command: String, waiting: PhaseKind?)
  /// A session's length for `option` (focus, short-break, long-break) is outside 1 s to 24 h.
  case lengthOutOfRange(option: String, seconds: TimeInterval)
  /// `extend` by less than 1 s, or to a phase over 24 h.
  case extensionOutOfRange(seconds: TimeInterval)
  /// An intention over `limit` characters.
  case intentionTooLong(limit: Int)
  /// An intention holding a character that breaks the line (a control character, U+2028,
  /// U+2029).
  case intentionNotOneLine(Unicode.Scalar)
  /// `shorten` by less than 1 s, or of a phase with a minute or less left (`remaining`).
  case cannotShorten(seconds: TimeInterval, remaining: TimeInterval)
}

/// `text` as an error message may echo it: cut as `shortened` cuts it, with control characters
/// written as escapes (`escapingControls`). For anything a caller sent (a card name, a D-Bus
/// option, a command-line word).
@_spi(GrowHost) public func shown(_ text: String, limit: Int = 64) -> String {
  escapingControls(shortened(text, to: limit))
}

/// `text` with every character that could drive a terminal or forge a line written as an
/// escape instead: control characters (ESC is `\u{1B}`; `\n`, `\r`, `\t`), U+2028 and U+2029,
/// and the bidirectional overrides that reorder what a reader sees. `keepingNewlines` leaves
/// `\n` alone, for a message of several lines of our own.
@_spi(GrowHost) public func escapingControls(_ text: String, keepingNewlines: Bool = false)
  -> String
{
  func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .lineSeparator, .paragraphSeparator: return true
    default:
      return (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }
  }
  guard text.unicodeScalars.contains(where: { isUnsafe($0) && !(keepingNewlines && $0 == "\n") })
  else { return text }
  var escaped = String.UnicodeScalarView()
  for scalar in text.unicodeScalars {
    guard isUnsafe(scalar), !(keepingNewlines && scalar == "\n") else {
      escaped.append(scalar)
      continue
    }
    let written: String =
      switch scalar {
      case "\n": "\\n"
      case "\r": "\\r"
      case "\t": "\\t"
      default: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      }
    escaped.append(contentsOf: written.unicodeScalars)
  }
  return String(escaped)
}

/// `text` cut to `limit` Unicode scalars and an ellipsis: a message can show what it refused
/// without echoing back megabytes of it. Scalars, not characters: one character can carry any
/// number of combining marks.
func shortened(_ text: String, to limit: Int = 64) -> String {
  let head = text.unicodeScalars.prefix(limit + 1)
  guard head.count > limit else { return text }
  return String(String.UnicodeScalarView(head.prefix(limit))) + "…"
}

/// The candidate nearest to `word` by edit distance, if it is close enough to be a typo.
@_spi(GrowHost) public func closestMatch(to word: String, in candidates: [String]) -> String? {
  // The distance is at least the difference in length, so a word over twice as long as every
  // candidate is never close. Counted on a prefix: a name of megabytes (over D-Bus, say) costs
  // nothing, where the distance table would take gigabytes.
  let longest = candidates.map(\.count).max() ?? 0
  guard word.prefix(2 * longest + 3).count <= 2 * longest + 2 else { return nil }
  let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
  guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
  return best.1 <= max(2, word.count / 3) && best.1 < word.count ? best.0 : nil
}

/// Levenshtein distance, with transpositions counted as one edit ("fcous" is one from "focus").
func editDistance(_ a: String, _ b: String) -> Int {
  let a = Array(a)
  let b = Array(b)
  if a.isEmpty { return b.count }
  if b.isEmpty { return a.count }
  var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
  for i in 0...a.count { table[i][0] = i }
  for j in 0...b.count { table[0][j] = j }
  for i in 1...a.count {
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
      if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
        table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
      }
    }
  }
  return table[a.count][b.count]
}
