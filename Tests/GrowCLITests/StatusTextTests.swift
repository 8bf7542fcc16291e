import FoundationEssentials
import GrowBasics
@_spi(GrowHost) import GrowCore
@_spi(GrowHost) @_spi(GrowBuiltIn) import GrowPluginKit
import Testing

@testable import GrowCLI

/// `grow status --json` is GrowBasics' own JSON writer now (the front has no Foundation): it
/// must write what `TimerStatusJSON` (JSONEncoder, sorted keys) writes for the same status, the
/// shape status.json and scripts read.
@Suite struct StatusTextTests {
  static let statuses: [TimerStatus] = {
    var running = TimerStatus.idle
    running.state = .focus
    running.card = "math \"3\" / \\ \u{1} \t é 😀"
    running.duration = 1500
    running.remaining = 1234.2
    running.elapsed = 265.8
    running.startedAt = Date(timeIntervalSince1970: 1_780_000_000.999_999)
    running.endsAt = Date(timeIntervalSince1970: 1_780_001_500.5)
    running.cycle = 2
    running.longBreakAfter = 4
    running.completedToday = 3
    running.focusToday = 4500.5
    running.dailyGoal = 7200
    running.intention = "Kapitel 3\n\u{7f}\u{2028}"
    running.cutShortToday = 12.4
    var paused = running
    paused.paused = true
    paused.endsAt = nil
    paused.dailyGoal = 0.2
    var waiting = TimerStatus.idle
    waiting.state = .waiting
    waiting.card = "work"
    waiting.next = .longBreak
    waiting.cycle = 4
    waiting.longBreakAfter = 4
    var longBreak = running
    longBreak.state = .longBreak
    longBreak.startedAt = Date(timeIntervalSince1970: 0.5)
    return [.idle, running, paused, waiting, longBreak]
  }()

  @Test(arguments: statuses)
  func theJSONIsTimerStatusJSONsByteForByte(_ status: TimerStatus) {
    #expect(StatusReport(status).jsonText == TimerStatusJSON(status).text)
  }

  @Test func theClockAndDurationsAreDurationTexts() {
    for seconds in [0, 0.4, 0.5, 59.01, 60, 3599.5, 3600, 86399, 1e300, -5, .nan, .infinity] {
      #expect(DurationWords.clock(seconds) == DurationText.clock(seconds))
      #expect(DurationWords.format(seconds) == DurationText.format(seconds))
    }
    #expect(DurationText.clock(3725) == "1:02:05")
    #expect(DurationText.format(5400) == "1h30m")
  }
}
