@_spi(GrowHost) import GrowCore

extension HistoryStatistics {
  /// Width of the longest bar, in terminal cells.
  static let barWidth = 30

  /// The statistics as `grow stats` prints them: a table per day (per month for ranges over
  /// two months, where days would scroll past), one per card, then the totals.
  public func text(style: TextChart.Style = .init(enabled: false)) -> String {
    var lines: [String] = []
    let scope = card.map { "card '\($0)'" } ?? "all cards"
    let range = from == to ? from.text : "\(from.text) to \(to.text)"
    lines.append(style.bold("Focus \(range) · \(scope) · \(focusText)"))
    lines.append("")
    let rows =
      days.count > 62
      ? monthRows : days.map { ("\($0.date.text) \($0.date.weekdayName)", $0.focusSeconds) }
    lines += table(rows, style: style)
    if !cards.isEmpty {
      lines.append("")
      lines.append(style.bold("Cards"))
      lines += table(cards.map { ($0.card, $0.focusSeconds) }, style: style)
    }
    if !tasks.isEmpty {
      lines.append("")
      lines.append(style.bold("Tasks"))
      lines += table(
        tasks.prefix(10).map { ("\($0.task) \($0.text.prefix(40))", $0.focusSeconds) },
        style: style)
    }
    lines.append("")
    lines.append("Focus phases: \(outcomesText)")
    if distractions.isEmpty {
      lines.append("Distractions: none recorded")
    } else {
      let top = distractions.prefix(5).map { "\($0.app) \(Self.duration($0.seconds))" }
      let lost = distractions.reduce(0) { $0 + $1.seconds }
      lines.append("Distractions: \(Self.duration(lost)) lost; \(top.joined(separator: ", "))")
    }
    lines.append(
      "Streak: \(Self.days(streak.current)) (longest \(Self.days(streak.longest)))")
    // The words and figures of `grow status`'s today line.
    var todayLine =
      "Today: "
      + FocusFigures.today(
        completed: today.completed, focus: Double(today.focusSeconds),
        cutShort: Double(today.cutShortSeconds), goal: today.goalSeconds.map(Double.init))
    if let percent = today.percent {
      todayLine += " " + style.green(TextChart.bar(Double(min(percent, 100)), of: 100, width: 10))
    }
    lines.append(todayLine)
    return lines.joined(separator: "\n")
  }

  /// Focus per calendar month of the range.
  private var monthRows: [(String, Int)] {
    var order: [String] = []
    var totals: [String: Int] = [:]
    for day in days {
      let key = String(day.date.text.prefix(7))
      if totals[key] == nil { order.append(key) }
      totals[key, default: 0] += day.focusSeconds
    }
    return order.map { ($0, totals[$0] ?? 0) }
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

  static func days(_ count: Int) -> String { count == 1 ? "1 day" : "\(count) days" }
}

extension String {
  func trimmingTrailingSpaces() -> String {
    var text = self
    while text.last == " " { text.removeLast() }
    return text
  }
}
