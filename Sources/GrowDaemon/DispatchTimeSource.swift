import Dispatch
import Foundation
import GrowCore

/// Wall-clock alarms on the main queue: the daemon's `TimeSource`.
///
/// Each alarm is one DispatchSource with a wall-clock deadline, so the daemon sleeps until the
/// next deadline and is not woken in between. Wall-clock (CLOCK_REALTIME) deadlines keep
/// running through a suspend, which monotonic ones do not.
@MainActor
final class DispatchTimeSource: TimeSource {
  /// Runs before every alarm: an alarm that fires after a resume must not count the time asleep
  /// as part of the phase, so the daemon looks at the clocks first (`ClockWatch.check`).
  var beforeAlarm: (() -> Void)?

  nonisolated var now: Date { Date() }
  nonisolated var calendar: Calendar { Calendar.current }

  nonisolated func schedule(at deadline: Date, _ action: @escaping () -> Void) -> any Alarm {
    let box = UncheckedAction(action)
    let source = DispatchSource.makeTimerSource(flags: .strict, queue: .main)
    let seconds = deadline.timeIntervalSince1970
    var spec = timespec()
    spec.tv_sec = Int(seconds.rounded(.down))
    spec.tv_nsec = Int((seconds - seconds.rounded(.down)) * 1_000_000_000)
    source.schedule(wallDeadline: DispatchWallTime(timespec: spec), leeway: .milliseconds(1))
    // A timer source with no repeat interval fires once.
    source.setEventHandler { [weak self] in
      MainActor.assumeIsolated {
        self?.beforeAlarm?()
        box.action()
      }
    }
    source.resume()
    return DispatchAlarm(source)
  }
}

/// The timer's callbacks are created and run on the main queue only.
private struct UncheckedAction: @unchecked Sendable {
  let action: () -> Void
  init(_ action: @escaping () -> Void) { self.action = action }
}

private final class DispatchAlarm: Alarm {
  private let source: any DispatchSourceTimer
  init(_ source: any DispatchSourceTimer) { self.source = source }
  func cancel() { source.cancel() }
}
