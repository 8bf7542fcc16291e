import FoundationEssentials
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowHistory
import GrowMessages

extension Commands {
  /// `grow goal add NAME [--under GOAL] [--hours N] [--card CARD] [--by DATE]`,
  /// `grow goal list [--json]`, `grow goal edit NAME [--name|--under|--top|--hours|--card|--by]`,
  /// `grow goal done NAME [--undo]`, `grow goal remove NAME`.
  static func runGoal(_ words: [String]) throws(CLIError) {
    let arguments = try parse(
      words, values: ["under", "hours", "card", "by", "name"], flags: ["json", "undo", "top"],
      usage: "goal")
    let action = arguments.positionals.first
    let name = arguments.positionals.dropFirst().first
    guard action == "list" || name != nil || action == nil else {
      throw .usage(
        Message("grow goal {action} needs a goal's name, in quotes when it has spaces")
          .render(["action": action ?? ""]))
    }
    try expect(arguments, atMost: action == "list" || action == nil ? 1 : 2, "goal")
    let now = Date()
    switch (action, name) {
    case ("add", let name?):
      let card = try arguments.value("card").map { card throws(CLIError) in try knownCard(card) }
      let hours = try arguments.value("hours").map { text throws(CLIError) in try hoursValue(text) }
      let due = try arguments.value("by").map { text throws(CLIError) in try day(text, "--by") }
      let goal = try withGoals { store throws(GoalError) in
        try store.addGoal(
          name, under: arguments.value("under"), card: card, targetSeconds: hours.map { $0 * 3600 },
          due: due, at: now)
      }
      say(
        goal.parent.map {
          Message("added '{goal}', a step toward '{parent}'").render([
            "goal": goal.name, "parent": $0,
          ])
        } ?? Message("added '{goal}'").render(["goal": goal.name]))
    case ("list", _), (nil, _):
      let journeys = try withGoals { store throws(GoalError) in try store.journeys(now: now) }
      if arguments.flag("json") {
        return say(GoalJSON.encode(GoalJSON.flat(journeys, today: LocalDay.today())))
      }
      guard !journeys.isEmpty else {
        return say(Message("no goals yet; add one with grow goal add \"Pass the exam\"").render())
      }
      say(JourneyText.render(journeys, today: LocalDay.today(), focusLength: cardFocusLength))
    case ("edit", let name?):
      var change = HistoryStore.GoalChange(name: arguments.value("name"))
      change.card = try arguments.value("card").map { card throws(CLIError) in try knownCard(card) }
      change.targetSeconds = try arguments.value("hours").map { text throws(CLIError) in
        try hoursValue(text) * 3600
      }
      change.due = try arguments.value("by").map { text throws(CLIError) in try day(text, "--by") }
      if let under = arguments.value("under") { change.parent = .some(under) }
      if arguments.flag("top") { change.parent = .some(nil) }
      guard change != HistoryStore.GoalChange() else {
        throw .usage(
          Message(
            "grow goal edit NAME takes what to change: --name, --under (or --top), "
              + "--hours, --card or --by"
          ).render())
      }
      let goal = try withGoals { store throws(GoalError) in try store.editGoal(name, change) }
      say(Message("changed '{goal}'").render(["goal": goal.name]))
    case ("done", let name?):
      let undo = arguments.flag("undo")
      try withGoals { store throws(GoalError) in try store.setGoal(name, done: !undo, at: now) }
      say(
        undo
          ? Message("'{goal}' is open again").render(["goal": name])
          : Message("'{goal}' reached 🪷").render(["goal": name]))
    case ("remove", let name?):
      try withGoals { store throws(GoalError) in try store.removeGoal(name) }
      say(
        Message("removed '{goal}' and its steps; the focus spent on them stays in the history")
          .render(["goal": name]))
    case (let other?, _):
      throw .usage(
        Message("grow goal: unknown action '{action}' (add, list, edit, done, remove)")
          .render(["action": shown(other)]))
    }
  }

  /// `grow journey [GOAL] [--json]`: the path of each goal through its subgoals.
  static func runJourney(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["json"], usage: "journey")
    try expect(arguments, atMost: 1, "journey")
    let name = arguments.positionals.first
    let journeys = try withGoals { store throws(GoalError) in
      try store.journeys(name, now: Date())
    }
    let today = LocalDay.today()
    if arguments.flag("json") {
      return say(GoalJSON.encode(journeys.map { GoalJSON($0, today: today, nested: true) }))
    }
    guard !journeys.isEmpty else {
      return say(Message("no goals yet; add one with grow goal add \"Pass the exam\"").render())
    }
    say(JourneyText.render(journeys, today: today, focusLength: cardFocusLength))
  }

  /// Runs `body` on the history database, its goal errors as messages.
  static func withGoals<T>(_ body: (HistoryStore) throws(GoalError) -> T)
    throws(CLIError) -> T
  {
    let store = try openHistoryStore()
    do {
      return try body(store)
    } catch {
      throw .failed(error.message)
    }
  }

  /// The history database, with the phases the daemon keeps and has not written yet.
  static func openHistoryStore() throws(CLIError) -> HistoryStore {
    do {
      return try HistoryStore(
        pendingPath: PendingPhases.path(besideSession: XDGDirectories().sessionFile))
    } catch {
      throw .failed(error.description)
    }
  }

  /// A card of the config, or a refusal naming the nearest one.
  static func knownCard(_ name: String) throws(CLIError) -> String {
    guard let config = try? GrowConfig.load() else { return name }
    do {
      return try config.deck.card(named: name).name
    } catch {
      throw .usage(error.message)
    }
  }

  private static func hoursValue(_ text: String) throws(CLIError) -> Double {
    guard let hours = Double(text), hours.isFinite, hours > 0, hours <= 100_000 else {
      throw .usage(
        Message("--hours takes a number of hours above 0, like 40 or 2.5 (not '{text}')")
          .render(["text": shown(text)]))
    }
    return hours
  }

  /// The focus length of `card` in the config, for "2 focus sessions to go".
  private static func cardFocusLength(_ card: String) -> TimeInterval? {
    guard let config = try? GrowConfig.load() else { return nil }
    return try? config.deck.card(named: card).focus
  }
}
