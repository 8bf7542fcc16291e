import FoundationEssentials
import GrowCore
import GrowDBus

/// The timer's status as JSON for scripts: `grow status --json` and the status-bar plugin's
/// `status.json` print this one shape, so a script can read either.
///
/// snake_case keys in a stable order, whole seconds, times in ISO 8601 (UTC). Every key is
/// always there: one that does not apply (no card, no deadline, no goal) is `null`, never left
/// out and never an empty string, so a script reads the same keys in every state. The schema
/// is in `grow help status` and grow(1).
public struct TimerStatusJSON: Encodable, Equatable, Sendable {
  public var state: String
  public var paused: Bool
  public var card: String?
  public var duration: Int
  public var remaining: Int
  public var elapsed: Int
  public var startedAt: String?
  public var endsAt: String?
  public var cycle: Int
  public var longBreakAfter: Int
  public var next: String?
  public var completedToday: Int
  public var focusToday: Int
  public var cutShortToday: Int
  public var dailyGoal: Int?
  public var intention: String?

  enum CodingKeys: String, CodingKey {
    case state, paused, card, duration, remaining, elapsed, cycle, next, intention
    case startedAt = "started_at"
    case endsAt = "ends_at"
    case longBreakAfter = "long_break_after"
    case completedToday = "completed_today"
    case focusToday = "focus_today"
    case cutShortToday = "cut_short_today"
    case dailyGoal = "daily_goal"
  }

  /// Every key, `null` for a nil value (the synthesized encoding would leave it out).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(state, forKey: .state)
    try container.encode(paused, forKey: .paused)
    try container.encode(card, forKey: .card)
    try container.encode(duration, forKey: .duration)
    try container.encode(remaining, forKey: .remaining)
    try container.encode(elapsed, forKey: .elapsed)
    try container.encode(startedAt, forKey: .startedAt)
    try container.encode(endsAt, forKey: .endsAt)
    try container.encode(cycle, forKey: .cycle)
    try container.encode(longBreakAfter, forKey: .longBreakAfter)
    try container.encode(next, forKey: .next)
    try container.encode(completedToday, forKey: .completedToday)
    try container.encode(focusToday, forKey: .focusToday)
    try container.encode(cutShortToday, forKey: .cutShortToday)
    try container.encode(dailyGoal, forKey: .dailyGoal)
    try container.encode(intention, forKey: .intention)
  }

  public init(_ status: TimerStatus) {
    func whole(_ seconds: TimeInterval) -> Int { Int(max(0, seconds).rounded()) }
    state = status.state.rawValue
    paused = status.paused
    card = status.card.isEmpty ? nil : status.card
    duration = whole(status.duration)
    // Rounded up, as every countdown is shown (DurationText.clock): 14.4 s left reads 0:15
    // paused and running alike.
    remaining = Int(max(0, status.remaining).rounded(.up))
    elapsed = whole(status.elapsed)
    startedAt = status.startedAt.map(Self.isoText)
    endsAt = status.endsAt.map(Self.isoText)
    cycle = status.cycle
    longBreakAfter = status.longBreakAfter
    next = status.next?.rawValue
    completedToday = status.completedToday
    focusToday = whole(status.focusToday)
    cutShortToday = whole(status.cutShortToday)
    dailyGoal = status.dailyGoal.map(whole).flatMap { $0 > 0 ? $0 : nil }
    intention = status.intention.flatMap { $0.isEmpty ? nil : $0 }
  }

  /// One line of JSON, keys sorted.
  public var text: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(self) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }

  /// `2026-05-04T09:30:00Z`: whole seconds, UTC.
  static func isoText(_ date: Date) -> String {
    date.formatted(
      .iso8601.year().month().day().time(includingFractionalSeconds: false)
        .timeZone(separator: .omitted).dateTimeSeparator(.standard).timeSeparator(.colon))
  }
}

/// How the D-Bus API carries numbers: durations as whole seconds (`u`), instants as µs since
/// the epoch (`x`), 0 meaning "none". The daemon writes with these, `TimerStatus(busValues:)`
/// reads them back.
public enum BusEncoding {
  public static func seconds(_ interval: TimeInterval) -> UInt32 {
    UInt32(clamping: Int64(max(0, interval).rounded()))
  }

  public static func microseconds(_ date: Date?) -> Int64 {
    guard let date else { return 0 }
    return Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
  }
}

extension TimerStatus {
  /// The status as `GetStatus` returns it: the `Timer` interface's properties (same names,
  /// same values) plus the card's `LongBreakAfter` and `DailyGoal`.
  public var busValues: [String: BusValue] {
    [
      "State": .string(state.rawValue),
      "Paused": .bool(paused),
      "Card": .string(card),
      "Duration": .uint32(BusEncoding.seconds(duration)),
      // Rounded up like every countdown (DurationText.clock), so a paused phase shows what
      // the same phase running shows.
      "Remaining": .uint32(UInt32(clamping: Int64(max(0, remaining).rounded(.up)))),
      "Elapsed": .uint32(BusEncoding.seconds(elapsed)),
      "StartedAt": .int64(BusEncoding.microseconds(startedAt)),
      "EndsAt": .int64(BusEncoding.microseconds(endsAt)),
      "Cycle": .uint32(UInt32(max(0, cycle))),
      "LongBreakAfter": .uint32(UInt32(max(0, longBreakAfter))),
      "Next": .string(next?.rawValue ?? ""),
      "CompletedToday": .uint32(UInt32(clamping: completedToday)),
      "FocusToday": .uint32(BusEncoding.seconds(focusToday)),
      "CutShortToday": .uint32(BusEncoding.seconds(cutShortToday)),
      "DailyGoal": .uint32(BusEncoding.seconds(dailyGoal ?? 0)),
      "Intention": .string(intention ?? ""),
    ]
  }

  /// Reads the status from the D-Bus API: `GetStatus`'s dictionary, or the `Timer`
  /// interface's properties (which lack `LongBreakAfter` and `DailyGoal`; those stay 0/nil).
  /// Times arrive as µs since the epoch, 0 meaning "none".
  public init(busValues values: [String: BusValue]) {
    func number(_ key: String) -> Int64 { values[key]?.unwrapped.integerValue ?? 0 }
    func text(_ key: String) -> String { values[key]?.unwrapped.stringValue ?? "" }
    func time(_ key: String) -> Date? {
      let micros = number(key)
      return micros > 0 ? Date(timeIntervalSince1970: Double(micros) / 1_000_000) : nil
    }
    // The memberwise initialiser is internal to GrowCore; start from idle and fill in.
    self = .idle
    state = State(rawValue: text("State")) ?? .idle
    paused = values["Paused"]?.unwrapped.boolValue ?? false
    card = text("Card")
    duration = TimeInterval(number("Duration"))
    remaining = TimeInterval(number("Remaining"))
    elapsed = TimeInterval(number("Elapsed"))
    startedAt = time("StartedAt")
    endsAt = time("EndsAt")
    cycle = Int(number("Cycle"))
    longBreakAfter = Int(number("LongBreakAfter"))
    next = PhaseKind(rawValue: text("Next"))
    completedToday = Int(number("CompletedToday"))
    focusToday = TimeInterval(number("FocusToday"))
    cutShortToday = TimeInterval(number("CutShortToday"))
    let goal = TimeInterval(number("DailyGoal"))
    dailyGoal = goal > 0 ? goal : nil
    intention = text("Intention").isEmpty ? nil : text("Intention")
  }
}
