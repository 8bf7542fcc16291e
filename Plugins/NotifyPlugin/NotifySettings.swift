import FoundationEssentials
import Glibc
@_spi(GrowBuiltIn) import GrowConfig
import GrowCore
import GrowMessages
import GrowPluginKit

/// What the notify plugin tells the person about; each kind is one notification on screen,
/// replaced in place when it comes again.
enum NotificationKind: String, CaseIterable {
  case focusOver = "focus-over"
  case breakOver = "break-over"
  case longBreakDue = "long-break-due"
  case distraction
  /// Back after focus paused itself while nobody was there.
  case away
  case warning
  /// "Done?" at the end of a focus on a task (`grow start --task`).
  case taskDone = "task-done"

  /// `x-dunst-stack-tag` and `x-canonical-private-synchronous`: servers that know them keep
  /// one notification per tag even across daemon restarts (when `replaces_id` is lost).
  var stackTag: String { "grow-" + rawValue }
}

/// `[plugin.notify]`, read once at start.
struct NotifySettings {
  /// The keys of `[plugin.notify]` (`NotifyPlugin.settings`).
  static let declared = [
    PluginSetting(
      "events", .choiceList(["none"] + NotificationKind.allCases.map(\.rawValue)),
      default: "focus-over, break-over, long-break-due, distraction, away, task-done",
      help: "What to notify about, comma-separated; none for nothing."),
    PluginSetting(
      "warn-before", .duration(minimum: 0), default: "0",
      help: "Warn this long before a phase ends; 0 for no warning."),
    PluginSetting(
      "timeout", .durationOr(words: ["default", "never", "0"], minimum: 1), default: "default",
      help: "How long a notification stays: a duration, never, or default (the server's)."),
    PluginSetting(
      "urgency", .choice(NotificationUrgency.allCases.map(\.rawValue)), default: "normal",
      help: "The urgency of Grow's notifications."),
    PluginSetting("sound", .bool, default: "true", help: "Ask the server to play a sound."),
    PluginSetting(
      "actions", .bool, default: "true", help: "Buttons (start the break, skip) on notifications."
    ),
    PluginSetting(
      "suggestions", .textList, default: "(five short ones)",
      help: "Comma-separated things to do in a break, one shown at a time."),
  ]
  /// Grow's own suggestions, in the reader's language (config.ini's are the person's words).
  static var defaultSuggestions: [String] {
    [
      Message("Stand up and stretch."), Message("Drink a glass of water."),
      Message("Look out of the window for a minute."), Message("Walk around the room."),
      Message("Roll your shoulders and breathe out slowly."),
    ].map { $0.render() }
  }

  var kinds: Set<NotificationKind> = [
    .focusOver, .breakOver, .longBreakDue, .distraction, .away, .taskDone,
  ]
  /// How long before a phase ends the warning comes; nil for none.
  var warnBefore: TimeInterval?
  /// Milliseconds; -1 for the server's default, 0 for never.
  var timeoutMilliseconds: Int32 = -1
  var urgency = NotificationUrgency.normal
  var sound = true
  var actions = true
  var suggestions = defaultSuggestions

  init() {}

  init(_ section: ConfigSection) throws(ConfigError) {
    try section.check(against: Self.declared, cards: [])
    if let entry = section["events"] {
      var kinds = Set<NotificationKind>()
      for name in section.list("events") where name != "none" {
        guard let kind = NotificationKind(rawValue: name) else {
          throw section.invalid(
            entry,
            "unknown event '\(name)'; known: none, "
              + NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        kinds.insert(kind)
      }
      self.kinds = kinds
    }
    let warn = try section.duration("warn-before", default: 0)
    if warn > 0 {
      warnBefore = warn
      // Asking for a warning time is asking for the warning, whatever `events` says.
      kinds.insert(.warning)
    } else {
      kinds.remove(.warning)
    }
    if let entry = section["timeout"] {
      switch entry.value.lowercased() {
      case "default": timeoutMilliseconds = -1
      case "never", "0": timeoutMilliseconds = 0
      default:
        let seconds = try section.duration("timeout", default: 0, minimum: 1)
        timeoutMilliseconds = Int32(min(seconds, 3600) * 1000)
      }
    }
    if let entry = section["urgency"] {
      guard let urgency = NotificationUrgency(rawValue: entry.value.lowercased()) else {
        throw section.invalid(
          entry, "use low, normal or critical")
      }
      self.urgency = urgency
    }
    sound = try section.bool("sound", default: true)
    actions = try section.bool("actions", default: true)
    let listed = section.list("suggestions")
    if section["suggestions"] != nil { suggestions = listed }
  }
}
