import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowHistory
import GrowMessages

extension Commands {
  /// `grow report --svg FILE [--week]`: a picture of today (or the last seven days): focus per
  /// day stacked by card, the garden, and the journeys toward the goals.
  static func runReport(_ words: [String]) throws(CLIError) {
    let arguments = try parse(
      words, values: ["svg", "from", "to"], flags: ["week"], usage: "report")
    try expect(arguments, atMost: 0, "report")
    guard let path = arguments.value("svg"), !path.isEmpty else {
      throw .usage(Message("grow report needs --svg FILE, the picture to write").render())
    }
    let days = try dayRange(arguments, defaultDays: arguments.flag("week") ? 7 : 1)
    let (statistics, phases) = try withHistory { store throws(HistoryError) in
      let phases = try store.phases(days: days)
      let statistics = HistoryStatistics(
        from: days.lowerBound, to: days.upperBound, card: nil, phases: phases,
        distractions: try store.distractions(days: days),
        figures: try store.todayAndStreak(goal: dailyGoal(), today: LocalDay.today()))
      return (statistics, phases)
    }
    let journeys = try withGoals { store throws(GoalError) in try store.journeys(now: Date()) }
    let report = SVGReport(statistics: statistics, phases: phases, journeys: journeys)
    try write(report, to: path, days: days)
  }

  /// Writes `report` to `path` and says so with its size and days.
  static func write(_ report: SVGReport, to path: String, days: ClosedRange<LocalDay>)
    throws(CLIError)
  {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    let written = descriptor >= 0 && writeAll(report.svg, to: descriptor)
    let failure = errno
    if descriptor >= 0 { close(descriptor) }
    guard written else {
      throw .failed(
        Message("cannot write {path}: {reason}").render([
          "path": path, "reason": String(cString: strerror(failure)),
        ]))
    }
    let size = "\(SVGReport.width)×\(report.height)"
    say(
      Message("wrote {path} ({size}, {from} to {to})").render([
        "path": path, "size": size, "from": days.lowerBound, "to": days.upperBound,
      ]))
  }
}
