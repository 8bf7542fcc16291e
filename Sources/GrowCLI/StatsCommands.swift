import GrowHistory
import GrowMessages

extension Commands {
  /// `grow stats [--day|--week|--month|--year|--from DATE --to DATE] [--card NAME]
  /// [--json|--csv]`: reads the database directly, so it works without a daemon.
  static func runStats(_ words: [String]) throws(CLIError) {
    let arguments = try parse(
      words, values: ["from", "to", "card"],
      flags: ["day", "week", "month", "year", "json", "csv"], usage: "stats")
    try expect(arguments, atMost: 0, "stats")
    let periods = ["day": 1, "week": 7, "month": 30, "year": 365].filter { arguments.flag($0.key) }
    guard periods.count <= 1, periods.isEmpty || arguments.value("from") == nil else {
      throw .usage(
        Message("grow stats takes one of --day, --week, --month, --year or --from/--to").render())
    }
    let days = try dayRange(arguments, defaultDays: periods.first?.value ?? 7)
    let card = arguments.value("card")
    let statistics = try withHistory { store throws(HistoryError) in
      var statistics = HistoryStatistics(
        from: days.lowerBound, to: days.upperBound, card: card,
        phases: try store.phases(days: days, card: card),
        distractions: try store.distractions(days: days, card: card),
        figures: try store.todayAndStreak(goal: dailyGoal(), today: LocalDay.today()))
      statistics.tasks = try store.taskTotals(days: days, card: card)
      return statistics
    }
    if arguments.flag("json") { return say(HistoryExport.json(statistics)) }
    if arguments.flag("csv") { return sayExactly(HistoryExport.csv(statistics)) }
    say(statistics.text(style: terminalStyle))
  }
}
