import FoundationEssentials
import GrowCore

/// The event loop as a service: what plugins (and the daemon's own parts) use for time and
/// descriptors instead of reaching for the main queue, `FileWatcher.shared` or `Date()`.
///
/// The daemon's loop is `MainLoop`; tests use `ManualLoop` (GrowPluginTesting), whose time only
/// moves when told to and whose descriptors are ready when the test says so. It is a
/// `TimeSource`, so the core timer runs on it too: `now` is the wall clock and
/// `schedule(at:)` a wall-clock alarm (it keeps running through a suspend).
public protocol EventLoop: TimeSource {
  /// Now on a clock that never jumps (CLOCK_MONOTONIC): for measuring how long something
  /// took, or waited, where a wall-clock change must not count. `now` is the wall clock.
  var monotonicNow: MonotonicInstant { get }
  /// Calls `action` once, on the loop, `seconds` from now on the monotonic clock: for
  /// timeouts, retries and grace periods, which a wall-clock change must not shorten.
  func after(seconds: TimeInterval, _ action: @escaping () -> Void) -> any Alarm
  /// Calls `handler` on the loop whenever `descriptor` is ready for `interest`; cancel the
  /// watch before closing the descriptor.
  @MainActor
  func watch(
    _ descriptor: Int32, for interest: FileWatcher.Readiness,
    _ handler: @escaping (FileWatcher.Readiness) -> Void
  ) -> any DescriptorWatch
}

extension EventLoop {
  /// Calls `action` once, at or just after the wall-clock instant `date`.
  public func at(_ date: Date, _ action: @escaping () -> Void) -> any Alarm {
    schedule(at: date, action)
  }
}

/// One descriptor watch on an `EventLoop`.
@MainActor
public protocol DescriptorWatch: AnyObject {
  var descriptor: Int32 { get }
  /// What the handler wants to hear about; changing it takes effect at once.
  var interest: FileWatcher.Readiness { get set }
  /// Stops watching. Safe to call more than once.
  func cancel()
  var isCancelled: Bool { get }
}

extension FileWatcher.Watch: DescriptorWatch {}
