import FoundationEssentials
import GrowCore

// The JSON-lines protocol, version 1, spoken with out-of-process plugins (any language).
// docs/plugin-protocol.md is its reference for plugin authors; keep the two in step, and never
// rename or retype a field of v1: add fields instead, and bump `EventJSON.version` only for a
// change that breaks existing readers.

/// A JSON value, as the plugin protocol and Grow's other JSON output write it and as plugin
/// commands are read. Numbers are `Double`; whole numbers are written without a fraction
/// (`1500`, not `1500.0`). Reading keeps `true` and `1` apart.
public indirect enum JSONValue: Sendable, Equatable, Codable {
  case string(String)
  case number(Double)
  case bool(Bool)
  case null
  case object([String: JSONValue])
  case array([JSONValue])

  /// A string, or `null` for nil.
  public static func string(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }

  /// Seconds, rounded to milliseconds (event times carry milliseconds, so finer is noise).
  public static func seconds(_ value: TimeInterval) -> JSONValue {
    .number((value * 1000).rounded() / 1000)
  }

  public static func int(_ value: Int) -> JSONValue { .number(Double(value)) }

  /// An instant as ISO 8601 UTC with milliseconds (`2025-03-01T09:30:00.000Z`), or `null`.
  public static func time(_ date: Date?) -> JSONValue {
    date.map { .string(EventJSON.timestamp($0)) } ?? .null
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let flag = try? container.decode(Bool.self) {
      self = .bool(flag)
    } else if let number = try? container.decode(Double.self) {
      self = .number(number)
    } else if let text = try? container.decode(String.self) {
      self = .string(text)
    } else if let fields = try? container.decode([String: JSONValue].self) {
      self = .object(fields)
    } else {
      self = .array(try container.decode([JSONValue].self))
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .string(let text): try container.encode(text)
    case .number(let number):
      // Whole numbers as integers, so readers in typed languages get an int where one is meant.
      if number.rounded() == number && abs(number) < 1e15 {
        try container.encode(Int(number))
      } else {
        try container.encode(number)
      }
    case .bool(let flag): try container.encode(flag)
    case .null: try container.encodeNil()
    case .object(let fields): try container.encode(fields)
    case .array(let items): try container.encode(items)
    }
  }

  /// Reads one JSON text; nil when it is not JSON.
  public static func parse(_ bytes: some Collection<UInt8>) -> JSONValue? {
    try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
  }

  /// The value as JSON text on one line, object keys sorted.
  public var text: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Only non-finite numbers can fail, and Grow never writes one; say so rather than crash.
    guard let data = try? encoder.encode(self) else { return #"{"error":"unencodable value"}"# }
    return String(decoding: data, as: UTF8.self)
  }
}

/// An event that carries fields in the plugin protocol. Events that do not conform are still
/// sent, with `v`, `type` and `time` only.
public protocol JSONLineEvent: GrowEvent {
  /// The event's own fields, snake_case keys; `v`, `type` and `time` are added around them.
  func jsonFields() -> [String: JSONValue]
}

/// Encodes the lines the daemon writes to an external plugin: one JSON object per line, keys
/// sorted, no embedded newlines.
@_spi(GrowHost) public enum EventJSON {
  /// The protocol version, sent as `"v"` in every line.
  public static let version = 1

  /// The line for `event`, which happened at `time`.
  public static func line(for event: any GrowEvent, at time: Date) -> String {
    var fields = (event as? any JSONLineEvent)?.jsonFields() ?? [:]
    fields["v"] = .int(version)
    fields["type"] = .string(type(of: event).eventName)
    fields["time"] = .time(time)
    return encode(fields)
  }

  /// The first line a new plugin process receives.
  public static func hello(growVersion: String, status: TimerStatus, at time: Date) -> String {
    encode([
      "v": .int(version), "type": .string("hello"), "time": .time(time),
      "grow": .string(growVersion), "status": .object(status.jsonObject),
    ])
  }

  /// The reply to one command line. `command` is the command's name when the line had one.
  public static func commandResult(command: String?, error: String?, at time: Date = Date())
    -> String
  {
    var fields: [String: JSONValue] = [
      "v": .int(version), "type": .string("command-result"), "time": .time(time),
      "command": .string(command),
      "ok": .bool(error == nil),
    ]
    if let error { fields["error"] = .string(error) }
    return encode(fields)
  }

  /// One line, keys sorted, ending in `\n`. JSONEncoder escapes control characters in
  /// strings; the Unicode line breaks it leaves as they are (legal in JSON strings) are escaped
  /// here, so the terminator is the only line break for any reader (Python's `splitlines` also
  /// splits at U+0085, U+2028 and U+2029).
  public static func encode(_ fields: [String: JSONValue]) -> String {
    escapingLineBreaks(JSONValue.object(fields).text) + "\n"
  }

  /// These characters can only be inside strings in JSON text, where `\uXXXX` means the same.
  private static let lineBreakEscapes: [Unicode.Scalar: String] = [
    "\u{85}": #"\u0085"#, "\u{2028}": #"\u2028"#, "\u{2029}": #"\u2029"#,
  ]

  private static func escapingLineBreaks(_ json: String) -> String {
    let breaks = lineBreakEscapes
    guard json.unicodeScalars.contains(where: { breaks[$0] != nil }) else { return json }
    var escaped = ""
    for scalar in json.unicodeScalars {
      if let replacement = breaks[scalar] {
        escaped += replacement
      } else {
        escaped.unicodeScalars.append(scalar)
      }
    }
    return escaped
  }

  /// ISO 8601 in UTC with milliseconds.
  public static func timestamp(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }
}

// MARK: Objects shared by several events

extension Phase {
  /// `{"kind","card","cycle","duration","started_at","ends_at","paused"}`.
  public var jsonObject: [String: JSONValue] {
    [
      "kind": .string(kind.rawValue), "card": .string(card), "cycle": .int(cycle),
      "duration": .seconds(duration), "started_at": .time(startedAt), "ends_at": .time(deadline),
      "paused": .bool(isPaused),
    ]
  }
}

extension TimerStatus {
  /// The same keys as `grow status --json`; absent values are `null` rather than left out.
  public var jsonObject: [String: JSONValue] { jsonFields(.milliseconds) }
}

// MARK: The timer's events

extension PhaseStarted: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    ["phase": .object(phase.jsonObject), "intention": .string(intention)]
  }
}

extension PhaseEnded: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    [
      "phase": .object(phase.jsonObject), "outcome": .string(outcome.rawValue),
      "ended_at": .time(endedAt), "elapsed": .seconds(elapsed),
    ]
  }
}

extension PhasePaused: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] { ["phase": .object(phase.jsonObject)] }
}

extension PhaseResumed: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    ["phase": .object(phase.jsonObject), "paused_for": .seconds(pausedFor)]
  }
}

extension PhaseExtended: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    ["phase": .object(phase.jsonObject), "added_seconds": .seconds(addedSeconds)]
  }
}

extension PhaseAwaiting: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    ["next": .string(next.rawValue), "card": .string(card)]
  }
}

extension SessionStopped: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    ["card": .string(card), "completed_focus_phases": .int(completedFocusPhases)]
  }
}

extension SystemSlept: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    [
      "asleep_at": .time(asleepAt), "awake_at": .time(awakeAt),
      "phase": phase.map { .object($0.jsonObject) } ?? .null, "effect": .string(effect.rawValue),
      "asleep_during_phase": .seconds(asleepDuringPhase),
    ]
  }
}

extension TimerChanged: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] { ["status": .object(status.jsonObject)] }
}
