import FoundationEssentials

/// A named preset for one kind of work: "math", "work", "writing".
///
/// Every card carries its own rhythm; the config's `[timer]` section supplies whatever a
/// `[card.NAME]` section leaves out.
public struct FocusCard: Sendable, Equatable, Codable {
  public var name: String
  /// Seconds of focus per focus phase.
  public var focus: TimeInterval
  public var shortBreak: TimeInterval
  public var longBreak: TimeInterval
  /// A long break replaces the short one after every this many completed focus phases.
  public var longBreakAfter: Int
  /// Whether a break starts by itself when focus ends.
  public var autoStartBreaks: Bool
  /// Whether focus starts by itself when a break ends. Off by default: Grow never pulls
  /// someone back to work without asking.
  public var autoStartFocus: Bool
  /// Focus seconds per day the person aims for, if any.
  public var dailyGoal: TimeInterval?
  /// What this card is for, shown while focusing ("Chapter 3 exercises").
  public var intention: String?
  /// The to-do the session's focus is for (`grow start --task`): its id in the history's
  /// task list. Set for one session only, never from the config.
  public var task: Int64?
  /// Windows that distract during this card's focus, as written in the config
  /// (`discord, firefox:/youtube/`); the `x11` plugin compiles and matches them.
  public var distractions: [String]
  /// Exceptions to `distractions`, in the same notation.
  public var allowed: [String]
  /// Where `distractions` and `allow` were written, so a message about one of their patterns
  /// points at it; nil for a card made in code. Not a setting: `==` leaves them out.
  public var distractionsLine: ConfigLine?
  public var allowedLine: ConfigLine?
  /// What to do with a flagged window besides telling.
  public var block: DistractionBlock
  /// Which of this card's breaks the `breakscreen` plugin covers the screen for.
  public var breakScreen: BreakScreenChoice {
    get { breakScreenSetting ?? .off }
    set { breakScreenSetting = newValue == .off ? nil : newValue }
  }
  /// Optional where it is kept, so a session saved before the key existed still decodes.
  private var breakScreenSetting: BreakScreenChoice?

  public init(
    name: String, focus: TimeInterval = 25 * 60, shortBreak: TimeInterval = 5 * 60,
    longBreak: TimeInterval = 15 * 60, longBreakAfter: Int = 4, autoStartBreaks: Bool = true,
    autoStartFocus: Bool = false, dailyGoal: TimeInterval? = nil, intention: String? = nil,
    distractions: [String] = [], allowed: [String] = [], block: DistractionBlock = .off
  ) {
    self.name = name
    self.focus = focus
    self.shortBreak = shortBreak
    self.longBreak = longBreak
    self.longBreakAfter = longBreakAfter
    self.autoStartBreaks = autoStartBreaks
    self.autoStartFocus = autoStartFocus
    self.dailyGoal = dailyGoal
    self.intention = intention
    self.distractions = distractions
    self.allowed = allowed
    self.block = block
  }

  /// Equal settings make equal cards, wherever in the file they were written (a card moved
  /// down the file is the same card; ConfigFuzzTests' layoutDoesNotChangeTheConfig says so).
  public static func == (a: FocusCard, b: FocusCard) -> Bool {
    a.name == b.name && a.focus == b.focus && a.shortBreak == b.shortBreak
      && a.longBreak == b.longBreak && a.longBreakAfter == b.longBreakAfter
      && a.autoStartBreaks == b.autoStartBreaks && a.autoStartFocus == b.autoStartFocus
      && a.dailyGoal == b.dailyGoal && a.intention == b.intention && a.task == b.task
      && a.distractions == b.distractions && a.allowed == b.allowed && a.block == b.block
      && a.breakScreen == b.breakScreen
  }

  /// The card used when there is no config file at all: the classic 25/5/15, long break
  /// after every fourth focus phase.
  public static let standard = FocusCard(name: "work")

  /// The planned length of a phase of `kind` on this card.
  public func length(of kind: PhaseKind) -> TimeInterval {
    switch kind {
    case .focus: focus
    case .shortBreak: shortBreak
    case .longBreak: longBreak
    }
  }
}

/// A line of the config file, as messages name it: `config.ini:12`.
public struct ConfigLine: Sendable, Equatable, Codable, CustomStringConvertible {
  public var path: String
  /// 1-based.
  public var line: Int

  public init(path: String, line: Int) {
    self.path = path
    self.line = line
  }

  public var description: String { "\(path):\(line)" }
}

/// `block =` on a card: what happens to a window flagged as a distraction.
public enum DistractionBlock: String, Sendable, Codable, CaseIterable {
  /// Only tell (an event, a notification).
  case off
  /// Also minimise (iconify) it, where the window manager honours that.
  case minimize
  /// Block the card's `site:` distractions in the browser (Grow's page instead, through the
  /// browser extension); windows are only flagged.
  case page
  /// Also ask it to close, as its close button does (it may still ask to save).
  case close

  /// Whether the browser shows Grow's page for a listed site. Every mode but `off` does: a
  /// tab cannot be minimised, and a card that blocks windows means its sites too.
  public var blocksSites: Bool { self != .off }
}

/// `break-screen =` on a card: which breaks the `breakscreen` plugin covers every monitor for.
public enum BreakScreenChoice: String, Sendable, Codable, CaseIterable {
  case off
  case short
  case long
  case all

  /// Whether a break of `kind` gets the screen.
  public func covers(_ kind: PhaseKind) -> Bool {
    switch (self, kind) {
    case (.all, .shortBreak), (.all, .longBreak), (.short, .shortBreak), (.long, .longBreak):
      true
    default: false
    }
  }
}
