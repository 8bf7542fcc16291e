import FoundationEssentials
import GrowMessages

/// `grow report --svg`: focus per day stacked by card, and the garden, as one SVG picture.
///
/// Plants are drawn with shapes rather than emoji, so the picture looks the same in every
/// viewer whatever fonts it has.
public struct SVGReport {
  public static let width = 800
  static let chartTop = 90.0
  static let chartHeight = 240.0
  static let chartLeft = 80.0
  static let chartRight = 770.0
  static let gardenRowHeight = 64.0
  static let plantSpacing = 34.0
  /// Card colours, in order of focus time; calm and distinguishable.
  static let palette = ["#3d8b5a", "#d9893b", "#4a78b5", "#b5527a", "#8a6fb8", "#5aa6a0"]

  public let statistics: HistoryStatistics
  public let garden: Garden
  /// The goals still open or reached (top level, with their steps), drawn as paths below the
  /// garden; none draws no journey section.
  public let journeys: [GoalProgress]
  /// False for the garden alone (`grow garden --svg`): a picture to share, without the chart.
  public var showsChart = true
  static let journeyHeight = 130.0

  public init(statistics: HistoryStatistics, phases: [PhaseRecord], journeys: [GoalProgress] = []) {
    self.statistics = statistics
    self.garden = Garden(phases)
    self.journeys = journeys
  }

  /// Where the garden's heading stands: below the chart, or under the title without one.
  private var gardenTop: Double {
    showsChart ? Self.chartTop + Self.chartHeight + 100 : Self.chartTop + 20
  }

  private var plantsPerLine: Int { Int((Self.chartRight - 170) / Self.plantSpacing) }

  private var gardenLines: Int {
    garden.rows.reduce(0) { $0 + max(1, ($1.plants.count + plantsPerLine - 1) / plantsPerLine) }
  }

  /// The picture's height: the chart, the legend, and one line of garden per card (more when
  /// a card grew more than fits on a line).
  public var height: Int {
    Int(
      gardenBottom + (journeys.isEmpty ? 0 : 40 + Double(journeys.count) * Self.journeyHeight))
  }

  private var gardenBottom: Double {
    gardenTop + 20 + Double(max(1, gardenLines)) * Self.gardenRowHeight
  }

  public var svg: String {
    var parts: [String] = []
    parts.append(
      """
      <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.width)" height="\(height)" \
      viewBox="0 0 \(Self.width) \(height)" font-family="DejaVu Sans, Verdana, sans-serif">
      <rect width="100%" height="100%" rx="16" fill="#fbf8f1"/>
      """)
    let title =
      statistics.from == statistics.to
      ? Message("What grew · {day}").render([
        "day": "\(statistics.from.text) \(statistics.from.weekdayName)"
      ])
      : Message("What grew · {from} to {to}").render([
        "from": statistics.from.text, "to": statistics.to.text,
      ])
    parts.append(text(title, x: 32, y: 44, size: 22, weight: "bold", fill: "#2f3b2f"))
    parts.append(
      text(
        Message("{focus} · {tally} · streak {days}").render([
          "focus": statistics.focusText, "tally": statistics.outcomesText,
          "days": FocusInWords.days(statistics.streak.current),
        ]),
        x: 32, y: 68, size: 13, fill: "#6b705c"))
    if showsChart { parts += chart() }
    parts += gardenParts()
    parts += journeyParts()
    parts.append("</svg>")
    return parts.joined(separator: "\n") + "\n"
  }

  // MARK: Chart

  private var colours: [String: String] {
    var colours: [String: String] = [:]
    for (index, card) in statistics.cards.enumerated() {
      colours[card.card] = Self.palette[index % Self.palette.count]
    }
    return colours
  }

  private func chart() -> [String] {
    var parts: [String] = []
    let days = statistics.days
    let maximum = Double(days.map(\.focusSeconds).max() ?? 0)
    let step = Self.gridStep(for: maximum)
    let top = max(step, (maximum / step).rounded(.up) * step)
    let bottom = Self.chartTop + Self.chartHeight
    let scale = Self.chartHeight / top
    var mark = 0.0
    while mark <= top + 0.5 {
      let y = bottom - mark * scale
      parts.append(
        "<line x1=\"\(Self.chartLeft)\" y1=\"\(y)\" x2=\"\(Self.chartRight)\" y2=\"\(y)\" "
          + "stroke=\"#e4dfd3\" stroke-width=\"1\"/>")
      parts.append(
        text(
          HistoryStatistics.duration(Int(mark)), x: Self.chartLeft - 10, y: y + 4, size: 11,
          fill: "#8a8d7a", anchor: "end"))
      mark += step
    }
    let slot = (Self.chartRight - Self.chartLeft) / Double(max(1, days.count))
    let barWidth = min(56, slot * 0.6)
    let colours = self.colours
    for (index, day) in days.enumerated() {
      let x = Self.chartLeft + slot * (Double(index) + 0.5) - barWidth / 2
      var y = bottom
      for part in statistics.dayCards where part.date == day.date && part.focusSeconds > 0 {
        let height = Double(part.focusSeconds) * scale
        y -= height
        parts.append(
          "<rect x=\"\(fmt(x))\" y=\"\(fmt(y))\" width=\"\(fmt(barWidth))\" "
            + "height=\"\(fmt(height))\" fill=\"\(colours[part.card] ?? "#999999")\"/>")
      }
      let centre = x + barWidth / 2
      if day.focusSeconds > 0 {
        parts.append(
          text(
            HistoryStatistics.duration(day.focusSeconds), x: centre, y: y - 6, size: 11,
            fill: "#2f3b2f", anchor: "middle"))
      }
      if days.count <= 14 || index % 7 == 0 {
        parts.append(
          text(
            day.date.weekdayName, x: centre, y: bottom + 18, size: 12, weight: "bold",
            fill: "#2f3b2f", anchor: "middle"))
        parts.append(
          text(
            String(day.date.text.dropFirst(5)), x: centre, y: bottom + 33, size: 10,
            fill: "#8a8d7a", anchor: "middle"))
      }
    }
    var x = Self.chartLeft
    let legendY = bottom + 58
    for card in statistics.cards {
      parts.append(
        "<rect x=\"\(fmt(x))\" y=\"\(fmt(legendY - 10))\" width=\"12\" height=\"12\" rx=\"3\" "
          + "fill=\"\(colours[card.card] ?? "#999999")\"/>")
      let label = "\(card.card) \(HistoryStatistics.duration(card.focusSeconds))"
      parts.append(text(label, x: x + 18, y: legendY, size: 12, fill: "#2f3b2f"))
      x += 40 + Double(label.count) * 7
    }
    return parts
  }

  /// A round grid step: 15m, 30m, 1h, 2h… so that about four lines fit.
  static func gridStep(for maximum: Double) -> Double {
    let steps: [Double] = [60, 300, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600]
    return steps.first { maximum / $0 <= 5 } ?? 24 * 3600
  }

  // MARK: Garden

  private func gardenParts() -> [String] {
    var parts: [String] = []
    let top = gardenTop
    parts.append(
      text(Message("Garden").render(), x: 32, y: top, size: 16, weight: "bold", fill: "#2f3b2f"))
    guard !garden.isEmpty else {
      parts.append(
        text(
          Message("Nothing has grown yet: a completed focus phase plants something.").render(),
          x: 32,
          y: top + 34, size: 13, fill: "#8a8d7a"))
      return parts
    }
    var line = 0
    for row in garden.rows {
      let groundY = top + 50 + Double(line) * Self.gardenRowHeight
      parts.append(text(row.card, x: 32, y: groundY - 8, size: 13, weight: "bold", fill: "#2f3b2f"))
      parts.append(text(row.tally, x: 32, y: groundY + 8, size: 10, fill: "#8a8d7a"))
      for (index, plant) in row.plants.enumerated() {
        let column = index % plantsPerLine
        if index > 0, column == 0 { line += 1 }
        let y = top + 50 + Double(line) * Self.gardenRowHeight
        if column == 0 {
          parts.append(
            "<line x1=\"150\" y1=\"\(fmt(y))\" x2=\"\(Self.chartRight)\" y2=\"\(fmt(y))\" "
              + "stroke=\"#c9b48f\" stroke-width=\"3\" stroke-linecap=\"round\"/>")
        }
        parts.append(draw(plant, x: 170 + Double(column) * Self.plantSpacing, ground: y))
      }
      line += 1
    }
    return parts
  }

  /// One plant standing on the ground line at `ground`, centred on `x`.
  private func draw(_ plant: Plant, x: Double, ground: Double) -> String {
    let stem = "#4f7d3a"
    let leaf = "#6fae4f"
    switch plant {
    case .sprout:
      return """
        <g><path d="M\(fmt(x)) \(fmt(ground)) v-14" stroke="\(stem)" stroke-width="2.5" \
        stroke-linecap="round"/>\
        <ellipse cx="\(fmt(x - 6))" cy="\(fmt(ground - 15))" rx="6" ry="3.5" fill="\(leaf)" \
        transform="rotate(-25 \(fmt(x - 6)) \(fmt(ground - 15)))"/>\
        <ellipse cx="\(fmt(x + 6))" cy="\(fmt(ground - 15))" rx="6" ry="3.5" fill="\(leaf)" \
        transform="rotate(25 \(fmt(x + 6)) \(fmt(ground - 15)))"/></g>
        """
    case .herb:
      var shape = """
        <g><path d="M\(fmt(x)) \(fmt(ground)) v-30" stroke="\(stem)" stroke-width="2.5" \
        stroke-linecap="round"/>
        """
      for (dy, side) in [(10.0, -1.0), (16.0, 1.0), (22.0, -1.0), (28.0, 1.0)] {
        let cx = x + side * 7
        let cy = ground - dy
        shape +=
          "<ellipse cx=\"\(fmt(cx))\" cy=\"\(fmt(cy))\" rx=\"7\" ry=\"3.5\" fill=\"\(leaf)\" "
          + "transform=\"rotate(\(fmt(side * -30)) \(fmt(cx)) \(fmt(cy)))\"/>"
      }
      return shape + "</g>"
    case .tree:
      return """
        <g><rect x="\(fmt(x - 3))" y="\(fmt(ground - 18))" width="6" height="18" rx="2" \
        fill="#8b5a2b"/>\
        <circle cx="\(fmt(x))" cy="\(fmt(ground - 30))" r="14" fill="#2f7d46"/>\
        <circle cx="\(fmt(x - 8))" cy="\(fmt(ground - 24))" r="9" fill="#3d9456"/>\
        <circle cx="\(fmt(x + 8))" cy="\(fmt(ground - 25))" r="9" fill="#3d9456"/></g>
        """
    case .sunflower:
      var petals = ""
      for step in 0..<10 {
        let angle = Double(step) * 36
        petals +=
          "<ellipse cx=\"\(fmt(x))\" cy=\"\(fmt(ground - 38))\" rx=\"3.5\" ry=\"8\" "
          + "fill=\"#f2c230\" transform=\"rotate(\(fmt(angle)) \(fmt(x)) \(fmt(ground - 30)))\"/>"
      }
      return """
        <g><path d="M\(fmt(x)) \(fmt(ground)) v-30" stroke="\(stem)" stroke-width="2.5" \
        stroke-linecap="round"/>\
        <ellipse cx="\(fmt(x - 6))" cy="\(fmt(ground - 12))" rx="6" ry="3" fill="\(leaf)" \
        transform="rotate(-25 \(fmt(x - 6)) \(fmt(ground - 12)))"/>\
        \(petals)<circle cx="\(fmt(x))" cy="\(fmt(ground - 30))" r="5.5" fill="#6b4423"/></g>
        """
    case .wilted:
      return """
        <g><path d="M\(fmt(x)) \(fmt(ground)) q1 -16 10 -20" fill="none" stroke="#8f8a6a" \
        stroke-width="2.5" stroke-linecap="round"/>\
        <circle cx="\(fmt(x + 11))" cy="\(fmt(ground - 15))" r="5" fill="#a0524d"/>\
        <ellipse cx="\(fmt(x - 5))" cy="\(fmt(ground - 6))" rx="5" ry="2.5" fill="#b0a878"/></g>
        """
    }
  }

  // MARK: Journeys

  /// Each goal as a path from its start to its end: the part walked drawn solid, each step a
  /// station along it with its plant (a lotus once reached), its name and where it stands.
  private func journeyParts() -> [String] {
    guard !journeys.isEmpty else { return [] }
    var parts: [String] = []
    var top = gardenBottom + 10
    parts.append(
      text(Message("Journeys").render(), x: 32, y: top, size: 16, weight: "bold", fill: "#2f3b2f"))
    for journey in journeys {
      let percent = journey.fraction.map { " · \(Int(($0 * 100).rounded(.down)))%" } ?? ""
      let due = journey.goal.due.map { " · " + Message("by {day}").render(["day": $0.text]) } ?? ""
      parts.append(
        text(
          journey.goal.name + percent + due, x: 32, y: top + 32, size: 13, weight: "bold",
          fill: "#2f3b2f"))
      let y = top + 78
      let (left, right) = (60.0, Self.chartRight - 20)
      let walked = left + (right - left) * (journey.isReached ? 1 : journey.fraction ?? 0)
      parts.append(
        "<path d=\"M\(fmt(left)) \(fmt(y)) H\(fmt(right))\" stroke=\"#c9b48f\" "
          + "stroke-width=\"4\" stroke-dasharray=\"2 8\" stroke-linecap=\"round\"/>")
      parts.append(
        "<path d=\"M\(fmt(left)) \(fmt(y)) H\(fmt(walked))\" stroke=\"#6fae4f\" "
          + "stroke-width=\"5\" stroke-linecap=\"round\"/>")
      let stations = journey.subgoals.isEmpty ? [journey] : journey.subgoals
      for (index, station) in stations.enumerated() {
        // A goal without steps is one station at the path's end; steps stand evenly along it.
        let slot = (right - left) / Double(stations.count)
        let x = journey.subgoals.isEmpty ? right : left + slot * (Double(index) + 0.5)
        parts.append(drawStation(station, x: x, ground: y))
        parts.append(
          text(
            station.goal.name, x: x, y: y + 20, size: 11, weight: "bold", fill: "#2f3b2f",
            anchor: "middle"))
        let done = HistoryStatistics.duration(Int(station.doneSeconds.rounded()))
        let standing =
          if station.isReached {
            Message("reached · {done}").render(["done": done])
          } else if let target = station.targetSeconds {
            Message("{done} of {target}").render([
              "done": done, "target": HistoryStatistics.duration(Int(target.rounded())),
            ])
          } else {
            done
          }
        parts.append(
          text(standing, x: x, y: y + 34, size: 10, fill: "#8a8d7a", anchor: "middle"))
      }
      top += Self.journeyHeight
    }
    return parts
  }

  /// A step's plant: a seed before any focus, then a sprout, a herb past half way, and a
  /// lotus once reached.
  private func drawStation(_ station: GoalProgress, x: Double, ground: Double) -> String {
    if station.isReached {
      var petals = ""
      for angle in [-60.0, -30, 0, 30, 60] {
        petals +=
          "<ellipse cx=\"\(fmt(x))\" cy=\"\(fmt(ground - 14))\" rx=\"4.5\" ry=\"11\" "
          + "fill=\"#e58fb1\" stroke=\"#c96b93\" stroke-width=\"0.8\" "
          + "transform=\"rotate(\(fmt(angle)) \(fmt(x)) \(fmt(ground - 4)))\"/>"
      }
      return "<g><ellipse cx=\"\(fmt(x))\" cy=\"\(fmt(ground - 2))\" rx=\"14\" ry=\"4\" "
        + "fill=\"#5aa06a\"/>\(petals)</g>"
    }
    let fraction = station.fraction ?? (station.doneSeconds > 0 ? 0.25 : 0)
    if fraction <= 0 {
      return "<circle cx=\"\(fmt(x))\" cy=\"\(fmt(ground - 4))\" r=\"4\" fill=\"#8b5a2b\"/>"
    }
    return draw(fraction < 0.5 ? .sprout : .herb, x: x, ground: ground)
  }

  // MARK: Text

  private func text(
    _ content: String, x: Double, y: Double, size: Int, weight: String = "normal",
    fill: String, anchor: String = "start"
  ) -> String {
    "<text x=\"\(fmt(x))\" y=\"\(fmt(y))\" font-size=\"\(size)\" font-weight=\"\(weight)\" "
      + "fill=\"\(fill)\" text-anchor=\"\(anchor)\">\(Self.escaped(content))</text>"
  }

  static func escaped(_ text: String) -> String { text.markupEscaped }
}

/// Coordinates with at most one decimal, so the file stays small and readable.
private func fmt(_ value: Double) -> String {
  let rounded = (value * 10).rounded() / 10
  return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
}
