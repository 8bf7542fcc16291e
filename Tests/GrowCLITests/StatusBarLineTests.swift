import GrowBasics
import Testing

/// GrowBasics' bar renderer, which the `grow` front follows the daemon with and grow-cli and
/// the plugins wrap: when the line can next look different decides every wake-up a bar costs.
@Suite struct StatusBarLineTests {
  /// A focus of 25 minutes ending at 1000 s after 1970, running or paused.
  private func focus(paused: Bool = false) -> BarSnapshot {
    BarSnapshot(
      status: StatusFacts(
        state: "focus", paused: paused, card: "work", duration: 1500, remaining: 600,
        elapsed: 900, startedAt: -500, endsAt: 1000, cycle: 1, longBreakAfter: 4, next: nil,
        nextPhase: "short-break", completedToday: 0, focusToday: 0, dailyGoal: nil,
        intention: nil, cutShortToday: 0))
  }

  private func renderer(_ template: String, _ format: BarFormat = .plain, warnBefore: Double? = nil)
    throws -> BarRenderer
  {
    BarRenderer(
      format: format, template: try BarTemplate(template), growCommand: "grow",
      warnBefore: warnBefore)
  }

  @Test func secondsChangeWhenTheCountdownCrossesAWholeSecond() throws {
    let seconds = try renderer("{remaining}")
    // 599.7 s left shows 10:00 until 599 s are left.
    #expect(seconds.update(focus(), at: 400.3) == "10:00")
    #expect(seconds.nextChange(after: 400.3, of: focus()) == 401)
    #expect(seconds.update(focus(), at: 401.001) == "9:59")
    // The last second: the daemon announces the end itself.
    #expect(seconds.nextChange(after: 999.5, of: focus()) == nil)
  }

  @Test func minutesChangeOncePerMinuteAndNothingWhilePausedOrIdle() throws {
    let minutes = try renderer("{remaining_min}")
    #expect(minutes.update(focus(), at: 400.3) == "10m")
    #expect(minutes.nextChange(after: 400.3, of: focus()) == 460)
    #expect(minutes.update(focus(), at: 460.001) == "9m")
    #expect(minutes.nextChange(after: 400.3, of: focus(paused: true)) == nil)
    #expect(minutes.nextChange(after: 400.3, of: BarSnapshot(status: nil)) == nil)
    #expect(try renderer("{card}").nextChange(after: 400.3, of: focus()) == nil)
  }

  @Test func endingSoonIsAChangeOfItsOwn() throws {
    let card = try renderer("{card}", .i3bar, warnBefore: 300)
    #expect(card.nextChange(after: 400.3, of: focus()) == 700)
    #expect(card.update(focus(), at: 699).contains(##""color":"#ff6e6e""##))
    #expect(
      card.update(focus(), at: 700).contains(##""color":"\##(BarRenderer.endingSoonColor)""##))
    // The minute boundary comes first until the warning does.
    let minutes = try renderer("{remaining_min}", warnBefore: 300)
    #expect(minutes.nextChange(after: 400.3, of: focus()) == 460)
    #expect(minutes.nextChange(after: 650, of: focus()) == 700)
    #expect(minutes.nextChange(after: 700.5, of: focus()) == 760)
  }

  @Test func waybarRedrawsEachPercent() throws {
    let waybar = try renderer("{card}", .waybar)
    // 1500 s: a percent is 15 s; 60% is done at 400 s (900 s in), 61% at 415 s.
    #expect(waybar.nextChange(after: 400.3, of: focus()) == 415)
    #expect(waybar.update(focus(), at: 400.3).contains(#""percentage":60"#))
  }

  @Test func i3barClicksAreReadFromTheEventsI3barWrites() {
    let event = #"{"name":"grow","instance":"timer","button":4,"modifiers":[],"x":1}"#
    #expect(BarClick.inI3barEvent(event) == .extendOneMinute)
    #expect(BarClick.inI3barEvent("," + event) == .extendOneMinute)
    #expect(BarClick.inI3barEvent("[") == nil)
    #expect(BarClick.inI3barEvent(#"{"button":9}"#) == nil)
    #expect(BarClick.extendOneMinute.method.name == "Extend")
    #expect(BarClick.extendOneMinute.method.seconds == 60)
  }
}
