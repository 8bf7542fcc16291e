import Foundation
import GrowHistory
import GrowTestSupport
import Testing

/// The to-do list on a card, as a person uses it with the real daemon: a task added, a focus
/// started on it by the start of its text, the phase recorded toward it.
@Suite struct TaskCommandsTests {
  static let config = """
    [timer]
    focus = 2s
    auto-start-breaks = false
    [card.math]
    focus = 2s
    auto-start-breaks = false
    """

  @Test func aFocusStartedOnATaskIsRecordedTowardIt() throws {
    let harness = try DaemonHarness(config: Self.config)
    let added = try harness.grow("task", "add", "math", "Chapter 3, exercises 1–10")
    #expect(added.stdout == "added task 1 on math: Chapter 3, exercises 1–10\n", "\(added.stderr)")
    #expect(try harness.grow("task", "add", "math", "Chapter 4").status == 0)

    let started = try harness.grow("start", "--task", "chapter 3")
    #expect(started.status == 0, "\(started.stderr)")
    let status = try harness.status()
    #expect(status["card"] as? String == "math")
    #expect(status["intention"] as? String == "Chapter 3, exercises 1–10")
    _ = try harness.waitForStatus(timeout: 30) { $0["state"] as? String == "waiting" }
    try harness.waitForHistory()
    #expect(try harness.grow("stop").status == 0)

    let history = try HistoryStore(
      path: HistoryStore.defaultPath(environment: harness.bus.environment))
    #expect(try history.task(1).focusCount == 1)
    #expect(try history.task(2).focusCount == 0)
    let list = try harness.grow("tasks", "math")
    #expect(
      list.stdout.hasPrefix("1  ·  math  Chapter 3, exercises 1–10  (2s in 1 focus)\n"),
      "\(list.stdout)")

    let stats = try harness.grow("stats", "--day")
    #expect(stats.stdout.contains("\nTasks\n  1 Chapter 3, exercises 1–10  2s"), "\(stats.stdout)")
    let statsJSON = try #require(
      try JSONSerialization.jsonObject(
        with: Data(harness.grow("stats", "--day", "--json").stdout.utf8))
        as? [String: Any])
    let perTask = try #require(statsJSON["tasks"] as? [[String: Any]])
    #expect(perTask.first?["task"] as? Int == 1)
    #expect(perTask.first?["focus_seconds"] as? Int == 2)

    let json = try harness.grow("tasks", "--json")
    let tasks = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
    #expect(tasks.count == 2)
    #expect(tasks[0]["focus_count"] as? Int == 1)
    #expect(tasks[0]["done"] as? Bool == false)
    #expect(tasks[1]["done_at"] is NSNull)

    #expect(
      try harness.grow("task", "done", "1").stdout == "task 1 done: Chapter 3, exercises 1–10\n")
    #expect(
      try harness.grow("tasks").stdout == "2  ·  math  Chapter 4\n", "done tasks leave the list")
    #expect(try harness.grow("tasks", "--all").stdout.contains("1  ✔  math"))
    let again = try harness.grow("start", "--task", "1")
    #expect(again.status == 1)
    #expect(again.stderr.contains("task 1 is done; 'grow task done 1 --undo' opens it again"))
  }

  @Test func tasksThatCannotBeFoundOrAddedAreRefusedClearly() throws {
    let harness = try DaemonHarness(config: Self.config, startDaemon: false)
    #expect(try harness.grow("tasks").stdout.hasPrefix("no open tasks; add one with"))
    let card = try harness.grow("task", "add", "mtah", "x")
    #expect(card.status == 2)
    #expect(card.stderr.contains("no card named 'mtah'; did you mean 'math'?"))
    let empty = try harness.grow("task", "add", "math", "   ")
    #expect(empty.stderr == "grow: the task is empty; write a few words\n")
    #expect(try harness.grow("task", "add", "math", "Chapter 3").status == 0)
    #expect(try harness.grow("task", "add", "math", "Chapter 4").status == 0)
    let ambiguous = try harness.grow("start", "--task", "chapter")
    #expect(ambiguous.status == 1)
    #expect(
      ambiguous.stderr
        == "grow: 'chapter' starts several tasks (1 Chapter 3; 2 Chapter 4); give the id\n")
    let none = try harness.grow("start", "--task", "essay")
    #expect(none.stderr == "grow: no open task starts with 'essay'; 'grow tasks' lists them\n")
    let missing = try harness.grow("task", "done", "9")
    #expect(missing.stderr == "grow: no task 9; 'grow tasks --all' lists them with their ids\n")
  }
}
