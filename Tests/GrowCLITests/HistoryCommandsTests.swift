import Foundation
import GrowCore
import GrowHistory
import GrowTestSupport
import Testing

/// History, stats, garden and report against real daemons and a real database.
@Suite struct HistoryCommandsTests {
  func databasePath(_ harness: DaemonHarness) -> String {
    HistoryStore.defaultPath(environment: harness.bus.environment)
  }

  func phases(_ harness: DaemonHarness) throws -> [[String: Any]] {
    let result = try harness.grow("history", "--all", "--json")
    #expect(result.status == 0, "\(result.stderr)")
    return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
      ?? []
  }

  @Test func aRealDaemonRecordsEveryOutcomeAndTodaySurvivesARestart() throws {
    let harness = try DaemonHarness(config: DaemonHarness.oneSecondCycle)
    #expect(try harness.grow("start", "--intention", "real run").status == 0)
    _ = try harness.waitForStatus { ($0["completed_today"] as? Int ?? 0) >= 2 }
    #expect(try harness.grow("skip").status == 0)
    #expect(try harness.grow("stop").status == 0)
    #expect(try harness.grow("start", "--focus", "10m").status == 0)
    #expect(try harness.grow("stop").status == 0)
    #expect(try harness.grow("start", "--focus", "10m").status == 0)
    #expect(harness.daemon?.terminate() == 0)

    let recorded = try phases(harness)
    let outcomes = Set(recorded.compactMap { $0["outcome"] as? String })
    #expect(outcomes == ["completed", "skipped", "stopped", "abandoned"])
    let last = try #require(recorded.last)
    #expect(last["outcome"] as? String == "abandoned")
    #expect(last["planned_seconds"] as? Int == 600)
    #expect(recorded.first?["intention"] as? String == "real run")
    let completed = recorded.filter {
      $0["kind"] as? String == "focus" && $0["outcome"] as? String == "completed"
    }.count

    try harness.start()
    let status = try harness.status()
    #expect(status["completed_today"] as? Int == completed)
    let streak = try harness.run(
      "busctl",
      [
        "--user", "get-property", "org.grow.Grow1", "/org/grow/Grow1", "org.grow.Grow1.Timer",
        "Streak", "BestStreak",
      ])
    #expect(streak.stdout == "u 1\nu 1\n")
    let garden = try harness.grow("garden")
    #expect(garden.stdout.contains("  work  🌱🌱"))
    #expect(garden.stdout.contains("🥀🥀"))
  }

  @Test func killingTheDaemonMidRunLeavesAnIntactDatabaseWithEveryCompletedPhase() throws {
    let harness = try DaemonHarness(config: DaemonHarness.oneSecondCycle)
    #expect(try harness.grow("start").status == 0)
    let status = try harness.waitForStatus(timeout: 20) {
      ($0["completed_today"] as? Int ?? 0) >= 4
    }
    let completedBeforeKill = status["completed_today"] as? Int ?? 0
    #expect(harness.daemon?.kill() == 128 + SIGKILL)

    // A phase that ended just before the kill may still be kept beside the session, for the
    // next daemon to write; the history's readers count it (as `grow history` does).
    let store = try HistoryStore(
      path: databasePath(harness), create: false, pendingPath: harness.pendingHistoryPath)
    #expect(try store.integrityCheck() == "ok")
    let recorded = try store.phases().filter(\.isCompletedFocus)
    #expect(recorded.count >= completedBeforeKill)
    #expect(try store.phases().count >= 2 * completedBeforeKill - 1, "breaks are recorded too")
  }

  @Test func withoutAWritableDataDirectoryTheTimerRunsAndSaysWhy() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let blocked = harness.bus.environment["XDG_DATA_HOME", default: ""] + "/grow"
    #expect(FileManager.default.createFile(atPath: blocked, contents: Data("x".utf8)))
    try harness.start()
    #expect(try harness.grow("start").status == 0)
    #expect(try harness.status()["state"] as? String == "focus")
    let expected =
      "grow[daemon] error: cannot create the history directory \(blocked): a file is in the "
      + "way; move it aside so Grow can keep history; the timer runs, and every phase that ends "
      + "is kept in \(harness.pendingHistoryPath) and written to the history once it can be\n"
    #expect(harness.daemon?.stderr.contains(expected) == true, "\(harness.daemon?.stderr ?? "")")
    let stats = try harness.grow("stats")
    #expect(stats.status == 1)
    #expect(
      stats.stderr
        == "grow: cannot create the history directory \(blocked): a file is in the way; "
        + "move it aside so Grow can keep history\n")
    // Once the file is out of the way, the kept phase reaches the history.
    #expect(try harness.grow("stop").status == 0)
    try FileManager.default.removeItem(atPath: blocked)
    try harness.waitForHistory()
    #expect(try phases(harness).map { $0["outcome"] as? String } == ["stopped"])
  }

  /// A month in New York, seeded with explicit instants: DST starts on 2026-03-08, and phases
  /// end on both sides of midnight.
  func seededMonth() throws -> DaemonHarness {
    let harness = try DaemonHarness(
      config: "[card.math]\nfocus = 50m\n", startDaemon: false,
      environment: ["TZ": "America/New_York", "NO_COLOR": "1"])
    let zone = try #require(TimeZone(identifier: "America/New_York"))
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = zone
    formatter.dateFormat = "yyyy-MM-dd HH:mm"
    func phase(_ card: String, _ minutes: Double, _ end: String, _ outcome: HistoryOutcome)
      throws -> PhaseRecord
    {
      let endedAt = try #require(formatter.date(from: end))
      return PhaseRecord(
        card: card, kind: .focus, plannedSeconds: minutes * 60, actualSeconds: minutes * 60,
        startedAt: endedAt.addingTimeInterval(-minutes * 60), endedAt: endedAt,
        outcome: outcome, intention: "seeded", timeZone: LocalZone(zone))
    }
    var phases: [PhaseRecord] = []
    for day in 1...31 {
      phases.append(try phase("work", 25, String(format: "2026-03-%02d 10:00", day), .completed))
    }
    phases.append(try phase("math", 50, "2026-03-07 23:59", .completed))
    phases.append(try phase("math", 35, "2026-03-08 03:05", .completed))
    phases.append(try phase("math", 20, "2026-03-15 00:05", .stopped))
    try HistoryStore(path: databasePath(harness)).record(all: phases)
    return harness
  }

  @Test func statsForASeededMonthAcrossDSTAndMidnight() throws {
    let harness = try seededMonth()
    let json = try harness.grow("stats", "--from", "2026-03-01", "--to", "2026-03-31", "--json")
    #expect(json.status == 0, "\(json.stderr)")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let days = try #require(object["days"] as? [[String: Any]])
    #expect(days.count == 31)
    let minutes = Dictionary(
      uniqueKeysWithValues: days.map {
        ($0["date"] as? String ?? "", ($0["focus_seconds"] as? Int ?? 0) / 60)
      })
    #expect(minutes["2026-03-07"] == 75)
    #expect(minutes["2026-03-08"] == 60)
    #expect(minutes["2026-03-14"] == 25)
    #expect(minutes["2026-03-15"] == 25, "the stopped 20m is cut short, not focus time")
    #expect(object["completed"] as? Int == 33)
    #expect(object["stopped"] as? Int == 1)
    #expect(object["abandoned"] as? Int == 0)
    #expect(object["cut_short_seconds"] as? Int == 1200)
    #expect((object["streak"] as? [String: Any])?["longest"] as? Int == 31)

    let text = try harness.grow("stats", "--from", "2026-03-07", "--to", "2026-03-08")
    #expect(
      text.stdout.hasPrefix(
        """
        Focus 2026-03-07 to 2026-03-08 · all cards · 2h15m focus

          2026-03-07 Sat  1h15m  ██████████████████████████████
          2026-03-08 Sun     1h  ████████████████████████

        Cards
          math  1h25m  ██████████████████████████████
          work    50m  █████████████████▋

        Focus phases: 4 completed
        """))
    let csv = try harness.grow("stats", "--from", "2026-03-15", "--to", "2026-03-15", "--csv")
    #expect(
      csv.stdout
        == "date,card,focus_seconds,cut_short_seconds,completed,skipped,stopped,abandoned\r\n"
        + "2026-03-15,math,0,1200,0,0,1,0\r\n2026-03-15,work,1500,0,1,0,0,0\r\n")
  }

  @Test func historyListsEditsAndDeletesPhases() throws {
    let harness = try seededMonth()
    let listed = try harness.grow("history", "--from", "2026-03-08", "--to", "2026-03-08")
    #expect(
      listed.stdout == """
        33  2026-03-08 Sun 01:30–03:05  focus        math  35m of 35m  completed · seeded
         8  2026-03-08 Sun 09:35–10:00  focus        work  25m of 25m  completed · seeded

        """)
    let edited = try harness.grow("history", "edit", "8", "--card", "math", "--outcome", "stopped")
    #expect(edited.stdout == "phase 8: card 'math', outcome stopped\n")
    let csv = try harness.grow("history", "--from", "2026-03-08", "--to", "2026-03-08", "--csv")
    #expect(csv.stdout.contains("\r\n8,math,focus,1500,1500,2026-03-08T09:35:00-04:00,"))
    let deleted = try harness.grow(
      "history", "delete", "--from", "2026-03-01", "--to", "2026-03-08", "--yes")
    #expect(deleted.stdout == "deleted 10 phases from 2026-03-01 to 2026-03-08\n")
    #expect(try phases(harness).count == 24)

    let missing = try harness.grow("history", "edit", "999", "--card", "math")
    #expect(missing.status == 1)
    #expect(
      missing.stderr == "grow: no phase with id 999; 'grow history' lists them with their ids\n")
    let badDate = try harness.grow("stats", "--from", "2026-02-30", "--to", "2026-03-01")
    #expect(badDate.status == 2)
    #expect(
      badDate.stderr
        == "grow: --from: '2026-02-30' is not a date; write it as YYYY-MM-DD, like 2026-03-08 "
        + "(see 'grow help')\n")
  }

  @Test func editingToACardTheConfigDoesNotHaveIsRefusedWithTheKnownCards() throws {
    let harness = try seededMonth()
    let typo = try harness.grow("history", "edit", "8", "--card", "mtah")
    #expect(typo.status == 1)
    #expect(
      typo.stderr
        == "grow: no card named 'mtah'; did you mean 'math'? (cards: work, math); "
        + "nothing was changed\n")
    let unknown = try harness.grow("history", "edit", "8", "--card", "nosuch")
    #expect(unknown.status == 1)
    #expect(unknown.stderr.hasPrefix("grow: no card named 'nosuch' (cards: work, math)"))
    let row = try phases(harness).first { $0["id"] as? Int == 8 }
    #expect(row?["card"] as? String == "work")
  }

  @Test func deletingPhasesByIdRemovesOnlyThoseAndAMissingIdDeletesNothing() throws {
    let harness = try seededMonth()
    let deleted = try harness.grow("history", "delete", "27", "33")
    #expect(deleted.status == 0, "\(deleted.stderr)")
    #expect(deleted.stdout == "deleted phases 27, 33\n")
    let left = try phases(harness).compactMap { $0["id"] as? Int }
    #expect(left.count == 32)
    #expect(!left.contains(27) && !left.contains(33) && left.contains(8))

    let missing = try harness.grow("history", "delete", "8", "999")
    #expect(missing.status == 1)
    #expect(
      missing.stderr == "grow: no phase with id 999; 'grow history' lists them with their ids\n")
    #expect(try phases(harness).count == 32, "all or none: phase 8 is still there")
    let word = try harness.grow("history", "delete", "eight")
    #expect(word.status == 2)
    #expect(word.stderr.hasPrefix("grow: grow history delete: 'eight' is not a phase id"))
  }

  @Test func aRangeDeleteAsksOnATerminalAndNeedsYesFromAScript() throws {
    let harness = try seededMonth()
    let range = ["history", "delete", "--from", "2026-03-01", "--to", "2026-03-08"]
    let script = try harness.run(Binaries.grow, range)
    #expect(script.status == 1)
    #expect(
      script.stderr
        == "grow: not deleting 10 phases from 2026-03-01 to 2026-03-08 without asking: stdin is "
        + "not a terminal; add --yes to delete them from a script\n")
    #expect(try phases(harness).count == 34)

    // script(1) gives grow a real terminal for stdin and stdout.
    func onATerminal(answer: String) throws -> String {
      let command = ([Binaries.grow] + range).joined(separator: " ")
      let result = try Command.run(
        "script", ["-qec", command, "/dev/null"], environment: harness.environment,
        stdin: answer + "\n")
      #expect(result.status == 0, "\(result.stdout)")
      return result.stdout
    }
    let declined = try onATerminal(answer: "n")
    #expect(declined.contains("Delete 10 phases from 2026-03-01 to 2026-03-08? [y/N] "))
    #expect(declined.contains("nothing deleted"))
    #expect(try phases(harness).count == 34)
    let accepted = try onATerminal(answer: "y")
    #expect(accepted.contains("deleted 10 phases from 2026-03-01 to 2026-03-08"))
    #expect(try phases(harness).count == 24)
  }

  @Test func exportsCarryEachPhasesDistractionsAndAwayTime() throws {
    let harness = try seededMonth()
    let store = try HistoryStore(path: databasePath(harness))
    let phase = try #require(try store.phases(days: nil).first { $0.id == 8 })
    var away = phase
    away.startedAt = phase.endedAt.addingTimeInterval(60)
    away.endedAt = away.startedAt.addingTimeInterval(1500)
    away.awaySeconds = 95
    let awayID = try store.record(away)
    try store.record(Distraction(phaseID: 8, appClass: "firefox", seconds: 30.4))
    try store.record(Distraction(phaseID: 8, appClass: "Slack", seconds: 12))

    let range = ["history", "--from", "2026-03-08", "--to", "2026-03-08"]
    let csv = try harness.run(Binaries.grow, range + ["--csv"]).stdout
    let rows = csv.components(separatedBy: "\r\n").map { $0.components(separatedBy: ",") }
    let header = try #require(rows.first)
    #expect(header.contains("distractions") && header.contains("distraction_seconds"))
    let field = { (row: [String], name: String) in
      header.firstIndex(of: name).flatMap { $0 < row.count ? row[$0] : nil }
    }
    let row8 = try #require(rows.first { $0.first == "8" })
    let rowAway = try #require(rows.first { $0.first == "\(awayID)" })
    #expect(field(row8, "distractions") == "2")
    #expect(field(row8, "distraction_seconds") == "42")
    #expect(field(row8, "away_seconds") == "0")
    #expect(field(rowAway, "away_seconds") == "95")
    #expect(field(rowAway, "distractions") == "0")

    let json = try harness.run(Binaries.grow, range + ["--json"]).stdout
    let objects = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
    let object8 = try #require(objects.first { $0["id"] as? Int == 8 })
    #expect(object8["distractions"] as? Int == 2)
    #expect(object8["distraction_seconds"] as? Int == 42)
    let objectAway = try #require(objects.first { $0["id"] as? Int == Int(awayID) })
    #expect(objectAway["away_seconds"] as? Int == 95)
  }

  /// Today's phases as the history has them, ended a minute or two ago: one completed 25m
  /// focus and one 12m focus that was stopped.
  func seedToday(_ harness: DaemonHarness) throws {
    let now = Date()
    func focus(_ minutes: Double, endedAgo: TimeInterval, _ outcome: HistoryOutcome)
      -> PhaseRecord
    {
      let end = now.addingTimeInterval(-endedAgo)
      return PhaseRecord(
        card: "work", kind: .focus, plannedSeconds: 1500, actualSeconds: minutes * 60,
        startedAt: end.addingTimeInterval(-minutes * 60), endedAt: end, outcome: outcome)
    }
    try HistoryStore(path: databasePath(harness)).record(all: [
      focus(25, endedAgo: 120, .completed), focus(12, endedAgo: 60, .stopped),
    ])
  }

  @Test func onlyCompletedFocusCountsTowardTodayAndTheGoalAndCutShortFocusIsShownApart() throws {
    let harness = try DaemonHarness(
      config: "[timer]\nfocus = 1s\ndaily-goal = 2h\nauto-start-breaks = false\n",
      startDaemon: false)
    try seedToday(harness)
    try harness.start()
    var status = try harness.status()
    #expect(status["completed_today"] as? Int == 1)
    #expect(status["focus_today"] as? Int == 1500)
    #expect(status["cut_short_today"] as? Int == 720)
    #expect(
      try harness.grow("status").stdout.contains("  today: 1 completed, 25m focus, 12m cut short\n")
    )

    // A 1s focus completes: the session waits for its break, with the card's goal.
    #expect(try harness.grow("start").status == 0)
    _ = try harness.waitForStatus { $0["state"] as? String == "waiting" }
    #expect(
      try harness.grow("status").stdout.contains(
        "  today: 2 completed, 25m1s focus (20% of the 2h goal), 12m cut short\n"))
    #expect(try harness.grow("stop").status == 0)

    // A stopped focus goes to the cut-short time, not toward the goal.
    #expect(try harness.grow("start", "--focus", "10m").status == 0)
    #expect(try harness.grow("stop").status == 0)
    status = try harness.status()
    #expect(status["focus_today"] as? Int == 1501)
    let cutShort = status["cut_short_today"] as? Int ?? 0
    #expect(cutShort >= 720 && cutShort < 730, "\(cutShort)")
  }

  @Test func theDaemonsTodayFollowsTheHistoryAfterDeletesAndEdits() throws {
    let harness = try DaemonHarness(startDaemon: false)
    try seedToday(harness)
    try harness.start()
    #expect(try harness.status()["completed_today"] as? Int == 1)

    // Phase 2, the stopped one, was completed after all.
    #expect(try harness.grow("history", "edit", "2", "--outcome", "completed").status == 0)
    var status = try harness.waitForStatus { $0["completed_today"] as? Int == 2 }
    #expect(status["focus_today"] as? Int == 1500 + 720)
    #expect(status["cut_short_today"] as? Int == 0)

    #expect(try harness.grow("history", "delete", "1").status == 0)
    status = try harness.waitForStatus { $0["completed_today"] as? Int == 1 }
    #expect(status["focus_today"] as? Int == 720)

    let today = LocalDay.today().text
    let deleted = try harness.grow("history", "delete", "--from", today, "--to", today, "--yes")
    #expect(deleted.stdout == "deleted 1 phase from \(today) to \(today)\n")
    status = try harness.waitForStatus { $0["completed_today"] as? Int == 0 }
    #expect(status["focus_today"] as? Int == 0)
    #expect(try harness.grow("status").stdout.contains("  today: 0 completed, 0s focus\n"))

    // Without a daemon, the history changes all the same and no daemon is started.
    #expect(harness.daemon?.terminate() == 0)
    try seedToday(harness)
    let id = try #require(try phases(harness).first?["id"] as? Int)
    let alone = try harness.grow("history", "delete", "\(id)")
    #expect(alone.status == 0, "\(alone.stderr)")
    #expect(alone.stderr == "")
    #expect(try harness.grow("status").status != 0, "no daemon was activated")
  }

  @Test func reportWritesAnSVGThatRendersToAPNG() throws {
    let harness = try seededMonth()
    let svg = harness.bus.directory.appendingPathComponent("week.svg").path
    let png = harness.bus.directory.appendingPathComponent("week.png").path
    let result = try harness.grow(
      "report", "--svg", svg, "--from", "2026-03-09", "--to", "2026-03-15")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "wrote \(svg) (800×578, 2026-03-09 to 2026-03-15)\n")
    let render = try harness.run("rsvg-convert", [svg, "-o", png])
    #expect(render.status == 0, "\(render.stderr)")
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: png)).prefix(24))
    let integer = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    #expect(integer(16) == 800)
    #expect(integer(20) == 578)
  }
}
