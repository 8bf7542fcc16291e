import Foundation
import GrowTestSupport
import Testing

/// One definition of focus time (`PhaseOutcome.countsAsFocus`: focus that ran
/// its course) and one word per outcome, in every command, the report, D-Bus and the exports.
/// One real session on a real daemon: a focus stopped, one completed, one skipped. Before,
/// `grow stats` and the report added the stopped and skipped focus to the total that `grow
/// status` and the goal did not count, and the garden and stats said "abandoned"/"wilted"
/// where `grow history` said "stopped".
@Suite struct NumbersAgreeTests {
  static let config = """
    [timer]
    focus = 2s
    short-break = 1s
    auto-start-breaks = false
    auto-start-focus = false
    daily-goal = 1m
    """

  func json(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8))
  }

  /// Waits until the running focus has run `seconds`, so that it is cut short with some time.
  func focusRuns(_ harness: DaemonHarness, for seconds: Int) throws {
    _ = try harness.waitForStatus(timeout: 30) {
      $0["state"] as? String == "focus" && ($0["elapsed"] as? Int ?? 0) >= seconds
    }
  }

  @Test func everyCommandCountsAndWordsTheSameSession() throws {
    let harness = try DaemonHarness(config: Self.config)
    // A focus stopped after a second or so: the session ends.
    #expect(try harness.grow("start", "--focus", "30s").status == 0)
    try focusRuns(harness, for: 1)
    #expect(try harness.grow("stop").status == 0)
    // A 2 s focus that completes, its break, then a focus skipped after a second or so.
    #expect(try harness.grow("start").status == 0)
    _ = try harness.waitForStatus(timeout: 30) { $0["next"] as? String == "short-break" }
    #expect(try harness.grow("resume").status == 0)
    _ = try harness.waitForStatus(timeout: 30) { $0["next"] as? String == "focus" }
    #expect(try harness.grow("resume").status == 0)
    try focusRuns(harness, for: 1)

    // While a focus runs, it is not focus time yet: status and stats agree at every instant.
    let running = try harness.status()
    try harness.waitForHistory(timeout: 30)
    let statsWhileRunning = try #require(
      try json(harness.grow("stats", "--day", "--json").stdout) as? [String: Any])
    let todayWhileRunning = try #require(statsWhileRunning["today"] as? [String: Any])
    #expect(running["focus_today"] as? Int == todayWhileRunning["focus_seconds"] as? Int)
    #expect(running["focus_today"] as? Int == 2, "the completed 2 s focus, not the running one")

    #expect(try harness.grow("skip").status == 0)
    let status = try harness.waitForStatus(timeout: 30) { $0["next"] as? String == "short-break" }
    try harness.waitForHistory(timeout: 30)

    // The daemon's figures (D-Bus GetStatus through status --json).
    let focus = try #require(status["focus_today"] as? Int)
    let cutShort = try #require(status["cut_short_today"] as? Int)
    #expect(focus == 2)
    #expect(cutShort >= 1, "the stopped and the skipped focus ran half a second or more each")
    #expect(status["completed_today"] as? Int == 1)
    let busFocus = try harness.run(
      "busctl",
      [
        "--user", "get-property", "org.grow.Grow1", "/org/grow/Grow1", "org.grow.Grow1.Timer",
        "FocusToday",
      ])
    #expect(busFocus.stdout == "u \(focus)\n", "\(busFocus)")

    // grow status: the today line.
    let statusText = try harness.grow("status").stdout
    let todayLine = try #require(
      statusText.split(separator: "\n").first { $0.hasPrefix("  today: ") })
    let today = String(todayLine.dropFirst("  today: ".count))
    let words = { (seconds: Int) in
      seconds < 60 ? "\(seconds)s" : "\(seconds / 60)m\(seconds % 60)s"
    }
    #expect(
      today
        == "1 completed, \(words(focus)) focus (3% of the 1m goal), \(words(cutShort)) cut short")

    // grow stats: the same today line, the same totals, the outcomes by their words.
    let stats = try harness.grow("stats", "--day").stdout
    let lines = stats.split(separator: "\n").map(String.init)
    #expect(
      lines.first?.hasSuffix(" · \(words(focus)) focus, \(words(cutShort)) cut short") == true,
      "\(stats)")
    #expect(lines.contains("Focus phases: 1 completed, 1 skipped, 1 stopped"), "\(stats)")
    #expect(lines.contains { $0.hasPrefix("Today: \(today) ") }, "\(stats)")
    let statsJSON = try #require(
      try json(harness.grow("stats", "--day", "--json").stdout) as? [String: Any])
    #expect(statsJSON["focus_seconds"] as? Int == focus)
    #expect(statsJSON["cut_short_seconds"] as? Int == cutShort)
    #expect(statsJSON["completed"] as? Int == 1)
    #expect(statsJSON["skipped"] as? Int == 1)
    #expect(statsJSON["stopped"] as? Int == 1)
    #expect(statsJSON["abandoned"] as? Int == 0)
    let statsToday = try #require(statsJSON["today"] as? [String: Any])
    #expect(statsToday["focus_seconds"] as? Int == focus)
    #expect(statsToday["cut_short_seconds"] as? Int == cutShort)
    let csv = try harness.grow("stats", "--day", "--csv").stdout
      .split(separator: "\r\n").map { $0.split(separator: ",").map(String.init) }
    #expect(
      csv.first
        == [
          "date", "card", "focus_seconds", "cut_short_seconds", "completed", "skipped", "stopped",
          "abandoned",
        ])
    #expect(
      Array(csv.dropFirst().first?.dropFirst(2) ?? []) == [
        "\(focus)", "\(cutShort)", "1", "1", "1", "0",
      ])

    // grow history (text, JSON and CSV): each focus with the same word.
    let history = try harness.grow("history").stdout.split(separator: "\n")
    let focusOutcomes = history.filter { $0.contains("  focus  ") }.compactMap {
      $0.split(separator: " ").last.map(String.init)
    }
    #expect(focusOutcomes == ["stopped", "completed", "skipped"], "\(history)")
    let exported = try #require(
      try json(harness.grow("history", "--json").stdout) as? [[String: Any]])
    let exportedFocus = exported.filter { $0["kind"] as? String == "focus" }
    #expect(
      exportedFocus.compactMap { $0["outcome"] as? String } == ["stopped", "completed", "skipped"])
    #expect(
      exportedFocus.filter { $0["outcome"] as? String == "completed" }
        .compactMap { $0["actual_seconds"] as? Int } == [focus])
    let historyCSV = try harness.grow("history", "--csv").stdout
    for word in ["stopped", "completed", "skipped"] {
      #expect(historyCSV.contains(",\(word),"), "\(historyCSV)")
    }

    // grow garden: the completed focus grew, the stopped one wilted, by the same words.
    let garden = try harness.grow("garden").stdout
    #expect(garden.contains("  work  🥀🌱  1 completed, 1 stopped\n"), "\(garden)")
    #expect(garden.contains("🥀 stopped or abandoned"), "\(garden)")
    #expect(!garden.contains("wilted") && !garden.contains("grown"), "\(garden)")

    // grow report: the same totals and words in the picture.
    let svgPath = NSTemporaryDirectory() + "grow-numbers-\(UUID().uuidString).svg"
    defer { try? FileManager.default.removeItem(atPath: svgPath) }
    #expect(try harness.grow("report", "--svg", svgPath).status == 0)
    let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
    #expect(
      svg.contains(
        ">\(words(focus)) focus, \(words(cutShort)) cut short · 1 completed, 1 skipped, 1 stopped · "
      ), "\(svg)")
    #expect(svg.contains(">1 completed, 1 stopped</text>"), "\(svg)")
    #expect(!svg.contains("abandoned") && !svg.contains("wilted"))
  }
}
