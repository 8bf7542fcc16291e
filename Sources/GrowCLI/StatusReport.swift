import Foundation
import GrowCore
import GrowDBus

/// The daemon's status as the CLI shows it, decoded from `GetStatus`.
struct StatusReport: Encodable {
  var state: String
  var paused: Bool
  var card: String?
  var duration: Int
  var remaining: Int
  var elapsed: Int
  var startedAt: String?
  var endsAt: String?
  var cycle: Int
  var longBreakAfter: Int
  var next: String?
  var completedToday: Int
  var focusToday: Int
  var dailyGoal: Int?
  var intention: String?

  enum CodingKeys: String, CodingKey {
    case state, paused, card, duration, remaining, elapsed, cycle, next, intention
    case startedAt = "started_at"
    case endsAt = "ends_at"
    case longBreakAfter = "long_break_after"
    case completedToday = "completed_today"
    case focusToday = "focus_today"
    case dailyGoal = "daily_goal"
  }

  init(_ values: [String: BusValue]) {
    func int(_ key: String) -> Int { Int(values[key]?.integerValue ?? 0) }
    func text(_ key: String) -> String? {
      values[key]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    }
    func time(_ key: String) -> String? {
      let micros = values[key]?.integerValue ?? 0
      guard micros > 0 else { return nil }
      return Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        .formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false)
          .timeZone(separator: .omitted).dateTimeSeparator(.standard).timeSeparator(.colon))
    }
    state = text("State") ?? "idle"
    paused = values["Paused"]?.boolValue ?? false
    card = text("Card")
    duration = int("Duration")
    remaining = int("Remaining")
    elapsed = int("Elapsed")
    startedAt = time("StartedAt")
    endsAt = time("EndsAt")
    cycle = int("Cycle")
    longBreakAfter = int("LongBreakAfter")
    next = text("Next")
    completedToday = int("CompletedToday")
    focusToday = int("FocusToday")
    dailyGoal = int("DailyGoal") > 0 ? int("DailyGoal") : nil
    intention = text("Intention")
  }

  /// Two or three lines for people.
  var humanText: String {
    var lines: [String] = []
    let cardName = card.map { "'\($0)'" } ?? ""
    switch state {
    case "idle" where next != nil:
      let nextName = PhaseKind(rawValue: next ?? "")?.displayName ?? next ?? ""
      lines.append("◌ \(nextName) waiting on \(cardName) · 'grow resume' starts it")
    case "idle":
      lines.append("○ idle · 'grow start [CARD]' begins a focus session")
    default:
      let kind = PhaseKind(rawValue: state)?.displayName ?? state
      let mark = paused ? "⏸" : (state == "focus" ? "●" : "☕")
      var line = "\(mark) \(kind) on \(cardName) · "
      line += "\(DurationText.clock(Double(remaining))) left of \(DurationText.clock(Double(duration)))"
      if paused { line += " · paused" }
      if longBreakAfter > 0 { line += " · cycle \(cycle)/\(longBreakAfter)" }
      lines.append(line)
    }
    if let intention { lines.append("  intention: \(intention)") }
    var today = "  today: \(completedToday) completed, \(DurationText.format(Double(focusToday))) focus"
    if let dailyGoal {
      let percent = Int((Double(focusToday) / Double(dailyGoal) * 100).rounded(.down))
      today += " (\(percent)% of the \(DurationText.format(Double(dailyGoal))) goal)"
    }
    lines.append(today)
    return lines.joined(separator: "\n")
  }
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
    var line =
      "\(isDefault ? "*" : " ") \(name): \(format(focus)) focus, \(format(shortBreak)) break, "
      + "\(format(longBreak)) long break after \(longBreakAfter)"
    if let dailyGoal { line += ", goal \(format(dailyGoal))/day" }
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
