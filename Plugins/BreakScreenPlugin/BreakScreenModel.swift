import FoundationEssentials
import GrowCore
import GrowMessages

/// A button on the break screen.
enum BreakScreenButton: String, Equatable, Sendable {
  /// Ends the break now; the history keeps it as skipped.
  case skip
  /// Hides the screen and makes the break longer by the same time, so it comes back whole.
  case postpone
}

/// What a person did on the screen, in the screen's terms (the display maps keys and clicks).
enum BreakScreenInput: Equatable, Sendable {
  /// Tab (Shift+Tab: `backwards`) moves the keyboard focus between the buttons.
  case tab(backwards: Bool)
  /// Enter or Space presses the focused button.
  case enter
  /// Escape skips, as in Safe Eyes.
  case escape
  case clicked(BreakScreenButton)
}

/// What the screen shows, drawn the same on every monitor.
struct BreakScreenContent: Equatable, Sendable {
  /// "Short break", "Long break".
  var title: String
  /// The break's time left, as a clock: "4:59".
  var timeLeft: String
  /// "Focus 3 of 4 on 'math' done".
  var headline: String
  var suggestion: String
  /// In order, with their labels; empty when strict.
  var buttons: [(button: BreakScreenButton, label: String)]
  /// The button the keyboard is on, if any.
  var focused: BreakScreenButton?

  static func == (a: BreakScreenContent, b: BreakScreenContent) -> Bool {
    a.title == b.title && a.timeLeft == b.timeLeft && a.headline == b.headline
      && a.suggestion == b.suggestion && a.focused == b.focused
      && a.buttons.map(\.button) == b.buttons.map(\.button)
      && a.buttons.map(\.label) == b.buttons.map(\.label)
  }
}

/// One break's screen, apart from any display: which buttons it has, where the keyboard is,
/// how often it was postponed, and what it shows at a given time left.
struct BreakScreenState: Equatable, Sendable {
  let kind: PhaseKind
  let card: String
  /// The focus phase this break follows (1 for the first of the session).
  let cycle: Int
  /// Focus phases per set on the card (a long break comes after this many).
  let setLength: Int
  let settings: BreakScreenSettings
  private(set) var postponed = 0
  private(set) var focused: BreakScreenButton?

  init(phase: Phase, setLength: Int, settings: BreakScreenSettings) {
    kind = phase.kind
    card = phase.card
    cycle = phase.cycle
    self.setLength = max(setLength, 1)
    self.settings = settings
  }

  /// Skip, and Postpone while postpones are left; none when strict.
  var buttons: [BreakScreenButton] {
    guard !settings.strict else { return [] }
    return postponed < settings.postponeLimit ? [.skip, .postpone] : [.skip]
  }

  var canPostpone: Bool { buttons.contains(.postpone) }

  /// What the input asks the plugin to do, if anything; moves the keyboard focus.
  mutating func handle(_ input: BreakScreenInput) -> BreakScreenButton? {
    let buttons = buttons
    switch input {
    case .tab(let backwards):
      guard !buttons.isEmpty else { return nil }
      let step = backwards ? buttons.count - 1 : 1
      if let focused, let index = buttons.firstIndex(of: focused) {
        self.focused = buttons[(index + step) % buttons.count]
      } else {
        self.focused = backwards ? buttons.last : buttons.first
      }
      return nil
    case .enter:
      guard let focused, buttons.contains(focused) else { return nil }
      return focused
    case .escape:
      return buttons.contains(.skip) ? .skip : nil
    case .clicked(let button):
      return buttons.contains(button) ? button : nil
    }
  }

  /// Counts a postpone; false when none is left (the screen stays).
  mutating func postpone() -> Bool {
    guard canPostpone else { return false }
    postponed += 1
    // The keyboard focus stays on a button that is still there.
    if let focused, !buttons.contains(focused) { self.focused = buttons.first }
    return true
  }

  /// What the screen shows with `remaining` seconds of the break left.
  func content(remaining: TimeInterval) -> BreakScreenContent {
    let position = (cycle - 1) % setLength + 1
    let length = DurationText.format(settings.postponeLength.rounded())
    return BreakScreenContent(
      title: kind == .longBreak ? Message("Long break").render() : Message("Short break").render(),
      timeLeft: DurationText.clock(max(remaining, 0)),
      headline: Message("Focus {done} of {set} on '{card}' done").render([
        "done": position, "set": setLength, "card": card,
      ]),
      suggestion: settings.suggestion(for: cycle),
      buttons: buttons.map { button in
        switch button {
        case .skip: (button, Message("Skip").render())
        case .postpone: (button, Message("Postpone {length}").render(["length": length]))
        }
      },
      focused: focused)
  }

  /// When the displayed second changes next: `remaining` crosses the next whole second. nil
  /// once nothing is left.
  static func nextChange(remaining: TimeInterval) -> TimeInterval? {
    guard remaining > 0 else { return nil }
    let shown = remaining.rounded(.up)
    // The clock shows `shown` until `remaining` drops to `shown - 1`.
    return remaining - (shown - 1)
  }
}
