import FoundationEssentials
import GrowBasics
@_spi(GrowHost) import GrowCore
import GrowDBus
import GrowMessages
@_spi(GrowHost) @_spi(GrowBuiltIn) import GrowPluginKit

/// The daemon's status as the CLI shows it (`GrowClient.status()`). `--json` prints the
/// shared `TimerStatusJSON` shape, the same as the status-bar plugin's `status.json`.
struct StatusReport: Encodable {
  let status: TimerStatus

  init(_ status: TimerStatus) { self.status = status }

  func encode(to encoder: any Encoder) throws { try TimerStatusJSON(status).encode(to: encoder) }

  /// The keys of `--json` and what each holds, as `grow help status` lists them: made from
  /// `TimerStatus.fields`, so a field added there is documented here.
  static func jsonSchema(english: Bool) -> String {
    let keyColumn = String(repeating: " ", count: 22)
    let textColumn = String(repeating: " ", count: 40)
    return TimerStatus.fields.map { field in
      var lines: [String] = []
      var line = keyColumn + field.jsonKey
      line += String(repeating: " ", count: textColumn.count - line.count)
      var lineHasWords = false
      let schema = english ? field.schema : field.schemaInReadersLanguage
      for word in schema.split(separator: " ") {
        if lineHasWords, line.count + 1 + word.count > 86 {
          lines.append(line)
          line = textColumn
          lineHasWords = false
        }
        line += (lineHasWords ? " " : "") + word
        lineHasWords = true
      }
      return (lines + [line]).joined(separator: "\n")
    }.joined(separator: "\n")
  }

  /// Two or three lines for people: GrowBasics' `StatusText.human`, which the `grow` front
  /// prints too.
  var humanText: String { StatusText.human(StatusFacts(status)) }

  /// `--json`: GrowBasics' `StatusText.json`, as the `grow` front prints it; the same object as
  /// `TimerStatusJSON` (StatusTextTests compares them).
  var jsonText: String { StatusText.json(StatusFacts(status)) }
}

/// A card as `grow cards` shows it.
struct CardReport: Encodable {
  var name: String
  var isDefault: Bool
  var focus: Int
  var shortBreak: Int
  var longBreak: Int
  var longBreakAfter: Int
  var autoStartBreaks: Bool
  var autoStartFocus: Bool
  var dailyGoal: Int?
  var intention: String?

  enum CodingKeys: String, CodingKey {
    case name, focus, intention
    case isDefault = "default"
    case shortBreak = "short_break"
    case longBreak = "long_break"
    case longBreakAfter = "long_break_after"
    case autoStartBreaks = "auto_start_breaks"
    case autoStartFocus = "auto_start_focus"
    case dailyGoal = "daily_goal"
  }

  init(_ values: [String: BusValue]) {
    func int(_ key: String) -> Int { Int(values[key]?.integerValue ?? 0) }
    name = values["Name"]?.stringValue ?? ""
    isDefault = values["Default"]?.boolValue ?? false
    focus = int("Focus")
    shortBreak = int("ShortBreak")
    longBreak = int("LongBreak")
    longBreakAfter = int("LongBreakAfter")
    autoStartBreaks = values["AutoStartBreaks"]?.boolValue ?? false
    autoStartFocus = values["AutoStartFocus"]?.boolValue ?? false
    dailyGoal = int("DailyGoal") > 0 ? int("DailyGoal") : nil
    let text = values["Intention"]?.stringValue ?? ""
    intention = text.isEmpty ? nil : text
  }

  var humanText: String {
    let format = { (seconds: Int) in DurationText.format(Double(seconds)) }
    let values: [String: any CustomStringConvertible] = [
      "name": name, "focus": format(focus), "short": format(shortBreak),
      "long": format(longBreak), "count": longBreakAfter, "goal": format(dailyGoal ?? 0),
    ]
    var line =
      (isDefault ? "* " : "  ")
      + (dailyGoal == nil
        ? Message(
          one: "{name}: {focus} focus, {short} break, {long} long break after {count}",
          other: "{name}: {focus} focus, {short} break, {long} long break after {count}",
          countedBy: "count"
        ).render(values)
        : Message(
          one:
            "{name}: {focus} focus, {short} break, {long} long break after {count}, goal {goal}/day",
          other:
            "{name}: {focus} focus, {short} break, {long} long break after {count}, goal {goal}/day",
          countedBy: "count"
        ).render(values))
    if let intention { line += " — \(intention)" }
    return line
  }
}

/// Encodes for `--json`: stable key order, one document per line.
func jsonText(_ value: some Encodable) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
  guard let data = try? encoder.encode(value) else { return "{}" }
  return String(decoding: data, as: UTF8.self)
}
