import Foundation
import GrowCore
import Testing

@testable import GrowHistory

/// Goals and their steps in a real history database: progress read from the phases, the
/// recent pace, and the words of `grow journey`.
@Suite struct GoalsTests {
  let directory: TemporaryDirectory
  let store: HistoryStore
  /// Noon on 2026-12-04 in New York.
  let now = local("2026-12-04 12:00")

  init() throws {
    directory = try TemporaryDirectory()
    store = try HistoryStore(path: directory.databasePath)
  }

  func completedFocus(_ card: String, hours: Double, daysAgo: Int) throws {
    try store.record(
      focus(card, minutes: hours * 60, endingAt: now.addingTimeInterval(-Double(daysAgo) * 86400)))
  }

  @Test func aGoalWithStepsAddsUpItsStepsFocusSinceEachWasSet() throws {
    try completedFocus("swift", hours: 5, daysAgo: 40)  // before the goal: does not count
    let set = now.addingTimeInterval(-30 * 86400)
    try store.addGoal("Have a Mac", at: set)
    try store.addGoal(
      "Learn Swift", under: "Have a Mac", card: "swift", targetSeconds: 20 * 3600, at: set)
    try store.addGoal(
      "Save money", under: "Have a Mac", card: "work", targetSeconds: 10 * 3600, at: set)
    try completedFocus("swift", hours: 1, daysAgo: 20)
    try completedFocus("swift", hours: 2, daysAgo: 3)
    try completedFocus("work", hours: 6, daysAgo: 25)
    try store.record(
      focus("work", minutes: 60, endingAt: now.addingTimeInterval(-3600), outcome: .stopped))

    let journey = try #require(try store.journeys(now: now, zone: newYork).first)
    #expect(journey.goal.name == "Have a Mac")
    #expect(journey.doneSeconds == 9 * 3600, "only completed focus, only since each was set")
    #expect(journey.targetSeconds == 30.0 * 3600, "the steps' targets add up")
    let swift = journey.subgoals[0]
    #expect(swift.doneSeconds == 3 * 3600)
    #expect(swift.recentSeconds == 2 * 3600, "the pace counts the last 14 days")
    // 17h left at 2h a fortnight: 119 days.
    #expect(swift.estimatedDay(from: LocalDay(now, in: newYork)) == LocalDay(text: "2027-04-02"))
    #expect(journey.subgoals[1].recentSeconds == 0)
    #expect(journey.subgoals[1].estimatedDay(from: LocalDay(now, in: newYork)) == nil)
  }

  @Test func aStepMarkedReachedCountsWithTheFocusItTook() throws {
    let set = now.addingTimeInterval(-10 * 86400)
    try store.addGoal("Exam", at: set)
    try store.addGoal("Chapter 1", under: "Exam", card: "math", targetSeconds: 10 * 3600, at: set)
    try store.addGoal("Chapter 2", under: "Exam", card: "physics", targetSeconds: 5 * 3600, at: set)
    try completedFocus("math", hours: 4, daysAgo: 2)
    try store.setGoal("Chapter 1", done: true, at: now)
    let exam = try #require(try store.journeys("Exam", now: now, zone: newYork).first)
    #expect(exam.subgoals[0].isReached)
    #expect(exam.targetSeconds == 9.0 * 3600, "4h that chapter 1 took, and chapter 2's 5h")
    try store.setGoal("Chapter 1", done: false, at: now)
    #expect(try store.journeys("Exam", now: now, zone: newYork).first?.targetSeconds == 15.0 * 3600)
  }

  @Test func badNamesAreRefusedWithWhatToDo() throws {
    try store.addGoal("Have a Mac", at: now)
    #expect(throws: GoalError.alreadyExists("Have a Mac")) {
      try store.addGoal("  Have a Mac ", at: now)
    }
    #expect(throws: GoalError.badName(.empty)) { try store.addGoal("   ", at: now) }
    #expect(throws: GoalError.badName(.notOneLine("\n"))) { try store.addGoal("a\nb", at: now) }
    #expect(throws: GoalError.badName(.tooLong(limit: HistoryStore.goalNameLimit))) {
      try store.addGoal(String(repeating: "x", count: 121), at: now)
    }
    #expect(throws: GoalError.noSuchGoal("Have a Mca", known: ["Have a Mac"])) {
      try store.addGoal("Learn Swift", under: "Have a Mca", at: now)
    }
    #expect(throws: GoalError.noSuchGoal("nope", known: ["Have a Mac"])) {
      try store.setGoal("nope", done: true, at: now)
    }
  }

  /// A goal without hours on a card with tasks is measured in tasks done.
  @Test func aGoalWithoutHoursCountsItsCardsTasks() throws {
    try store.addTask(card: "math", text: "before the goal", at: now.addingTimeInterval(-60))
    try store.addGoal("Chapter 3", card: "math", at: now)
    var ids: [Int64] = []
    for text in ["a", "b", "c", "d"] {
      ids.append(try store.addTask(card: "math", text: text, at: now.addingTimeInterval(1)).id)
    }
    try store.addTask(card: "work", text: "another card", at: now.addingTimeInterval(1))
    let standing = {
      JourneyText.standing(
        try #require(try self.store.journeys(now: self.now, zone: newYork).first),
        focusLength: { _ in nil })
    }
    try store.setTask(ids[0], done: true, at: now)
    #expect(try standing() == "1 of 4 tasks done, 0s of focus")
    try store.setTask(ids[1], done: true, at: now)
    try store.setTask(ids[2], done: true, at: now)
    #expect(try standing() == "3 of 4 tasks done: 1 task to go")
    try store.setTask(ids[3], done: true, at: now)
    let all = try #require(try store.journeys(now: now, zone: newYork).first)
    #expect(all.isReached)
    #expect(all.fraction == 1)
  }

  /// Focus the daemon keeps and has not written yet (the database locked, the disk full)
  /// counts toward its task and its goal, as `grow status` counts it today.
  @Test func keptFocusCountsTowardItsTaskAndItsGoal() throws {
    let task = try store.addTask(card: "math", text: "Chapter 3", at: now.addingTimeInterval(-7200))
    try store.addGoal(
      "Exam", card: "math", targetSeconds: 36000, at: now.addingTimeInterval(-7200))
    var written = focus("math", minutes: 25, endingAt: now.addingTimeInterval(-3600))
    written.taskID = task.id
    try store.record(written)
    var waiting = focus("math", minutes: 25, endingAt: now.addingTimeInterval(-60))
    waiting.taskID = task.id
    PendingPhases.open(path: directory.pendingPath, log: { _, _ in })
      .keep(PendingPhase(phase: waiting))
    let reader = try HistoryStore(path: directory.databasePath, pendingPath: directory.pendingPath)

    let counted = try #require(try reader.tasks().first)
    #expect(counted.focusCount == 2)
    #expect(counted.focusSeconds == 50 * 60)
    let journey = try #require(try reader.journeys(now: now, zone: newYork).first)
    #expect(journey.doneSeconds == 50 * 60)
    // Without the journal, only what is written.
    #expect(try store.tasks().first?.focusCount == 1)
  }

  @Test func aGoalIsEditedAndNeverBecomesAStepOfItsOwnSteps() throws {
    try store.addGoal("Exam", at: now)
    try store.addGoal("Chapter 1", under: "Exam", card: "math", at: now)
    let renamed = try store.editGoal(
      "Chapter 1", .init(name: "Chapter one", targetSeconds: 7200, due: LocalDay(number: 20_800)))
    #expect(renamed.name == "Chapter one")
    #expect(renamed.parent == "Exam")
    #expect(renamed.targetSeconds == 7200)
    #expect(renamed.card == "math", "what is not named stays")
    #expect(throws: GoalError.circular(goal: "Exam", under: "Chapter one")) {
      try store.editGoal("Exam", .init(parent: .some("Chapter one")))
    }
    #expect(throws: GoalError.circular(goal: "Exam", under: "Exam")) {
      try store.editGoal("Exam", .init(parent: .some("Exam")))
    }
    try store.addGoal("Other", at: now)
    #expect(throws: GoalError.alreadyExists("Other")) {
      try store.editGoal("Exam", .init(name: "Other"))
    }
    #expect(try store.editGoal("Chapter one", .init(parent: .some(nil))).parent == nil)
    #expect(
      try store.journeys(now: now, zone: newYork).map(\.goal.name) == [
        "Exam", "Chapter one", "Other",
      ])
  }

  @Test func removingAGoalRemovesItsStepsAndKeepsTheFocus() throws {
    try store.addGoal("Exam", at: now)
    try store.addGoal("Chapter 1", under: "Exam", card: "math", at: now)
    try completedFocus("math", hours: 1, daysAgo: 0)
    try store.removeGoal("Exam")
    #expect(try store.goals().isEmpty)
    #expect(try store.phases().count == 1)
  }

  /// A reopened database (the next `grow` command) reads the goals the last one wrote.
  @Test func goalsSurviveReopeningTheFile() throws {
    try store.addGoal(
      "Exam", card: "math", targetSeconds: 3600, due: LocalDay(text: "2027-01-31"), at: now)
    let again = try HistoryStore(path: directory.databasePath)
    let goal = try #require(try again.goals().first)
    #expect(goal.name == "Exam")
    #expect(goal.card == "math")
    #expect(goal.targetSeconds == 3600)
    #expect(goal.due == LocalDay(text: "2027-01-31"))
    #expect(goal.createdAt == now)
  }
}

/// The words of `grow journey`: progress made in the first half, what is left in the second.
@Suite struct JourneyTextTests {
  let today = LocalDay(number: 20_791)  // 2026-12-04
  let created = local("2026-11-01 09:00")

  func progress(
    _ name: String, card: String? = "math", done: Double, target: Double?, recent: Double = 0,
    due: String? = nil, reached: Bool = false, subgoals: [GoalProgress] = []
  ) -> GoalProgress {
    GoalProgress(
      goal: Goal(
        name: name, card: card, targetSeconds: target, due: due.flatMap(LocalDay.init(text:)),
        createdAt: created, doneAt: reached ? created : nil),
      doneSeconds: done, targetSeconds: target, recentSeconds: recent, subgoals: subgoals)
  }

  @Test func theFirstHalfIsProgressMadeAndTheSecondWhatIsLeft() {
    let length: (String) -> TimeInterval? = { _ in 1500 }
    #expect(
      JourneyText.standing(progress("a", done: 0, target: 72000), focusLength: length)
        == "0s of 20h: not started yet")
    #expect(
      JourneyText.standing(progress("a", done: 3 * 3600, target: 72000), focusLength: length)
        == "3h of 20h: first steps, 15% of the way")
    #expect(
      JourneyText.standing(progress("a", done: 8 * 3600, target: 72000), focusLength: length)
        == "8h of 20h: well on the way, 40% done")
    #expect(
      JourneyText.standing(progress("a", done: 19.5 * 3600, target: 72000), focusLength: length)
        == "19h30m of 20h: 2 focus sessions to go")
    #expect(
      JourneyText.standing(progress("a", done: 71000, target: 72000), focusLength: length)
        == "19h43m20s of 20h: 1 focus session to go")
    #expect(
      JourneyText.standing(progress("a", done: 15 * 3600, target: 72000), focusLength: { _ in nil })
        == "15h of 20h: 5h to go")
    #expect(
      JourneyText.standing(progress("a", done: 3600, target: nil), focusLength: length)
        == "1h of focus so far")
    #expect(
      JourneyText.standing(
        progress("a", done: 3600, target: 72000, reached: true), focusLength: length)
        == "1h of focus: reached 🪷")
  }

  @Test func theDayItIsReachedAtTheRecentPaceAndGentlyWhenPastTheDateSet() {
    // 10h left at 14h a fortnight: 10 days.
    let onTime = progress(
      "a", done: 10 * 3600, target: 20 * 3600, recent: 14 * 3600, due: "2027-01-01")
    #expect(
      JourneyText.paceLine(onTime, today: today)
        == "at your recent pace (1h a day), around 2026-12-14")
    let late = progress(
      "a", done: 10 * 3600, target: 20 * 3600, recent: 14 * 3600, due: "2026-12-10")
    #expect(
      JourneyText.paceLine(late, today: today)
        == "at your recent pace (1h a day), around 2026-12-14, after the 2026-12-10 you set")
    let idle = progress("a", done: 3600, target: 7200)
    #expect(JourneyText.paceLine(idle, today: today) == "no focus toward it in the last 14 days")
  }

  @Test func aJourneyIsDrawnAsATreeOfItsSteps() {
    let swift = progress(
      "Learn Swift", card: "swift", done: 3 * 3600, target: 20 * 3600, recent: 14 * 3600)
    let money = progress("Save money", card: "work", done: 10 * 3600, target: 10 * 3600)
    let mac = progress(
      "Have a Mac", card: nil, done: 13 * 3600, target: 30 * 3600, recent: 14 * 3600,
      due: "2027-06-01", subgoals: [swift, money])
    #expect(
      JourneyText.render([mac], today: today, focusLength: { _ in 3000 })
        == """
        Have a Mac · 13h of 30h: well on the way, 43% done · by 2027-06-01
        │  at your recent pace (1h a day), around 2026-12-21
        ├─ Learn Swift (swift) · 3h of 20h: first steps, 15% of the way
        │     at your recent pace (1h a day), around 2026-12-21
        └─ Save money (work) · 10h of focus: reached 🪷
        """)
  }
}
