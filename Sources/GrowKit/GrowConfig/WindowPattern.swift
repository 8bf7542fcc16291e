import FoundationEssentials
@_spi(GrowHost) import GrowCore
internal import GrowMessages

/// Why a window pattern cannot be used; the message says how to write it.
public enum WindowPatternError: Error, Equatable, CustomStringConvertible {
  case empty
  case unterminatedRegex(String)
  case invalidRegex(String, reason: String)
  case invalidName(String)
  case invalidSite(String)

  public var description: String {
    switch self {
    case .empty:
      Message(
        "an empty pattern; write a name (discord), name:/title regex/, /title regex/ or "
          + "site:youtube.com"
      ).render()
    case .invalidSite(let text):
      Message(
        "'{pattern}' is not a site; write site:youtube.com, site:*.reddit.com or "
          + "site:youtube.com/shorts (a host, then a path if only part of the site counts)"
      ).render(["pattern": text])
    case .unterminatedRegex(let text):
      Message("'{pattern}' has no closing '/'; write a title regex as /youtube|reddit/")
        .render(["pattern": text])
    case .invalidRegex(let text, let reason):
      Message("'{pattern}' is not a valid regular expression: {reason}").render([
        "pattern": text, "reason": reason,
      ])
    case .invalidName(let text):
      Message(
        "'{pattern}' is not a window name; a name is a WM_CLASS such as firefox, without "
          + "spaces or '/'"
      ).render(["pattern": text])
    }
  }
}

/// One entry of `distractions =` or `allow =`, matched against the active window.
///
/// - `discord`: the WM_CLASS instance or class equals the name, ignoring case;
/// - `firefox:/youtube|reddit/`: that, and the title matches the regular expression;
/// - `/youtube/`: the title matches, whatever the application;
/// - `site:youtube.com`: the page in the browser is on that site (`SitePattern`), as the
///   browser extension reports it; it never matches a window by itself.
///
/// Regular expressions are `TitleRegex`: Grow's own matcher, linear in the title and with a
/// budget, because a window title is input from any program and the match runs on the loop.
/// The config checker compiles each one, so a bad pattern is a file:line error at load time,
/// never a surprise during focus.
public struct WindowPattern: Sendable, Equatable {
  public let text: String
  public let name: String?
  public let titleRegex: TitleRegex?
  /// Set for a `site:` pattern, which has no name or title part.
  @_spi(GrowBuiltIn) public let site: SitePattern?

  public init(_ text: String) throws(WindowPatternError) {
    let trimmed = text.trimmingWhitespace()
    self.text = trimmed
    guard !trimmed.isEmpty else { throw .empty }
    if trimmed.lowercased().hasPrefix(SitePattern.prefix) {
      guard let site = SitePattern(trimmed.dropFirst(SitePattern.prefix.count)) else {
        throw .invalidSite(trimmed)
      }
      (self.site, name, titleRegex) = (site, nil, nil)
      return
    }
    site = nil
    let namePart: Substring
    let regexPart: Substring?
    if let slash = trimmed.firstIndex(of: "/") {
      var before = trimmed[..<slash]
      if !before.isEmpty {
        guard before.last == ":" else { throw .invalidName(trimmed) }
        before = before.dropLast()
      }
      namePart = before
      let body = trimmed[trimmed.index(after: slash)...]
      guard body.count >= 1, body.last == "/" else { throw .unterminatedRegex(trimmed) }
      regexPart = body.dropLast()
    } else {
      namePart = Substring(trimmed)
      regexPart = nil
    }
    let name = namePart.trimmingWhitespace()
    if name.contains(where: { $0.isWhitespace }) { throw .invalidName(trimmed) }
    self.name = name.isEmpty ? nil : name
    if let regexPart {
      do {
        titleRegex = try TitleRegex(String(regexPart))
      } catch {
        throw .invalidRegex(String(regexPart), reason: error.description)
      }
    } else {
      titleRegex = nil
    }
    if self.name == nil && titleRegex == nil { throw .empty }
  }

  /// Whether a window with this WM_CLASS and title is what the pattern describes, within
  /// `budget` for the title regex.
  public func evaluate(
    instance: String, windowClass: String, title: MatchableTitle,
    budget: MatchBudget = .standard
  ) -> MatchOutcome {
    guard site == nil else { return .noMatch }
    if let name {
      guard
        name.lowercased() == instance.lowercased()
          || name.lowercased() == windowClass.lowercased()
      else { return .noMatch }
    }
    return titleRegex?.firstMatch(in: title, budget: budget) ?? .match
  }

  /// `evaluate` for one window; an evaluation over budget counts as no match.
  public func matches(instance: String, windowClass: String, title: String) -> Bool {
    evaluate(instance: instance, windowClass: windowClass, title: MatchableTitle(title))
      == .match
  }

  /// Whether the page at `address` is what this `site:` pattern names; false for the other
  /// kinds, which are about windows.
  @_spi(GrowBuiltIn) public func matches(page address: PageAddress) -> Bool {
    site?.matches(host: address.host, path: address.path) ?? false
  }

  /// Splits a config value at the commas that are not inside a `/regex/`, so
  /// `firefox:/a{1,3}/, steam` gives two patterns (a `site:` pattern's `/` is a path).
  public static func split(_ value: String) -> [String] {
    var items: [String] = []
    var current = ""
    var inRegex = false
    var escaped = false
    for character in value {
      if inRegex {
        if escaped {
          escaped = false
        } else if character == "\\" {
          escaped = true
        } else if character == "/" {
          inRegex = false
        }
        current.append(character)
      } else if character == "/",
        !current.trimmingWhitespace().lowercased().hasPrefix(SitePattern.prefix)
      {
        inRegex = true
        current.append(character)
      } else if character == "," {
        items.append(current)
        current = ""
      } else {
        current.append(character)
      }
    }
    items.append(current)
    return items.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
  }
}

/// A card's distraction rules, compiled: what is flagged, and what is allowed anyway. A
/// pattern whose evaluation runs over its budget is switched off here, and the verdict says
/// so once, with the file and line it was written on.
public struct DistractionRules: Sendable {
  private struct Rule: Sendable {
    let pattern: WindowPattern
    let key: String
    let line: ConfigLine?
    var switchedOff = false
  }

  private var distractions: [Rule]
  private var allowed: [Rule]
  /// The lists it was compiled from, to tell when the card changed.
  private let source: [[String]]

  /// Compiles a card's lists. They were checked when the config was read, so a pattern that
  /// fails here (a card made in code) is skipped rather than fatal.
  public init(card: FocusCard) {
    func rules(_ texts: [String], key: String, line: ConfigLine?) -> [Rule] {
      texts.compactMap { text in
        (try? WindowPattern(text)).map { Rule(pattern: $0, key: key, line: line) }
      }
    }
    distractions = rules(card.distractions, key: "distractions", line: card.distractionsLine)
    allowed = rules(card.allowed, key: "allow", line: card.allowedLine)
    source = [card.distractions, card.allowed]
  }

  /// Whether these rules are `card`'s lists as they are now.
  public func compiled(from card: FocusCard) -> Bool {
    source == [card.distractions, card.allowed]
  }

  public struct Verdict: Sendable, Equatable {
    /// The pattern that makes the window a distraction, if any.
    public var distraction: WindowPattern?
    /// Patterns switched off by this evaluation.
    public var switchedOff: [SwitchedOffPattern] = []
  }

  /// Judges the active window: the first distraction pattern that matches it, unless an
  /// allow pattern does. Each pattern may spend at most `budget`; one that does not finish
  /// within it counts as no match now and is switched off.
  public mutating func judge(
    instance: String, windowClass: String, title: String, budget: MatchBudget = .standard
  ) -> Verdict {
    let title = MatchableTitle(title)
    var verdict = Verdict()
    func firstMatch(in rules: inout [Rule]) -> WindowPattern? {
      for index in rules.indices where !rules[index].switchedOff {
        let rule = rules[index]
        switch rule.pattern.evaluate(
          instance: instance, windowClass: windowClass, title: title, budget: budget)
        {
        case .match: return rule.pattern
        case .noMatch: continue
        case .overBudget(let overrun):
          rules[index].switchedOff = true
          verdict.switchedOff.append(
            SwitchedOffPattern(
              pattern: rule.pattern.text, key: rule.key, line: rule.line, overrun: overrun))
        }
      }
      return nil
    }
    if firstMatch(in: &allowed) == nil { verdict.distraction = firstMatch(in: &distractions) }
    return verdict
  }

  /// Judges a page in the browser: the first `site:` distraction pattern naming it, unless a
  /// `site:` allow pattern does. Sites match in time linear in the address; no budget.
  @_spi(GrowBuiltIn) public func judge(page address: PageAddress) -> WindowPattern? {
    guard !allowed.contains(where: { $0.pattern.matches(page: address) }) else { return nil }
    return distractions.first { $0.pattern.matches(page: address) }?.pattern
  }

  /// The card's `site:` patterns, for the browser's own blocking rules.
  @_spi(GrowBuiltIn) public var sites: (distractions: [SitePattern], allowed: [SitePattern]) {
    (distractions.compactMap(\.pattern.site), allowed.compactMap(\.pattern.site))
  }

  /// Every pattern switched off so far, for `grow plugins`.
  public var switchedOff: [String] {
    (allowed + distractions).filter(\.switchedOff).map { rule in
      "\(rule.line.map { "\($0): " } ?? "")\(rule.key) pattern \(rule.pattern.text) is off"
    }
  }
}

/// A pattern taken out of use because one evaluation ran over its budget.
public struct SwitchedOffPattern: Sendable, Equatable, CustomStringConvertible {
  public let pattern: String
  /// `distractions` or `allow`.
  public let key: String
  public let line: ConfigLine?
  public let overrun: BudgetOverrun

  /// `config.ini:3: distractions pattern xterm:/…/ is switched off: …; edit it …`
  public var description: String {
    "\(line.map { "\($0): " } ?? "")\(key) pattern \(pattern) is switched off: \(overrun) "
      + "(the limit keeps Grow responsive); simplify it and reload the config "
      + "(grow config check points at what is slow)"
  }
}
