import FoundationEssentials
@_spi(GrowHost) import GrowCore
import GrowDBus
import GrowHistory
import GrowMessages
import GrowPluginKit

extension Commands {
  /// `grow task add CARD TEXT`, `grow task done ID [--undo]`, `grow task remove ID`.
  static func runTask(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["undo"], usage: "task")
    let positionals = arguments.positionals
    switch positionals.first {
    case "add":
      guard positionals.count == 3 else {
        throw .usage(
          Message("grow task add takes a card and the task, like: grow task add math \"Chapter 3\"")
            .render())
      }
      let card = try knownCard(positionals[1])
      let task = try withTasks { store throws(TaskError) in
        try store.addTask(card: card, text: positionals[2], at: Date())
      }
      say(
        Message("added task {id} on {card}: {text}").render([
          "id": task.id, "card": task.card, "text": task.text,
        ]))
    case "done", "remove":
      try expect(arguments, atMost: 2, "task")
      guard let text = positionals.dropFirst().first, let id = Int64(text), id > 0 else {
        throw .usage(
          Message("grow task {action} takes a task's id, as 'grow tasks' lists them")
            .render(["action": positionals[0]]))
      }
      let undo = arguments.flag("undo")
      // Through a running daemon, so its plugins hear of it (TaskDone); else in the file.
      if positionals[0] == "done", !undo, let client = try? GrowClient(), client.daemonIsRunning() {
        try client.call("TaskDone", [.int64(id)], interface: GrowBusAPI.journeyInterface)
      }
      let task = try withTasks { store throws(TaskError) in
        if positionals[0] == "remove" {
          let task = try store.task(id)
          try store.removeTask(id)
          return task
        }
        try store.setTask(id, done: !undo, at: Date())
        return try store.task(id)
      }
      let values: [String: any CustomStringConvertible] = ["id": task.id, "text": task.text]
      if positionals[0] == "remove" {
        say(Message("removed task {id}: {text}").render(values))
      } else {
        say(
          undo
            ? Message("task {id} is open again: {text}").render(values)
            : Message("task {id} done: {text}").render(values))
      }
    case let other:
      throw .usage(
        Message("grow task: unknown action '{action}' (add, done, remove; 'grow tasks' lists)")
          .render(["action": shown(other ?? "")]))
    }
  }

  /// `grow tasks [CARD] [--all] [--json]`.
  static func runTasks(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["all", "json"], usage: "tasks")
    try expect(arguments, atMost: 1, "tasks")
    let card = arguments.positionals.first
    let tasks = try withTasks { store throws(TaskError) in
      try store.tasks(card: card, includeDone: arguments.flag("all"))
    }
    if arguments.flag("json") { return say(TaskJSON.encode(tasks)) }
    guard !tasks.isEmpty else {
      return say(
        Message("no open tasks; add one with grow task add CARD \"what to do\"").render())
    }
    let idWidth = tasks.map { "\($0.id)".count }.max() ?? 0
    let cardWidth = tasks.map(\.card.count).max() ?? 0
    for task in tasks {
      let id = String(repeating: " ", count: idWidth - "\(task.id)".count) + "\(task.id)"
      let spent =
        task.focusCount == 0
        ? ""
        : "  "
          + Message(
            one: "({focus} in {count} focus)", other: "({focus} in {count} focus sessions)",
            countedBy: "count"
          ).render(["focus": DurationText.format(task.focusSeconds), "count": task.focusCount])
      say(
        "\(id)  \(task.isDone ? "✔" : "·")  \(task.card.fitted(toWidth: cardWidth))  "
          + task.text + spent)
    }
  }

  /// Runs `body` on the history database, its task errors as messages.
  static func withTasks<T>(_ body: (HistoryStore) throws(TaskError) -> T) throws(CLIError) -> T {
    let store = try openHistoryStore()
    do {
      return try body(store)
    } catch {
      throw .failed(error.message)
    }
  }
}
