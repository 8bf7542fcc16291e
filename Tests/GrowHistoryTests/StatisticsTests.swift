import Foundation
import GrowCore
import Testing

@testable import GrowHistory

@Suite struct StatisticsTests {
  func day(_ text: String) -> LocalDay { LocalDay(text: text) ?? LocalDay(number: 0) }

  func daily(_ entries: [(String, Double, Int)]) -> [LocalDay: DayActivity] {
    Dictionary(
      uniqueKeysWithValues: entries.map {
        (day($0.0), DayActivity(focusSeconds: $0.1, completedFocus: $0.2))
      })
  }

  @Test func withoutAGoalADayCountsWhenItHasACompletedFocus() {
    let history = daily([
      ("2026-03-01", 1500, 1), ("2026-03-02", 1500, 1), ("2026-03-03", 600, 0),
      ("2026-03-04", 1500, 1), ("2026-03-05", 1500, 2),
    ])
    let streak = Streak(daily: history, goal: nil, today: day("2026-03-05"))
    #expect(streak == Streak(current: 2, longest: 2), "03-03 had focus but none completed")
  }

  @Test func withAGoalADayCountsWhenItsFocusMeetsTheGoal() {
    let history = daily([
      ("2026-03-01", 7200, 4), ("2026-03-02", 7199, 4), ("2026-03-03", 7200, 2),
      ("2026-03-04", 9000, 3),
    ])
    let streak = Streak(daily: history, goal: 7200, today: day("2026-03-04"))
    #expect(streak == Streak(current: 2, longest: 2))
  }

  @Test func todayKeepsYesterdaysStreakUntilItCountsAndAGapEndsIt() {
    let history = daily([
      ("2026-02-20", 1500, 1), ("2026-02-21", 1500, 1), ("2026-02-22", 1500, 1),
      ("2026-03-03", 1500, 1), ("2026-03-04", 1500, 1),
    ])
    #expect(
      Streak(daily: history, goal: nil, today: day("2026-03-05")) == .init(current: 2, longest: 3))
    #expect(
      Streak(daily: history, goal: nil, today: day("2026-03-06")) == .init(current: 0, longest: 3))
    #expect(Streak(daily: [:], goal: nil, today: day("2026-03-06")) == .none)
  }

  /// March 2026 in New York: DST starts on the 8th (02:00 → 03:00), so that day has 23 hours.
  /// Phases just before and after midnight must land on their own days.
  @Test func aMonthAcrossDSTAndMidnightIsCountedPerLocalDay() throws {
    let directory = try TemporaryDirectory()
    let store = try HistoryStore(path: directory.databasePath)
    var phases: [PhaseRecord] = []
    for dayOfMonth in 1...31 {
      let date = String(format: "2026-03-%02d", dayOfMonth)
      phases.append(focus("work", minutes: 25, endingAt: local("\(date) 10:00")))
    }
    phases.append(focus("math", minutes: 50, endingAt: local("2026-03-07 23:59")))
    // Started at 01:30 EST, ended at 03:05 EDT: 35 real minutes on the short day.
    phases.append(focus("math", minutes: 35, endingAt: local("2026-03-08 03:05")))
    phases.append(
      focus("math", minutes: 20, endingAt: local("2026-03-15 00:05"), outcome: .stopped))
    phases.append(focus("math", minutes: 5, endingAt: local("2026-03-15 00:30"), outcome: .skipped))
    try store.record(all: phases)
    let month = day("2026-03-01")...day("2026-03-31")
    let statistics = HistoryStatistics(
      from: month.lowerBound, to: month.upperBound, card: nil,
      phases: try store.phases(days: month), distractions: [],
      daily: try store.dailyActivity(), goal: nil, today: day("2026-03-31"))
    #expect(statistics.days.count == 31)
    let minutes = Dictionary(
      uniqueKeysWithValues: statistics.days.map { ($0.date.text, $0.focusSeconds / 60) })
    #expect(minutes["2026-03-07"] == 75)
    #expect(minutes["2026-03-08"] == 60)
    #expect(minutes["2026-03-14"] == 25)
    // Only focus that ran its course is focus time: the stopped 20m and skipped 5m are cut short.
    #expect(minutes["2026-03-15"] == 25)
    #expect(statistics.days.first { $0.date.text == "2026-03-15" }?.cutShortSeconds == 25 * 60)
    #expect(minutes["2026-03-16"] == 25)
    #expect(statistics.completed == 33)
    #expect(statistics.stopped == 1)
    #expect(statistics.abandoned == 0)
    #expect(statistics.skipped == 1)
    #expect(statistics.cutShortSeconds == 25 * 60)
    #expect(statistics.cards.map(\.card) == ["work", "math"])
    #expect(statistics.cards.map(\.focusSeconds) == [31 * 1500, 85 * 60])
    #expect(statistics.streak == Streak(current: 31, longest: 31))
    let mathOnly = HistoryStatistics(
      from: month.lowerBound, to: month.upperBound, card: "math",
      phases: try store.phases(days: month, card: "math"), distractions: [],
      daily: try store.dailyActivity(), goal: 3600, today: day("2026-03-08"))
    #expect(mathOnly.focusSeconds == 85 * 60)
    #expect(
      mathOnly.today
        == .init(
          date: day("2026-03-08"), focusSeconds: 3600, cutShortSeconds: 0, completed: 2,
          goalSeconds: 3600, percent: 100))
    #expect(mathOnly.streak == Streak(current: 2, longest: 2), "03-07 and 03-08 reach an hour")
  }

  @Test func theTextShowsBarsTotalsAndTheGoal() {
    let phases = [
      focus("work", minutes: 50, endingAt: local("2026-03-02 10:00")),
      focus("math", minutes: 25, endingAt: local("2026-03-03 10:00")),
      focus("math", minutes: 10, endingAt: local("2026-03-03 11:00"), outcome: .stopped),
    ]
    let statistics = HistoryStatistics(
      from: day("2026-03-02"), to: day("2026-03-03"), card: nil, phases: phases,
      distractions: [Distraction(phaseID: 1, appClass: "firefox", seconds: 120)],
      daily: [day("2026-03-03"): DayActivity(focusSeconds: 2100, completedFocus: 1)],
      goal: 3600, today: day("2026-03-03"))
    #expect(
      statistics.text() == """
        Focus 2026-03-02 to 2026-03-03 · all cards · 1h15m focus, 10m cut short

          2026-03-02 Mon  50m  ██████████████████████████████
          2026-03-03 Tue  25m  ███████████████

        Cards
          work  50m  ██████████████████████████████
          math  25m  ███████████████

        Focus phases: 2 completed, 1 stopped
        Distractions: 2m lost; firefox 2m
        Streak: 0 days (longest 0 days)
        Today: 1 completed, 35m focus (58% of the 1h goal) █████▊
        """)
  }

  /// The streak kept phase by phase and across midnights (what the daemon does) is the
  /// streak computed from every day (what it did at every phase end), over random histories
  /// with and without a goal.
  @Test func theStreakKeptPhaseByPhaseIsTheStreakOfEveryDay() {
    var generator = SystemRandomNumberGenerator()
    for goal in [nil, 3000.0] as [TimeInterval?] {
      for _ in 0..<50 {
        let first = LocalDay(number: 20_000)
        var daily: [LocalDay: DayActivity] = [:]
        var kept = TodayAndStreak(today: first, goal: goal)
        var day = first
        for _ in 0..<60 {
          for _ in 0..<Int.random(in: 0...3, using: &generator) {
            let completed = Bool.random(using: &generator)
            let start = day.start(in: .utc).addingTimeInterval(3600)
            let phase = PhaseRecord(
              card: "c", kind: .focus, plannedSeconds: 1500,
              actualSeconds: completed ? 1500 : 700, startedAt: start,
              endedAt: start.addingTimeInterval(1500), outcome: completed ? .completed : .stopped,
              timeZone: .utc)
            daily[day, default: DayActivity()].add(phase)
            let added = kept.add(phase)
            #expect(added)
            #expect(kept.streak == Streak(daily: daily, goal: goal, today: day))
          }
          day = day.advanced(by: Int.random(in: 1...2, using: &generator))
          kept.roll(to: day)
          #expect(kept.streak == Streak(daily: daily, goal: goal, today: day))
          #expect(kept == TodayAndStreak(daily: daily, goal: goal, today: day))
        }
      }
    }
  }
}
