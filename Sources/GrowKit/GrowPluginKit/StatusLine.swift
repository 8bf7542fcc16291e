import FoundationEssentials
internal import GrowBasics
@_spi(GrowHost) import GrowCore

// What `grow status` and the statusbar plugin show, made once for both: the built-in
// plugins' (`@_spi(GrowBuiltIn)`), not part of the plugin API, so its words and fields can
// change without breaking a plugin.

/// Everything a status bar line is made from: the timer's status (nil when no daemon runs)
/// and what other parts of Grow add to it.
@_spi(GrowBuiltIn) public struct StatusSnapshot: Sendable, Equatable {
  /// nil: no daemon owns `org.grow.Grow1`; the line shows "off".
  public var status: TimerStatus?
  /// `org.grow.Grow1.DoNotDisturb.Enabled` when that interface exists; nil otherwise.
  public var doNotDisturb: Bool?
  /// What distracts the person right now; nil until a plugin reports distractions.
  public var distraction: String?

  public init(status: TimerStatus?, doNotDisturb: Bool? = nil, distraction: String? = nil) {
    self.status = status
    self.doNotDisturb = doNotDisturb
    self.distraction = distraction
  }

  /// The state as a bar shows it.
  public var displayState: DisplayState {
    guard let status else { return .off }
    if distraction != nil, status.state == .focus, !status.paused { return .distracted }
    switch status.state {
    case .idle: return .idle
    case .waiting: return .waiting
    case _ where status.paused: return .paused
    case .focus: return .focus
    case .shortBreak: return .shortBreak
    case .longBreak: return .longBreak
    }
  }

  /// Seconds left at `now`: counted down from `EndsAt` while running, the kept remainder while
  /// paused, 0 when idle, waiting or off.
  public func remaining(at now: Date) -> TimeInterval {
    guard let status, status.hasPhase else { return 0 }
    guard let endsAt = status.endsAt, !status.paused else { return status.remaining }
    return max(0, endsAt.timeIntervalSince(now))
  }

  /// Whole percent of the phase done at `now` (0–100).
  public func progress(at now: Date) -> Int {
    guard let status, status.duration > 0 else { return 0 }
    let done = (status.duration - remaining(at: now)) / status.duration
    return min(100, max(0, Int((done * 100).rounded(.down))))
  }
}

/// The states a bar tells apart, each with its own icon, text and (for waybar) CSS class.
@_spi(GrowBuiltIn) @frozen public enum DisplayState: String, Sendable, CaseIterable {
  case focus
  case shortBreak = "short-break"
  case longBreak = "long-break"
  case paused
  /// A phase is ready and waits for `grow resume`.
  case waiting
  case idle
  case distracted
  /// No daemon.
  case off

  /// The state's glyph in `set`, for `{icon}`. Every set gives each state its own.
  public func icon(in set: IconSet = .unicode) -> String {
    PhaseWords.icon(state: rawValue, set: set.rawValue)
  }
}

/// The words a template's `{state}` shows. The app makes them, in the reader's language (its
/// message layer), and hands them to `StatusTemplate.render`; the SDK keeps only the states'
/// raw values.
@_spi(GrowBuiltIn) public struct StatusWords: Sendable {
  /// A state in words: "short break", "paused".
  public var state: @Sendable (DisplayState) -> String
  /// A phase that waits to be started, in words: "short break waiting".
  public var waiting: @Sendable (PhaseKind) -> String

  public init(
    state: @escaping @Sendable (DisplayState) -> String,
    waiting: @escaping @Sendable (PhaseKind) -> String
  ) {
    self.state = state
    self.waiting = waiting
  }
}

/// Which glyphs `{icon}` draws: `icons = ascii | unicode | nerd` (`grow status --icons`).
@_spi(GrowBuiltIn) public enum IconSet: String, Sendable, CaseIterable {
  /// Plain ASCII, for any font.
  case ascii
  /// Shapes that the fonts of a stock desktop (fonts-dejavu-core) have: the default.
  case unicode
  /// Nerd Font glyphs, for bars set in a Nerd Font.
  case nerd

  public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// What `--template` can show.
@_spi(GrowBuiltIn) public enum StatusField: String, Sendable, CaseIterable {
  case icon, state, card, remaining
  case remainingMinutes = "remaining_min"
  case progress, cycle, today, goal, dnd, distraction, intention

  /// Empty unless a phase runs or is paused.
  var isCountdown: Bool { [.remaining, .remainingMinutes, .progress].contains(self) }

  /// How often the field's text can change while a phase runs.
  var clock: StatusClock {
    switch self {
    case .remaining: .everySecond
    case .remainingMinutes: .everyMinute
    case .progress: .everyPercent
    default: .never
    }
  }
}

/// How often a line must be redrawn while a phase runs. Paused or idle: never.
@_spi(GrowBuiltIn) public enum StatusClock: Int, Sendable, Comparable {
  case never, everyMinute, everyPercent, everySecond

  public static func < (lhs: StatusClock, rhs: StatusClock) -> Bool { lhs.rawValue < rhs.rawValue }

  /// The next instant after `now` at which a field on this clock shows something else, or nil
  /// when nothing changes before the phase ends (the daemon announces the end itself).
  public func nextChange(after now: Date, of snapshot: StatusSnapshot) -> Date? {
    guard let status = snapshot.status, !status.paused, let endsAt = status.endsAt else {
      return nil
    }
    let remaining = endsAt.timeIntervalSince(now)
    guard remaining > 0 else { return nil }
    switch self {
    case .never:
      return nil
    case .everySecond, .everyMinute:
      // Shown rounded up, so the text changes when `remaining` crosses a whole unit.
      let unit: TimeInterval = self == .everySecond ? 1 : 60
      let wholeUnitsLeft = (remaining / unit).rounded(.up) - 1
      guard wholeUnitsLeft > 0 else { return nil }
      return endsAt.addingTimeInterval(-wholeUnitsLeft * unit)
    case .everyPercent:
      guard status.duration > 0 else { return nil }
      let nextPercent = TimeInterval(snapshot.progress(at: now) + 1)
      guard nextPercent < 100 else { return nil }
      return endsAt.addingTimeInterval(-status.duration * (1 - nextPercent / 100))
    }
  }
}

/// Why a `--template` cannot be used.
@_spi(GrowBuiltIn) public enum StatusTemplateError: Error, Equatable, CustomStringConvertible {
  case unknownField(String)
  case unclosedBrace(String)

  public var description: String {
    let valid = StatusField.allCases.map { "{\($0.rawValue)}" }.joined(separator: " ")
    switch self {
    case .unknownField(let name):
      return "unknown template field '{\(name)}'; valid fields: \(valid)"
    case .unclosedBrace(let template):
      return "template '\(template)' has a '{' without its '}'; valid fields: \(valid)"
    }
  }
}

/// A line with `{field}` placeholders, e.g. `{icon} {remaining} {card}`.
@_spi(GrowBuiltIn) public struct StatusTemplate: Sendable, Equatable {
  enum Piece: Sendable, Equatable {
    case text(String)
    case field(StatusField)
  }

  let pieces: [Piece]
  /// Used instead of `pieces` while no phase runs (idle, waiting, off): the countdown fields
  /// are empty then, so the first of them shows the state instead, unless the template shows
  /// `{state}` already. `{icon} {remaining}` reads "○ idle", never a lone "○".
  let piecesWithoutPhase: [Piece]
  public let source: String
  /// The glyphs `{icon}` draws.
  public var icons: IconSet = .unicode

  /// What a bar and status.txt show by default: the countdown while a phase runs or is
  /// paused (the icon says focus, break or paused), the state in words otherwise.
  public static let standard = Self(
    pieces: [.field(.icon), .text(" "), .field(.remaining)], source: "{icon} {remaining}")
  /// Shown when the template gives an empty line, as `{card}` does while idle: bars must
  /// never get an empty line.
  static let fallback = Self(
    pieces: [.field(.icon), .text(" "), .field(.state)], source: "{icon} {state}")

  public init(_ source: String, icons: IconSet = .unicode) throws(StatusTemplateError) {
    var pieces: [Piece] = []
    var rest = Substring(source)
    while let open = rest.firstIndex(of: "{") {
      if open > rest.startIndex { pieces.append(.text(String(rest[..<open]))) }
      guard let close = rest[open...].firstIndex(of: "}") else {
        throw .unclosedBrace(source)
      }
      let name = String(rest[rest.index(after: open)..<close])
      guard let field = StatusField(rawValue: name) else { throw .unknownField(name) }
      pieces.append(.field(field))
      rest = rest[rest.index(after: close)...]
    }
    if !rest.isEmpty { pieces.append(.text(String(rest))) }
    self.init(pieces: pieces, source: source)
    self.icons = icons
  }

  private init(pieces: [Piece], source: String) {
    self.pieces = pieces
    self.source = source
    var withoutPhase = pieces
    if !pieces.contains(.field(.state)),
      let countdown = pieces.firstIndex(where: {
        guard case .field(let field) = $0 else { return false }
        return field.isCountdown
      })
    {
      withoutPhase[countdown] = .field(.state)
    }
    piecesWithoutPhase = withoutPhase
  }

  /// How often a line from this template has to be redrawn.
  public var clock: StatusClock {
    pieces.reduce(.never) { result, piece in
      guard case .field(let field) = piece else { return result }
      return max(result, field.clock)
    }
  }

  /// The line for `snapshot` at `now`, with surrounding spaces trimmed; never empty. `{state}`
  /// is in `words`.
  public func render(_ snapshot: StatusSnapshot, at now: Date, words: StatusWords) -> String {
    let line = fill(snapshot, at: now, words: words)
    guard line.isEmpty else { return line }
    var fallback = Self.fallback
    fallback.icons = icons
    return fallback.fill(snapshot, at: now, words: words)
  }

  private func fill(_ snapshot: StatusSnapshot, at now: Date, words: StatusWords) -> String {
    let hasPhase = snapshot.status?.hasPhase ?? false
    return (hasPhase ? pieces : piecesWithoutPhase).map { piece in
      switch piece {
      case .text(let text): text
      case .field(let field): value(of: field, snapshot, at: now, words: words)
      }
    }.joined().trimmingWhitespace()
  }

  func value(of field: StatusField, _ snapshot: StatusSnapshot, at now: Date, words: StatusWords)
    -> String
  {
    let state = snapshot.displayState
    let status = snapshot.status
    let hasPhase = status?.hasPhase ?? false
    switch field {
    case .icon: return state.icon(in: icons)
    case .state:
      if state == .waiting, let next = status?.next { return words.waiting(next) }
      return words.state(state)
    case .card: return status?.card ?? ""
    case .remaining:
      return hasPhase ? DurationText.clock(snapshot.remaining(at: now)) : ""
    case .remainingMinutes:
      return hasPhase ? "\(Int((snapshot.remaining(at: now) / 60).rounded(.up)))m" : ""
    case .progress: return hasPhase ? "\(snapshot.progress(at: now))" : ""
    case .cycle:
      guard let status, hasPhase, status.longBreakAfter > 0 else { return "" }
      return "\(status.cycle)/\(status.longBreakAfter)"
    case .today:
      return status.map { "\(Int(($0.focusToday / 60).rounded(.down)))" } ?? ""
    case .goal:
      return status?.dailyGoal.map { "\(Int(($0 / 60).rounded(.down)))" } ?? ""
    case .dnd: return snapshot.doNotDisturb.map { $0 ? "on" : "off" } ?? ""
    case .distraction: return snapshot.distraction ?? ""
    case .intention: return status?.intention ?? ""
    }
  }
}
