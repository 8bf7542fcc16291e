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
    #expect(rows[1].dropLast(2).last == "Chapter 3, \"proofs\"\nand exercises")
    #expect(rows[1].last == ThisMachine.name, "where it was grown: here")
    #expect(
      printed.split(separator: "\r\n").first == """
        id,card,kind,planned_seconds,actual_seconds,started_at,ended_at,outcome,pauses,\
        paused_seconds,away_seconds,distractions,distraction_seconds,intention,sites,machine
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
        [
          "date", "card", "focus_seconds", "cut_short_seconds", "completed", "skipped", "stopped",
          "abandoned",
        ],
        ["2026-03-08", "math", "1500", "0", "1", "0", "0", "0"],
      ])
  }

  /// The streamed JSON is byte for byte what JSONEncoder makes of `ExportedPhase` (the format
  /// scripts already read), for every control character, quotes, backslashes, slashes and text
  /// beyond ASCII, negative offsets and a phase without an intention.
  @Test func streamedJSONIsWhatJSONEncoderWrites() throws {
    var tricky = phases
    tricky[0].intention =
      String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
      + "\u{7F} \"quoted\" back\\slash a/b é 漢字 🌱 \u{2028}"
    tricky[0].card = "math, \"applied\""
    tricky[0].distractionCount = 3
    tricky[0].distractionSeconds = 61.5
    tricky[1].intention = nil
    var farWest = focus("work", minutes: 50, endingAt: local("1999-12-31 23:59"))
    farWest.startOffset = -34_200
    farWest.endOffset = 50_400
    farWest.id = 9_223_372_036_854_775_807
    tricky.append(farWest)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let expected = String(
      decoding: try encoder.encode(tricky.map(ExportedPhase.init)), as: UTF8.self)
    #expect(HistoryExport.json(tricky) == expected)
    #expect(HistoryExport.json([]) == "[]")
  }

  /// The stream hands over blocks of about `flushSize` bytes as it goes (so the whole output
  /// is never in memory), and the blocks make the same document as one piece.
  @Test func aStreamHandsOverBlocksThatMakeTheWholeDocument() {
    let many = (0..<5_000).map { index in
      var phase = focus(
        "card \(index % 7)", minutes: 25,
        endingAt: local("2026-03-08 03:05").addingTimeInterval(Double(index) * 1800))
      phase.id = Int64(index + 1)
      phase.intention = index % 3 == 0 ? "line one\nline \"two\", three" : nil
      return phase
    }
    for format in [HistoryExportStream.Format.csv, .json] {
      var blocks: [[UInt8]] = []
      let stream = HistoryExportStream(format: format) { blocks.append($0) }
      for phase in many { stream.add(phase) }
      stream.finish()
      #expect(blocks.count > 5, "\(format): \(blocks.count) blocks")
      #expect(blocks.allSatisfy { $0.count < HistoryExportStream.flushSize + 1024 })
      let whole = String(decoding: blocks.joined(), as: UTF8.self)
      if format == .csv {
        let rows = parseCSV(whole)
        #expect(rows.count == many.count + 1)
        #expect(Array(rows.dropFirst()) == many.map { ExportedPhase($0).csvFields })
      } else {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expected = (try? encoder.encode(many.map(ExportedPhase.init))).map {
          String(decoding: $0, as: UTF8.self)
        }
        #expect(whole == expected)
      }
    }
  }
}
