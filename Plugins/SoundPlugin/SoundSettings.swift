import FoundationEssentials
import Glibc
@_spi(GrowBuiltIn) import GrowConfig
import GrowCore
import GrowPluginKit

/// The moments the sound plugin can be heard at.
enum SoundMoment: String, CaseIterable, Sendable {
  /// A focus phase ran its course.
  case focusOver = "focus-over"
  /// A break ran its course.
  case breakOver = "break-over"
  /// A distracting window or site (after its grace).
  case distraction
}

/// What to play: a sound from the desktop's sound theme by its event id, or a file.
enum SoundChoice: Equatable, Sendable {
  case off
  /// The theme's sound for the moment (`SoundSettings.themeSounds`).
  case themed
  case event(String)
  case file(String)

  /// `on`, `off`, an event id (`bell`) or an absolute path (`/home/me/ding.oga`).
  init?(_ text: String) {
    switch text.lowercased() {
    case "on", "true", "yes": self = .themed
    case "off", "false", "no": self = .off
    default:
      if text.hasPrefix("/") {
        self = .file(text)
      } else if !text.isEmpty,
        text.allSatisfy({
          $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".")
        })
      {
        self = .event(text)
      } else {
        return nil
      }
    }
  }
}

/// Quiet hours: a span of the day, which may cross midnight (`22:00-07:00`).
struct QuietHours: Equatable, Sendable {
  /// Minutes after local midnight.
  var from: Int
  var to: Int

  init?(_ text: String) {
    let parts = text.split(separator: "-").map { String($0.filter { $0 != " " }) }
    guard parts.count == 2, let from = Self.minutes(parts[0]), let to = Self.minutes(parts[1]),
      from != to
    else { return nil }
    self.from = from
    self.to = to
  }

  private static func minutes(_ text: String) -> Int? {
    let parts = text.split(separator: ":")
    guard parts.count == 2, let hours = Int(parts[0]), let minutes = Int(parts[1]),
      (0..<24).contains(hours), (0..<60).contains(minutes)
    else { return nil }
    return hours * 60 + minutes
  }

  /// Whether `minute` (after local midnight) falls in the quiet span.
  func contains(minute: Int) -> Bool {
    from < to ? (from..<to).contains(minute) : minute >= from || minute < to
  }
}

/// `[plugin.sound]`, read once at start.
struct SoundSettings: Equatable {
  static let declared = [
    PluginSetting(
      "events", .choiceList(["none"] + SoundMoment.allCases.map(\.rawValue)),
      default: "focus-over, break-over",
      help: "When to play a sound, comma-separated; none for never."),
    PluginSetting(
      "focus-over", .text, default: "complete",
      help: "The sound at the end of focus: a sound-theme event id, or an absolute file path."),
    PluginSetting(
      "break-over", .text, default: "bell", help: "The sound at the end of a break, likewise."),
    PluginSetting(
      "distraction", .text, default: "dialog-warning",
      help: "The sound on a distraction, likewise."),
    PluginSetting(
      "volume", .count(0...100), default: "100", help: "Loudness in percent of the system's."),
    PluginSetting(
      "quiet-hours", .text, default: "none",
      help: "A span of the day without sounds, e.g. 22:00-07:00; none for none."),
    PluginSetting(
      "during-dnd", .bool, default: "true",
      help: "Play Grow's own sounds while Do-Not-Disturb is on (it silences other apps)."),
    PluginSetting(
      "card.NAME", .text, default: "",
      help: "For one card: on, off, an event id or a file, for its focus-over sound.",
      perCard: true),
  ]

  /// The default sound of each moment, from the freedesktop sound theme.
  static let themeSounds: [SoundMoment: String] = [
    .focusOver: "complete", .breakOver: "bell", .distraction: "dialog-warning",
  ]

  /// What a sound setting takes, for its error.
  static let choiceHelp = "use on, off, an event id such as bell, or a file path"

  var moments: Set<SoundMoment> = [.focusOver, .breakOver]
  var sounds: [SoundMoment: SoundChoice] = [:]
  /// 0–100.
  var volume = 100
  var quietHours: QuietHours?
  var duringDoNotDisturb = true
  var cards: [String: SoundChoice] = [:]

  init() {}

  init(_ section: ConfigSection, cards deck: [String]) throws(ConfigError) {
    try section.check(against: Self.declared, cards: deck)
    if section["events"] != nil {
      moments = Set(section.list("events").compactMap(SoundMoment.init(rawValue:)))
    }
    for moment in SoundMoment.allCases {
      guard let entry = section[moment.rawValue] else { continue }
      guard let choice = SoundChoice(entry.value) else {
        throw section.invalid(
          entry, Self.choiceHelp)
      }
      sounds[moment] = choice
    }
    if let entry = section["volume"] { volume = Int(entry.value) ?? volume }
    if let entry = section["quiet-hours"], entry.value.lowercased() != "none" {
      guard let span = QuietHours(entry.value) else {
        throw section.invalid(
          entry, "write a span such as 22:00-07:00, or none")
      }
      quietHours = span
    }
    if let entry = section["during-dnd"] {
      duringDoNotDisturb = ["true", "yes", "on", "1"].contains(entry.value.lowercased())
    }
    for entry in section.entries where entry.key.hasPrefix("card.") {
      guard let choice = SoundChoice(entry.value) else {
        throw section.invalid(
          entry, Self.choiceHelp)
      }
      cards[String(entry.key.dropFirst(5))] = choice
    }
  }

  /// The sound for `moment` on `card`; nil for none.
  func sound(for moment: SoundMoment, card: String) -> SoundChoice? {
    guard moments.contains(moment), volume > 0 else { return nil }
    var choice = sounds[moment] ?? .themed
    if moment == .focusOver, let forCard = cards[card] { choice = forCard }
    switch choice {
    case .off: return nil
    case .themed: return .event(Self.themeSounds[moment] ?? "bell")
    default: return choice
    }
  }

  /// The volume in decibels, as canberra takes it: 100 % is 0 dB.
  var decibels: Double { 20 * log10(Double(volume) / 100) }
}
