import FoundationEssentials
@_spi(GrowHost) import GrowCore

extension StatusFacts {
  /// The timer's status without `Date`s, as GrowBasics' status text and bar lines read it: for
  /// the status bar and tray (GrowPluginKit) and grow-cli alike; the `grow` front builds the
  /// same from GetStatus's reply.
  public init(_ status: TimerStatus) {
    self.init(
      state: status.state.rawValue, paused: status.paused, card: status.card,
      duration: status.duration, remaining: status.remaining, elapsed: status.elapsed,
      startedAt: status.startedAt?.timeIntervalSince1970,
      endsAt: status.endsAt?.timeIntervalSince1970, cycle: status.cycle,
      longBreakAfter: status.longBreakAfter, next: status.next?.rawValue,
      nextPhase: status.nextPhase?.rawValue, completedToday: status.completedToday,
      focusToday: status.focusToday, dailyGoal: status.dailyGoal, intention: status.intention,
      cutShortToday: status.cutShortToday)
  }
}
