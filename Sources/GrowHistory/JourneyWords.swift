import FoundationEssentials
@_spi(GrowHost) import GrowCore
import GrowMessages

// The words of the goal and task refusals, for the command line and the daemon's D-Bus replies.

extension GoalError {
  /// What the person reads, and what to do instead.
  public var message: String {
    switch self {
    case .badName(let problem):
      return problem.message(what: Message("goal's name").render())
    case .circular(let goal, let under):
      return Message("'{goal}' cannot be a step of '{under}', which is one of its own steps")
        .render(["goal": goal, "under": under])
    case .alreadyExists(let name):
      return Message("there is already a goal '{goal}'; 'grow goal list' shows them")
        .render(["goal": name])
    case .noSuchGoal(let name, let known) where known.isEmpty:
      return Message("no goal '{goal}'; there are no goals yet (grow goal add NAME)")
        .render(["goal": shown(name)])
    case .noSuchGoal(let name, let known):
      if let guess = closestMatch(to: name, in: known) {
        return Message("no goal '{goal}'; did you mean '{guess}'?")
          .render(["goal": shown(name), "guess": guess])
      }
      return Message("no goal '{goal}' (goals: {goals})")
        .render(["goal": shown(name), "goals": known.joined(separator: ", ")])
    case .history(let error):
      return error.description
    }
  }
}

extension LineError {
  /// What is wrong with a goal's name or a task (`what`).
  public func message(what: String) -> String {
    switch self {
    case .empty:
      return Message("the {what} is empty; write a few words").render(["what": what])
    case .tooLong(let limit):
      return Message(
        one: "the {what} is longer than {limit} character; keep it to one short line",
        other: "the {what} is longer than {limit} characters; keep it to one short line",
        countedBy: "limit"
      ).render(["what": what, "limit": limit])
    case .notOneLine(let scalar):
      return Message("the {what} must be one line of text; it holds {code}")
        .render(["what": what, "code": TimerError.codePoint(scalar)])
    }
  }
}

extension TaskError {
  public var message: String {
    switch self {
    case .badText(let problem):
      return problem.message(what: Message("task").render())
    case .noSuchTask(let id):
      return Message("no task {id}; 'grow tasks --all' lists them with their ids")
        .render(["id": id])
    case .noMatch(let words, let card?):
      return Message("no open task on {card} starts with '{words}'; 'grow tasks {card}' lists them")
        .render(["words": shown(words), "card": card])
    case .noMatch(let words, nil):
      return Message("no open task starts with '{words}'; 'grow tasks' lists them")
        .render(["words": shown(words)])
    case .ambiguous(let words, let matches):
      let list = matches.prefix(5).map { "\($0.id) \($0.text)" }.joined(separator: "; ")
      return Message("'{words}' starts several tasks ({list}); give the id")
        .render(["words": shown(words), "list": list])
    case .history(let error):
      return error.description
    }
  }
}
