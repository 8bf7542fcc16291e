import FoundationEssentials
import Glibc
import GrowCore

/// A phase as `grow history --json` and `--csv` print it: whole seconds, and instants in ISO
/// 8601 with the offset the wall clock had then, so both UTC and local time can be read back.
public struct ExportedPhase: Sendable, Equatable, Codable {
  public var id: Int64
  public var card: String
  public var kind: String
  public var plannedSeconds: Int
  public var actualSeconds: Int
  public var startedAt: String
  public var endedAt: String
  public var outcome: String
  public var pauses: Int
  public var pausedSeconds: Int
  public var awaySeconds: Int
  public var intention: String?

  enum CodingKeys: String, CodingKey, CaseIterable {
    case id, card, kind
    case plannedSeconds = "planned_seconds"
    case actualSeconds = "actual_seconds"
    case startedAt = "started_at"
    case endedAt = "ended_at"
    case outcome, pauses
    case pausedSeconds = "paused_seconds"
    case awaySeconds = "away_seconds"
    case intention
  }

  public init(_ phase: PhaseRecord) {
    id = phase.id
    card = phase.card
    kind = phase.kind.rawValue
    plannedSeconds = Int(phase.plannedSeconds.rounded())
    actualSeconds = Int(phase.actualSeconds.rounded())
    startedAt = HistoryExport.timestamp(phase.startedAt, offset: phase.startOffset)
    endedAt = HistoryExport.timestamp(phase.endedAt, offset: phase.endOffset)
    outcome = phase.outcome.rawValue
    pauses = phase.pauseCount
    pausedSeconds = Int(phase.pausedSeconds.rounded())
    awaySeconds = Int(phase.awaySeconds.rounded())
    intention = phase.intention
  }

  /// The CSV header, in column order.
  public static let csvHeader = CodingKeys.allCases.map(\.rawValue)

  /// The CSV fields, in `csvHeader` order; no intention is an empty field.
  public var csvFields: [String] {
    [
      "\(id)", card, kind, "\(plannedSeconds)", "\(actualSeconds)", startedAt, endedAt, outcome,
      "\(pauses)", "\(pausedSeconds)", "\(awaySeconds)", intention ?? "",
    ]
  }
}

/// JSON and CSV for scripts and spreadsheets.
public enum HistoryExport {
  /// `2026-03-08T01:30:00-05:00`: the wall-clock time and its offset from UTC.
  public static func timestamp(_ instant: Date, offset: Int) -> String {
    let local = Int((instant.timeIntervalSince1970 + Double(offset)).rounded(.down))
    let day = LocalDay(number: Int((Double(local) / 86_400).rounded(.down)))
    let second = local - day.number * 86_400
    let sign = offset < 0 ? "-" : "+"
    let zone =
      sign + (abs(offset) / 3600).zeroPadded(2) + ":" + (abs(offset) % 3600 / 60).zeroPadded(2)
    let clock =
      "T" + (second / 3600).zeroPadded(2) + ":" + (second % 3600 / 60).zeroPadded(2) + ":"
      + (second % 60).zeroPadded(2)
    return day.text + clock + zone
  }

  /// One JSON document: an array of phases.
  public static func json(_ phases: [PhaseRecord]) -> String {
    encode(phases.map(ExportedPhase.init))
  }

  public static func csv(_ phases: [PhaseRecord]) -> String {
    csv(header: ExportedPhase.csvHeader, rows: phases.map { ExportedPhase($0).csvFields })
  }

  /// `grow stats --csv`: one row per day and card with focus.
  public static func csv(_ statistics: HistoryStatistics) -> String {
    csv(
      header: ["date", "card", "focus_seconds", "completed", "abandoned"],
      rows: statistics.dayCards.map {
        [$0.date.text, $0.card, "\($0.focusSeconds)", "\($0.completed)", "\($0.abandoned)"]
      })
  }

  public static func json(_ statistics: HistoryStatistics) -> String { encode(statistics) }

  /// RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled; lines end
  /// with CRLF as spreadsheets expect.
  public static func csv(header: [String], rows: [[String]]) -> String {
    ([header] + rows).map { $0.map(quoted).joined(separator: ",") + "\r\n" }.joined()
  }

  private static func quoted(_ field: String) -> String {
    guard field.contains(where: { ",\"\r\n".contains($0) }) else { return field }
    return "\"" + field.replacing("\"", with: "\"\"") + "\""
  }

  static func encode(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "null" }
    return String(decoding: data, as: UTF8.self)
  }
}
