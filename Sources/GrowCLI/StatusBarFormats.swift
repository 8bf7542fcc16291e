import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowDBus
@_spi(GrowBuiltIn) import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// The status-bar protocols `grow status --format` speaks, each exactly as the bar reads it.
enum StatusBarFormat: String, CaseIterable {
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

  static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// What a bar click does. The wheel adds or takes off a minute; a phase always keeps its last
/// minute, so a stray scroll never skips or ends one.
enum BarClick: Equatable {
  case toggle, stop, skip, extendOneMinute, shortenOneMinute

  /// X11 button numbers, as i3bar, i3blocks and polybar report them.
  init?(button: Int) {
    switch button {
    case 1: self = .toggle
    case 2: self = .stop
    case 3: self = .skip
    case 4: self = .extendOneMinute
    case 5: self = .shortenOneMinute
    default: return nil
    }
  }

  /// The timer method and its arguments.
  var call: (method: String, arguments: [BusValue]) {
    switch self {
    case .toggle: ("Toggle", [])
    case .stop: ("Stop", [])
    case .skip: ("Skip", [])
    case .extendOneMinute: ("Extend", [.uint32(60)])
    case .shortenOneMinute: ("Shorten", [.uint32(60)])
    }
  }

  /// The same, as a `grow` command line (for polybar's action tags).
  var commandWords: String {
    switch self {
    case .toggle: "toggle"
    case .stop: "stop"
    case .skip: "skip"
    case .extendOneMinute: "extend 1m"
    case .shortenOneMinute: "shorten 1m"
    }
  }
}

/// Renders one update in one format.
struct StatusBarRenderer {
  let format: StatusBarFormat
  let template: StatusTemplate
  /// How bars call `grow` back (polybar action tags).
  let growCommand: String
  /// `[plugin.notify] warn-before`: this long before a running focus ends, the bars show it
  /// ending soon (its own colour, waybar's `ending-soon` class). A notification cannot say it
  /// then: Do-Not-Disturb holds notifications during focus. nil: never.
  var warnBefore: TimeInterval? = nil

  /// The colour bars give ending-soon focus.
  static let endingSoonColor = "#ff4fd8"

  /// Whether `snapshot` is a running focus within `warnBefore` of its end at `now`.
  func isEndingSoon(_ snapshot: StatusSnapshot, at now: Date) -> Bool {
    guard let warnBefore, warnBefore > 0, let status = snapshot.status, status.state == .focus,
      !status.paused, status.endsAt != nil
    else { return false }
    return snapshot.remaining(at: now) <= warnBefore
  }

  /// The next instant the line can look different: the template's clock, or the moment focus
  /// starts ending soon.
  func nextChange(after now: Date, of snapshot: StatusSnapshot) -> Date? {
    let clockChange = clock.nextChange(after: now, of: snapshot)
    guard let warnBefore, warnBefore > 0, let status = snapshot.status, status.state == .focus,
      !status.paused, let endsAt = status.endsAt
    else { return clockChange }
    let warning = endsAt.addingTimeInterval(-warnBefore)
    guard warning > now else { return clockChange }
    return min(clockChange ?? warning, warning)
  }

  /// The colour of `snapshot`'s line at `now`.
  func color(_ snapshot: StatusSnapshot, at now: Date) -> String {
    isEndingSoon(snapshot, at: now) ? Self.endingSoonColor : Self.color(snapshot.displayState)
  }

  /// How often the output changes while a phase runs: the template's fields decide, plus
  /// waybar's `percentage`, which it always carries.
  var clock: StatusClock { format == .waybar ? max(template.clock, .everyPercent) : template.clock }

  /// Written once, in one write, before the first update: i3bar decides between JSON and
  /// plain text from its first read, so the header and the `[` opening the endless array
  /// must arrive together.
  var header: String? {
    format == .i3bar ? #"{"version":1,"click_events":true}"# + "\n[" : nil
  }

  /// One update for a never-ending feed, without the newline. `isFirst`: i3bar separates
  /// the status lines of its array with commas.
  func update(_ snapshot: StatusSnapshot, at now: Date, isFirst: Bool = true) -> String {
    let text = template.render(snapshot, at: now, words: .spoken)
    switch format {
    case .plain, .i3blocks: return text
    case .polybar: return polybarLine(text, snapshot, at: now)
    case .waybar: return waybarObject(text, snapshot, at: now)
    case .i3bar: return (isFirst ? "" : ",") + i3barLine(text, snapshot, at: now)
    }
  }

  /// The output of a single run (`grow status --format F` without `--follow`).
  func once(_ snapshot: StatusSnapshot, at now: Date) -> String {
    let text = template.render(snapshot, at: now, words: .spoken)
    switch format {
    case .i3blocks:
      // Interval mode: full text, short text, colour.
      return [text, text, color(snapshot, at: now)].joined(separator: "\n")
    case .plain, .polybar, .waybar, .i3bar:
      return update(snapshot, at: now)
    }
  }

  // MARK: polybar

  /// `%{A1:grow toggle:}…%{A}` around the text, one area per button, and the state's colour
  /// as `%{F#…}…%{F-}`. polybar ends a command at the first unescaped `:`, so colons in the
  /// command are written `\:`; `%{` in the text would start a tag, so it is broken up.
  private func polybarLine(_ text: String, _ snapshot: StatusSnapshot, at now: Date) -> String {
    let clicks: [(button: Int, click: BarClick)] = [
      (1, .toggle), (2, .stop), (3, .skip), (4, .extendOneMinute), (5, .shortenOneMinute),
    ]
    let escapedCommand = growCommand.replacing(":", with: "\\:")
    let open = clicks.map { "%{A\($0.button):\(escapedCommand) \($0.click.commandWords):}" }
    let body = text.replacing("%{", with: "% {")
    let colored = "%{F\(color(snapshot, at: now))}" + body + "%{F-}"
    return open.joined() + colored + String(repeating: "%{A}", count: clicks.count)
  }

  // MARK: waybar

  private struct WaybarObject: Encodable {
    let text: String
    let alt: String
    let tooltip: String
    let `class`: [String]
    let percentage: Int
  }

  /// `text` and `tooltip` are Pango markup to waybar: a bare `&` makes GTK reject the label.
  private func waybarObject(_ text: String, _ snapshot: StatusSnapshot, at now: Date) -> String {
    let state = snapshot.displayState
    let object = WaybarObject(
      text: Self.pangoEscaped(text), alt: state.rawValue,
      tooltip: Self.pangoEscaped(Self.tooltip(snapshot)),
      class: Self.classes(snapshot) + (isEndingSoon(snapshot, at: now) ? ["ending-soon"] : []),
      percentage: snapshot.progress(at: now))
    return Self.json(object)
  }

  /// CSS classes: the state, plus the phase under a pause and `break` for either break, so a
  /// style can say `.break` or `.paused.focus`.
  static func classes(_ snapshot: StatusSnapshot) -> [String] {
    var classes = [snapshot.displayState.rawValue]
    if let status = snapshot.status, status.hasPhase {
      if status.paused { classes.append(status.state.rawValue) }
      if status.state != .focus { classes.append("break") }
    }
    return classes
  }

  /// What the bar shows on hover: only what changes with the timer's state, never with the
  /// clock, so the tooltip costs no wake-ups.
  static func tooltip(_ snapshot: StatusSnapshot) -> String {
    guard let status = snapshot.status else { return Message("Grow is not running").render() }
    var lines: [String] = []
    if let kind = status.state.phaseKind {
      let (phase, card) = (kind.inWords, status.card)
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
        let until = LocaleTime.clock(endsAt)
        line += Message(" · until {time}").render(["time": until])
      }
      lines.append(line)
    } else if let next = status.next {
      lines.append(
        Message("{phase} waiting on '{card}'").render(["phase": next.inWords, "card": status.card])
      )
    } else {
      lines.append(Message("Grow: idle").render())
    }
    if let intention = status.intention { lines.append(intention) }
    // The figures of `grow status` and `grow stats` (FocusFigures, in words): focus time
    // changes only when a phase ends, so the tooltip stays true without a redraw.
    let today = TodayInWords.figures(
      completed: status.completedToday, focus: status.focusToday,
      cutShort: status.cutShortToday, goal: status.dailyGoal)
    lines.append(Message("today: {figures}").render(["figures": today]))
    return lines.joined(separator: "\n")
  }

  static func pangoEscaped(_ text: String) -> String { text.markupEscaped }

  // MARK: i3bar

  private struct I3barBlock: Encodable {
    let name = "grow"
    let instance = "timer"
    let fullText: String
    let color: String
    let markup = "none"

    // The i3bar protocol's own key names.
    enum CodingKeys: String, CodingKey {
      case name, instance, color, markup
      case fullText = "full_text"
    }
  }

  private func i3barLine(_ text: String, _ snapshot: StatusSnapshot, at now: Date) -> String {
    "[" + Self.json(I3barBlock(fullText: text, color: color(snapshot, at: now))) + "]"
  }

  /// Each state its own colour (i3bar `color`, i3blocks' colour line, polybar `%{F…}`);
  /// waybar styles its classes instead.
  static func color(_ state: DisplayState) -> String {
    switch state {
    case .focus: "#ff6e6e"
    case .shortBreak, .longBreak: "#69d26e"
    case .paused: "#e6c84b"
    case .waiting: "#6ec8e6"
    case .distracted: "#ff9f1c"
    case .idle: "#999999"
    case .off: "#666666"
    }
  }

  private static func json(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }
}
