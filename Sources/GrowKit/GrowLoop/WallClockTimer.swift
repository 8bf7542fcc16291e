internal import CLinux
import FoundationEssentials
import Glibc

/// One timerfd on CLOCK_REALTIME, armed for an absolute wall-clock instant and watched by the
/// loop's epoll: the process sleeps until that instant and then wakes once, on the loop's
/// thread. A DispatchSource timer wakes libdispatch's manager thread and then the queue's
/// thread for each deadline; for something re-armed every second (the status-bar follower)
/// that is twice the wake-ups. A wall-clock change moves the deadline with it, and a suspend
/// does not push it back.
@MainActor
public final class WallClockTimer {
  private let timer: TimerDescriptor

  /// `handler` runs on the loop each time an armed instant passes.
  public init(_ handler: @escaping @MainActor () -> Void) {
    timer = TimerDescriptor(clock: CLOCK_REALTIME, handler)
  }

  /// Fires once at `instant` (at once if it has passed), replacing any earlier arming.
  public func fire(at instant: Date) {
    timer.fire(atSecondsSinceOrigin: instant.timeIntervalSince1970)
  }

  /// Fires no more until armed again.
  public func disarm() { timer.disarm() }
}

/// A timerfd on `clock`, watched on `FileWatcher.shared`, armed for absolute instants on that
/// clock. Closed when it goes away or when `close()` is called.
@MainActor
final class TimerDescriptor {
  private let descriptor: Int32
  private var watch: FileWatcher.Watch?

  init(clock: clockid_t, _ handler: @escaping @MainActor () -> Void) {
    descriptor = timerfd_create(clock, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
    precondition(descriptor >= 0, "timerfd_create failed: \(String(cString: strerror(errno)))")
    let descriptor = descriptor
    watch = FileWatcher.shared.watch(descriptor, for: .readable) { _ in
      var expirations: UInt64 = 0
      guard read(descriptor, &expirations, MemoryLayout<UInt64>.size) > 0 else { return }
      handler()
    }
  }

  isolated deinit { close() }

  /// Stops watching and closes the descriptor. Safe to call more than once.
  func close() {
    guard let watch else { return }
    watch.cancel()
    self.watch = nil
    Glibc.close(descriptor)
  }

  /// Fires once at `seconds` on the clock (at once if it has passed), replacing any earlier
  /// arming. A zero `it_value` would disarm, so the instant is at least a nanosecond.
  func fire(atSecondsSinceOrigin seconds: Double) {
    guard watch != nil else { return }
    let seconds = max(seconds, 1e-9)
    let whole = seconds.rounded(.down)
    var spec = itimerspec()
    spec.it_value.tv_sec = Int(whole)
    spec.it_value.tv_nsec = max(1, Int((seconds - whole) * 1e9))
    timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME), &spec, nil)
  }

  func disarm() {
    guard watch != nil else { return }
    var spec = itimerspec()
    timerfd_settime(descriptor, 0, &spec, nil)
  }
}
