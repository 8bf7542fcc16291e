import GrowHistory

extension Commands {
  /// `grow garden [--week]`: what grew today, or in the last seven days.
  static func runGarden(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, values: ["from", "to"], flags: ["week"], usage: "garden")
    try expect(arguments, atMost: 0, "garden")
    let days = try dayRange(arguments, defaultDays: arguments.flag("week") ? 7 : 1)
    let phases = try withHistory { store throws(HistoryError) in try store.phases(days: days) }
    let title =
      days.lowerBound == days.upperBound
      ? "Garden · today (\(days.lowerBound))" : "Garden · \(days.lowerBound) to \(days.upperBound)"
    say(Garden(phases).text(title: title, style: terminalStyle))
  }
}
