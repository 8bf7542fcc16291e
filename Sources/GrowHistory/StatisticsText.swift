@_spi(GrowHost) import GrowCore
import GrowMessages

extension HistoryStatistics {
  /// Width of the longest bar, in terminal cells.
  static let barWidth = 30

  /// The statistics as `grow stats` prints them: a table per day (per month for ranges over
  /// two months, where days would scroll past), one per card, then the totals.
  public func text(style: TextChart.Style = .init(enabled: false)) -> String {
    var lines: [String] = []
    let scope =
      card.map { Message("card '{card}'").render(["card": $0]) } ?? Message("all cards").render()
    let range =
      from == to
      ? "\(from.text) \(from.weekdayName)"
      : Message("{from} to {to}").render(["from": from.text, "to": to.text])
    lines.append(
      style.bold(
        Message("Focus {days} · {cards} · {figures}").render([
          "days": range, "cards": scope, "figures": focusText,
        ])))
    lines.append("")
    let rows =
      days.count > 62
      ? monthRows : days.map { ("\($0.date.text) \($0.date.weekdayName)", $0.focusSeconds) }
    lines += table(rows, style: style)
    if !cards.isEmpty {
      lines.append("")
      lines.append(style.bold(Message("Cards").render()))
      lines += table(cards.map { ($0.card, $0.focusSeconds) }, style: style)
    }
    if !tasks.isEmpty {
      lines.append("")
      lines.append(style.bold(Message("Tasks").render()))
      lines += table(
        tasks.prefix(10).map { ("\($0.task) \($0.text.prefix(40))", $0.focusSeconds) },
        style: style)
    }
    lines.append("")
    lines.append(Message("Focus phases: {tally}").render(["tally": outcomesText]))
    if distractions.isEmpty {
      lines.append(Message("Distractions: none recorded").render())
    } else {
      let top = distractions.prefix(5).map { "\($0.app) \(Self.duration($0.seconds))" }
      let lost = distractions.reduce(0) { $0 + $1.seconds }
      lines.append(
        Message("Distractions: {time} lost; {apps}").render([
          "time": Self.duration(lost), "apps": top.joined(separator: ", "),
        ]))
    }
    lines.append(
      Message("Streak: {current} (longest {longest})").render([
        "current": FocusInWords.days(streak.current), "longest": FocusInWords.days(streak.longest),
      ]))
    // The words and figures of `grow status`'s today line.
    var todayLine = Message("Today: {figures}").render([
      "figures": TodayInWords.figures(
        completed: today.completed, focus: Double(today.focusSeconds),
        cutShort: Double(today.cutShortSeconds), goal: today.goalSeconds.map(Double.init))
    ])
    if let percent = today.percent {
      todayLine += " " + style.green(TextChart.bar(Double(min(percent, 100)), of: 100, width: 10))
    }
    lines.append(todayLine)
    return lines.joined(separator: "\n")
  }

  /// Focus per calendar month of the range, each named as the locale names it ("Dez 2026").
  private var monthRows: [(String, Int)] {
    var order: [LocalDay] = []
    var totals: [Int: Int] = [:]
    for day in days {
      let (year, month, _) = day.date.civil
      let key = year * 12 + month
      if totals[key] == nil { order.append(day.date) }
      totals[key, default: 0] += day.focusSeconds
    }
    return order.map { first in
      let (year, month, _) = first.civil
      return ("\(LocaleTime.monthName(month)) \(year)", totals[year * 12 + month] ?? 0)
    }
  }

  private func table(_ rows: [(String, Int)], style: TextChart.Style) -> [String] {
    let labelWidth = rows.map(\.0.count).max() ?? 0
    let texts = rows.map { Self.duration($0.1) }
    let valueWidth = texts.map(\.count).max() ?? 0
    let maximum = Double(rows.map(\.1).max() ?? 0)
    return zip(rows, texts).map { row, text in
      let label = row.0.fitted(toWidth: labelWidth)
      let value = String(repeating: " ", count: valueWidth - text.count) + text
      let bar = TextChart.bar(Double(row.1), of: maximum, width: Self.barWidth)
      return "  \(label)  \(value)  \(style.green(bar))".trimmingTrailingSpaces()
    }
  }

  static func duration(_ seconds: Int) -> String {
    seconds == 0 ? "0m" : DurationText.format(Double(seconds))
  }

}

extension String {
  func trimmingTrailingSpaces() -> String {
    var text = self
    while text.last == " " { text.removeLast() }
    return text
  }
}
