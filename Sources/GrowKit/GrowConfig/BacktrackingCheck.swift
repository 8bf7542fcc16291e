/// A part of a title regex that a backtracking engine would try in exponentially many ways,
/// for `grow config check` to warn about. Grow's own matcher (`TitleRegex`) is linear in the
/// title, so this is advice, not an error: such a part is almost always a mistake, and the
/// same pattern stalls most other regex engines (and stalled Grow before its own matcher).
public struct BacktrackingWarning: Sendable, Equatable {
  /// The repetition, as written: `(a+)+`.
  public let part: String
  public let reason: Reason
  /// A string that repeated can be matched in many ways: `a`.
  public let pump: String
  /// The regex with the part rewritten (`a+$` for `(a+)+$`), when a simpler form is known.
  public let rewrite: String?

  public enum Reason: Sendable, Equatable {
    /// A repetition inside a repetition: `(a+)+`, `(\w*\s?)*`.
    case nestedRepetition(inner: String)
    /// Alternatives that match the same text, repeated: `(a|a)*`, `(a|aa)+`.
    case overlappingAlternatives
    /// Some other ambiguity in the repeated part: `(a?a?)+`.
    case ambiguous
  }

  /// One sentence: what is ambiguous, and why that is exponential.
  public var explanation: String {
    let run = "a title with many '\(pump)' in a row"
    switch reason {
    case .nestedRepetition(let inner):
      return "\(part) repeats \(inner), which repeats by itself, so \(run) can be split "
        + "between the two in exponentially many ways"
    case .overlappingAlternatives:
      return "the alternatives in \(part) can match the same text, so \(run) can be split "
        + "between them in exponentially many ways"
    case .ambiguous:
      return "\(part) can match \(run) in exponentially many ways"
    }
  }
}

/// Finds exponential ambiguity: a repetition whose body, repeated, can read the same text
/// along two different paths of the automaton that both come back to where they started.
///
/// For each unbounded repetition the check builds its position (Glushkov) automaton, where
/// parallel ε-routes count as separate edges (that is what makes `(a+)+` ambiguous), and looks
/// in the automaton's product with itself for a strongly connected component that holds a
/// state pair (q, q) and a step where the two paths differ: then there are two different
/// q→q paths over one word w, and wⁿ has 2ⁿ paths (Weber & Seidl's criterion for exponential
/// ambiguity, as used by ReDoS checkers such as Weideman's). Characters are compared in
/// classes: ASCII one by one, case folded, and three kinds of non-ASCII (word, space, other).
enum BacktrackingCheck {
  /// Repetitions with more positions are not checked (the product grows with the square).
  static let positionLimit = 60

  static func warnings(for regex: TitleRegex) -> [BacktrackingWarning] {
    var found: [BacktrackingWarning] = []
    var reported: [Range<Int>] = []
    visit(regex.syntax) { node in
      // Innermost first (post-order): an outer repetition around a reported part says no more.
      guard case .repetition(let body, let min, let max) = node.kind, isUnbounded(min, max),
        !reported.contains(where: { node.range.contains($0.lowerBound) }),
        let pump = exponentialPump(in: node)
      else { return }
      reported.append(node.range)
      found.append(describe(node, body: body, pump: pump, in: regex))
    }
    return found
  }

  /// `{m,n}` with n ≥ 2 is checked as if unbounded: `(a|aa){1,30}` is not exponential in the
  /// title, but it is 2³⁰ ways for a backtracker, and the same mistake.
  private static func isUnbounded(_ min: Int, _ max: Int?) -> Bool {
    (max ?? Int.max) >= 2
  }

  private static func visit(_ node: RegexNode, _ body: (RegexNode) -> Void) {
    switch node.kind {
    case .group(let inner), .repetition(let inner, _, _): visit(inner, body)
    case .concatenation(let parts), .alternation(let parts):
      for part in parts { visit(part, body) }
    case .empty, .scalar, .set, .assertion: break
    }
    body(node)
  }

  // MARK: Explaining

  private static func describe(
    _ node: RegexNode, body: RegexNode, pump: String, in regex: TitleRegex
  ) -> BacktrackingWarning {
    let part = text(node.range, in: regex)
    let core = ungrouped(body)
    var reason = BacktrackingWarning.Reason.ambiguous
    var replacement: String?
    if case .repetition(let innerBody, let innerMin, let innerMax) = core.kind,
      isUnbounded(innerMin, innerMax)
    {
      // (x+)+ is x+, and (x*)+, (x+)*, (x*)* are x*.
      reason = .nestedRepetition(inner: text(core.range, in: regex))
      if case .repetition(_, let outerMin, nil) = node.kind, innerMax == nil {
        let star = outerMin == 0 || innerMin == 0
        replacement = atomText(innerBody, in: regex) + (star ? "*" : "+")
      }
    } else if let inner = firstNested(in: core) {
      reason = .nestedRepetition(inner: text(inner.range, in: regex))
    } else if case .alternation(let choices) = core.kind {
      reason = .overlappingAlternatives
      replacement = mergedAlternatives(choices, repetition: node, in: regex)
    }
    let rewrite = replacement.map { replacementText in
      let scalars = RegexParser(regex.source).scalars
      return String(String.UnicodeScalarView(scalars[..<node.range.lowerBound]))
        + replacementText + String(String.UnicodeScalarView(scalars[node.range.upperBound...]))
    }
    return BacktrackingWarning(part: part, reason: reason, pump: pump, rewrite: rewrite)
  }

  /// (a|a)* and (a|aa)+ are a* and a+: every alternative is a run of one character, and one
  /// of them is that character alone. [ab]* for (a|b)* is not offered: it is not ambiguous.
  private static func mergedAlternatives(
    _ choices: [RegexNode], repetition: RegexNode, in regex: TitleRegex
  ) -> String? {
    guard case .repetition(_, let min, let max) = repetition.kind, max == nil else { return nil }
    var atom: RegexNode.Kind?
    var single = false
    for choice in choices {
      let run = runOfOne(ungrouped(choice))
      guard let run, atom == nil || atom == run.atom.kind else { return nil }
      atom = run.atom.kind
      if run.length == 1 { single = true }
    }
    guard single, let first = choices.first, let run = runOfOne(ungrouped(first)) else {
      return nil
    }
    return atomText(run.atom, in: regex) + (min == 0 ? "*" : "+")
  }

  /// `a`, `aa`, `a{3}`: the one atom and how many times; nil for anything else.
  private static func runOfOne(_ node: RegexNode) -> (atom: RegexNode, length: Int)? {
    switch node.kind {
    case .scalar, .set: return (node, 1)
    case .repetition(let body, let min, let max) where min == max:
      return runOfOne(ungrouped(body)).map { ($0.atom, $0.length * min) }
    case .concatenation(let parts):
      let runs = parts.map { runOfOne(ungrouped($0)) }
      guard let first = runs.first ?? nil,
        runs.allSatisfy({ $0?.atom.kind == first.atom.kind })
      else { return nil }
      return (first.atom, runs.reduce(0) { $0 + ($1?.length ?? 0) })
    default: return nil
    }
  }

  private static func firstNested(in node: RegexNode) -> RegexNode? {
    var nested: RegexNode?
    visit(node) { inner in
      if nested == nil, case .repetition(_, let min, let max) = inner.kind, isUnbounded(min, max) {
        nested = inner
      }
    }
    return nested
  }

  private static func ungrouped(_ node: RegexNode) -> RegexNode {
    if case .group(let inner) = node.kind { return ungrouped(inner) }
    return node
  }

  /// The node as written, in a group if a quantifier after it would otherwise bind tighter.
  private static func atomText(_ node: RegexNode, in regex: TitleRegex) -> String {
    let written = text(node.range, in: regex)
    switch node.kind {
    case .scalar, .set, .group: return written
    default: return "(?:" + written + ")"
    }
  }

  private static func text(_ range: Range<Int>, in regex: TitleRegex) -> String {
    let scalars = RegexParser(regex.source).scalars
    return String(String.UnicodeScalarView(scalars[range.clamped(to: 0..<scalars.count)]))
  }

  // MARK: The automaton

  /// The Glushkov automaton of one repetition: its positions (the characters it reads) and
  /// how many ε-routes lead from one to the next.
  private struct Automaton {
    var symbols: [SymbolSet] = []
    /// follow[p][q]: routes from position p to q (1 or 2; 2 means "more than one").
    var follow: [[Int: Int]] = []

    struct Summary {
      var nullable: Bool
      var first: [Int]
      var last: [Int]
    }

    mutating func connect(_ from: [Int], to: [Int]) {
      for p in from {
        for q in to { follow[p][q] = Swift.min((follow[p][q] ?? 0) + 1, 2) }
      }
    }

    /// Builds positions for `node`; nil when there are more than the limit.
    mutating func build(_ node: RegexNode) -> Summary? {
      switch node.kind {
      case .empty, .assertion:
        return Summary(nullable: true, first: [], last: [])
      case .scalar, .set:
        guard symbols.count < BacktrackingCheck.positionLimit else { return nil }
        symbols.append(SymbolSet(node.kind))
        follow.append([:])
        let position = symbols.count - 1
        return Summary(nullable: false, first: [position], last: [position])
      case .group(let inner):
        return build(inner)
      case .concatenation(let parts):
        var result = Summary(nullable: true, first: [], last: [])
        for part in parts {
          guard let next = build(part) else { return nil }
          connect(result.last, to: next.first)
          result = Summary(
            nullable: result.nullable && next.nullable,
            first: result.nullable ? result.first + next.first : result.first,
            last: next.nullable ? result.last + next.last : next.last)
        }
        return result
      case .alternation(let choices):
        var result = Summary(nullable: false, first: [], last: [])
        for choice in choices {
          guard let next = build(choice) else { return nil }
          result.nullable = result.nullable || next.nullable
          result.first += next.first
          result.last += next.last
        }
        return result
      case .repetition(let body, let min, let max):
        guard var summary = build(body) else { return nil }
        if BacktrackingCheck.isUnbounded(min, max) { connect(summary.last, to: summary.first) }
        if min == 0 { summary.nullable = true }
        return summary
      }
    }
  }

  /// A string whose repetition the repetition `node` reads in exponentially many ways, or nil
  /// if there is none (or the repetition is too large to check).
  private static func exponentialPump(in node: RegexNode) -> String? {
    var automaton = Automaton()
    guard automaton.build(node) != nil else { return nil }
    let count = automaton.symbols.count
    guard count > 0 else { return nil }
    func vertex(_ p: Int, _ q: Int) -> Int { p * count + q }

    // The product's edges, with the symbols both paths can read there.
    var edges: [[(to: Int, diverges: Bool)]] = Array(repeating: [], count: count * count)
    for p in 0..<count {
      for q in 0..<count {
        for (p2, routesP) in automaton.follow[p] {
          for (q2, _) in automaton.follow[q]
          where automaton.symbols[p2].intersects(automaton.symbols[q2]) {
            let diverges = p != q || p2 != q2 || routesP > 1
            edges[vertex(p, q)].append((vertex(p2, q2), diverges))
          }
        }
      }
    }
    let components = StronglyConnected.components(of: edges.map { $0.map(\.to) })
    for p in 0..<count {
      let diagonal = vertex(p, p)
      let component = components[diagonal]
      // A diverging step inside the component of (p, p): two p→p paths over one word.
      for from in 0..<edges.count where components[from] == component {
        for edge in edges[from] where edge.diverges && components[edge.to] == component {
          return pumpWord(
            from: diagonal, through: (from, edge.to), edges: edges, component: components,
            symbols: automaton.symbols, count: count)
        }
      }
    }
    return nil
  }

  /// The word read going (p,p) → `through.0` → `through.1` → (p,p) inside the component.
  private static func pumpWord(
    from start: Int, through step: (Int, Int), edges: [[(to: Int, diverges: Bool)]],
    component: [Int], symbols: [SymbolSet], count: Int
  ) -> String {
    /// The shortest way from `from` to another vertex `to` in the component: the vertices
    /// after `from`, up to and including `to`.
    func path(_ from: Int, _ to: Int) -> [Int] {
      var previous = [from: from]
      var queue = [from]
      var index = 0
      while index < queue.count, previous[to] == nil {
        let vertex = queue[index]
        index += 1
        for edge in edges[vertex]
        where component[edge.to] == component[from] && previous[edge.to] == nil {
          previous[edge.to] = vertex
          queue.append(edge.to)
        }
      }
      var result: [Int] = []
      var vertex = to
      while vertex != from, let before = previous[vertex] {
        result.append(vertex)
        vertex = before
      }
      return result.reversed()
    }
    let route =
      (start == step.0 ? [] : path(start, step.0)) + [step.1]
      + (step.1 == start ? [] : path(step.1, start))
    let word = route.map { vertex in
      symbols[vertex / count].intersection(symbols[vertex % count]).example
    }
    // "00" read twice is still "0" many times: show the shortest unit.
    let period =
      (1...word.count).first { length in
        word.count % length == 0
          && word.indices.allSatisfy { word[$0] == word[$0 % length] }
      } ?? word.count
    return String(word.prefix(Swift.min(period, 12)))
  }
}

/// Tarjan's algorithm, without recursion (a product of 60 positions has 3600 vertices).
enum StronglyConnected {
  /// The component number of each vertex.
  static func components(of successors: [[Int]]) -> [Int] {
    let count = successors.count
    var index = Array(repeating: -1, count: count)
    var low = Array(repeating: 0, count: count)
    var component = Array(repeating: -1, count: count)
    var onStack = Array(repeating: false, count: count)
    var stack: [Int] = []
    var nextIndex = 0
    var nextComponent = 0
    for root in 0..<count where index[root] < 0 {
      var work: [(vertex: Int, edge: Int)] = [(root, 0)]
      index[root] = nextIndex
      low[root] = nextIndex
      nextIndex += 1
      stack.append(root)
      onStack[root] = true
      while let (vertex, edge) = work.last {
        if edge < successors[vertex].count {
          work[work.count - 1].edge += 1
          let next = successors[vertex][edge]
          if index[next] < 0 {
            index[next] = nextIndex
            low[next] = nextIndex
            nextIndex += 1
            stack.append(next)
            onStack[next] = true
            work.append((next, 0))
          } else if onStack[next] {
            low[vertex] = min(low[vertex], index[next])
          }
          continue
        }
        work.removeLast()
        if let parent = work.last?.vertex { low[parent] = min(low[parent], low[vertex]) }
        if low[vertex] == index[vertex] {
          while let member = stack.popLast() {
            onStack[member] = false
            component[member] = nextComponent
            if member == vertex { break }
          }
          nextComponent += 1
        }
      }
    }
    return component
  }
}

/// The characters a position reads, coarsely: ASCII case folded one by one, and three kinds
/// of everything else. Enough to tell \w from \s and a from b, which is what decides whether
/// alternatives overlap in real patterns.
struct SymbolSet: Equatable {
  private var bits: (UInt64, UInt64, UInt64) = (0, 0, 0)

  private static let nonASCIIWord = 128
  private static let nonASCIISpace = 129
  private static let nonASCIIOther = 130

  init(_ kind: RegexNode.Kind) {
    switch kind {
    case .scalar(let scalar):
      insert(scalar)
    case .set(let set):
      for value in UInt32(0)..<128 {
        guard let scalar = Unicode.Scalar(value) else { continue }
        if set.contains(scalar, lower: CaseFolding.lower(scalar), upper: CaseFolding.upper(scalar))
        {
          insert(scalar)
        }
      }
      // Beyond ASCII: which kinds the set may hold (over-approximated).
      let families = set.families
      var kinds: Set<Int> = []
      if set.negated {
        kinds = [Self.nonASCIIWord, Self.nonASCIISpace, Self.nonASCIIOther]
      } else {
        for range in set.ranges where range.upperBound >= 128 {
          if range.lowerBound == range.upperBound, let scalar = Unicode.Scalar(range.lowerBound) {
            kinds.insert(Self.kind(of: scalar))
          } else {
            kinds.formUnion([Self.nonASCIIWord, Self.nonASCIISpace, Self.nonASCIIOther])
          }
        }
        for family in families {
          switch family {
          case .digit, .word: kinds.insert(Self.nonASCIIWord)
          case .space: kinds.insert(Self.nonASCIISpace)
          case .notWord: kinds.formUnion([Self.nonASCIISpace, Self.nonASCIIOther])
          case .notSpace: kinds.formUnion([Self.nonASCIIWord, Self.nonASCIIOther])
          case .notDigit:
            kinds.formUnion([Self.nonASCIIWord, Self.nonASCIISpace, Self.nonASCIIOther])
          }
        }
      }
      for kind in kinds { insert(bit: kind) }
    default:
      break
    }
  }

  private init(bits: (UInt64, UInt64, UInt64)) {
    self.bits = bits
  }

  static func == (a: SymbolSet, b: SymbolSet) -> Bool { a.bits == b.bits }

  private static func kind(of scalar: Unicode.Scalar) -> Int {
    if CharacterKinds.isWord(scalar) { return nonASCIIWord }
    if CharacterKinds.isSpace(scalar) { return nonASCIISpace }
    return nonASCIIOther
  }

  private mutating func insert(_ scalar: Unicode.Scalar) {
    let folded = CaseFolding.lower(scalar)
    insert(bit: folded.isASCII ? Int(folded.value) : Self.kind(of: folded))
  }

  private mutating func insert(bit: Int) {
    let mask = UInt64(1) << UInt64(bit % 64)
    switch bit / 64 {
    case 0: bits.0 |= mask
    case 1: bits.1 |= mask
    default: bits.2 |= mask
    }
  }

  private func contains(bit: Int) -> Bool {
    let word =
      switch bit / 64 {
      case 0: bits.0
      case 1: bits.1
      default: bits.2
      }
    return word & (UInt64(1) << UInt64(bit % 64)) != 0
  }

  func intersection(_ other: SymbolSet) -> SymbolSet {
    SymbolSet(bits: (bits.0 & other.bits.0, bits.1 & other.bits.1, bits.2 & other.bits.2))
  }

  func intersects(_ other: SymbolSet) -> Bool {
    let both = intersection(other).bits
    return both.0 | both.1 | both.2 != 0
  }

  /// A character of the set to show in a message: a letter or digit if there is one.
  var example: Character {
    let preferred = Array("abcdefghijklmnopqrstuvwxyz0123456789").map { Int($0.asciiValue ?? 0) }
    if let bit = preferred.first(where: contains(bit:)) {
      return Character(Unicode.Scalar(UInt8(bit)))
    }
    if let bit = (32..<127).first(where: contains(bit:)) {
      return Character(Unicode.Scalar(UInt8(bit)))
    }
    if contains(bit: Self.nonASCIIWord) { return "é" }
    if contains(bit: Self.nonASCIISpace) { return "\u{00A0}" }
    if let bit = (0..<32).first(where: contains(bit:)) {
      return Character(Unicode.Scalar(UInt8(bit)))
    }
    return "…"
  }
}
