import Foundation
import GrowHistory
import GrowTestSupport
import Testing

/// `grow goal` and `grow journey` as a person uses them: the real binary on a real history
/// database, with focus recorded after the goal was set.
@Suite struct GoalCommandsTests {
  func recordFocus(_ harness: DaemonHarness, card: String, minutes: Double) throws {
    let end = Date().addingTimeInterval(1)
    try HistoryStore(path: HistoryStore.defaultPath(environment: harness.bus.environment))
      .record(
        PhaseRecord(
          card: card, kind: .focus, plannedSeconds: minutes * 60, actualSeconds: minutes * 60,
          startedAt: end.addingTimeInterval(-minutes * 60), endedAt: end, outcome: .completed))
  }

  @Test func aGoalWithAStepShowsTheWayInWordsAndJSON() throws {
    let harness = try DaemonHarness(startDaemon: false)
    #expect(
      try harness.grow("goal", "add", "Have a Mac", "--by", "2027-06-01").stdout
        == "added 'Have a Mac'\n")
    let step = try harness.grow(
      "goal", "add", "Learn Swift", "--under", "Have a Mac", "--hours", "2", "--card", "work")
    #expect(step.stdout == "added 'Learn Swift', a step toward 'Have a Mac'\n", "\(step.stderr)")
    try recordFocus(harness, card: "work", minutes: 25)

    let journey = try harness.grow("journey")
    #expect(journey.status == 0)
    #expect(
      journey.stdout.hasPrefix(
        """
        Have a Mac · 25m of 2h: first steps, 20% of the way · by 2027-06-01
        │  at your recent pace (1m47s a day), around
        """), "\(journey.stdout)")
    #expect(
      journey.stdout.contains("└─ Learn Swift (work) · 25m of 2h: first steps, 20% of the way\n"))

    let list = try harness.grow("goal", "list", "--json")
    let goals = try #require(
      try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
    #expect(goals.map { $0["name"] as? String } == ["Have a Mac", "Learn Swift"])
    #expect(goals[1]["parent"] as? String == "Have a Mac")
    #expect(goals[1]["done_seconds"] as? Int == 1500)
    #expect(goals[1]["target_seconds"] as? Int == 7200)
    #expect(goals[1]["percent"] as? Int == 20)
    #expect(goals[0]["card"] is NSNull, "every key is there, null where it does not apply")
    #expect(Set(goals[0].keys).count == 14)

    let nested = try harness.grow("journey", "Have a Mac", "--json")
    let tree = try #require(
      try JSONSerialization.jsonObject(with: Data(nested.stdout.utf8)) as? [[String: Any]])
    #expect(
      (tree.first?["subgoals"] as? [[String: Any]])?.first?["name"] as? String == "Learn Swift")

    #expect(try harness.grow("goal", "done", "Learn Swift").stdout == "'Learn Swift' reached 🪷\n")
    #expect(
      try harness.grow("journey").stdout.contains("└─ Learn Swift (work) · 25m of focus: reached 🪷")
    )
  }

  @Test func mistakesGetAClearRefusalAndChangeNothing() throws {
    let harness = try DaemonHarness(startDaemon: false)
    #expect(try harness.grow("goal", "list").stdout.hasPrefix("no goals yet; add one with"))
    let card = try harness.grow("goal", "add", "Read", "--card", "wrok")
    #expect(card.status == 2)
    #expect(card.stderr.contains("no card named 'wrok'; did you mean 'work'?"), "\(card.stderr)")
    let hours = try harness.grow("goal", "add", "Read", "--hours", "lots")
    #expect(hours.status == 2)
    #expect(hours.stderr.contains("--hours takes a number of hours above 0"))
    #expect(try harness.grow("goal", "add", "Read a book").status == 0)
    let typo = try harness.grow("goal", "done", "Read a bok")
    #expect(typo.status == 1)
    #expect(typo.stderr == "grow: no goal 'Read a bok'; did you mean 'Read a book'?\n")
    let twice = try harness.grow("goal", "add", "Read a book")
    #expect(
      twice.stderr == "grow: there is already a goal 'Read a book'; 'grow goal list' shows them\n")
    let list = try harness.grow("goal", "list", "--json")
    let goals = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]
    #expect(goals?.count == 1)
    #expect(
      try harness.grow("goal", "edit", "Read a book", "--hours", "3", "--name", "Read SICP").stdout
        == "changed 'Read SICP'\n")
    #expect(try harness.grow("goal", "edit", "Read SICP").status == 2, "nothing to change")
    let help = try harness.grow("help")
    #expect(help.stdout.contains("\n  goal "))
    #expect(help.stdout.contains("\n  journey "))
  }
}
