import Glibc

// What `grow status` prints, written once for both processes that print it: the static front
// (`PREFIX/bin/grow`, Sources/grow) and the whole command line (GrowCLI, through
// libGrowKit.so). No Foundation: seconds are `Double`s, instants seconds since 1970, and the
// JSON has its own writer, so the front links only this, Glibc and libdbus.

/// The timer's status as `grow status` shows it: `TimerStatus` without Foundation's `Date`.
public struct StatusFacts: Sendable, Equatable {
  /// `idle`, `waiting`, `focus`, `short-break` or `long-break`.
  public var state: String
  public var paused: Bool
  /// Empty when idle.
  public var card: String
  public var duration: Double
  public var remaining: Double
  public var elapsed: Double
  /// Seconds since 1970; nil for none.
  public var startedAt: Double?
  public var endsAt: Double?
  public var cycle: Int
  public var longBreakAfter: Int
  /// The phase waiting for `grow resume` (`focus`, `short-break`, `long-break`); nil otherwise.
  public var next: String?
  /// The phase that comes next; nil when idle.
  public var nextPhase: String?
  public var completedToday: Int
  public var focusToday: Double
  public var dailyGoal: Double?
  public var intention: String?
  public var cutShortToday: Double

  public init(
    state: String, paused: Bool, card: String, duration: Double, remaining: Double,
    elapsed: Double, startedAt: Double?, endsAt: Double?, cycle: Int, longBreakAfter: Int,
    next: String?, nextPhase: String?, completedToday: Int, focusToday: Double,
    dailyGoal: Double?, intention: String?, cutShortToday: Double
  ) {
    self.state = state
    self.paused = paused
    self.card = card
    self.duration = duration
    self.remaining = remaining
    self.elapsed = elapsed
    self.startedAt = startedAt
    self.endsAt = endsAt
    self.cycle = cycle
    self.longBreakAfter = longBreakAfter
    self.next = next
    self.nextPhase = nextPhase
    self.completedToday = completedToday
    self.focusToday = focusToday
    self.dailyGoal = dailyGoal
    self.intention = intention
    self.cutShortToday = cutShortToday
  }

  /// A phase runs or is paused.
  public var hasPhase: Bool { PhaseWords.isPhase(state) }
}

/// Durations as Grow writes them: `DurationText.format` and `.clock` (GrowCore) are these.
public enum DurationWords {
  /// `25m`, `1h30m`, `45s`, `0s`.
  public static func format(_ seconds: Double) -> String {
    let total = wholeSeconds(seconds.rounded())
    if total == 0 { return "0s" }
    let hours = total / 3600
    let minutes = total % 3600 / 60
    let secs = total % 60
    var text = ""
    if hours > 0 { text += "\(hours)h" }
    if minutes > 0 { text += "\(minutes)m" }
    if secs > 0 { text += "\(secs)s" }
    return text
  }

  /// A countdown as a clock face: `4:05`, or `1:02:03` past an hour.
  public static func clock(_ seconds: Double) -> String {
    let total = wholeSeconds(seconds.rounded(.up))
    let hours = total / 3600
    let minutes = total % 3600 / 60
    let secs = total % 60
    let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
    return hours > 0
      ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" : "\(minutes):\(twoDigits(secs))"
  }

  /// Whole percent of `goal` reached, rounded down (99.9% is not done).
  public static func percent(_ focus: Double, of goal: Double) -> Int {
    guard goal > 0, focus.isFinite else { return 0 }
    return Int(min(max(focus.rounded() / goal.rounded() * 100, 0), 1e9).rounded(.down))
  }

  /// `seconds` as an Int, at least 0. Labels are made from values that come from outside too (a
  /// history database, another process's clock); NaN, infinity or 1e300 there must not trap in
  /// `Int(_:)`, so they are clamped (NaN to 0, the rest to 1e15 s, some 30 million years).
  static func wholeSeconds(_ seconds: Double) -> Int {
    guard !seconds.isNaN else { return 0 }
    return Int(min(max(seconds, 0), 1e15))
  }
}

/// The phases and states in words (the "grow" catalogue); `PhaseKind.inWords` is these.
public enum PhaseWords {
  /// `focus`, `short-break` or `long-break`.
  public static func isPhase(_ raw: String) -> Bool {
    raw == "focus" || raw == "short-break" || raw == "long-break"
  }

  /// How a person names the phase in a sentence: "short break"; nil for no phase.
  public static func inWords(_ raw: String) -> String? {
    switch raw {
    case "focus": Message("focus").render()
    case "short-break": Message("short break").render()
    case "long-break": Message("long break").render()
    default: nil
    }
  }

  /// The glyph `{icon}` draws for a display state (its raw value) in an icon set (`ascii`,
  /// `unicode`, `nerd`); `DisplayState.icon(in:)` is this.
  public static func icon(state: String, set: String) -> String {
    switch set {
    case "ascii":
      switch state {
      case "focus": "*"
      case "short-break", "long-break": "~"
      case "paused": "||"
      case "waiting": ".."
      case "idle": "-"
      case "distracted": "!"
      default: "x"
      }
    case "nerd":
      // Font Awesome 4 glyphs, which every Nerd Font carries at these code points.
      switch state {
      case "focus": "\u{F017}"  // nf-fa-clock_o
      case "short-break", "long-break": "\u{F0F4}"  // nf-fa-coffee
      case "paused": "\u{F04C}"  // nf-fa-pause
      case "waiting": "\u{F254}"  // nf-fa-hourglass
      case "idle": "\u{F10C}"  // nf-fa-circle_o
      case "distracted": "\u{F071}"  // nf-fa-warning
      default: "\u{F011}"  // nf-fa-power_off
      }
    default:
      // All in DejaVu Sans and DejaVu Sans Mono (fonts-dejavu-core, on every Debian desktop;
      // polybar draws only from the fonts it is given), and none an emoji by default, which
      // would take a colour font's height. Not ⏸ (U+23F8): DejaVu lacks it.
      switch state {
      case "focus": "●"
      case "short-break", "long-break": "☼"
      case "paused": "‖"
      case "waiting": "◌"
      case "idle": "○"
      case "distracted": "⚠"
      default: "⊘"
      }
    }
  }

  /// Today's figures in the reader's language, one message per figure, since a language words
  /// a count, a duration and a goal each its own way; `TodayInWords.figures` is this.
  public static func today(
    completed: Int, focus: Double, cutShort: Double, goal: Double?
  ) -> String {
    var text =
      Message(one: "{count} completed", other: "{count} completed", countedBy: "count")
      .render(["count": completed]) + ", "
      + Message("{time} focus").render(["time": DurationWords.format(focus)])
    if let goal, goal > 0 {
      text +=
        " "
        + Message("({percent}% of the {goal} goal)").render([
          "percent": DurationWords.percent(focus, of: goal), "goal": DurationWords.format(goal),
        ])
    }
    if cutShort.rounded() >= 1 {
      text += ", " + Message("{time} cut short").render(["time": DurationWords.format(cutShort)])
    }
    return text
  }
}

/// `grow status` and `grow status --json`.
public enum StatusText {
  /// Two or three lines for people, each a whole sentence of the message layer (so a
  /// translation can reorder it), with the state's glyph in front.
  public static func human(_ status: StatusFacts) -> String {
    var lines: [String] = []
    let cardName = status.card.isEmpty ? "" : "'\(status.card)'"
    let clock = { (seconds: Double) in DurationWords.clock(seconds.rounded()) }
    // The same glyphs as the status bar line's default ones.
    let mark = PhaseWords.icon(state: displayState(status), set: "unicode")
    switch status.state {
    case "waiting":
      lines.append(
        mark + " "
          + Message("{next} waiting on {card} · 'grow resume' starts it").render([
            "next": status.next.flatMap(PhaseWords.inWords) ?? "", "card": cardName,
          ]))
    case "focus", "short-break", "long-break":
      var line =
        mark + " "
        + Message("{phase} on {card} · {left} left of {length}").render([
          "phase": PhaseWords.inWords(status.state) ?? status.state, "card": cardName,
          "left": clock(status.remaining), "length": clock(status.duration),
        ])
      if status.paused { line += " · " + Message("paused").render() }
      if status.longBreakAfter > 0 {
        line +=
          " · "
          + Message("cycle {cycle}/{of}").render([
            "cycle": status.cycle, "of": status.longBreakAfter,
          ])
      }
      lines.append(line)
    default:
      lines.append(
        mark + " " + Message("idle · 'grow start [CARD]' begins a focus session").render())
    }
    if let intention = status.intention {
      lines.append("  " + Message("intention: {intention}").render(["intention": intention]))
    }
    // The figures of `grow stats`' today line (FocusFigures), in the reader's language.
    lines.append(
      "  "
        + Message("today: {figures}").render([
          "figures": PhaseWords.today(
            completed: status.completedToday, focus: status.focusToday,
            cutShort: status.cutShortToday, goal: status.dailyGoal)
        ]))
    return lines.joined(separator: "\n")
  }

  /// The state a bar shows for `status` with nothing distracting: idle, waiting, paused or the
  /// phase (`DisplayState`'s raw values).
  static func displayState(_ status: StatusFacts) -> String {
    switch status.state {
    case "waiting": "waiting"
    case "focus", "short-break", "long-break": status.paused ? "paused" : status.state
    default: "idle"
    }
  }

  /// `grow status --json`: the `TimerStatusJSON` shape, one line, keys sorted; every key
  /// always there, `null` where it does not apply, whole seconds, times in ISO 8601 UTC.
  public static func json(_ status: StatusFacts) -> String {
    let whole = { (seconds: Double) in JSONText.Value.int(Int(max(0, seconds).rounded())) }
    let text = { (text: String?) in JSONText.Value.string(text.flatMap { $0.isEmpty ? nil : $0 }) }
    let instant = { (seconds: Double?) in JSONText.Value.string(seconds.map(isoText)) }
    let goal = status.dailyGoal.map { Int(max(0, $0).rounded()) } ?? 0
    return JSONText.object([
      ("state", text(status.state)),
      ("paused", .bool(status.paused)),
      ("card", text(status.card)),
      ("duration", whole(status.duration)),
      ("remaining", .int(Int(max(0, status.remaining).rounded(.up)))),
      ("elapsed", whole(status.elapsed)),
      ("started_at", instant(status.startedAt)),
      ("ends_at", instant(status.endsAt)),
      ("cycle", .int(status.cycle)),
      ("completed_today", .int(status.completedToday)),
      ("focus_today", whole(status.focusToday)),
      ("cut_short_today", whole(status.cutShortToday)),
      ("next", text(status.next)),
      ("next_phase", text(status.nextPhase)),
      ("intention", text(status.intention)),
      ("long_break_after", .int(status.longBreakAfter)),
      ("daily_goal", goal > 0 ? .int(goal) : .null),
    ])
  }

  /// `2026-05-04T09:30:00Z`: whole seconds (rounded down), UTC.
  public static func isoText(_ secondsSince1970: Double) -> String {
    var time = time_t(secondsSince1970.rounded(.down))
    var parts = tm()
    guard gmtime_r(&time, &parts) != nil else { return "" }
    let two = { (value: Int32) in value < 10 ? "0\(value)" : "\(value)" }
    var year = "\(Int(parts.tm_year) + 1900)"
    while year.count < 4 { year = "0" + year }
    return year + "-" + two(parts.tm_mon + 1) + "-" + two(parts.tm_mday) + "T"
      + two(parts.tm_hour) + ":" + two(parts.tm_min) + ":" + two(parts.tm_sec) + "Z"
  }
}

/// A small JSON writer: objects of strings, integers, booleans, null and arrays of strings, written as
/// Foundation's `JSONEncoder` with `.sortedKeys` and `.withoutEscapingSlashes` writes them.
public enum JSONText {
  public enum Value: Sendable, Equatable {
    case string(String?)
    case int(Int)
    case bool(Bool)
    case null
    /// An array of strings (waybar's `class`).
    case strings([String])
  }

  /// One object on one line, keys sorted by their UTF-8 bytes.
  public static func object(_ fields: [(String, Value)]) -> String {
    let sorted = fields.sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
    return "{"
      + sorted.map { key, value in quoted(key) + ":" + text(value) }.joined(separator: ",") + "}"
  }

  static func text(_ value: Value) -> String {
    switch value {
    case .string(let string?): quoted(string)
    case .string(nil), .null: "null"
    case .int(let number): String(number)
    case .bool(let flag): flag ? "true" : "false"
    case .strings(let strings): "[" + strings.map(quoted).joined(separator: ",") + "]"
    }
  }

  /// A JSON string: `"` and `\` escaped, control characters as `\b \t \n \f \r` or `\u00xx`.
  public static func quoted(_ string: String) -> String {
    var out = "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\u{08}": out += "\\b"
      case "\t": out += "\\t"
      case "\n": out += "\\n"
      case "\u{0C}": out += "\\f"
      case "\r": out += "\\r"
      case _ where scalar.value < 0x20:
        out += (scalar.value < 0x10 ? "\\u000" : "\\u00") + String(scalar.value, radix: 16)
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}
