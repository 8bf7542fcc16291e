import FoundationEssentials
import Glibc
import GrowCore

/// Current and longest run of consecutive days that counted.
public struct Streak: Sendable, Equatable, Codable {
  public var current: Int
  public var longest: Int

  public init(current: Int, longest: Int) {
    self.current = current
    self.longest = longest
  }

  public static let none = Streak(current: 0, longest: 0)

  /// Whether a day counts toward a streak: its focus met `goal`; with no goal, it had at
  /// least one completed focus phase.
  public static func counts(_ activity: DayActivity, goal: TimeInterval?) -> Bool {
    if let goal, goal > 0 { return activity.focusSeconds >= goal }
    return activity.completedFocus > 0
  }

  /// The streaks in `daily` as of `today`. Today only adds to the current streak once it
  /// counts; until then the streak that ended yesterday is still current, because the day is
  /// not over.
  public init(daily: [LocalDay: DayActivity], goal: TimeInterval?, today: LocalDay) {
    let counted = Set(daily.filter { Self.counts($0.value, goal: goal) }.keys)
    var day = counted.contains(today) ? today : today.advanced(by: -1)
    var current = 0
    while counted.contains(day) {
      current += 1
      day = day.advanced(by: -1)
    }
    var longest = 0
    var run = 0
    var previous: LocalDay?
    for day in counted.sorted() {
      run = previous.map { $0.advanced(by: 1) == day } == true ? run + 1 : 1
      longest = max(longest, run)
      previous = day
    }
    self.init(current: current, longest: max(longest, current))
  }
}

/// Everything `grow stats` shows for a range of days.
public struct HistoryStatistics: Sendable, Equatable, Codable {
  public struct DayTotal: Sendable, Equatable, Codable {
    public var date: LocalDay
    public var focusSeconds: Int
    public var completed: Int
    public var abandoned: Int
  }

  public struct CardTotal: Sendable, Equatable, Codable {
    public var card: String
    public var focusSeconds: Int
    public var completed: Int
    public var abandoned: Int
  }

  public struct AppTotal: Sendable, Equatable, Codable {
    public var app: String
    public var seconds: Int
  }

  /// Focus on one day per card, for the CSV export and the report's stacked bars.
  public struct DayCardTotal: Sendable, Equatable, Codable {
    public var date: LocalDay
    public var card: String
    public var focusSeconds: Int
    public var completed: Int
    public var abandoned: Int
  }

  public struct Today: Sendable, Equatable, Codable {
    public var date: LocalDay
    public var focusSeconds: Int
    public var completed: Int
    /// The default card's daily goal, if it has one.
    public var goalSeconds: Int?
    /// Focus as a percentage of the goal; nil without a goal.
    public var percent: Int?
  }

  public var from: LocalDay
  public var to: LocalDay
  /// The card the figures are limited to; nil for every card.
  public var card: String?
  /// Every day of the range, in order, days without focus included.
  public var days: [DayTotal]
  /// Cards by focus time, most first.
  public var cards: [CardTotal]
  public var dayCards: [DayCardTotal]
  public var focusSeconds: Int
  /// Focus phases that ran to the end.
  public var completed: Int
  /// Focus phases stopped or cut short by a daemon exit.
  public var abandoned: Int
  /// Focus phases skipped.
  public var skipped: Int
  /// Apps by time lost, most first.
  public var distractions: [AppTotal]
  public var streak: Streak
  public var today: Today

  enum CodingKeys: String, CodingKey {
    case from, to, card, days, cards, completed, abandoned, skipped, distractions, streak, today
    case dayCards = "day_cards"
    case focusSeconds = "focus_seconds"
  }

  /// - Parameters:
  ///   - phases: the phases of the range (already limited to `card`).
  ///   - daily: focus per day over the whole history, every card: streaks and today.
  ///   - goal: the default card's daily goal.
  public init(
    from: LocalDay, to: LocalDay, card: String?, phases: [PhaseRecord],
    distractions: [Distraction], daily: [LocalDay: DayActivity], goal: TimeInterval?,
    today: LocalDay
  ) {
    self.from = from
    self.to = to
    self.card = card
    var byDay: [LocalDay: DayTotal] = [:]
    var byCard: [String: CardTotal] = [:]
    var byDayCard: [String: DayCardTotal] = [:]
    var focus = 0.0
    var completed = 0
    var abandoned = 0
    var skipped = 0
    for phase in phases where phase.kind == .focus {
      let seconds = Int(phase.actualSeconds.rounded())
      let done = phase.outcome == .completed ? 1 : 0
      let lost = phase.isAbandoned ? 1 : 0
      focus += phase.actualSeconds
      completed += done
      abandoned += lost
      skipped += phase.outcome == .skipped ? 1 : 0
      let day = phase.day
      byDay[day, default: DayTotal(date: day, focusSeconds: 0, completed: 0, abandoned: 0)]
        .add(seconds, done, lost)
      byCard[
        phase.card,
        default: CardTotal(card: phase.card, focusSeconds: 0, completed: 0, abandoned: 0)
      ].add(seconds, done, lost)
      let key = "\(day.number) \(phase.card)"
      byDayCard[
        key,
        default: DayCardTotal(
          date: day, card: phase.card, focusSeconds: 0, completed: 0, abandoned: 0)
      ].add(seconds, done, lost)
    }
    days = (from...max(from, to)).map {
      byDay[$0] ?? DayTotal(date: $0, focusSeconds: 0, completed: 0, abandoned: 0)
    }
    cards = byCard.values.sorted { ($0.focusSeconds, $1.card) > ($1.focusSeconds, $0.card) }
    dayCards = byDayCard.values.sorted { ($0.date, $0.card) < ($1.date, $1.card) }
    focusSeconds = Int(focus.rounded())
    self.completed = completed
    self.abandoned = abandoned
    self.skipped = skipped
    var lost: [String: Double] = [:]
    for distraction in distractions {
      lost[distraction.appClass, default: 0] += distraction.seconds
    }
    self.distractions = lost.map { AppTotal(app: $0.key, seconds: Int($0.value.rounded())) }
      .sorted { ($0.seconds, $1.app) > ($1.seconds, $0.app) }
    streak = Streak(daily: daily, goal: goal, today: today)
    let todayActivity = daily[today] ?? DayActivity()
    let goalSeconds = goal.flatMap { $0 > 0 ? Int($0.rounded()) : nil }
    self.today = Today(
      date: today, focusSeconds: Int(todayActivity.focusSeconds.rounded()),
      completed: todayActivity.completedFocus, goalSeconds: goalSeconds,
      percent: goalSeconds.map {
        Int((todayActivity.focusSeconds / Double($0) * 100).rounded(.down))
      })
  }
}

private protocol Tally {
  var focusSeconds: Int { get set }
  var completed: Int { get set }
  var abandoned: Int { get set }
}

extension Tally {
  fileprivate mutating func add(_ seconds: Int, _ done: Int, _ lost: Int) {
    focusSeconds += seconds
    completed += done
    abandoned += lost
  }
}

extension HistoryStatistics.DayTotal: Tally {}
extension HistoryStatistics.CardTotal: Tally {}
extension HistoryStatistics.DayCardTotal: Tally {}
