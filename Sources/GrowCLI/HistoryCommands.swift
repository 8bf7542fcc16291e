import FoundationEssentials
import Glibc
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowHistory
import GrowMessages
import GrowPluginKit
import GrowSync

extension Commands {
  /// `grow history [--from DATE] [--to DATE] [--card NAME] [--all] [--json|--csv]`,
  /// `grow history delete --from DATE --to DATE`, `grow history edit ID --card|--outcome`.
  static func runHistory(_ words: [String]) throws(CLIError) {
    let arguments = try parse(
      words, values: ["from", "to", "card", "outcome", "machine"],
      flags: ["json", "csv", "all", "yes"],
      usage: "history")
    switch arguments.positionals.first {
    case "delete": try deleteHistory(arguments)
    case "edit": try editHistory(arguments)
    case nil: try listHistory(arguments)
    case let other?:
      throw .usage(
        Message("grow history: unknown action '{action}' (history, history delete, history edit)")
          .render(["action": shown(other)]))
    }
  }

  private static func listHistory(_ arguments: Arguments) throws(CLIError) {
    try expect(arguments, atMost: 0, "history")
    let days = arguments.flag("all") ? nil : try dayRange(arguments, defaultDays: 7)
    let export: HistoryExportStream.Format? =
      arguments.flag("json") ? .json : arguments.flag("csv") ? .csv : nil
    let machine = try arguments.value("machine").map { name throws(CLIError) in
      try machineID(named: name)
    }
    if let export {
      // Row by row as SQLite reads them: forty years take the memory of a day.
      try withHistory { store throws(HistoryError) in
        let stream = HistoryExportStream(
          format: export, thisMachine: thisMachineName(), flush: sayBytes)
        try store.eachPhase(days: days, card: arguments.value("card"), machine: machine) {
          stream.add($0)
        }
        stream.finish()
      }
      if export == .json { say("") }
      return
    }
    let phases = try withHistory { store throws(HistoryError) in
      try store.phases(days: days, card: arguments.value("card"), machine: machine)
    }
    guard !phases.isEmpty else {
      return say(
        days.map {
          Message("no phases recorded from {from} to {to}").render([
            "from": $0.lowerBound, "to": $0.upperBound,
          ])
        } ?? Message("no phases recorded").render())
    }
    let idWidth = phases.map { "\($0.id)".count }.max() ?? 0
    let cardWidth = phases.map(\.card.count).max() ?? 0
    let kindWidth = PhaseKind.allCases.map(\.inWords.count).max() ?? 0
    for phase in phases {
      // The day and the times where the phase was grown, written as the locale writes them.
      let day = LocalDay(phase.startedAt, offset: phase.startOffset)
      let start = LocaleTime.clock(phase.startedAt, in: .fixed(secondsEast: phase.startOffset))
      let end = LocaleTime.clock(phase.endedAt, in: .fixed(secondsEast: phase.endOffset))
      let id = "\(phase.id)"
      var line =
        String(repeating: " ", count: idWidth - id.count) + id + "  "
        + "\(day.text) \(day.weekdayName) \(start)–\(end)  "
        + phase.kind.inWords.fitted(toWidth: kindWidth) + "  "
        + phase.card.fitted(toWidth: cardWidth) + "  "
        + Message("{actual} of {planned}").render([
          "actual": DurationText.format(phase.actualSeconds),
          "planned": DurationText.format(phase.plannedSeconds),
        ])
        + "  \(phase.outcome.inWords)"
      if phase.pauseCount > 0 {
        line +=
          " · "
          + Message(
            one: "paused {count}× ({time})", other: "paused {count}× ({time})", countedBy: "count"
          ).render([
            "count": phase.pauseCount, "time": DurationText.format(phase.pausedSeconds),
          ])
      }
      if let intention = phase.intention { line += " · \(intention)" }
      if phase.machine != nil {
        line += Message(" · on {machine}").render(["machine": phase.grownOn()])
      }
      say(line)
    }
  }

  /// `delete ID [ID…]` removes those phases; `delete --from DATE --to DATE` asks first on a
  /// terminal and, for scripts (stdin not a terminal), needs `--yes`.
  private static func deleteHistory(_ arguments: Arguments) throws(CLIError) {
    let idWords = arguments.positionals.dropFirst()
    if !idWords.isEmpty {
      guard arguments.value("from") == nil, arguments.value("to") == nil else {
        throw .usage(
          Message("grow history delete takes phase ids or --from/--to, not both").render())
      }
      var ids: [Int64] = []
      for word in idWords {
        guard let id = Int64(word), id > 0 else {
          throw .usage(
            Message("grow history delete: '{word}' is not a phase id; 'grow history' lists them")
              .render(["word": shown(word)]))
        }
        ids.append(id)
      }
      let shared = try withHistory { store throws(HistoryError) in
        let shared = try store.sharedUIDs(ids: ids)
        try store.delete(ids: ids)
        return Array(shared.values)
      }
      try syncDeletes(shared)
      tellTheDaemon()
      return say(
        Message(one: "deleted phase {ids}", other: "deleted phases {ids}", countedBy: "count")
          .render(["count": ids.count, "ids": ids.map(String.init).joined(separator: ", ")]))
    }
    guard arguments.value("from") != nil, arguments.value("to") != nil else {
      throw .usage(
        Message("grow history delete needs phase ids, or --from DATE and --to DATE (YYYY-MM-DD)")
          .render())
    }
    let days = try dayRange(arguments, defaultDays: 1)
    let from = "\(days.lowerBound)"
    let to = "\(days.upperBound)"
    if !arguments.flag("yes") {
      let count = try withHistory { store throws(HistoryError) in try store.count(days: days) }
      guard count > 0 else {
        return say(
          Message("no phases recorded from {from} to {to}; nothing deleted").render([
            "from": from, "to": to,
          ]))
      }
      guard isatty(0) == 1 else {
        throw .failed(
          Message(
            one:
              "not deleting {count} phase from {from} to {to} without asking: stdin is not a "
              + "terminal; add --yes to delete it from a script",
            other:
              "not deleting {count} phases from {from} to {to} without asking: stdin is not a "
              + "terminal; add --yes to delete them from a script",
            countedBy: "count"
          ).render(["count": count, "from": from, "to": to]))
      }
      // The answer stays y or yes in every language: [y/N] is outside the question.
      sayExactly(
        Message(
          one: "Delete {count} phase from {from} to {to}?",
          other: "Delete {count} phases from {from} to {to}?", countedBy: "count"
        ).render(["count": count, "from": from, "to": to]) + " [y/N] ")
      let answer = readLine()?.trimmingWhitespace().lowercased() ?? ""
      guard answer == "y" || answer == "yes" else {
        return say(Message("nothing deleted").render())
      }
    }
    let (deleted, shared) = try withHistory { store throws(HistoryError) in
      let shared = try store.sharedUIDs(days: days)
      return (try store.delete(days: days), shared)
    }
    try syncDeletes(shared)
    if deleted > 0 { tellTheDaemon() }
    say(
      Message(
        one: "deleted {count} phase from {from} to {to}",
        other: "deleted {count} phases from {from} to {to}", countedBy: "count"
      ).render(["count": deleted, "from": from, "to": to]))
  }

  private static func editHistory(_ arguments: Arguments) throws(CLIError) {
    try expect(arguments, atMost: 2, "history")
    guard arguments.positionals.count == 2, let id = Int64(arguments.positionals[1]) else {
      throw .usage(
        Message("usage: grow {command} {synopsis}").render([
          "command": "history edit", "synopsis": "ID --card NAME | --outcome OUTCOME",
        ]))
    }
    let outcomes = HistoryOutcome.allCases.map(\.rawValue)
    var outcome: HistoryOutcome?
    if let text = arguments.value("outcome") {
      guard let known = HistoryOutcome(rawValue: text) else {
        throw .usage(
          Message("--outcome: '{word}' is not an outcome ({outcomes})").render([
            "word": shown(text), "outcomes": outcomes.joined(separator: ", "),
          ]))
      }
      outcome = known
    }
    let card = arguments.value("card")
    if card?.isEmpty == true { throw .usage(Message("--card needs a name").render()) }
    if let card { try requireKnownCard(card) }
    let uid = try withHistory { store throws(HistoryError) in
      try store.edit(id: id, card: card, outcome: outcome)
      return try store.sharedUIDs(ids: [id])[id]
    }
    if let uid {
      var changes: [SyncChange] = []
      if let card { changes.append(.card(card)) }
      if let outcome { changes.append(.outcome(outcome)) }
      try syncChanges([(uid, changes)])
    }
    tellTheDaemon()
    switch (card, outcome) {
    case (let card?, let outcome?):
      say(
        Message("phase {id}: card '{card}', outcome {outcome}").render([
          "id": id, "card": card, "outcome": outcome.inWords,
        ]))
    case (let card?, nil):
      say(Message("phase {id}: card '{card}'").render(["id": id, "card": card]))
    case (nil, let outcome?):
      say(Message("phase {id}: outcome {outcome}").render(["id": id, "outcome": outcome.inWords]))
    case (nil, nil):
      say(Message("phase {id}: nothing to change").render(["id": id]))
    }
  }

  /// The machine `--machine NAME` names: '' for this one (its host name or sync id), else the
  /// id of a machine whose phases came through sync (its name, its id or the start of it).
  private static func machineID(named name: String) throws(CLIError) -> String {
    if name == ThisMachine.name || name == thisMachineName() { return "" }
    if let own = try? MachineIdentity.read(MachineIdentity.defaultPath()), own == name {
      return ""
    }
    let machines = try withHistory { store throws(HistoryError) in try store.syncMachines() }
    if let found = machines.first(where: { $0.name == name || $0.id == name })
      ?? machines.first(where: { $0.id.hasPrefix(name) })
    {
      return found.id
    }
    throw .usage(
      Message("--machine: no machine '{name}' (this one is {this}{others})").render([
        "name": shown(name), "this": ThisMachine.name,
        "others": machines.isEmpty
          ? "; no other machine syncs with it"
          : "; others: "
            + machines.map(\.name).joined(separator: ", "),
      ]))
  }

  /// What this machine is called: `[sync] name`, else its host name.
  static func thisMachineName() -> String {
    (try? GrowConfig.load())?.syncName ?? ThisMachine.name
  }

  /// Writes deletes of shared phases into this machine's sync journal, so the other machines
  /// delete them too.
  private static func syncDeletes(_ uids: [String]) throws(CLIError) {
    try syncChanges(uids.map { ($0, [.deleted]) })
  }

  /// Writes edits or deletes of shared phases into this machine's sync journal (when sync is
  /// on; a phase in no journal needs none).
  private static func syncChanges(_ changes: [(uid: String, changes: [SyncChange])])
    throws(CLIError)
  {
    guard !changes.isEmpty, let sync = try configuredSyncFolder() else { return }
    let result = try withHistory { store throws(HistoryError) in
      Result { () throws(SyncError) in try sync.recordChanges(changes, at: Date(), in: store) }
    }
    if case .failure(let error) = result {
      throw .failed(
        Message("the history is changed here, but not for the other machines: {error}")
          .render(["error": error.description]))
    }
  }

  /// Tells a running daemon the history file changed, so its today figures (`grow status`)
  /// follow it (GrowBusAPI.historyInterface). Without a daemon there is nothing to tell; a
  /// daemon that does not answer catches up when it starts next, which is said.
  private static func tellTheDaemon() {
    guard let client = try? GrowClient(), client.daemonIsRunning() else { return }
    do {
      try client.call("Changed", interface: GrowBusAPI.historyInterface)
    } catch {
      let warning = Message(
        "the history is changed, but the running daemon was not told ({error}); its today "
          + "figures catch up when it starts next"
      ).render(["error": "\(error)"])
      _ = writeAll("grow: \(warning)\n", to: STDERR_FILENO)
    }
  }

  /// Refuses a card config.ini does not have (a typo would otherwise file the phase under a
  /// card no stats or goal ever shows), the way `grow start --card` does (TimerError).
  private static func requireKnownCard(_ name: String) throws(CLIError) {
    let config: GrowConfig
    do {
      config = try loadConfiguration(nil)
    } catch {
      throw .failed(
        Message("cannot check the card against the config:\n{problems}").render([
          "problems": error.description
        ]))
    }
    do {
      _ = try config.deck.card(named: name)
    } catch {
      throw .failed(
        Message("{problem}; nothing was changed").render(["problem": error.message]))
    }
  }

  // MARK: Shared by history, stats, garden and report

  /// Runs `body` on the history database, turning its errors into messages. Its reads include
  /// the phases the daemon keeps beside the saved session and has not written yet.
  static func withHistory<T>(_ body: (HistoryStore) throws(HistoryError) -> T) throws(CLIError)
    -> T
  {
    let store = try openHistoryStore()
    do {
      return try body(store)
    } catch {
      throw .failed(error.description)
    }
  }

  /// The days `--from`/`--to` name (both inclusive, local dates), or the `defaultDays` days
  /// ending today.
  static func dayRange(_ arguments: Arguments, defaultDays: Int) throws(CLIError)
    -> ClosedRange<LocalDay>
  {
    let today = LocalDay.today()
    let from = try arguments.value("from").map { text throws(CLIError) in try day(text, "--from") }
    let to = try arguments.value("to").map { text throws(CLIError) in try day(text, "--to") }
    switch (from, to) {
    case (nil, nil): return today.advanced(by: 1 - defaultDays)...today
    case (let from?, nil): return from...max(from, today)
    case (nil, _?): throw .usage(Message("--to needs --from as well").render())
    case (let from?, let to?):
      guard from <= to else {
        throw .usage(
          Message("--from {from} is after --to {to}; the range reads from the earlier day")
            .render(["from": from, "to": to]))
      }
      return from...to
    }
  }

  static func day(_ text: String, _ option: String) throws(CLIError) -> LocalDay {
    guard let day = LocalDay(text: text) else {
      throw .usage(
        "\(option): '\(shown(text))' is not a date; write it as YYYY-MM-DD, like 2026-03-08")
    }
    return day
  }

  /// The default card's daily goal from the config; none when the config cannot be read
  /// (`grow config check` is where its problems are explained).
  static func dailyGoal() -> TimeInterval? {
    guard let config = try? GrowConfig.load() else { return nil }
    return try? config.deck.card(named: nil).dailyGoal
  }

  /// Colour only on a terminal, and never when NO_COLOR is set (no-color.org).
  static var terminalStyle: TextChart.Style {
    let noColor = ProcessInfo.processInfo.environment["NO_COLOR"].map { !$0.isEmpty } ?? false
    return TextChart.Style(enabled: isatty(1) == 1 && !noColor)
  }

}
