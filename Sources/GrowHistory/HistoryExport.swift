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
  public var distractions: Int
  public var distractionSeconds: Int
  public var intention: String?
  /// The websites the phase's distractions were on; absent when none was a site.
  public var sites: [String]?
  /// The name of the machine it was grown on (its host name): this one, or another that
  /// syncs with it (docs/sync.md).
  public var machine: String

  enum CodingKeys: String, CodingKey, CaseIterable {
    case id, card, kind
    case plannedSeconds = "planned_seconds"
    case actualSeconds = "actual_seconds"
    case startedAt = "started_at"
    case endedAt = "ended_at"
    case outcome, pauses
    case pausedSeconds = "paused_seconds"
    case awaySeconds = "away_seconds"
    case distractions
    case distractionSeconds = "distraction_seconds"
    case intention, sites
    case machine
  }

  public init(_ phase: PhaseRecord) { self.init(phase, thisMachine: ThisMachine.name) }

  /// - Parameter thisMachine: what this machine is called (`PhaseRecord.grownOn`).
  public init(_ phase: PhaseRecord, thisMachine: String) {
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
    distractions = phase.distractionCount
    distractionSeconds = Int(phase.distractionSeconds.rounded())
    intention = phase.intention
    sites = phase.distractionSites.isEmpty ? nil : phase.distractionSites
    machine = phase.grownOn(thisMachine: thisMachine)
  }

  /// The CSV header, in column order.
  public static let csvHeader = CodingKeys.allCases.map(\.rawValue)

  /// The CSV fields, in `csvHeader` order; no intention is an empty field.
  public var csvFields: [String] {
    [
      "\(id)", card, kind, "\(plannedSeconds)", "\(actualSeconds)", startedAt, endedAt, outcome,
      "\(pauses)", "\(pausedSeconds)", "\(awaySeconds)", "\(distractions)",
      "\(distractionSeconds)", intention ?? "", (sites ?? []).joined(separator: " "), machine,
    ]
  }
}

/// JSON and CSV for scripts and spreadsheets.
public enum HistoryExport {
  /// `2026-03-08T01:30:00-05:00`: the wall-clock time and its offset from UTC.
  public static func timestamp(_ instant: Date, offset: Int) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(25)
    ExportBytes.appendTimestamp(instant, offset: offset, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// One JSON document: an array of phases (what `HistoryExportStream` writes).
  public static func json(_ phases: [PhaseRecord]) -> String { whole(.json, phases) }

  public static func csv(_ phases: [PhaseRecord]) -> String { whole(.csv, phases) }

  private static func whole(_ format: HistoryExportStream.Format, _ phases: [PhaseRecord])
    -> String
  {
    var bytes: [UInt8] = []
    let stream = HistoryExportStream(format: format) { bytes += $0 }
    for phase in phases { stream.add(phase) }
    stream.finish()
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `grow stats --csv`: one row per day and card with focus; the columns are
  /// `HistoryStatistics`' JSON keys (focus time, cut-short focus, a count per outcome word).
  public static func csv(_ statistics: HistoryStatistics) -> String {
    csv(
      header: ["date", "card", "focus_seconds", "cut_short_seconds"]
        + PhaseOutcome.allCases.map(\.rawValue),
      rows: statistics.dayCards.map { total in
        [total.date.text, total.card, "\(total.focusSeconds)", "\(total.cutShortSeconds)"]
          + PhaseOutcome.allCases.map { "\(total.count(of: $0))" }
      })
  }

  public static func json(_ statistics: HistoryStatistics) -> String { encode(statistics) }

  /// RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled; lines end
  /// with CRLF as spreadsheets expect.
  public static func csv(header: [String], rows: [[String]]) -> String {
    ([header] + rows).map { $0.map(quoted).joined(separator: ",") + "\r\n" }.joined()
  }

  private static func quoted(_ field: String) -> String {
    var bytes: [UInt8] = []
    ExportBytes.appendCSVField(field, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  static func encode(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "null" }
    return String(decoding: data, as: UTF8.self)
  }
}

/// `grow history --csv` and `--json` as the rows come: each phase is formatted into a buffer
/// of bytes (integers and timestamps by hand, no `String(format:)`, no encoder), which goes to
/// `flush` whenever it holds `flushSize` bytes, so the memory it takes does not grow with the
/// history. The output is the same as `ExportedPhase`'s (JSON: its keys sorted, no spaces,
/// the escapes JSONEncoder makes; CSV: RFC 4180 with CRLF).
public final class HistoryExportStream {
  public enum Format: Sendable { case csv, json }

  public static let flushSize = 64 * 1024
  private let format: Format
  private let flush: ([UInt8]) -> Void
  private let thisMachine: String
  private var buffer: [UInt8] = []
  private var rows = 0

  /// Starts the document (the CSV header, or JSON's opening bracket).
  /// - Parameter thisMachine: what this machine is called (`PhaseRecord.grownOn`).
  public init(
    format: Format, thisMachine: String = ThisMachine.name, flush: @escaping ([UInt8]) -> Void
  ) {
    self.format = format
    self.thisMachine = thisMachine
    self.flush = flush
    buffer.reserveCapacity(Self.flushSize + 4096)
    switch format {
    case .csv:
      for (index, name) in ExportedPhase.csvHeader.enumerated() {
        if index > 0 { buffer.append(UInt8(ascii: ",")) }
        buffer += name.utf8
      }
      buffer += [0x0D, 0x0A]
    case .json:
      buffer.append(UInt8(ascii: "["))
    }
  }

  public func add(_ phase: PhaseRecord) {
    switch format {
    case .csv: addCSV(phase)
    case .json: addJSON(phase)
    }
    rows += 1
    if buffer.count >= Self.flushSize {
      flush(buffer)
      buffer.removeAll(keepingCapacity: true)
    }
  }

  /// Ends the document and hands over the rest.
  public func finish() {
    if format == .json { buffer.append(UInt8(ascii: "]")) }
    flush(buffer)
    buffer.removeAll(keepingCapacity: true)
  }

  private func addCSV(_ phase: PhaseRecord) {
    ExportBytes.appendInteger(Int(phase.id), to: &buffer)
    comma()
    ExportBytes.appendCSVField(phase.card, to: &buffer)
    comma()
    buffer += phase.kind.rawValue.utf8
    for seconds in [phase.plannedSeconds, phase.actualSeconds] {
      comma()
      ExportBytes.appendInteger(Int(seconds.rounded()), to: &buffer)
    }
    comma()
    ExportBytes.appendTimestamp(phase.startedAt, offset: phase.startOffset, to: &buffer)
    comma()
    ExportBytes.appendTimestamp(phase.endedAt, offset: phase.endOffset, to: &buffer)
    comma()
    buffer += phase.outcome.rawValue.utf8
    for number in [
      phase.pauseCount, Int(phase.pausedSeconds.rounded()), Int(phase.awaySeconds.rounded()),
      phase.distractionCount, Int(phase.distractionSeconds.rounded()),
    ] {
      comma()
      ExportBytes.appendInteger(number, to: &buffer)
    }
    comma()
    if let intention = phase.intention { ExportBytes.appendCSVField(intention, to: &buffer) }
    comma()
    if !phase.distractionSites.isEmpty {
      ExportBytes.appendCSVField(phase.distractionSites.joined(separator: " "), to: &buffer)
    }
    comma()
    ExportBytes.appendCSVField(phase.grownOn(thisMachine: thisMachine), to: &buffer)
    buffer += [0x0D, 0x0A]
  }

  /// The keys in ExportedPhase's sorted order, as JSONEncoder with `.sortedKeys` writes them.
  private func addJSON(_ phase: PhaseRecord) {
    if rows > 0 { buffer.append(UInt8(ascii: ",")) }
    key("{\"actual_seconds\":")
    ExportBytes.appendInteger(Int(phase.actualSeconds.rounded()), to: &buffer)
    key(",\"away_seconds\":")
    ExportBytes.appendInteger(Int(phase.awaySeconds.rounded()), to: &buffer)
    key(",\"card\":")
    ExportBytes.appendJSONString(phase.card, to: &buffer)
    key(",\"distraction_seconds\":")
    ExportBytes.appendInteger(Int(phase.distractionSeconds.rounded()), to: &buffer)
    key(",\"distractions\":")
    ExportBytes.appendInteger(phase.distractionCount, to: &buffer)
    key(",\"ended_at\":\"")
    ExportBytes.appendTimestamp(phase.endedAt, offset: phase.endOffset, to: &buffer)
    key("\",\"id\":")
    ExportBytes.appendInteger(Int(phase.id), to: &buffer)
    if let intention = phase.intention {
      key(",\"intention\":")
      ExportBytes.appendJSONString(intention, to: &buffer)
    }
    key(",\"kind\":\"")
    buffer += phase.kind.rawValue.utf8
    key("\",\"machine\":")
    ExportBytes.appendJSONString(phase.grownOn(thisMachine: thisMachine), to: &buffer)
    key(",\"outcome\":\"")
    buffer += phase.outcome.rawValue.utf8
    key("\",\"paused_seconds\":")
    ExportBytes.appendInteger(Int(phase.pausedSeconds.rounded()), to: &buffer)
    key(",\"pauses\":")
    ExportBytes.appendInteger(phase.pauseCount, to: &buffer)
    key(",\"planned_seconds\":")
    ExportBytes.appendInteger(Int(phase.plannedSeconds.rounded()), to: &buffer)
    if !phase.distractionSites.isEmpty {
      key(",\"sites\":[")
      for (index, site) in phase.distractionSites.enumerated() {
        if index > 0 { comma() }
        ExportBytes.appendJSONString(site, to: &buffer)
      }
      key("]")
    }
    key(",\"started_at\":\"")
    ExportBytes.appendTimestamp(phase.startedAt, offset: phase.startOffset, to: &buffer)
    key("\"}")
  }

  private func comma() { buffer.append(UInt8(ascii: ",")) }
  private func key(_ text: StaticString) {
    text.withUTF8Buffer { buffer.append(contentsOf: $0) }
  }
}

/// Formatting into bytes, for the export: what `String(format:)` did, without Foundation.
enum ExportBytes {
  static func appendInteger(_ value: Int, to bytes: inout [UInt8]) {
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    let magnitude = value.magnitude
    var divisor: UInt = 1
    while magnitude / divisor >= 10 { divisor *= 10 }
    repeat {
      bytes.append(UInt8(ascii: "0") + UInt8(magnitude / divisor % 10))
      divisor /= 10
    } while divisor > 0
  }

  /// `value` in at least `width` digits, zero-padded (0 ≤ value).
  static func appendPadded(_ value: Int, width: Int, to bytes: inout [UInt8]) {
    var digits = 1
    var limit = 10
    while value >= limit {
      digits += 1
      limit *= 10
    }
    for _ in digits..<max(digits, width) { bytes.append(UInt8(ascii: "0")) }
    appendInteger(value, to: &bytes)
  }

  /// `2026-03-08T01:30:00-05:00`.
  static func appendTimestamp(_ instant: Date, offset: Int, to bytes: inout [UInt8]) {
    let local = Int((instant.timeIntervalSince1970 + Double(offset)).rounded(.down))
    let dayNumber = Int((Double(local) / 86_400).rounded(.down))
    let (year, month, day) = LocalDay(number: dayNumber).civil
    let second = local - dayNumber * 86_400
    appendPadded(year, width: 4, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    appendPadded(month, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    appendPadded(day, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: "T"))
    appendPadded(second / 3600, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendPadded(second % 3600 / 60, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendPadded(second % 60, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: offset < 0 ? "-" : "+"))
    appendPadded(abs(offset) / 3600, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendPadded(abs(offset) % 3600 / 60, width: 2, to: &bytes)
  }

  /// RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled.
  static func appendCSVField(_ field: String, to bytes: inout [UInt8]) {
    let utf8 = field.utf8
    guard utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else {
      bytes += utf8
      return
    }
    bytes.append(0x22)
    for byte in utf8 {
      if byte == 0x22 { bytes.append(0x22) }
      bytes.append(byte)
    }
    bytes.append(0x22)
  }

  /// A JSON string as JSONEncoder writes it with `.withoutEscapingSlashes`.
  static func appendJSONString(_ text: String, to bytes: inout [UInt8]) {
    bytes.append(0x22)
    for byte in text.utf8 {
      switch byte {
      case 0x22: bytes += [0x5C, 0x22]
      case 0x5C: bytes += [0x5C, 0x5C]
      case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
      case 0x0D: bytes += [0x5C, UInt8(ascii: "r")]
      case 0x09: bytes += [0x5C, UInt8(ascii: "t")]
      case 0x08: bytes += [0x5C, UInt8(ascii: "b")]
      case 0x0C: bytes += [0x5C, UInt8(ascii: "f")]
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        bytes += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
      default: bytes.append(byte)
      }
    }
    bytes.append(0x22)
  }
}
