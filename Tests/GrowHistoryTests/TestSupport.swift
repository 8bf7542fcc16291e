import Foundation
import GrowCore

@testable import GrowHistory

/// A private directory for one test's database, removed when released.
final class TemporaryDirectory {
  let url: URL
  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "grow-history-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }
  deinit { try? FileManager.default.removeItem(at: url) }

  var databasePath: String { url.appendingPathComponent("grow/history.sqlite").path }
  /// Where the daemon would keep phases not yet written (beside its session).
  var pendingPath: String { url.appendingPathComponent("state/pending-history.json").path }
}

let newYorkTimeZone = TimeZone(identifier: "America/New_York") ?? .gmt
/// New York as Grow's code takes a zone.
let newYork = LocalZone(newYorkTimeZone)

/// An instant given as New York wall-clock time, e.g. `local("2026-03-08 01:30")`.
func local(_ text: String, _ zone: TimeZone = newYorkTimeZone) -> Date {
  let formatter = DateFormatter()
  formatter.locale = Locale(identifier: "en_US_POSIX")
  formatter.timeZone = zone
  formatter.dateFormat = "yyyy-MM-dd HH:mm"
  return formatter.date(from: text) ?? Date(timeIntervalSince1970: 0)
}

/// A focus phase of `minutes` ending at `end`.
func focus(
  _ card: String, minutes: Double, endingAt end: Date, outcome: HistoryOutcome = .completed,
  zone: LocalZone = newYork
) -> PhaseRecord {
  PhaseRecord(
    card: card, kind: .focus, plannedSeconds: minutes * 60, actualSeconds: minutes * 60,
    startedAt: end.addingTimeInterval(-minutes * 60), endedAt: end, outcome: outcome,
    timeZone: zone)
}
