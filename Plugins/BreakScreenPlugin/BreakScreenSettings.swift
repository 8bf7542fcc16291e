import FoundationEssentials
import GrowConfig
import GrowCore
import GrowMessages

/// `[plugin.breakscreen]`, read once at start. Which breaks get the screen is a card's choice
/// (`break-screen =` in `[timer]` or `[card.NAME]`, checked by the config schema).
struct BreakScreenSettings: Equatable, Sendable {
  static let declared = [
    PluginSetting(
      "strict", .bool, default: "false",
      help: "Hide Skip and Postpone: the screen stays until the break ends."),
    PluginSetting(
      "postpone-limit", .count(0...10), default: "2",
      help: "How often one break may be postponed; 0 hides Postpone."),
    PluginSetting(
      "postpone-length", .duration(minimum: 10), default: "2m",
      help: "How much later a postponed break comes back (and how much longer it lasts)."),
    PluginSetting(
      "suggestions", .textList, default: "",
      help: "What to do in the break, comma-separated; one is shown per break. Empty: Grow's own."
    ),
    PluginSetting(
      "skip-when-fullscreen", .bool, default: "true",
      help:
        "Postpone the screen while the active window is fullscreen or a media player plays."),
  ]

  var strict = false
  var postponeLimit = 2
  var postponeLength: TimeInterval = 120
  /// The person's own suggestions; empty for Grow's (`suggestion(for:)`).
  var suggestions: [String] = []
  var skipWhenFullscreen = true

  init() {}

  init(_ section: ConfigSection, cards: [String]) throws(ConfigError) {
    try section.check(against: Self.declared, cards: cards)
    strict = try section.bool("strict", default: strict)
    postponeLimit = try section.int("postpone-limit", default: postponeLimit, in: 0...10)
    postponeLength = try section.duration(
      "postpone-length", default: postponeLength, minimum: 10)
    suggestions = section.list("suggestions")
    skipWhenFullscreen = try section.bool("skip-when-fullscreen", default: skipWhenFullscreen)
  }

  /// Grow's suggestions, calm and short, one per break in turn.
  static let ownSuggestions = [
    Message("Look out of the window, at something far away."),
    Message("Stand up and stretch your back and shoulders."),
    Message("Drink a glass of water."),
    Message("Close your eyes and breathe slowly."),
    Message("Walk around the room for a minute."),
  ]

  /// The suggestion for the break after focus number `cycle`: the list in turn.
  func suggestion(for cycle: Int) -> String {
    let index = max(cycle - 1, 0)
    if !suggestions.isEmpty { return suggestions[index % suggestions.count] }
    return Self.ownSuggestions[index % Self.ownSuggestions.count].render()
  }
}
