import FoundationEssentials
internal import GrowBasics
@_spi(GrowHost) import GrowCore
internal import GrowMessages

// What `grow status --follow` and the statusbar and tray plugins show: the built-in
// plugins' (`@_spi(GrowBuiltIn)`), not part of the plugin API, so its words and fields can
// change without breaking a plugin. Thin wrappers of GrowBasics' `BarSnapshot` and
// `BarTemplate` (StatusBarLine.swift), which the `grow` front renders with, with `Date`s and
// `TimerStatus`.

/// `BarSnapshot` with the kit's `TimerStatus` (nil: no daemon, "off").
@_spi(GrowBuiltIn) public struct StatusSnapshot: Sendable, Equatable {
  public var status: TimerStatus?
  public var doNotDisturb: Bool?
  public var distraction: String?

  public init(status: TimerStatus?, doNotDisturb: Bool? = nil, distraction: String? = nil) {
    self.status = status
    self.doNotDisturb = doNotDisturb
    self.distraction = distraction
  }

  /// The state as a bar shows it.
  public var displayState: DisplayState {
    DisplayState(rawValue: bar.displayState.rawValue) ?? .off
  }

  /// Seconds left at `now`: counted down from `EndsAt` while running, the kept remainder while
  /// paused, 0 when idle, waiting or off.
  public func remaining(at now: Date) -> TimeInterval {
    bar.remaining(at: now.timeIntervalSince1970)
  }

  /// Whole percent of the phase done at `now` (0–100).
  public func progress(at now: Date) -> Int { bar.progress(at: now.timeIntervalSince1970) }
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

/// Why a `--template` cannot be used.
@_spi(GrowBuiltIn) public struct StatusTemplateError: Error, Equatable, CustomStringConvertible {
  public let description: String
}

/// A line with `{field}` placeholders, e.g. `{icon} {remaining} {card}`: GrowBasics'
/// `BarTemplate`, which the `grow` front and grow-cli render with too.
@_spi(GrowBuiltIn) public struct StatusTemplate: Sendable, Equatable {
  var line: BarTemplate
  public var source: String { line.source }
  /// The glyphs `{icon}` draws.
  public var icons: IconSet {
    get { IconSet(rawValue: line.icons) ?? .unicode }
    set { line.icons = newValue.rawValue }
  }

  /// What a bar and status.txt show by default: the countdown while a phase runs or is
  /// paused (the icon says focus, break or paused), the state in words otherwise.
  public static let standard = Self(line: .standard)

  private init(line: BarTemplate) { self.line = line }

  public init(_ source: String, icons: IconSet = .unicode) throws(StatusTemplateError) {
    do {
      line = try BarTemplate(source, icons: icons.rawValue)
    } catch {
      throw StatusTemplateError(description: error.description)
    }
  }

  /// The next instant after `now` at which the line can show something else (a countdown
  /// second or minute, a percent), or nil when nothing changes before the phase ends (the
  /// daemon announces the end itself) or it is paused or idle.
  public func nextChange(after now: Date, of snapshot: StatusSnapshot) -> Date? {
    line.clock.nextChange(after: now.timeIntervalSince1970, of: snapshot.bar)
      .map(Date.init(timeIntervalSince1970:))
  }

  /// The line for `snapshot` at `now`, with surrounding spaces trimmed; never empty. `{state}`
  /// is in `words`.
  public func render(_ snapshot: StatusSnapshot, at now: Date, words: StatusWords) -> String {
    line.render(
      snapshot.bar, at: now.timeIntervalSince1970,
      words: BarWords(
        state: { words.state(DisplayState(rawValue: $0.rawValue) ?? .off) },
        waiting: { words.waiting(PhaseKind(rawValue: $0) ?? .focus) }))
  }
}

extension StatusSnapshot {
  /// The same, as GrowBasics' bar renderer reads it.
  var bar: BarSnapshot {
    BarSnapshot(
      status: status.map(StatusFacts.init), doNotDisturb: doNotDisturb, distraction: distraction)
  }
}
