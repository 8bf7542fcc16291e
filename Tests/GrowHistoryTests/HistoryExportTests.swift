import Foundation
import GrowCore
import Testing

@testable import GrowHistory

/// Reads RFC 4180 CSV, quotes and line breaks inside fields included.
func parseCSV(_ text: String) -> [[String]] {
  var rows: [[String]] = []
  var row: [String] = []
  var field = ""
  var quoted = false
  var characters = Array(text.unicodeScalars)[...]
  while let character = characters.popFirst() {
    if quoted {
      if character == "\"" {
        if characters.first == "\"" {
          field.unicodeScalars.append(characters.removeFirst())
        } else {
          quoted = false
        }
      } else {
        field.unicodeScalars.append(character)
      }
    } else if character == "\"" {
      quoted = true
    } else if character == "," {
      row.append(field)
      field = ""
    } else if character == "\r" {
      continue
    } else if character == "\n" {
      row.append(field)
      rows.append(row)
      row = []
      field = ""
    } else {
      field.unicodeScalars.append(character)
    }
  }
  if !field.isEmpty || !row.isEmpty { rows.append(row + [field]) }
  return rows
}

@Suite struct HistoryExportTests {
  let phases: [PhaseRecord] = {
    var first = focus("math", minutes: 25, endingAt: local("2026-03-08 03:05"))
    first.id = 1
    first.intention = "Chapter 3, \"proofs\"\nand exercises"
    first.pauseCount = 1
    first.pausedSeconds = 42
    var second = PhaseRecord(
      id: 2, card: "work", kind: .shortBreak, plannedSeconds: 300, actualSeconds: 120,
      startedAt: local("2026-11-01 01:58"), endedAt: local("2026-11-01 02:00"),
      outcome: .skipped, timeZone: newYork)
    second.awaySeconds = 30
    return [first, second]
  }()

  @Test func timestampsCarryTheWallClockAndItsOffset() {
    #expect(ExportedPhase(phases[0]).startedAt == "2026-03-08T01:40:00-05:00")
    #expect(ExportedPhase(phases[0]).endedAt == "2026-03-08T03:05:00-04:00")
  }

  @Test func jsonRoundTrips() throws {
    let printed = HistoryExport.json(phases)
    let parsed = try JSONDecoder().decode([ExportedPhase].self, from: Data(printed.utf8))
    #expect(parsed == phases.map(ExportedPhase.init))
    #expect(printed.hasPrefix("[{\"actual_seconds\":1500,\"away_seconds\":0,\"card\":\"math\""))
  }

  @Test func csvRoundTripsQuotesCommasAndLineBreaks() {
    let printed = HistoryExport.csv(phases)
    let rows = parseCSV(printed)
    #expect(rows.first == ExportedPhase.csvHeader)
    #expect(Array(rows.dropFirst()) == phases.map { ExportedPhase($0).csvFields })
    #expect(rows[1].last == "Chapter 3, \"proofs\"\nand exercises")
    #expect(
      printed.split(separator: "\r\n").first == """
        id,card,kind,planned_seconds,actual_seconds,started_at,ended_at,outcome,pauses,\
        paused_seconds,away_seconds,distractions,distraction_seconds,intention
        """)
  }

  @Test func statisticsRoundTripAsJSONAndCSV() throws {
    let from = try #require(LocalDay(text: "2026-03-07"))
    let statistics = HistoryStatistics(
      from: from, to: from.advanced(by: 1), card: nil, phases: phases, distractions: [],
      daily: [:], goal: nil, today: from.advanced(by: 1))
    let parsed = try JSONDecoder().decode(
      HistoryStatistics.self, from: Data(HistoryExport.json(statistics).utf8))
    #expect(parsed == statistics)
    let rows = parseCSV(HistoryExport.csv(statistics))
    #expect(
      rows == [
        ["date", "card", "focus_seconds", "completed", "abandoned"],
        ["2026-03-08", "math", "1500", "1", "0"],
      ])
  }
}
