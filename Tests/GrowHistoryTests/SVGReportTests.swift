import Foundation
import FoundationXML
import GrowCore
import GrowTestSupport
import Testing

@testable import GrowHistory

@Suite struct SVGReportTests {
  func week() throws -> SVGReport {
    let from = try #require(LocalDay(text: "2026-03-09"))
    var phases: [PhaseRecord] = []
    for offset in 0..<7 {
      let date = from.advanced(by: offset).text
      phases.append(focus("math & proofs", minutes: 50, endingAt: local("\(date) 10:00")))
      phases.append(
        focus("work", minutes: Double(15 + offset * 5), endingAt: local("\(date) 15:00")))
    }
    phases.append(focus("work", minutes: 5, endingAt: local("2026-03-11 16:00"), outcome: .stopped))
    let statistics = HistoryStatistics(
      from: from, to: from.advanced(by: 6), card: nil, phases: phases, distractions: [],
      daily: [:], goal: nil, today: from.advanced(by: 6))
    return SVGReport(statistics: statistics, phases: phases)
  }

  @Test func theReportIsWellFormedXMLWithEscapedNames() throws {
    let report = try week()
    let document = try XMLDocument(xmlString: report.svg)
    #expect(document.rootElement()?.name == "svg")
    #expect(report.svg.contains(">math &amp; proofs</text>"))
    #expect(report.height == 90 + 240 + 120 + 2 * 64)
  }

  /// `GROW_WRITE_SAMPLE=1 swift test --disable-xctest --filter SVGReportTests` rewrites
  /// examples/report-sample.svg and .png from a seeded, lively week.
  @Test func theSampleReportIsWrittenOnRequest() throws {
    guard ProcessInfo.processInfo.environment["GROW_WRITE_SAMPLE"] == "1" else { return }
    let from = try #require(LocalDay(text: "2026-03-09"))
    var phases: [PhaseRecord] = []
    let plan: [[(String, Double, HistoryOutcome)]] = [
      [("math", 50, .completed), ("math", 50, .completed), ("writing", 25, .completed)],
      [("work", 25, .completed), ("work", 25, .completed), ("math", 15, .stopped)],
      [("math", 50, .completed), ("writing", 30, .completed), ("work", 25, .completed)],
      [("work", 10, .completed), ("writing", 45, .completed)],
      [("math", 50, .completed), ("math", 50, .completed), ("work", 5, .abandoned)],
      [("writing", 25, .completed)],
      [("math", 30, .completed), ("work", 25, .completed), ("work", 25, .completed)],
    ]
    for (offset, day) in plan.enumerated() {
      for (index, (card, minutes, outcome)) in day.enumerated() {
        let date = from.advanced(by: offset).text
        phases.append(
          focus(
            card, minutes: minutes, endingAt: local("\(date) \(9 + index * 2):00"),
            outcome: outcome))
      }
    }
    let daily = Dictionary(grouping: phases, by: \.day).mapValues {
      DayActivity(
        focusSeconds: $0.reduce(0) { $0 + $1.actualSeconds },
        completedFocus: $0.filter(\.isCompletedFocus).count)
    }
    let statistics = HistoryStatistics(
      from: from, to: from.advanced(by: 6), card: nil, phases: phases, distractions: [],
      daily: daily, goal: nil, today: from.advanced(by: 6))
    let report = SVGReport(statistics: statistics, phases: phases)
    let examples = RepoPaths.root.appendingPathComponent("examples")
    let svg = examples.appendingPathComponent("report-sample.svg").path
    try Data(report.svg.utf8).write(to: URL(fileURLWithPath: svg))
    let png = examples.appendingPathComponent("report-sample.png").path
    #expect(try Command.run("rsvg-convert", [svg, "-o", png]).status == 0)
  }

  @Test func rsvgConvertRendersItAtItsSize() throws {
    let report = try week()
    let directory = try TemporaryDirectory()
    let svg = directory.url.appendingPathComponent("week.svg").path
    let png = directory.url.appendingPathComponent("week.png").path
    try Data(report.svg.utf8).write(to: URL(fileURLWithPath: svg))
    let result = try Command.run("rsvg-convert", [svg, "-o", png])
    #expect(result.status == 0, "rsvg-convert: \(result.stderr)")
    #expect(result.stderr.isEmpty)
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: png)))
    // A PNG's IHDR chunk holds the width and height as big-endian integers at 16 and 20.
    #expect(bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    let integer = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    #expect(integer(16) == SVGReport.width)
    #expect(integer(20) == report.height)
  }

  /// The journeys below the garden: a path per goal, each step a station with its plant, a
  /// lotus once reached; rsvg-convert draws it at the height the report says.
  @Test func journeysAreDrawnAsPathsWithALotusForAReachedStep() throws {
    let base = try week()
    let created = local("2026-03-01 09:00")
    let step = { (name: String, done: Double, reached: Bool) in
      GoalProgress(
        goal: Goal(
          name: name, parent: "Have a Mac", card: "work", targetSeconds: 36000,
          createdAt: created, doneAt: reached ? created : nil),
        doneSeconds: done, targetSeconds: 36000, recentSeconds: 0, subgoals: [])
    }
    let mac = GoalProgress(
      goal: Goal(name: "Have a Mac & more", createdAt: created), doneSeconds: 46000,
      targetSeconds: 72000, recentSeconds: 0,
      subgoals: [step("Learn Swift", 10000, false), step("Save money", 36000, true)])
    let report = SVGReport(
      statistics: base.statistics, phases: [], journeys: [mac])
    #expect(report.height == 90 + 240 + 120 + 64 + 40 + 130)
    #expect(report.svg.contains(">Journeys</text>"))
    #expect(report.svg.contains(">Have a Mac &amp; more · 63%</text>"))
    #expect(report.svg.contains(">reached · 10h</text>"))
    #expect(report.svg.contains("fill=\"#e58fb1\""), "the lotus of the reached step")
    #expect(!base.svg.contains("Journeys"), "no goals, no journey section")
    _ = try XMLDocument(xmlString: report.svg)
    let directory = try TemporaryDirectory()
    let svg = directory.url.appendingPathComponent("journey.svg").path
    try Data(report.svg.utf8).write(to: URL(fileURLWithPath: svg))
    let result = try Command.run("rsvg-convert", [svg, "-o", svg + ".png"])
    #expect(result.status == 0 && result.stderr.isEmpty, "rsvg-convert: \(result.stderr)")
  }

  /// `grow garden --svg`: the garden alone, without the chart, a picture to share.
  @Test func theGardenAloneHasNoChart() throws {
    var picture = try week()
    picture.showsChart = false
    #expect(picture.height == 90 + 20 + 20 + 2 * 64)
    #expect(!picture.svg.contains("stroke=\"#e4dfd3\""), "no grid lines")
    #expect(picture.svg.contains(">Garden</text>"))
    _ = try XMLDocument(xmlString: picture.svg)
  }
}
