internal import CLinux
import FoundationEssentials
import Glibc
import GrowCore

/// An event loop for a process of its own that is not the daemon (`grow status --follow`):
/// the main thread sleeps in `FileWatcher`'s epoll and nothing else, with each alarm a timerfd
/// in it and "on the next turn" work in a queue of its own. No libdispatch queue or thread is
/// involved, so a ready descriptor or an alarm wakes this one thread and no other.
///
/// It takes `FileWatcher.shared` over from the main queue: everything watched there
/// (`WallClockTimer`, `DirectoryWatch`, descriptor watches) runs on it, and the main queue is
/// no longer served: what is queued there (`DispatchQueue.main`, main-actor tasks) never runs.
/// A process uses either this loop or `MainLoop`, not both.
@_spi(GrowHost) @MainActor
public final class EpollLoop: EventLoop {
  /// The process's loop: there is one epoll to sleep in.
  public static let shared = EpollLoop()

  /// Actions for the next turn, run in the order they were queued.
  private var queued: [(alarm: QueuedAlarm, action: UncheckedAction)] = []

  private init() {
    // Before anything is watched, so libdispatch never sees the epoll descriptor.
    FileWatcher.isDrivenByCaller = true
  }

  public nonisolated var now: Date { Date() }
  public nonisolated var zone: LocalZone { .system }
  public nonisolated var monotonicNow: MonotonicInstant { .systemNow }

  /// Runs the loop on the calling thread, which must be the main thread, forever: each turn
  /// runs what was queued before it, then the handlers of the ready descriptors, sleeping
  /// while there is neither.
  public func run() -> Never {
    let epoll = FileWatcher.shared.driveFromCaller()
    var ready = pollfd(fd: epoll, events: Int16(POLLIN), revents: 0)
    while true {
      // What these actions queue waits for the next turn, after the descriptors.
      let turn = queued
      queued.removeAll()
      for entry in turn where !entry.alarm.isCancelled { entry.action.action() }
      let count = poll(&ready, 1, queued.isEmpty ? -1 : 0)
      if count < 0 && errno != EINTR {
        preconditionFailure("poll on epoll failed: \(String(cString: strerror(errno)))")
      }
      if count > 0 { FileWatcher.shared.dispatchReadyDescriptors() }
    }
  }

  public nonisolated func schedule(at deadline: Date, _ action: @escaping () -> Void)
    -> any Alarm
  {
    let box = UncheckedAction(action)
    return MainActor.assumeIsolated {
      TimerAlarm(clock: CLOCK_REALTIME, at: deadline.timeIntervalSince1970, box)
    }
  }

  public nonisolated func after(seconds: TimeInterval, _ action: @escaping () -> Void)
    -> any Alarm
  {
    let box = UncheckedAction(action)
    guard seconds > 0 else {
      let alarm = QueuedAlarm()
      MainActor.assumeIsolated { queued.append((alarm, box)) }
      return alarm
    }
    let deadline = MonotonicInstant.systemNow + seconds
    return MainActor.assumeIsolated {
      TimerAlarm(clock: CLOCK_MONOTONIC, at: deadline.secondsSinceOrigin, box)
    }
  }

  public func watch(
    _ descriptor: Int32, for interest: FileWatcher.Readiness,
    _ handler: @escaping (FileWatcher.Readiness) -> Void
  ) -> any DescriptorWatch {
    FileWatcher.shared.watch(descriptor, for: interest, handler)
  }
}

/// One alarm as a timerfd of its own, closed once it fired or was cancelled. An alarm nobody
/// keeps still fires: the descriptor's watch holds it until then.
private final class TimerAlarm: Alarm, @unchecked Sendable {
  private var timer: TimerDescriptor?

  @MainActor
  init(clock: clockid_t, at seconds: Double, _ action: UncheckedAction) {
    var keep: TimerAlarm? = nil
    timer = TimerDescriptor(clock: clock) {
      keep?.cancel()
      keep = nil
      action.action()
    }
    keep = self
    timer?.fire(atSecondsSinceOrigin: seconds)
  }

  /// Cancelled on the loop's thread only, like every alarm.
  func cancel() {
    MainActor.assumeIsolated {
      timer?.close()
      timer = nil
    }
  }
}
