import FoundationEssentials
@_spi(GrowHost) import GrowCore

extension TimerError {
  /// What the person reads: why the command was refused and what to do instead.
  public var message: String {
    switch self {
    case .unknownCard(let name, let known):
      let cards = known.joined(separator: ", ")
      if let guess = closestMatch(to: name, in: known) {
        return Message("no card named '{name}'; did you mean '{guess}'? (cards: {cards})")
          .render(["name": shown(name), "guess": guess, "cards": cards])
      }
      return Message("no card named '{name}' (cards: {cards})")
        .render(["name": shown(name), "cards": cards])
    case .alreadyRunning(let kind, let card, let remaining):
      return Message(
        "{phase} on '{card}' is already running ({left} left); "
          + "use 'grow stop' to end it or 'grow skip' to move on"
      ).render(["phase": kind.inWords, "card": card, "left": DurationText.clock(remaining)])
    case .alreadyPaused:
      return Message("already paused; 'grow resume' continues").render()
    case .notPaused(let kind):
      return Message("not paused; {phase} is running").render(["phase": kind.inWords])
    case .nothingRunning(let command, let waiting?):
      return Message(
        "nothing is running to {command}: the {phase} is waiting; "
          + "'grow resume' starts it, 'grow stop' ends the session"
      ).render(["command": command, "phase": waiting.inWords])
    case .nothingRunning(let command, nil):
      return Message("nothing is running to {command}; start with 'grow start [CARD]'")
        .render(["command": command])
    case .lengthOutOfRange(let option, let seconds):
      return Message("{option} must be between 1s and 24h, not {seconds}")
        .render(["option": option, "seconds": shownSeconds(seconds)])
    case .extensionOutOfRange(let seconds):
      return Message("can only extend by 1s or more, up to a phase of 24h (asked for {seconds})")
        .render(["seconds": shownSeconds(seconds)])
    case .intentionTooLong(let limit):
      return Message(
        one: "the intention is longer than {limit} character; keep it to one short line, "
          + "such as 'Chapter 3 exercises'",
        other: "the intention is longer than {limit} characters; keep it to one short line, "
          + "such as 'Chapter 3 exercises'",
        countedBy: "limit"
      ).render(["limit": limit])
    case .intentionNotOneLine(let scalar):
      let code = TimerError.codePoint(scalar)
      switch scalar.properties.generalCategory {
      case .lineSeparator:
        return Message("the intention must be one line of text; it holds the line separator {code}")
          .render(["code": code])
      case .paragraphSeparator:
        return Message(
          "the intention must be one line of text; it holds the paragraph separator {code}"
        ).render(["code": code])
      default:
        return Message(
          "the intention must be one line of text; it holds the control character {code}"
        ).render(["code": code])
      }
    case .cannotShorten(let seconds, _) where seconds < 1:
      return Message("can only shorten by 1s or more (asked for {seconds})")
        .render(["seconds": shownSeconds(seconds)])
    case .cannotShorten(_, let remaining):
      return Message("only {left} left; a phase keeps its last minute ('grow skip' ends it)")
        .render(["left": DurationText.format(remaining.rounded(.up))])
    @unknown default:
      return Message("the timer refused the command").render()
    }
  }

  /// `U+000A`: how a character is named when it cannot be shown.
  public static func codePoint(_ scalar: Unicode.Scalar) -> String {
    let hex = String(scalar.value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
  }
}

/// `value` seconds for an error message. `Int(value)` would trap on the very values these
/// messages reject (infinity, NaN, 1e20), which can arrive from D-Bus.
func shownSeconds(_ value: TimeInterval) -> String {
  value.rounded() == value && abs(value) < 1e15 ? "\(Int(value))s" : "\(value)s"
}

extension DurationError {
  /// What the person reads when a duration cannot be read.
  public var message: String {
    switch self {
    case .empty: Message("empty duration; write it like 25m, 90s or 1h30m").render()
    case .malformed(let text):
      Message("'{text}' is not a duration; write it like 25m, 90s or 1h30m").render([
        "text": shown(text)
      ])
    case .tooLong(let text): Message("'{text}' is longer than 24h").render(["text": shown(text)])
    }
  }
}
