/// Why a timer command was refused. The messages are shown to people as they are.
public enum TimerError: Error, Equatable, CustomStringConvertible {
  case unknownCard(String, known: [String])
  case invalidState(String)
  case invalidArgument(String)

  public var description: String {
    switch self {
    case .unknownCard(let name, let known):
      var text = "no card named '\(shortened(name))'"
      if let guess = closestMatch(to: name, in: known) { text += "; did you mean '\(guess)'?" }
      return text + " (cards: \(known.joined(separator: ", ")))"
    case .invalidState(let message), .invalidArgument(let message):
      return message
    }
  }
}

/// `text` cut to `limit` Unicode scalars and an ellipsis: a message can show what it refused
/// without echoing back megabytes of it. Scalars, not characters: one character can carry any
/// number of combining marks.
public func shortened(_ text: String, to limit: Int = 64) -> String {
  let head = text.unicodeScalars.prefix(limit + 1)
  guard head.count > limit else { return text }
  return String(String.UnicodeScalarView(head.prefix(limit))) + "…"
}

/// The candidate nearest to `word` by edit distance, if it is close enough to be a typo.
public func closestMatch(to word: String, in candidates: [String]) -> String? {
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
