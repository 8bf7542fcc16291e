internal import CGettext
import Glibc

// What a status bar shows (`grow status --follow`, `--format`, `--template`, the statusbar
// and tray plugins), written once for every process that shows it: the static `grow` front,
// which follows the daemon without Foundation, and grow-cli and the plugins through
// GrowPluginKit's `StatusTemplate`/`StatusSnapshot` and GrowCLI's `StatusBarRenderer`, which
// wrap these. As `StatusText`: seconds are `Double`s, instants seconds since 1970.

/// Everything a bar line is made from: the timer's status (nil when no daemon runs), Do Not
/// Disturb and the current distraction.
public struct BarSnapshot: Sendable, Equatable {
  /// nil: no daemon owns `org.grow.Grow1`; the line shows "off".
  public var status: StatusFacts?
  /// `org.grow.Grow1.DoNotDisturb.Enabled` when that interface exists; nil otherwise.
  public var doNotDisturb: Bool?
  /// What distracts the person right now; nil for nothing.
  public var distraction: String?

  public init(status: StatusFacts?, doNotDisturb: Bool? = nil, distraction: String? = nil) {
    self.status = status
    self.doNotDisturb = doNotDisturb
    self.distraction = distraction
  }

  /// The state as a bar shows it.
  public var displayState: BarState {
    guard let status else { return .off }
    if distraction != nil, status.state == "focus", !status.paused { return .distracted }
    switch status.state {
    case "waiting": return .waiting
    case "focus", "short-break", "long-break":
      return status.paused ? .paused : BarState(rawValue: status.state) ?? .idle
    default: return .idle
    }
  }

  /// Seconds left at `now`: counted down from `endsAt` while running, the kept remainder while
  /// paused, 0 when idle, waiting or off.
  public func remaining(at now: Double) -> Double {
    guard let status, status.hasPhase else { return 0 }
    guard let endsAt = status.endsAt, !status.paused else { return status.remaining }
    return max(0, endsAt - now)
  }

  /// Whole percent of the phase done at `now` (0–100).
  public func progress(at now: Double) -> Int {
    guard let status, status.duration > 0 else { return 0 }
    let done = (status.duration - remaining(at: now)) / status.duration
    return min(100, max(0, Int((done * 100).rounded(.down))))
  }
}

/// The states a bar tells apart, each with its own icon, colour and (waybar) CSS class.
public enum BarState: String, Sendable, CaseIterable {
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

  /// The state in words, for `{state}`.
  public var inWords: String {
    switch self {
    case .focus, .shortBreak, .longBreak: PhaseWords.inWords(rawValue) ?? rawValue
    case .paused: Message("paused").render()
    case .waiting: Message("waiting").render()
    case .idle: Message("idle").render()
    case .distracted: Message("distracted").render()
    case .off: Message("off").render()
    }
  }

  /// A phase that waits for `grow resume`, in words: "short break waiting".
  public static func waitingInWords(_ phase: String) -> String {
    switch phase {
    case "short-break": Message("short break waiting").render()
    case "long-break": Message("long break waiting").render()
    default: Message("focus waiting").render()
    }
  }

  /// Each state its own colour (i3bar `color`, i3blocks' colour line, polybar `%{F…}`).
  public var color: String {
    switch self {
    case .focus: "#ff6e6e"
    case .shortBreak, .longBreak: "#69d26e"
    case .paused: "#e6c84b"
    case .waiting: "#6ec8e6"
    case .distracted: "#ff9f1c"
    case .idle: "#999999"
    case .off: "#666666"
    }
  }
}

/// The words `{state}` shows: the reader's language (`spoken`), or any other (tests).
public struct BarWords: Sendable {
  public var state: @Sendable (BarState) -> String
  /// A phase (`focus`, `short-break`, `long-break`) waiting to be started.
  public var waiting: @Sendable (String) -> String

  public init(
    state: @escaping @Sendable (BarState) -> String,
    waiting: @escaping @Sendable (String) -> String
  ) {
    self.state = state
    self.waiting = waiting
  }

  /// In the reader's language (the "grow" catalogue).
  public static let spoken = BarWords(state: \.inWords, waiting: BarState.waitingInWords)
}

/// What `--template` can show.
public enum BarField: String, Sendable, CaseIterable {
  case icon, state, card, remaining
  case remainingMinutes = "remaining_min"
  case progress, cycle, today, goal, dnd, distraction, intention

  /// Empty unless a phase runs or is paused.
  var isCountdown: Bool { [.remaining, .remainingMinutes, .progress].contains(self) }

  /// How often the field's text can change while a phase runs.
  var clock: BarClock {
    switch self {
    case .remaining: .everySecond
    case .remainingMinutes: .everyMinute
    case .progress: .everyPercent
    default: .never
    }
  }
}

/// How often a line must be redrawn while a phase runs. Paused or idle: never.
public enum BarClock: Int, Sendable, Comparable {
  case never, everyMinute, everyPercent, everySecond

  public static func < (lhs: BarClock, rhs: BarClock) -> Bool { lhs.rawValue < rhs.rawValue }

  /// The next instant after `now` at which a field on this clock shows something else, or nil
  /// when nothing changes before the phase ends (the daemon announces the end itself).
  public func nextChange(after now: Double, of snapshot: BarSnapshot) -> Double? {
    guard let status = snapshot.status, !status.paused, let endsAt = status.endsAt else {
      return nil
    }
    let remaining = endsAt - now
    guard remaining > 0 else { return nil }
    switch self {
    case .never:
      return nil
    case .everySecond, .everyMinute:
      // Shown rounded up, so the text changes when `remaining` crosses a whole unit.
      let unit: Double = self == .everySecond ? 1 : 60
      let wholeUnitsLeft = (remaining / unit).rounded(.up) - 1
      guard wholeUnitsLeft > 0 else { return nil }
      return endsAt - wholeUnitsLeft * unit
    case .everyPercent:
      guard status.duration > 0 else { return nil }
      let nextPercent = Double(snapshot.progress(at: now) + 1)
      guard nextPercent < 100 else { return nil }
      return endsAt - status.duration * (1 - nextPercent / 100)
    }
  }
}

/// Why a `--template` cannot be used.
public enum BarTemplateError: Error, Equatable, CustomStringConvertible {
  case unknownField(String)
  case unclosedBrace(String)

  public var description: String {
    let valid = BarField.allCases.map { "{\($0.rawValue)}" }.joined(separator: " ")
    switch self {
    case .unknownField(let name):
      return "unknown template field '{\(name)}'; valid fields: \(valid)"
    case .unclosedBrace(let template):
      return "template '\(template)' has a '{' without its '}'; valid fields: \(valid)"
    }
  }
}

/// A line with `{field}` placeholders, e.g. `{icon} {remaining} {card}`.
public struct BarTemplate: Sendable, Equatable {
  enum Piece: Sendable, Equatable {
    case text(String)
    case field(BarField)
  }

  let pieces: [Piece]
  /// Used instead of `pieces` while no phase runs (idle, waiting, off): the countdown fields
  /// are empty then, so the first of them shows the state instead, unless the template shows
  /// `{state}` already. `{icon} {remaining}` reads "○ idle", never a lone "○".
  let piecesWithoutPhase: [Piece]
  public let source: String
  /// The glyphs `{icon}` draws: `ascii`, `unicode` or `nerd`.
  public var icons = "unicode"

  /// The countdown while a phase runs or is paused, the state in words otherwise.
  public static let standard = Self(
    pieces: [.field(.icon), .text(" "), .field(.remaining)], source: "{icon} {remaining}")
  /// Shown when the template gives an empty line, as `{card}` does while idle: bars must
  /// never get an empty line.
  static let fallback = Self(
    pieces: [.field(.icon), .text(" "), .field(.state)], source: "{icon} {state}")

  public init(_ source: String, icons: String = "unicode") throws(BarTemplateError) {
    var pieces: [Piece] = []
    var rest = Substring(source)
    while let open = rest.firstIndex(of: "{") {
      if open > rest.startIndex { pieces.append(.text(String(rest[..<open]))) }
      guard let close = rest[open...].firstIndex(of: "}") else {
        throw .unclosedBrace(source)
      }
      let name = String(rest[rest.index(after: open)..<close])
      guard let field = BarField(rawValue: name) else { throw .unknownField(name) }
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
  public var clock: BarClock {
    pieces.reduce(.never) { result, piece in
      guard case .field(let field) = piece else { return result }
      return max(result, field.clock)
    }
  }

  /// The line for `snapshot` at `now`, with surrounding spaces trimmed; never empty.
  public func render(_ snapshot: BarSnapshot, at now: Double, words: BarWords = .spoken)
    -> String
  {
    let line = fill(snapshot, at: now, words: words)
    guard line.isEmpty else { return line }
    var fallback = Self.fallback
    fallback.icons = icons
    return fallback.fill(snapshot, at: now, words: words)
  }

  private func fill(_ snapshot: BarSnapshot, at now: Double, words: BarWords) -> String {
    let hasPhase = snapshot.status?.hasPhase ?? false
    let line = (hasPhase ? pieces : piecesWithoutPhase).map { piece in
      switch piece {
      case .text(let text): text
      case .field(let field): value(of: field, snapshot, at: now, words: words)
      }
    }.joined()
    let isSpace = { (character: Character) in character.isWhitespace && !character.isNewline }
    guard let first = line.firstIndex(where: { !isSpace($0) }),
      let last = line.lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(line[first...last])
  }

  func value(of field: BarField, _ snapshot: BarSnapshot, at now: Double, words: BarWords)
    -> String
  {
    let state = snapshot.displayState
    let status = snapshot.status
    let hasPhase = status?.hasPhase ?? false
    switch field {
    case .icon: return PhaseWords.icon(state: state.rawValue, set: icons)
    case .state:
      if state == .waiting, let next = status?.next { return words.waiting(next) }
      return words.state(state)
    case .card: return status?.card ?? ""
    case .remaining:
      return hasPhase ? DurationWords.clock(snapshot.remaining(at: now)) : ""
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

/// The status-bar protocols `grow status --format` speaks, each exactly as the bar reads it.
public enum BarFormat: String, Sendable, CaseIterable {
  /// One line of text: tmux, lemonbar, xmobar, scripts.
  case plain
  /// i3blocks: `interval=persist` reads one line per write; interval mode reads full text,
  /// short text and colour lines and passes clicks in `BLOCK_BUTTON`.
  case i3blocks
  /// polybar `custom/script` with `tail = true`: one line per update, clicks as action tags.
  case polybar
  /// waybar `custom` module with `"return-type": "json"`: one JSON object per line.
  case waybar
  /// i3bar's own protocol: a header, then an endless JSON array of status lines; clicks come
  /// back on standard input.
  case i3bar

  public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// What a bar click does. The wheel adds or takes off a minute; a phase always keeps its last
/// minute, so a stray scroll never skips or ends one.
public enum BarClick: Sendable, Equatable, CaseIterable {
  case toggle, stop, skip, extendOneMinute, shortenOneMinute

  /// X11 button numbers, as i3bar, i3blocks and polybar report them.
  public init?(button: Int) {
    switch button {
    case 1: self = .toggle
    case 2: self = .stop
    case 3: self = .skip
    case 4: self = .extendOneMinute
    case 5: self = .shortenOneMinute
    default: return nil
    }
  }

  /// The timer method, and its one `uint32` argument (seconds) if it takes one.
  public var method: (name: String, seconds: UInt32?) {
    switch self {
    case .toggle: ("Toggle", nil)
    case .stop: ("Stop", nil)
    case .skip: ("Skip", nil)
    case .extendOneMinute: ("Extend", 60)
    case .shortenOneMinute: ("Shorten", 60)
    }
  }

  /// The same, as a `grow` command line (for polybar's action tags).
  public var commandWords: String {
    switch self {
    case .toggle: "toggle"
    case .stop: "stop"
    case .skip: "skip"
    case .extendOneMinute: "extend 1m"
    case .shortenOneMinute: "shorten 1m"
    }
  }

  /// The button of an i3bar click event (`{"button":1,…}`, led by `,` or `[`); nil for
  /// anything else.
  public static func inI3barEvent(_ line: String) -> BarClick? {
    var text = Substring(line).drop { $0.isWhitespace }
    if text.first == "," || text.first == "[" { text = text.dropFirst() }
    guard text.first == "{", let key = text.firstRange(of: "\"button\"") else { return nil }
    var rest = text[key.upperBound...].drop { $0.isWhitespace }
    guard rest.first == ":" else { return nil }
    rest = rest.dropFirst().drop { $0.isWhitespace }
    let digits = rest.prefix { $0.isASCII && $0.isNumber }
    // A number such as `1.5` or `1e0` is no button.
    guard let after = rest.dropFirst(digits.count).first,
      after == "," || after == "}"
        || after.isWhitespace, let button = Int(digits)
    else { return nil }
    return BarClick(button: button)
  }
}

/// One update of a bar line in one format.
public struct BarRenderer: Sendable {
  public let format: BarFormat
  public let template: BarTemplate
  /// How bars call `grow` back (polybar action tags).
  public let growCommand: String
  /// `[plugin.notify] warn-before`: this long before a running focus ends, the bars show it
  /// ending soon (its own colour, waybar's `ending-soon` class). A notification cannot say it
  /// then: Do Not Disturb holds notifications during focus. nil or 0: never.
  public var warnBefore: Double?

  /// The colour bars give ending-soon focus.
  public static let endingSoonColor = "#ff4fd8"

  public init(format: BarFormat, template: BarTemplate, growCommand: String, warnBefore: Double?) {
    self.format = format
    self.template = template
    self.growCommand = growCommand
    self.warnBefore = warnBefore
  }

  /// Whether `snapshot` is a running focus within `warnBefore` of its end at `now`.
  public func isEndingSoon(_ snapshot: BarSnapshot, at now: Double) -> Bool {
    guard let warnBefore, warnBefore > 0, let status = snapshot.status, status.state == "focus",
      !status.paused, status.endsAt != nil
    else { return false }
    return snapshot.remaining(at: now) <= warnBefore
  }

  /// The next instant the line can look different: the template's clock, or the moment focus
  /// starts ending soon.
  public func nextChange(after now: Double, of snapshot: BarSnapshot) -> Double? {
    let clockChange = clock.nextChange(after: now, of: snapshot)
    guard let warnBefore, warnBefore > 0, let status = snapshot.status, status.state == "focus",
      !status.paused, let endsAt = status.endsAt
    else { return clockChange }
    let warning = endsAt - warnBefore
    guard warning > now else { return clockChange }
    return min(clockChange ?? warning, warning)
  }

  /// The colour of `snapshot`'s line at `now`.
  public func color(_ snapshot: BarSnapshot, at now: Double) -> String {
    isEndingSoon(snapshot, at: now) ? Self.endingSoonColor : snapshot.displayState.color
  }

  /// How often the output changes while a phase runs: the template's fields decide, plus
  /// waybar's `percentage`, which it always carries.
  public var clock: BarClock {
    format == .waybar ? max(template.clock, .everyPercent) : template.clock
  }

  /// Written once, in one write, before the first update: i3bar decides between JSON and
  /// plain text from its first read, so the header and the `[` opening the endless array
  /// must arrive together.
  public var header: String? {
    format == .i3bar ? #"{"version":1,"click_events":true}"# + "\n[" : nil
  }

  /// One update for a never-ending feed, without the newline. `isFirst`: i3bar separates
  /// the status lines of its array with commas.
  public func update(_ snapshot: BarSnapshot, at now: Double, isFirst: Bool = true) -> String {
    let text = template.render(snapshot, at: now)
    switch format {
    case .plain, .i3blocks: return text
    case .polybar: return polybarLine(text, snapshot, at: now)
    case .waybar: return waybarObject(text, snapshot, at: now)
    case .i3bar: return (isFirst ? "" : ",") + i3barLine(text, snapshot, at: now)
    }
  }

  /// The output of a single run (`grow status --format F` without `--follow`).
  public func once(_ snapshot: BarSnapshot, at now: Double) -> String {
    switch format {
    case .i3blocks:
      // Interval mode: full text, short text, colour.
      let text = template.render(snapshot, at: now)
      return [text, text, color(snapshot, at: now)].joined(separator: "\n")
    case .plain, .polybar, .waybar, .i3bar:
      return update(snapshot, at: now)
    }
  }

  // MARK: polybar

  /// `%{A1:grow toggle:}…%{A}` around the text, one area per button, and the state's colour
  /// as `%{F#…}…%{F-}`. polybar ends a command at the first unescaped `:`, so colons in the
  /// command are written `\:`; `%{` in the text would start a tag, so it is broken up.
  private func polybarLine(_ text: String, _ snapshot: BarSnapshot, at now: Double) -> String {
    let escapedCommand = growCommand.replacing(":", with: "\\:")
    let open = BarClick.allCases.enumerated().map { index, click in
      "%{A\(index + 1):\(escapedCommand) \(click.commandWords):}"
    }
    let body = text.replacing("%{", with: "% {")
    let colored = "%{F\(color(snapshot, at: now))}" + body + "%{F-}"
    return open.joined() + colored + String(repeating: "%{A}", count: BarClick.allCases.count)
  }

  // MARK: waybar

  /// `text` and `tooltip` are Pango markup to waybar: a bare `&` makes GTK reject the label.
  private func waybarObject(_ text: String, _ snapshot: BarSnapshot, at now: Double) -> String {
    let classes =
      Self.classes(snapshot) + (isEndingSoon(snapshot, at: now) ? ["ending-soon"] : [])
    return JSONText.object([
      ("text", .string(MarkupText.escaped(text))),
      ("alt", .string(snapshot.displayState.rawValue)),
      ("tooltip", .string(MarkupText.escaped(Self.tooltip(snapshot)))),
      ("class", .strings(classes)),
      ("percentage", .int(snapshot.progress(at: now))),
    ])
  }

  /// CSS classes: the state, plus the phase under a pause and `break` for either break, so a
  /// style can say `.break` or `.paused.focus`.
  public static func classes(_ snapshot: BarSnapshot) -> [String] {
    var classes = [snapshot.displayState.rawValue]
    if let status = snapshot.status, status.hasPhase {
      if status.paused { classes.append(status.state) }
      if status.state != "focus" { classes.append("break") }
    }
    return classes
  }

  /// What the bar shows on hover: only what changes with the timer's state, never with the
  /// clock, so the tooltip costs no wake-ups.
  public static func tooltip(_ snapshot: BarSnapshot) -> String {
    guard let status = snapshot.status else { return Message("Grow is not running").render() }
    var lines: [String] = []
    if let phase = PhaseWords.inWords(status.state) {
      let card = status.card
      var line =
        snapshot.displayState == .paused
        ? Message("{phase} on '{card}' (paused)").render(["phase": phase, "card": card])
        : Message("{phase} on '{card}'").render(["phase": phase, "card": card])
      if status.longBreakAfter > 0 {
        line += Message(" · cycle {cycle}/{of}").render([
          "cycle": status.cycle, "of": status.longBreakAfter,
        ])
      }
      if let endsAt = status.endsAt, !status.paused {
        line += Message(" · until {time}").render(["time": LocalClock.text(of: endsAt)])
      }
      lines.append(line)
    } else if let next = status.next {
      let phase = PhaseWords.inWords(next) ?? next
      lines.append(
        Message("{phase} waiting on '{card}'").render(["phase": phase, "card": status.card]))
    } else {
      lines.append(Message("Grow: idle").render())
    }
    if let intention = status.intention { lines.append(intention) }
    // The figures of `grow status` and `grow stats` (FocusFigures, in words): focus time
    // changes only when a phase ends, so the tooltip stays true without a redraw.
    let today = PhaseWords.today(
      completed: status.completedToday, focus: status.focusToday,
      cutShort: status.cutShortToday, goal: status.dailyGoal)
    lines.append(Message("today: {figures}").render(["figures": today]))
    return lines.joined(separator: "\n")
  }

  // MARK: i3bar

  private func i3barLine(_ text: String, _ snapshot: BarSnapshot, at now: Double) -> String {
    "["
      + JSONText.object([
        ("name", .string("grow")), ("instance", .string("timer")), ("full_text", .string(text)),
        ("color", .string(color(snapshot, at: now))), ("markup", .string("none")),
      ]) + "]"
  }
}

/// A never-ending feed of bar lines (`grow status --follow`): a line is written only when it
/// changes, and i3bar's array gets its commas.
public struct BarFeed: Sendable {
  public var renderer: BarRenderer
  private var lastLine: String?
  private var wroteFirstUpdate = false

  public init(renderer: BarRenderer) { self.renderer = renderer }

  /// The update to write for `snapshot` at `now`, or nil when the bar shows it already.
  public mutating func update(_ snapshot: BarSnapshot, at now: Double) -> String? {
    let line = renderer.update(snapshot, at: now, isFirst: !wroteFirstUpdate)
    let comparable = wroteFirstUpdate && line.hasPrefix(",") ? String(line.dropFirst()) : line
    guard comparable != lastLine else { return nil }
    lastLine = comparable
    wroteFirstUpdate = true
    return line
  }

  /// When to look again: a millisecond after the next change the line shows, so the
  /// countdown has surely crossed its boundary by then; nil for never.
  public func wake(after now: Double, of snapshot: BarSnapshot) -> Double? {
    renderer.nextChange(after: now, of: snapshot).map { $0 + 0.001 }
  }
}

/// Text safe inside XML, SVG and Pango markup: `String.markupEscaped` (GrowCore) is this.
public enum MarkupText {
  /// `& < > " '` written as entities (waybar renders its text as Pango markup, and a bare `&`
  /// makes it show nothing).
  public static func escaped(_ text: String) -> String {
    var escaped = ""
    for character in text {
      switch character {
      case "&": escaped += "&amp;"
      case "<": escaped += "&lt;"
      case ">": escaped += "&gt;"
      case "'": escaped += "&#39;"
      case "\"": escaped += "&quot;"
      default: escaped.append(character)
      }
    }
    return escaped
  }
}

/// A time of day as the person's locale writes it without seconds ("14:30", "02:30 PM"):
/// `LocaleTime.clock` is this. The C library's LC_TIME (`nl_langinfo_l`, `strftime_l`) from
/// `LC_ALL`, `LC_TIME` or `LANG`; the C locale's 24-hour clock where that is not installed.
public enum LocalClock {
  /// The LC_TIME locale, made once; never freed (the process reads it to its end).
  private struct TimeLocale: @unchecked Sendable {
    let handle: locale_t
  }
  private static let locale = TimeLocale(handle: grow_time_locale())

  /// `secondsSince1970` on the machine's clock (`TZ`, /etc/localtime).
  public static func text(of secondsSince1970: Double) -> String {
    var seconds = time_t(secondsSince1970.rounded(.down))
    var parts = tm()
    guard localtime_r(&seconds, &parts) != nil else { return "" }
    return text(hour: Int(parts.tm_hour), minute: Int(parts.tm_min)) ?? ""
  }

  /// `hour:minute` in the locale's time format; nil if strftime writes nothing.
  public static func text(hour: Int, minute: Int) -> String? {
    var parts = tm()
    parts.tm_hour = Int32(hour)
    parts.tm_min = Int32(minute)
    var buffer = [CChar](repeating: 0, count: 128)
    let length = grow_strftime(&buffer, buffer.count, clockFormat, &parts, locale.handle)
    guard length > 0 else { return nil }
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// The locale's time format (`T_FMT`) without its seconds: `%T` and `%r` spelled out, then
  /// `:%S` taken away.
  public static var clockFormat: String {
    var format = String(cString: grow_time_format(locale.handle))
    if format.isEmpty { format = "%H:%M:%S" }
    format = format.replacing("%T", with: "%H:%M:%S")
      .replacing("%r", with: String(cString: grow_ampm_time_format(locale.handle)))
    for seconds in [":%S", ".%S", "%S"] {
      format = format.replacing(seconds, with: "")
    }
    return String(format.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
