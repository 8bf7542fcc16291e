import FoundationEssentials
@_spi(GrowHost) import GrowCore
import GrowMessages

/// `grow journey`: each goal as a path of its subgoals, with where the person stands. The
/// first half of the way is said as progress made, the second as what is left (in focus
/// sessions of the goal's card when its length is known), and an estimate of the day it is
/// reached at the recent pace.
public enum JourneyText {
  /// - Parameters:
  ///   - focusLength: the focus length of a card (for "2 focus sessions to go"); nil when
  ///     the card is not in the config.
  public static func render(
    _ journeys: [GoalProgress], today: LocalDay, focusLength: (String) -> TimeInterval?
  ) -> String {
    var lines: [String] = []
    func add(_ progress: GoalProgress, prefix: String, childPrefix: String) {
      lines.append(prefix + headline(progress, focusLength: focusLength))
      if let pace = paceLine(progress, today: today) {
        lines.append(childPrefix + (progress.subgoals.isEmpty ? "   " : "│  ") + pace)
      }
      for (index, subgoal) in progress.subgoals.enumerated() {
        let last = index == progress.subgoals.count - 1
        add(
          subgoal, prefix: childPrefix + (last ? "└─ " : "├─ "),
          childPrefix: childPrefix + (last ? "   " : "│  "))
      }
    }
    for journey in journeys { add(journey, prefix: "", childPrefix: "") }
    return lines.joined(separator: "\n")
  }

  /// "Learn Swift (swift) · 3h of 20h: first steps, 15% of the way".
  static func headline(_ progress: GoalProgress, focusLength: (String) -> TimeInterval?)
    -> String
  {
    let goal = progress.goal
    let name =
      goal.card.map { Message("{goal} ({card})").render(["goal": goal.name, "card": $0]) }
      ?? goal.name
    let standing = self.standing(progress, focusLength: focusLength)
    guard let due = goal.due, !progress.isReached else {
      return Message("{goal} · {standing}").render(["goal": name, "standing": standing])
    }
    return Message("{goal} · {standing} · by {due}").render([
      "goal": name, "standing": standing, "due": due.text,
    ])
  }

  static func standing(_ progress: GoalProgress, focusLength: (String) -> TimeInterval?)
    -> String
  {
    let done = DurationText.format(progress.doneSeconds.rounded())
    if progress.isReached {
      return Message("{done} of focus: reached 🪷").render(["done": done])
    }
    if progress.targetSeconds == nil, let tasks = progress.tasks {
      return taskStanding(tasks, focus: done)
    }
    guard let target = progress.targetSeconds, let fraction = progress.fraction else {
      return Message("{done} of focus so far").render(["done": done])
    }
    let goal = DurationText.format(target.rounded())
    if progress.doneSeconds < 1 {
      return Message("{done} of {goal}: not started yet").render(["done": done, "goal": goal])
    }
    let percent = Int((fraction * 100).rounded(.down))
    if fraction < 0.25 {
      return Message("{done} of {goal}: first steps, {percent}% of the way").render([
        "done": done, "goal": goal, "percent": percent,
      ])
    }
    if fraction < 0.5 {
      return Message("{done} of {goal}: well on the way, {percent}% done").render([
        "done": done, "goal": goal, "percent": percent,
      ])
    }
    let left = progress.leftSeconds ?? 0
    if let card = progress.goal.card, let length = focusLength(card), length > 0 {
      let sessions = Int((left / length).rounded(.up))
      return Message(
        one: "{done} of {goal}: {count} focus session to go",
        other: "{done} of {goal}: {count} focus sessions to go", countedBy: "count"
      ).render(["done": done, "goal": goal, "count": sessions])
    }
    return Message("{done} of {goal}: {left} to go").render([
      "done": done, "goal": goal, "left": DurationText.format(left.rounded(.up)),
    ])
  }

  /// "2 of 5 tasks done": progress made in the first half, what is left in the second.
  static func taskStanding(_ tasks: (done: Int, total: Int), focus: String) -> String {
    let values: [String: any CustomStringConvertible] = [
      "done": tasks.done, "total": tasks.total, "focus": focus, "left": tasks.total - tasks.done,
    ]
    if tasks.done * 2 < tasks.total {
      return Message("{done} of {total} tasks done, {focus} of focus").render(values)
    }
    return Message(
      one: "{done} of {total} tasks done: {left} task to go",
      other: "{done} of {total} tasks done: {left} tasks to go", countedBy: "left"
    ).render(values)
  }

  /// When the goal is reached at the recent pace, gently: a date past the one the person set
  /// is said plainly, without blame.
  static func paceLine(_ progress: GoalProgress, today: LocalDay) -> String? {
    guard !progress.isReached, progress.targetSeconds != nil else { return nil }
    guard let day = progress.estimatedDay(from: today) else {
      return Message("no focus toward it in the last {days} days")
        .render(["days": GoalProgress.paceDays])
    }
    let pace = DurationText.format(progress.secondsPerDay.rounded())
    if let due = progress.goal.due, day > due {
      return Message("at your recent pace ({pace} a day), around {day}, after the {due} you set")
        .render(["pace": pace, "day": day.text, "due": due.text])
    }
    return Message("at your recent pace ({pace} a day), around {day}")
      .render(["pace": pace, "day": day.text])
  }
}
