import Dispatch
import FoundationEssentials
import Glibc
import GrowCore

/// The daemon's event loop: the main queue, with `FileWatcher` for descriptors.
///
/// Each alarm is one DispatchSource, so the process sleeps until the next deadline and is not
/// woken in between. Wall-clock (CLOCK_REALTIME) deadlines keep running through a suspend,
/// which monotonic ones do not.
@MainActor
public final class MainLoop: EventLoop {
  /// The loop plugins get unless a test gives them another.
  public static let shared = MainLoop()

  /// Runs before every wall-clock alarm: an alarm that fires after a resume must not count the
  /// time asleep as part of the phase, so the daemon looks at the clocks first
  /// (`ClockWatch.check`).
  public var beforeAlarm: (() -> Void)?

  public nonisolated init() {}

  public nonisolated var now: Date { Date() }
  public nonisolated var zone: LocalZone { .system }
  public nonisolated var monotonicNow: MonotonicInstant { .systemNow }

  public nonisolated func schedule(at deadline: Date, _ action: @escaping () -> Void)
    -> any Alarm
  {
    let box = UncheckedAction(action)
    let source = DispatchSource.makeTimerSource(flags: .strict, queue: .main)
    let seconds = deadline.timeIntervalSince1970
    var spec = timespec()
    spec.tv_sec = Int(seconds.rounded(.down))
    spec.tv_nsec = Int((seconds - seconds.rounded(.down)) * 1_000_000_000)
    source.schedule(wallDeadline: DispatchWallTime(timespec: spec), leeway: .milliseconds(1))
    // A timer source with no repeat interval fires once. The handler holds the source until
    // then (cancelling releases the handler), so an alarm nobody keeps still fires.
    source.setEventHandler { [weak self, source] in
      MainActor.assumeIsolated {
        self?.beforeAlarm?()
        box.action()
      }
      source.cancel()
    }
    source.resume()
    return DispatchAlarm(source)
  }

  public nonisolated func after(seconds: TimeInterval, _ action: @escaping () -> Void)
    -> any Alarm
  {
    let box = UncheckedAction(action)
    guard seconds > 0 else {
      // "On the next turn": a queued block, not a timer source, since readers that yield the
      // rest of a turn to others (an external plugin's pipe) ask for this many times a second.
      let alarm = QueuedAlarm()
      DispatchQueue.main.async {
        MainActor.assumeIsolated { if !alarm.isCancelled { box.action() } }
      }
      return alarm
    }
    let source = DispatchSource.makeTimerSource(queue: .main)
    let nanoseconds = Int((max(0, seconds) * 1e9).rounded(.up))
    source.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .milliseconds(1))
    source.setEventHandler { [source] in
      MainActor.assumeIsolated { box.action() }
      source.cancel()
    }
    source.resume()
    return DispatchAlarm(source)
  }

  public func watch(
    _ descriptor: Int32, for interest: FileWatcher.Readiness,
    _ handler: @escaping (FileWatcher.Readiness) -> Void
  ) -> any DescriptorWatch {
    FileWatcher.shared.watch(descriptor, for: interest, handler)
  }
}

/// The loop's callbacks are created and run on the loop's thread only.
struct UncheckedAction: @unchecked Sendable {
  let action: () -> Void
  init(_ action: @escaping () -> Void) { self.action = action }
}

/// An action queued for the loop's next turn; cancelled on the loop only, like every alarm.
final class QueuedAlarm: Alarm, @unchecked Sendable {
  private(set) var isCancelled = false
  func cancel() { isCancelled = true }
}

private final class DispatchAlarm: Alarm {
  private let source: any DispatchSourceTimer
  init(_ source: any DispatchSourceTimer) { self.source = source }
  func cancel() { source.cancel() }
}
