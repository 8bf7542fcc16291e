import Foundation
@_spi(GrowHost) import GrowCore
import GrowDBus
@_spi(GrowBuiltIn) import GrowPluginKit
import Testing

/// The D-Bus encoding of the status is written once (`TimerStatus.busValues`, which the
/// daemon's GetStatus sends) and read once (`TimerStatus(busValues:)`, which the CLI and bars
/// use): what the daemon says is what `grow status` shows.
@Suite("TimerStatus over D-Bus")
struct TimerStatusBusTests {
  @Test func aRunningFocusComesBackAsItWent() {
    var status = TimerStatus.idle
    status.state = .focus
    status.card = "work"
    status.duration = 1500
    status.remaining = 600
    status.elapsed = 900
    status.startedAt = Date(timeIntervalSince1970: 1_777_000_000.25)
    status.endsAt = Date(timeIntervalSince1970: 1_777_001_500.25)
    status.cycle = 2
    status.longBreakAfter = 4
    status.completedToday = 3
    status.focusToday = 5400
    status.dailyGoal = 7200
    status.intention = "write the report"
    #expect(TimerStatus(busValues: status.busValues) == status)
  }

  /// One rounding rule for every countdown: 14.4 s left shows 0:15 paused (from the bus's
  /// `Remaining`, and in `grow status --json`) as it does running (from `EndsAt`), so a resume
  /// never makes the countdown go up.
  @Test func aPausedCountdownShowsWhatTheSameRunningOneShows() throws {
    let now = Date(timeIntervalSince1970: 1_777_000_000)
    var running = TimerStatus.idle
    running.state = .focus
    running.duration = 30
    running.remaining = 14.4
    running.endsAt = now.addingTimeInterval(14.4)
    var paused = running
    paused.paused = true
    paused.endsAt = nil
    let template = try StatusTemplate("{icon} {remaining}")
    let shown = { (status: TimerStatus) in
      template.render(
        StatusSnapshot(status: TimerStatus(busValues: status.busValues)), at: now,
        words: StatusWords(state: \.rawValue, waiting: \.rawValue))
    }
    #expect(shown(paused) == "‖ 0:15")
    #expect(shown(running) == "● 0:15")
    #expect(TimerStatusJSON(paused).fields["remaining"] == .int(15))
  }

  @Test func idleAndWaitingComeBackWithNothingInvented() {
    #expect(TimerStatus(busValues: TimerStatus.idle.busValues) == .idle)
    var waiting = TimerStatus.idle
    waiting.state = .waiting
    waiting.next = .longBreak
    waiting.card = "work"
    #expect(TimerStatus(busValues: waiting.busValues) == waiting)
  }

  /// Out-of-range values are clamped, never a crash on the daemon's loop.
  @Test func negativeAndHugeNumbersAreClamped() {
    var status = TimerStatus.idle
    status.remaining = -5
    status.duration = 1e12
    status.completedToday = -1
    #expect(status.busValues["Remaining"] == .uint32(0))
    #expect(status.busValues["Duration"] == .uint32(.max))
    #expect(status.busValues["CompletedToday"] == .uint32(0))
  }
}
