import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowMessages

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
    self = TodayAndStreak(daily: daily, goal: goal, today: today).streak
  }
}

/// The focus phases of a day, a card, or a whole range, in the core's terms: focus time
/// (`PhaseOutcome.countsAsFocus`), cut-short focus apart, and a count per outcome. Seconds are
/// summed exactly and rounded once, as the daemon sums today's, so every figure made from the
/// same phases is the same number.
public struct FocusTally: Sendable, Equatable {
  public private(set) var focus: Double = 0
  public private(set) var cutShort: Double = 0
  public private(set) var counts: [PhaseOutcome: Int] = [:]

  public init() {}

  public mutating func add(_ phase: PhaseRecord) {
    guard phase.kind == .focus else { return }
    if phase.outcome.countsAsFocus {
      focus += phase.actualSeconds
    } else {
      cutShort += phase.actualSeconds
    }
    counts[phase.outcome, default: 0] += 1
  }

  public subscript(outcome: PhaseOutcome) -> Int { counts[outcome] ?? 0 }

  var roundedSeconds: (Int, Int) { (Int(focus.rounded()), Int(cutShort.rounded())) }
  var outcomeCounts: (Int, Int, Int, Int) {
    (self[.completed], self[.skipped], self[.stopped], self[.abandoned])
  }
}

/// A total with one count per outcome.
public protocol OutcomeTotals {
  var focusSeconds: Int { get }
  var cutShortSeconds: Int { get }
  var completed: Int { get }
  var skipped: Int { get }
  var stopped: Int { get }
  var abandoned: Int { get }
}

extension OutcomeTotals {
  public func count(of outcome: PhaseOutcome) -> Int {
    switch outcome {
    case .completed: completed
    case .skipped: skipped
    case .stopped: stopped
    case .abandoned: abandoned
    }
  }

  /// `1 completed, 1 skipped, 1 stopped`, as `PhaseOutcome.tally` words them, in the
  /// reader's language.
  public var outcomesText: String {
    PhaseOutcome.tallyInWords(
      Dictionary(uniqueKeysWithValues: PhaseOutcome.allCases.map { ($0, count(of: $0)) }))
  }

  /// `45s focus, 7s cut short`, in the reader's language.
  public var focusText: String {
    FocusInWords.focus(Double(focusSeconds), cutShort: Double(cutShortSeconds))
  }
}

/// Everything `grow stats` shows for a range of days. Every total is made the same way
/// (`FocusTally`): `focus_seconds` is focus time (`PhaseOutcome.countsAsFocus`),
/// `cut_short_seconds` the focus skipped, stopped or abandoned, then one count per outcome,
/// each named by its word.
public struct HistoryStatistics: Sendable, Equatable, Codable, OutcomeTotals {
  public struct DayTotal: Sendable, Equatable, Codable, OutcomeTotals {
    public var date: LocalDay
    public var focusSeconds: Int
    public var cutShortSeconds: Int
    public var completed: Int
    public var skipped: Int
    public var stopped: Int
    public var abandoned: Int

    enum CodingKeys: String, CodingKey {
      case date, completed, skipped, stopped, abandoned
      case focusSeconds = "focus_seconds"
      case cutShortSeconds = "cut_short_seconds"
    }

    init(date: LocalDay, _ tally: FocusTally) {
      self.date = date
      (focusSeconds, cutShortSeconds) = tally.roundedSeconds
      (completed, skipped, stopped, abandoned) = tally.outcomeCounts
    }
  }

  /// Completed focus on one task over the range (`grow start --task`).
  public struct TaskTotal: Sendable, Equatable, Codable {
    public var task: Int64
    public var card: String
    public var text: String
    public var focusSeconds: Int
    public var completed: Int

    enum CodingKeys: String, CodingKey {
      case task, card, text, completed
      case focusSeconds = "focus_seconds"
    }

    public init(task: Int64, card: String, text: String, focusSeconds: Int, completed: Int) {
      self.task = task
      self.card = card
      self.text = text
      self.focusSeconds = focusSeconds
      self.completed = completed
    }
  }

  public struct CardTotal: Sendable, Equatable, Codable, OutcomeTotals {
    public var card: String
    public var focusSeconds: Int
    public var cutShortSeconds: Int
    public var completed: Int
    public var skipped: Int
    public var stopped: Int
    public var abandoned: Int

    enum CodingKeys: String, CodingKey {
      case card, completed, skipped, stopped, abandoned
      case focusSeconds = "focus_seconds"
      case cutShortSeconds = "cut_short_seconds"
    }

    init(card: String, _ tally: FocusTally) {
      self.card = card
      (focusSeconds, cutShortSeconds) = tally.roundedSeconds
      (completed, skipped, stopped, abandoned) = tally.outcomeCounts
    }
  }

  public struct AppTotal: Sendable, Equatable, Codable {
    public var app: String
    public var seconds: Int
  }

  /// Focus on one day per card, for the CSV export and the report's stacked bars.
  public struct DayCardTotal: Sendable, Equatable, Codable, OutcomeTotals {
    public var date: LocalDay
    public var card: String
    public var focusSeconds: Int
    public var cutShortSeconds: Int
    public var completed: Int
    public var skipped: Int
    public var stopped: Int
    public var abandoned: Int

    enum CodingKeys: String, CodingKey {
      case date, card, completed, skipped, stopped, abandoned
      case focusSeconds = "focus_seconds"
      case cutShortSeconds = "cut_short_seconds"
    }

    init(date: LocalDay, card: String, _ tally: FocusTally) {
      self.date = date
      self.card = card
      (focusSeconds, cutShortSeconds) = tally.roundedSeconds
      (completed, skipped, stopped, abandoned) = tally.outcomeCounts
    }
  }

  public struct Today: Sendable, Equatable, Codable {
    public var date: LocalDay
    /// Focus time today, every card: what `grow status` calls focus today.
    public var focusSeconds: Int
    public var cutShortSeconds: Int
    public var completed: Int
    /// The default card's daily goal, if it has one.
    public var goalSeconds: Int?
    /// Focus as a percentage of the goal; nil without a goal.
    public var percent: Int?

    enum CodingKeys: String, CodingKey {
      case date, completed, percent
      case focusSeconds = "focus_seconds"
      case cutShortSeconds = "cut_short_seconds"
      case goalSeconds = "goal_seconds"
    }
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
  /// Focus time over the range.
  public var focusSeconds: Int
  /// Focus skipped, stopped or abandoned over the range.
  public var cutShortSeconds: Int
  public var completed: Int
  public var skipped: Int
  public var stopped: Int
  public var abandoned: Int
  /// Apps by time lost, most first.
  public var distractions: [AppTotal]
  /// Tasks by focus time, most first (`HistoryStore.taskTotals`; set by the caller).
  public var tasks: [TaskTotal] = []
  public var streak: Streak
  public var today: Today

  enum CodingKeys: String, CodingKey {
    case from, to, card, days, cards, completed, skipped, stopped, abandoned, distractions, tasks
    case streak, today
    case dayCards = "day_cards"
    case focusSeconds = "focus_seconds"
    case cutShortSeconds = "cut_short_seconds"
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
    self.init(
      from: from, to: to, card: card, phases: phases, distractions: distractions,
      figures: TodayAndStreak(daily: daily, goal: goal, today: today))
  }

  /// - Parameter figures: today's focus and the streaks, every card
  ///   (`HistoryStore.todayAndStreak`: one row per day, not every phase); judged on the
  ///   default card's daily goal, `figures.goal`.
  public init(
    from: LocalDay, to: LocalDay, card: String?, phases: [PhaseRecord],
    distractions: [Distraction], figures: TodayAndStreak
  ) {
    let goal = figures.goal
    let today = figures.today
    self.from = from
    self.to = to
    self.card = card
    var all = FocusTally()
    var byDay: [LocalDay: FocusTally] = [:]
    var byCard: [String: FocusTally] = [:]
    var byDayCard: [LocalDay: [String: FocusTally]] = [:]
    for phase in phases where phase.kind == .focus {
      all.add(phase)
      byDay[phase.day, default: FocusTally()].add(phase)
      byCard[phase.card, default: FocusTally()].add(phase)
      byDayCard[phase.day, default: [:]][phase.card, default: FocusTally()].add(phase)
    }
    days = (from...max(from, to)).map { DayTotal(date: $0, byDay[$0] ?? FocusTally()) }
    cards = byCard.map { CardTotal(card: $0.key, $0.value) }
      .sorted { ($0.focusSeconds, $1.card) > ($1.focusSeconds, $0.card) }
    dayCards = byDayCard.flatMap { day, cards in
      cards.map { DayCardTotal(date: day, card: $0.key, $0.value) }
    }.sorted { ($0.date, $0.card) < ($1.date, $1.card) }
    (focusSeconds, cutShortSeconds) = all.roundedSeconds
    (completed, skipped, stopped, abandoned) = all.outcomeCounts
    var lost: [String: Double] = [:]
    for distraction in distractions {
      lost[distraction.site ?? distraction.appClass, default: 0] += distraction.seconds
    }
    self.distractions = lost.map { AppTotal(app: $0.key, seconds: Int($0.value.rounded())) }
      .sorted { ($0.seconds, $1.app) > ($1.seconds, $0.app) }
    streak = figures.streak
    let todayActivity = figures.activity
    let goalSeconds = goal.flatMap { $0 > 0 ? Int($0.rounded()) : nil }
    self.today = Today(
      date: today, focusSeconds: Int(todayActivity.focusSeconds.rounded()),
      cutShortSeconds: Int(todayActivity.cutShortSeconds.rounded()),
      completed: todayActivity.completedFocus, goalSeconds: goalSeconds,
      percent: goalSeconds.map {
        FocusFigures.percent(todayActivity.focusSeconds.rounded(), of: Double($0))
      })
  }
}

/// Today's focus and the streak, kept up to date phase by phase (not regrouped from the whole
/// history): the run of days that counted up to yesterday, the longest run before today, and
/// today's focus so far give `streak` without looking at any other day. Read whole from the history
/// only at start and after something other than a new phase of today changed it (an edit, a delete,
/// a new daily goal): `HistoryStore.todayAndStreak`.
public struct TodayAndStreak: Sendable, Equatable {
  public private(set) var today: LocalDay
  /// Today's focus, every card.
  public private(set) var activity: DayActivity
  /// Days in a row that counted, ending yesterday.
  public private(set) var runBeforeToday: Int
  /// The longest run of days that counted, before today.
  public private(set) var longestBeforeToday: Int
  /// The goal the runs were judged on.
  public let goal: TimeInterval?

  public init(
    today: LocalDay, activity: DayActivity = DayActivity(), runBeforeToday: Int = 0,
    longestBeforeToday: Int = 0, goal: TimeInterval?
  ) {
    self.today = today
    self.activity = activity
    self.runBeforeToday = runBeforeToday
    self.longestBeforeToday = longestBeforeToday
    self.goal = goal
  }

  /// The streaks in `daily` as of `today` (what `Streak(daily:goal:today:)` gives).
  public init(daily: [LocalDay: DayActivity], goal: TimeInterval?, today: LocalDay) {
    var days = StreakRuns(goal: goal, before: today)
    for day in daily.keys.sorted() where day < today { days.add(day, daily[day] ?? DayActivity()) }
    self.init(
      today: today, activity: daily[today] ?? DayActivity(), runBeforeToday: days.runBefore,
      longestBeforeToday: days.longest, goal: goal)
  }

  /// Today only adds to the current streak once it counts; until then the streak that ended
  /// yesterday is still current, because the day is not over.
  public var streak: Streak {
    let current = Streak.counts(activity, goal: goal) ? runBeforeToday + 1 : runBeforeToday
    return Streak(current: current, longest: max(longestBeforeToday, current))
  }

  /// Counts a focus phase in. False when it belongs to another day than today (then only a
  /// read of the history gives the right runs).
  public mutating func add(_ phase: PhaseRecord) -> Bool {
    guard phase.kind == .focus else { return true }
    guard phase.day == today else { return false }
    activity.add(phase)
    return true
  }

  /// Moves on to `day` (midnight passed): today's focus joins the runs.
  public mutating func roll(to day: LocalDay) {
    guard day > today else { return }
    let runEndingToday = Streak.counts(activity, goal: goal) ? runBeforeToday + 1 : 0
    longestBeforeToday = max(longestBeforeToday, runEndingToday)
    runBeforeToday = day == today.advanced(by: 1) ? runEndingToday : 0
    today = day
    activity = DayActivity()
  }
}

/// The runs of days that counted, fed days in ascending order (gaps are days without
/// focus), all before `before`.
struct StreakRuns {
  let goal: TimeInterval?
  let before: LocalDay
  private var run = 0
  private var last: LocalDay?
  private(set) var longest = 0

  init(goal: TimeInterval?, before: LocalDay) {
    self.goal = goal
    self.before = before
  }

  mutating func add(_ day: LocalDay, _ activity: DayActivity) {
    guard Streak.counts(activity, goal: goal) else {
      run = 0
      last = day
      return
    }
    run = last.map { $0.advanced(by: 1) == day } == true && run > 0 ? run + 1 : 1
    last = day
    longest = max(longest, run)
  }

  /// The run that ends the day before `before`.
  var runBefore: Int { last == before.advanced(by: -1) ? run : 0 }
}
