import GrowHistory
import GrowMessages

extension Commands {
  /// `grow garden [--week]`: what grew today, or in the last seven days.
  static func runGarden(_ words: [String]) throws(CLIError) {
    let arguments = try parse(
      words, values: ["from", "to", "svg"], flags: ["week"], usage: "garden")
    try expect(arguments, atMost: 0, "garden")
    let days = try dayRange(arguments, defaultDays: arguments.flag("week") ? 7 : 1)
    if let path = arguments.value("svg") {
      // The garden alone, drawn as in the report: a picture a person may choose to share.
      let (statistics, phases) = try withHistory { store throws(HistoryError) in
        let phases = try store.phases(days: days)
        let statistics = HistoryStatistics(
          from: days.lowerBound, to: days.upperBound, card: nil, phases: phases,
          distractions: [], figures: try store.todayAndStreak(goal: dailyGoal(), today: .today()))
        return (statistics, phases)
      }
      var picture = SVGReport(statistics: statistics, phases: phases)
      picture.showsChart = false
      return try write(picture, to: path, days: days)
    }
    let phases = try withHistory { store throws(HistoryError) in try store.phases(days: days) }
    let title =
      days.lowerBound == days.upperBound
      ? Message("Garden · today ({day})").render(["day": days.lowerBound])
      : Message("Garden · {from} to {to}").render(["from": days.lowerBound, "to": days.upperBound])
    say(Garden(phases).text(title: title, style: terminalStyle))
  }
}
