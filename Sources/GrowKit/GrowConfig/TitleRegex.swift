import FoundationEssentials
import Glibc

/// A title regular expression, matched in time proportional to the title.
///
/// Grow does not use Swift's `Regex` for window titles: it backtracks, so `(a+)+$` against a
/// title of 24 `a`s and a `!` took minutes with the loop held, and it can be neither
/// bounded nor cancelled. This is a Thompson NFA simulated breadth-first (Pike's VM without
/// captures, as in RE2): every position of the title is visited once with the set of states
/// alive there, so the work is at most title length × program size. Both are capped
/// (`titleLimit`, `programLimit`), and `MatchBudget` stops an evaluation that still runs long.
///
/// The syntax is the common core (see `TitleRegexError` for what is refused and why):
/// literals, `.`, classes `[a-z]`, `[^…]`, `\d \w \s \D \W \S`, anchors `^ $ \b \B`,
/// alternation `|`, groups `(…)`, `(?:…)`, `(?<name>…)`, quantifiers `* + ?`, `{m}`, `{m,}`,
/// `{m,n}`, `{,n}` (lazy forms such as `*?` are accepted and match the same titles;
/// possessive ones such as `*+` are refused). Case is ignored; a pattern and a title are
/// compared in Unicode NFC, one scalar per `.`. `\b` is the classic boundary between `\w` and
/// not `\w` (or the title's edge), not Swift's Unicode word segmentation.
public struct TitleRegex: Sendable, Equatable {
  /// The pattern as written.
  public let source: String
  let syntax: RegexNode
  private let program: [Instruction]
  private let sets: [ScalarSet]

  /// Only the first 512 characters (Unicode scalars) of a title are matched: longer titles are
  /// URLs and paths whose beginning says what the window is, and the cap bounds the work.
  public static let titleLimit = 512
  /// At most this many instructions once `{m,n}` copies are made: `(a|b){1,1000}` is 6000.
  public static let programLimit = 4000
  /// The largest count in `{m,n}`.
  public static let repeatLimit = 1000

  public init(_ source: String) throws(TitleRegexError) {
    self.source = source
    var parser = RegexParser(source)
    syntax = try parser.parse()
    let size = syntax.programSize
    guard size <= Self.programLimit else {
      throw .tooLarge(instructions: size, limit: Self.programLimit)
    }
    var compiler = RegexCompiler()
    compiler.emit(syntax)
    compiler.program.append(.match)
    program = compiler.program
    sets = compiler.sets
  }

  public static func == (a: TitleRegex, b: TitleRegex) -> Bool { a.source == b.source }

  /// Whether the pattern occurs anywhere in `title` (use `^`/`$` to anchor it), within
  /// `budget`.
  public func firstMatch(in title: MatchableTitle, budget: MatchBudget = .standard)
    -> MatchOutcome
  {
    var machine = Machine(program: program, sets: sets, title: title, budget: budget)
    return machine.run()
  }
}

/// A title made ready for matching once, for all the patterns it is checked against: cut to
/// `TitleRegex.titleLimit`, in NFC, each scalar with its lower and upper case.
public struct MatchableTitle: Sendable {
  let scalars: [Unicode.Scalar]
  let lower: [Unicode.Scalar]
  let upper: [Unicode.Scalar]
  /// Whether the title was longer than the limit: then `$` cannot match, its end is unseen.
  public let isCut: Bool

  public init(_ title: String) {
    // Cut before normalising, so a title of megabytes costs what a short one does; NFC may
    // change the count, so the limit applies again after it.
    let limit = TitleRegex.titleLimit
    let head = title.unicodeScalars.prefix(limit + 1)
    let normalised = Array(
      RegexParser.normalise(String(String.UnicodeScalarView(head))).unicodeScalars)
    isCut = normalised.count > limit || !title.unicodeScalars.dropFirst(limit + 1).isEmpty
    scalars = Array(normalised.prefix(limit))
    lower = scalars.map(CaseFolding.lower)
    upper = scalars.map(CaseFolding.upper)
  }

  public var count: Int { scalars.count }
}

/// How much one evaluation of one pattern may cost before it is stopped.
///
/// The step count is deterministic (one step is one NFA state visited at one title position)
/// and, with the caps on titles and programs, is only reached by patterns with thousands of
/// states alive at once. The CPU-time limit is what keeps the promise that a pattern never
/// holds the loop for more than 50 ms, whatever the machine; it is the thread's CPU
/// time, so a daemon descheduled or stopped (`kill -STOP`) mid-match is not blamed on the
/// pattern.
public struct MatchBudget: Sendable, Equatable {
  public var steps: Int
  public var cpuTime: Duration

  public init(steps: Int, cpuTime: Duration) {
    self.steps = steps
    self.cpuTime = cpuTime
  }

  public static let standard = MatchBudget(steps: 400_000, cpuTime: .milliseconds(50))
}

public enum MatchOutcome: Sendable, Equatable {
  case match
  case noMatch
  /// The evaluation was stopped, undecided.
  case overBudget(BudgetOverrun)
}

/// Why an evaluation was stopped, in words for the message that switches the pattern off.
public enum BudgetOverrun: Sendable, Equatable, CustomStringConvertible {
  case steps(Int)
  case cpuTime(Duration)

  public var description: String {
    switch self {
    case .steps(let steps): "it needed more than \(steps) steps for one title"
    case .cpuTime(let time): "it took more than \(time.milliseconds) ms for one title"
    }
  }
}

extension Duration {
  fileprivate var milliseconds: Int64 {
    components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
  }
}

/// Why a title regex cannot be used; each says what to write instead.
public enum TitleRegexError: Error, Equatable, Sendable, CustomStringConvertible {
  case empty
  case unbalancedParenthesis
  case unclosedGroup
  case unclosedClass
  case trailingBackslash
  case nothingToRepeat(String)
  case doubleQuantifier(String)
  case badRepeat(String, reason: String)
  case badRange(String)
  case unknownEscape(String)
  case backreference(String)
  case lookaround(String)
  case unsupportedGroup(String)
  case unicodeProperty(String)
  case tooLarge(instructions: Int, limit: Int)
  case tooDeep(limit: Int)
  case possessive(String)

  public var description: String {
    switch self {
    case .empty:
      "the regex is empty; write what the title contains, such as /youtube/"
    case .unbalancedParenthesis:
      "a ')' has no '(' before it; write \\) for a parenthesis in the title"
    case .unclosedGroup:
      "a '(' is never closed; close it with ')', or write \\( for a parenthesis in the title"
    case .unclosedClass:
      "a '[' is never closed; close the class with ']', or write \\[ for a bracket"
    case .trailingBackslash:
      "it ends in a lone '\\'; write \\\\ for a backslash in the title"
    case .nothingToRepeat(let quantifier):
      "'\(quantifier)' has nothing before it to repeat; write \\\(quantifier) for the character"
    case .doubleQuantifier(let text):
      "'\(text)' repeats a repetition; put the first in a group, such as (a{2}){3}"
    case .badRepeat(let text, let reason):
      "'\(text)' \(reason)"
    case .badRange(let text):
      "the class range '\(text)' runs backwards; write the smaller character first"
    case .unknownEscape(let text):
      "'\(text)' is not an escape Grow knows; it knows \\d \\w \\s \\D \\W \\S \\b \\B \\t \\n "
        + "\\xHH \\u{H…}, and \\ before any punctuation"
    case .backreference(let text):
      "'\(text)' is a backreference; Grow matches titles in time proportional to their length, "
        + "which a backreference cannot be matched in (and a window title rarely needs one); "
        + "write the repeated text out"
    case .lookaround(let text):
      "'\(text)' is a lookaround, which Grow does not support; use allow = for exceptions "
        + "(allow = firefox:/grow docs/), or write the text out"
    case .unsupportedGroup(let text):
      "'\(text)' is not a group Grow knows; write (…), (?:…) or (?<name>…). Case is always "
        + "ignored, so flags such as (?i) are not needed"
    case .unicodeProperty(let text):
      "'\(text)' (a Unicode property) is not supported; use a class such as [a-zäöü] or \\w"
    case .tooLarge(let instructions, let limit):
      "it is too large: its repetitions make \(instructions) steps and at most \(limit) are "
        + "allowed; use smaller counts in {m,n}, or + and *"
    case .possessive(let text):
      "'\(text)' is a possessive quantifier, which Grow does not support (it never "
        + "backtracks, so it needs none); write it without the last '+'"
    case .tooDeep(let limit):
      "it nests groups more than \(limit) deep; a title pattern needs far fewer"
    }
  }
}

// MARK: - Syntax

/// A character class: scalar ranges and the \d \w \s families, possibly negated.
struct ScalarSet: Sendable, Equatable {
  var ranges: [ClosedRange<UInt32>] = []
  var families: [Family] = []
  var negated = false

  enum Family: Sendable, Equatable {
    case digit, word, space
    case notDigit, notWord, notSpace
  }

  static let any = ScalarSet(negated: true)

  /// Whether a title character is in the set, ignoring case: [A-Z] takes a title's k, and
  /// [^k] refuses its K (the negation applies after the cases are tried).
  func contains(_ scalar: Unicode.Scalar, lower: Unicode.Scalar, upper: Unicode.Scalar) -> Bool {
    (lists(scalar) || lists(lower) || lists(upper)) != negated
  }

  private func lists(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    return ranges.contains { $0.contains(value) } || families.contains { $0.contains(scalar) }
  }
}

extension ScalarSet.Family {
  func contains(_ scalar: Unicode.Scalar) -> Bool {
    switch self {
    case .digit: CharacterKinds.isDigit(scalar)
    case .word: CharacterKinds.isWord(scalar)
    case .space: CharacterKinds.isSpace(scalar)
    case .notDigit: !CharacterKinds.isDigit(scalar)
    case .notWord: !CharacterKinds.isWord(scalar)
    case .notSpace: !CharacterKinds.isSpace(scalar)
    }
  }
}

/// What \d, \w and \s mean, as in Swift's `Regex` by default (Unicode-aware).
enum CharacterKinds {
  static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.isASCII { return ("0"..."9").contains(scalar) }
    return scalar.properties.numericType == .decimal
  }

  static func isWord(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.isASCII {
      return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
        || ("0"..."9").contains(scalar) || scalar == "_"
    }
    let properties = scalar.properties
    return properties.isAlphabetic || properties.numericType == .decimal
      || properties.generalCategory == .nonspacingMark
      || properties.generalCategory == .spacingMark
      || properties.generalCategory == .connectorPunctuation
  }

  static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.isASCII { return scalar == " " || ("\t"..."\r").contains(scalar) }
    return scalar.properties.isWhitespace
  }
}

/// Simple (one scalar to one scalar) case mapping; ASCII without table look-ups.
enum CaseFolding {
  static func lower(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
    if scalar.isASCII {
      guard ("A"..."Z").contains(scalar) else { return scalar }
      return Unicode.Scalar(scalar.value + 32) ?? scalar
    }
    return single(scalar.properties.lowercaseMapping) ?? scalar
  }

  static func upper(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
    if scalar.isASCII {
      guard ("a"..."z").contains(scalar) else { return scalar }
      return Unicode.Scalar(scalar.value - 32) ?? scalar
    }
    return single(scalar.properties.uppercaseMapping) ?? scalar
  }

  private static func single(_ mapping: String) -> Unicode.Scalar? {
    var scalars = mapping.unicodeScalars.makeIterator()
    guard let first = scalars.next(), scalars.next() == nil else { return nil }
    return first
  }
}

enum Assertion: Sendable, Equatable {
  case start, end, wordBoundary, notWordBoundary
}

/// The parsed pattern. `range` is where it is written, in scalars of the NFC pattern.
struct RegexNode: Sendable, Equatable {
  indirect enum Kind: Sendable, Equatable {
    case empty
    /// One scalar (lower case).
    case scalar(Unicode.Scalar)
    case set(ScalarSet)
    case assertion(Assertion)
    case concatenation([RegexNode])
    case alternation([RegexNode])
    case group(RegexNode)
    /// `max` nil: unbounded.
    case repetition(RegexNode, min: Int, max: Int?)
  }

  var kind: Kind
  var range: Range<Int>

  /// Instructions the compiler emits for it, saturating instead of overflowing.
  var programSize: Int {
    switch kind {
    case .empty: return 0
    case .scalar, .set, .assertion: return 1
    case .group(let inner): return inner.programSize
    case .concatenation(let parts): return parts.reduce(0) { $0.addingSaturated($1.programSize) }
    case .alternation(let choices):
      return choices.reduce(2 * (choices.count - 1)) { $0.addingSaturated($1.programSize) }
    case .repetition(let body, let min, let max):
      // As RegexCompiler emits it: the required copies, then a split before each optional
      // copy, or a split back (x{m,}) or a split and a jump around one copy (x*).
      let one = body.programSize
      let required = min.multipliedSaturated(by: one)
      if let max { return required.addingSaturated((max - min).multipliedSaturated(by: one + 1)) }
      return min > 0 ? required.addingSaturated(1) : one.addingSaturated(2)
    }
  }
}

extension Int {
  fileprivate func addingSaturated(_ other: Int) -> Int {
    let (sum, overflow) = addingReportingOverflow(other)
    return overflow ? .max : sum
  }

  fileprivate func multipliedSaturated(by other: Int) -> Int {
    let (product, overflow) = multipliedReportingOverflow(by: other)
    return overflow ? .max : product
  }
}

/// Recursive descent over the NFC scalars of the pattern. Nesting is limited so a pattern of
/// ten thousand '(' is an error, not a stack overflow.
struct RegexParser {
  static let nestingLimit = 100

  let scalars: [Unicode.Scalar]
  private var position = 0
  private var depth = 0

  init(_ source: String) {
    scalars = Array(Self.normalise(source).unicodeScalars)
  }

  /// NFC, so é typed as one scalar or as e and a combining accent is the same character in
  /// a pattern and in a title. The standard library's own NFC (FoundationEssentials has no
  /// `precomposedStringWithCanonicalMapping`); it is what String comparison uses.
  static func normalise(_ text: String) -> String {
    String(decoding: text._nfcCodeUnits, as: UTF8.self)
  }

  private var atEnd: Bool { position >= scalars.count }
  private var peek: Unicode.Scalar? { atEnd ? nil : scalars[position] }

  private func text(_ range: Range<Int>) -> String {
    String(String.UnicodeScalarView(scalars[range.clamped(to: 0..<scalars.count)]))
  }

  mutating func parse() throws(TitleRegexError) -> RegexNode {
    guard !scalars.isEmpty else { throw .empty }
    let node = try alternation()
    if !atEnd {
      // Only a ')' stops an alternation early.
      throw .unbalancedParenthesis
    }
    return node
  }

  private mutating func alternation() throws(TitleRegexError) -> RegexNode {
    let start = position
    var choices = [try concatenation()]
    while peek == "|" {
      position += 1
      choices.append(try concatenation())
    }
    if choices.count == 1 { return choices[0] }
    return RegexNode(kind: .alternation(choices), range: start..<position)
  }

  private mutating func concatenation() throws(TitleRegexError) -> RegexNode {
    let start = position
    var parts: [RegexNode] = []
    while let next = peek, next != "|", next != ")" {
      parts.append(try repetition())
    }
    switch parts.count {
    case 0: return RegexNode(kind: .empty, range: start..<start)
    case 1: return parts[0]
    default: return RegexNode(kind: .concatenation(parts), range: start..<position)
    }
  }

  private mutating func repetition() throws(TitleRegexError) -> RegexNode {
    let start = position
    var node = try atom()
    var repeated = false
    while let bounds = try quantifier() {
      if repeated { throw .doubleQuantifier(text(start..<position)) }
      if case .assertion = node.kind {
        throw .nothingToRepeat(text(node.range.upperBound..<position))
      }
      repeated = true
      // A lazy form (`*?`) decides which match a backtracker finds first; whether a title
      // matches is the same, so it is the plain form here. A possessive one (`*+`) never gives
      // back what it took, which changes what matches and has no NFA: refused.
      if peek == "?" { position += 1 }
      if peek == "+" { throw .possessive(text(start..<position + 1)) }
      node = RegexNode(
        kind: .repetition(node, min: bounds.min, max: bounds.max), range: start..<position)
    }
    return node
  }

  /// `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`, `{,n}`; nil when none is next. A `{` that does
  /// not start a count is a literal, as in most regex dialects.
  private mutating func quantifier() throws(TitleRegexError) -> (min: Int, max: Int?)? {
    guard let next = peek else { return nil }
    switch next {
    case "*":
      position += 1
      return (0, nil)
    case "+":
      position += 1
      return (1, nil)
    case "?":
      position += 1
      return (0, 1)
    case "{":
      guard let (bounds, end) = countedRepeat(at: position) else { return nil }
      let written = text(position..<end)
      position = end
      if let max = bounds.max, max < bounds.min {
        throw .badRepeat(
          written, reason: "has its larger count first; write {\(max),\(bounds.min)}")
      }
      if bounds.min > TitleRegex.repeatLimit || (bounds.max ?? 0) > TitleRegex.repeatLimit {
        throw .badRepeat(
          written, reason: "counts above \(TitleRegex.repeatLimit); use + or * for a long run")
      }
      return bounds
    default:
      return nil
    }
  }

  /// Reads `{m}`, `{m,}`, `{m,n}` or `{,n}` at `start`; nil if it is not one. Returns the
  /// counts and the index after the `}`.
  private func countedRepeat(at start: Int) -> ((min: Int, max: Int?), Int)? {
    var index = start + 1
    /// The digits at `index`, read and skipped; nil if there are none.
    func number() -> Int? {
      let begin = index
      var value = 0
      while index < scalars.count, ("0"..."9").contains(scalars[index]) {
        // Capped so a count of a hundred digits does not overflow; it is refused anyway.
        value = Swift.min(value * 10 + Int(scalars[index].value - 48), 1_000_000)
        index += 1
      }
      return index == begin ? nil : value
    }
    let low = number()
    guard index < scalars.count else { return nil }
    if scalars[index] == "}" {
      guard let low else { return nil }
      return ((low, low), index + 1)
    }
    guard scalars[index] == "," else { return nil }
    index += 1
    let high = number()
    guard index < scalars.count, scalars[index] == "}", low != nil || high != nil else {
      return nil
    }
    return ((low ?? 0, high), index + 1)
  }

  private mutating func atom() throws(TitleRegexError) -> RegexNode {
    let start = position
    let scalar = scalars[position]
    position += 1
    func node(_ kind: RegexNode.Kind) -> RegexNode {
      RegexNode(kind: kind, range: start..<position)
    }
    switch scalar {
    case "(":
      return try group(start: start)
    case "[":
      return node(.set(try characterClass()))
    case ".":
      return node(.set(.any))
    case "^":
      return node(.assertion(.start))
    case "$":
      return node(.assertion(.end))
    case "\\":
      return node(try escape(inClass: false))
    case "*", "+", "?":
      throw .nothingToRepeat(String(scalar))
    case "{" where countedRepeat(at: start) != nil:
      throw .nothingToRepeat(text(start..<(countedRepeat(at: start)?.1 ?? position)))
    default:
      return node(.scalar(CaseFolding.lower(scalar)))
    }
  }

  private mutating func group(start: Int) throws(TitleRegexError) -> RegexNode {
    depth += 1
    defer { depth -= 1 }
    guard depth <= Self.nestingLimit else { throw .tooDeep(limit: Self.nestingLimit) }
    if peek == "?" {
      let rest = scalars[position...].prefix(3).map(Character.init)
      let head = String(rest)
      if head.hasPrefix("?:") {
        position += 2
      } else if head.hasPrefix("?=") || head.hasPrefix("?!") || head.hasPrefix("?<=")
        || head.hasPrefix("?<!")
      {
        throw .lookaround("(" + String(head.prefix(head.hasPrefix("?<") ? 3 : 2)) + "…)")
      } else if head.hasPrefix("?<") || head.hasPrefix("?P<") || head.hasPrefix("?'") {
        // A named group: the name means nothing here (nothing is captured).
        let close: Unicode.Scalar = head.hasPrefix("?'") ? "'" : ">"
        guard let end = scalars[position...].firstIndex(of: close) else { throw .unclosedGroup }
        position = end + 1
      } else {
        let end = scalars[position...].firstIndex(of: ")") ?? scalars.count
        throw .unsupportedGroup(text(start..<Swift.min(end + 1, scalars.count)))
      }
    }
    let inner = try alternation()
    guard peek == ")" else { throw .unclosedGroup }
    position += 1
    return RegexNode(kind: .group(inner), range: start..<position)
  }

  /// After the `[`: items up to the closing `]`. A `]` first is a literal, as is a `-` first
  /// or last.
  private mutating func characterClass() throws(TitleRegexError) -> ScalarSet {
    var set = ScalarSet()
    if peek == "^" {
      set.negated = true
      position += 1
    }
    var first = true
    while true {
      guard let next = peek else { throw .unclosedClass }
      if next == "]" && !first {
        position += 1
        return set
      }
      first = false
      let itemStart = position
      guard let low = try classMember(into: &set) else { continue }
      if peek == "-", position + 1 < scalars.count, scalars[position + 1] != "]" {
        position += 1
        guard let high = try classMember(into: &set) else {
          // [a-\d]: the '-' is a literal.
          set.ranges.append(low.value...low.value)
          set.ranges.append(45...45)
          continue
        }
        guard low.value <= high.value else { throw .badRange(text(itemStart..<position)) }
        set.ranges.append(low.value...high.value)
      } else {
        set.ranges.append(low.value...low.value)
      }
    }
  }

  /// One scalar of a class, or nil after adding a family (\d) to `set`.
  private mutating func classMember(into set: inout ScalarSet) throws(TitleRegexError)
    -> Unicode.Scalar?
  {
    let scalar = scalars[position]
    position += 1
    guard scalar == "\\" else { return scalar }
    switch try escape(inClass: true) {
    case .scalar(let literal): return literal
    case .set(let escaped):
      set.families += escaped.families
      set.ranges += escaped.ranges
      return nil
    default: return nil
    }
  }

  /// After the `\`.
  private mutating func escape(inClass: Bool) throws(TitleRegexError) -> RegexNode.Kind {
    guard let scalar = peek else { throw .trailingBackslash }
    let start = position - 1
    position += 1
    switch scalar {
    case "d": return .set(ScalarSet(families: [.digit]))
    case "D": return .set(ScalarSet(families: [.notDigit]))
    case "w": return .set(ScalarSet(families: [.word]))
    case "W": return .set(ScalarSet(families: [.notWord]))
    case "s": return .set(ScalarSet(families: [.space]))
    case "S": return .set(ScalarSet(families: [.notSpace]))
    case "b" where !inClass: return .assertion(.wordBoundary)
    case "B" where !inClass: return .assertion(.notWordBoundary)
    case "t": return .scalar("\t")
    case "n": return .scalar("\n")
    case "r": return .scalar("\r")
    case "x", "u":
      return .scalar(try hexadecimal(start: start, digits: scalar == "x" ? 2 : 4))
    case "1"..."9", "k", "g":
      throw .backreference(text(start..<Swift.min(position + 1, scalars.count)))
    case "p", "P":
      let end = (scalars[position...].firstIndex(of: "}") ?? position - 1) + 1
      throw .unicodeProperty(text(start..<Swift.min(end, scalars.count)))
    default:
      let isAlphanumeric = scalar.isASCII && CharacterKinds.isWord(scalar) && scalar != "_"
      guard !isAlphanumeric else { throw .unknownEscape(text(start..<position)) }
      return .scalar(inClass ? scalar : CaseFolding.lower(scalar))
    }
  }

  /// `\xHH`, `\uHHHH`, or either with braces: `\u{1F600}`.
  private mutating func hexadecimal(start: Int, digits: Int) throws(TitleRegexError)
    -> Unicode.Scalar
  {
    let braced = peek == "{"
    if braced { position += 1 }
    var value: UInt32 = 0
    var count = 0
    while let next = peek, let digit = next.hexDigitValue, braced ? count < 8 : count < digits {
      value = value * 16 + UInt32(digit)
      count += 1
      position += 1
    }
    if braced {
      guard peek == "}" else { throw .unknownEscape(text(start..<position)) }
      position += 1
    }
    guard count > 0, braced || count == digits, let scalar = Unicode.Scalar(value) else {
      throw .unknownEscape(text(start..<position))
    }
    return CaseFolding.lower(scalar)
  }
}

extension Unicode.Scalar {
  fileprivate var hexDigitValue: Int? {
    switch self {
    case "0"..."9": Int(value - 48)
    case "a"..."f": Int(value - 97 + 10)
    case "A"..."F": Int(value - 65 + 10)
    default: nil
    }
  }
}

// MARK: - Program

enum Instruction: Sendable, Equatable {
  /// Consumes a scalar equal to this one (lower case) after folding.
  case scalar(Unicode.Scalar)
  /// Consumes a scalar in `sets[index]`, in any case.
  case set(Int)
  case any
  case assert(Assertion)
  /// Continues at both.
  case split(Int, Int)
  case jump(Int)
  case match
}

/// Thompson's construction, emitted as a program for the Pike VM.
struct RegexCompiler {
  var program: [Instruction] = []
  var sets: [ScalarSet] = []

  mutating func emit(_ node: RegexNode) {
    switch node.kind {
    case .empty:
      break
    case .scalar(let scalar):
      program.append(.scalar(scalar))
    case .set(let set):
      if set == .any {
        program.append(.any)
      } else {
        sets.append(set)
        program.append(.set(sets.count - 1))
      }
    case .assertion(let assertion):
      program.append(.assert(assertion))
    case .group(let inner):
      emit(inner)
    case .concatenation(let parts):
      for part in parts { emit(part) }
    case .alternation(let choices):
      // split L1, next; L1: a; jump end; next: split L2, ... ; last
      var jumps: [Int] = []
      for (index, choice) in choices.enumerated() {
        if index < choices.count - 1 {
          let split = program.count
          program.append(.split(split + 1, -1))
          emit(choice)
          jumps.append(program.count)
          program.append(.jump(-1))
          program[split] = .split(split + 1, program.count)
        } else {
          emit(choice)
        }
      }
      for jump in jumps { program[jump] = .jump(program.count) }
    case .repetition(let body, let min, let max):
      for _ in 0..<min { emit(body) }
      if let max {
        // Each optional copy may be skipped to the end: x{1,3} is x(x(x)?)?.
        var splits: [Int] = []
        for _ in min..<max {
          splits.append(program.count)
          program.append(.split(program.count + 1, -1))
          emit(body)
        }
        for split in splits { program[split] = .split(split + 1, program.count) }
      } else if min > 0 {
        // x{m,}: m copies then loop back over the last one.
        let bodyStart = program.count - body.programSize
        program.append(.split(bodyStart, program.count + 1))
      } else {
        let split = program.count
        program.append(.split(split + 1, -1))
        emit(body)
        program.append(.jump(split))
        program[split] = .split(split + 1, program.count)
      }
    }
  }
}

/// The breadth-first simulation: the states alive at a position are a set, each visited once
/// per position, so no title makes it revisit work (the cause of exponential backtracking).
private struct Machine {
  let program: [Instruction]
  let sets: [ScalarSet]
  let title: MatchableTitle
  let budget: MatchBudget

  /// `visited[pc] == generation` when pc is already in the list being built.
  private var visited: [Int]
  private var generation = 0
  private var stack: [Int] = []
  private var steps = 0
  private var clock = ThreadCPUClock()
  private var overrun: BudgetOverrun?
  private var matched = false

  /// Steps between looks at the clock: a look costs about as much as 20 steps.
  private static let clockInterval = 4096

  init(program: [Instruction], sets: [ScalarSet], title: MatchableTitle, budget: MatchBudget) {
    self.program = program
    self.sets = sets
    self.title = title
    self.budget = budget
    visited = Array(repeating: -1, count: program.count)
  }

  mutating func run() -> MatchOutcome {
    let count = title.count
    // The consuming states alive at this position and at the next.
    var current: [Int] = []
    var next: [Int] = []
    current.reserveCapacity(program.count)
    next.reserveCapacity(program.count)
    generation = 0
    for position in 0...count {
      // Unanchored: a match may start here too.
      addClosure(of: 0, at: position, into: &current)
      if matched { return .match }
      if let overrun { return .overBudget(overrun) }
      if position == count { break }
      generation = position + 1
      next.removeAll(keepingCapacity: true)
      for pc in current where consumes(program[pc], at: position) {
        addClosure(of: pc + 1, at: position + 1, into: &next)
        if matched { return .match }
        if let overrun { return .overBudget(overrun) }
      }
      swap(&current, &next)
      // Nothing alive and the pattern can only start at the beginning: no match.
      if current.isEmpty, case .assert(.start) = program[0] { return .noMatch }
    }
    return .noMatch
  }

  private func consumes(_ instruction: Instruction, at position: Int) -> Bool {
    switch instruction {
    case .scalar(let scalar): return title.lower[position] == scalar
    case .any: return true
    case .set(let index):
      return sets[index].contains(
        title.scalars[position], lower: title.lower[position], upper: title.upper[position])
    default: return false
    }
  }

  /// Adds `start` and every state reachable from it without consuming, keeping only the ones
  /// that consume (and noting a match).
  private mutating func addClosure(of start: Int, at position: Int, into list: inout [Int]) {
    stack.append(start)
    while let pc = stack.popLast() {
      guard visited[pc] != generation else { continue }
      visited[pc] = generation
      steps += 1
      if steps > budget.steps {
        overrun = .steps(budget.steps)
        stack.removeAll()
        return
      }
      if steps % Self.clockInterval == 0, clock.elapsed > budget.cpuTime {
        overrun = .cpuTime(budget.cpuTime)
        stack.removeAll()
        return
      }
      switch program[pc] {
      case .match:
        matched = true
        stack.removeAll()
        return
      case .jump(let target):
        stack.append(target)
      case .split(let first, let second):
        // Pushed in reverse so `first` is explored first (order does not change the answer).
        stack.append(second)
        stack.append(first)
      case .assert(let assertion):
        if holds(assertion, at: position) { stack.append(pc + 1) }
      case .scalar, .set, .any:
        list.append(pc)
      }
    }
  }

  private func holds(_ assertion: Assertion, at position: Int) -> Bool {
    switch assertion {
    case .start: return position == 0
    case .end: return position == title.count && !title.isCut
    case .wordBoundary, .notWordBoundary:
      let before = position > 0 && CharacterKinds.isWord(title.scalars[position - 1])
      let after = position < title.count && CharacterKinds.isWord(title.scalars[position])
      return (before != after) == (assertion == .wordBoundary)
    }
  }
}

/// The calling thread's CPU time since this was made (CLOCK_THREAD_CPUTIME_ID).
private struct ThreadCPUClock {
  private let start = Self.now()

  var elapsed: Duration { Self.now() - start }

  private static func now() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
  }
}
