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
  /// Every key of `TimerStatus.fields`, `null` for what does not apply.
  public let fields: [String: JSONValue]

  public init(_ status: TimerStatus) { fields = status.jsonFields(.wholeSeconds) }

  public func encode(to encoder: any Encoder) throws {
    try JSONValue.object(fields).encode(to: encoder)
  }

  /// One line of JSON, keys sorted.
  public var text: String { JSONValue.object(fields).text }

  /// `2026-05-04T09:30:00Z`: whole seconds, UTC.
  static func isoText(_ date: Date) -> String {
    date.formatted(
      .iso8601.year().month().day().time(includingFractionalSeconds: false)
        .timeZone(separator: .omitted).dateTimeSeparator(.standard).timeSeparator(.colon))
  }
}

/// How the D-Bus API carries numbers: durations as whole seconds (`u`), instants as µs since
/// the epoch (`x`), 0 meaning "none". `TimerStatus.fields` and the daemon's signals write
/// with these.
public enum BusEncoding {
  public static func seconds(_ interval: TimeInterval) -> UInt32 {
    UInt32(clamping: Int64(max(0, interval).rounded()))
  }

  public static func microseconds(_ date: Date?) -> Int64 {
    guard let date else { return 0 }
    return Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
  }
}
