internal import CLinux
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
      if NextTurn.queue(alarm, box) { return alarm }
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

  /// Runs the loop on the calling thread, which must be the main thread, forever; instead of
  /// `dispatchMain()`. The thread sleeps in `poll` on `FileWatcher`'s epoll and on the main
  /// queue's wake-up descriptor: a ready descriptor (a D-Bus call) is handled by this thread
  /// as soon as it wakes, where under `dispatchMain` libdispatch's manager thread saw the
  /// epoll and woke a worker to run the main queue (3.8 context switches a GetStatus; issue
  /// 32). Alarms, signal sources, `DispatchQueue.main` and main-actor tasks still arrive
  /// through the main queue, which this thread runs as CoreFoundation's run loop does.
  @_spi(GrowHost)
  public func runOnMainThread() -> Never {
    let epoll = FileWatcher.shared.driveFromCaller()
    let queue = _dispatch_get_main_queue_handle_4CF()
    var ready = [
      pollfd(fd: epoll, events: Int16(POLLIN), revents: 0),
      pollfd(fd: queue, events: Int16(POLLIN), revents: 0),
    ]
    NextTurn.thread = pthread_self()
    while true {
      // Work queued for the next turn runs after whatever is ready now (a look without
      // waiting), as a block on the main queue would, without waking the queue's eventfd.
      let count = poll(&ready, 2, NextTurn.isEmpty ? -1 : 0)
      if count < 0 {
        guard errno == EINTR else {
          preconditionFailure("poll on the loop failed: \(String(cString: strerror(errno)))")
        }
        continue
      }
      if ready[1].revents != 0 {
        // The eventfd stays readable until read; the queue is run after, so a wake-up for
        // work queued meanwhile is not lost.
        var value: UInt64 = 0
        _ = read(queue, &value, MemoryLayout<UInt64>.size)
        _dispatch_main_queue_callback_4CF(nil)
      }
      if ready[0].revents != 0 { FileWatcher.shared.dispatchReadyDescriptors() }
      NextTurn.run()
    }
  }
}

/// "On the next turn" (`after(seconds: 0)`) while the main thread runs the loop
/// (`runOnMainThread`): a list that thread runs between its polls, instead of a block on the
/// main queue, whose eventfd write, wake-up and read cost each D-Bus call (its turn is queued
/// so) three system calls more.
private enum NextTurn {
  /// The thread running `runOnMainThread`; nil until it runs.
  nonisolated(unsafe) static var thread: pthread_t?
  nonisolated(unsafe) private static var waiting: [(QueuedAlarm, UncheckedAction)] = []

  static var isEmpty: Bool { waiting.isEmpty }

  /// Queues `action` when called on the loop's thread while it runs the loop; false otherwise
  /// (the caller queues it on the main queue).
  static func queue(_ alarm: QueuedAlarm, _ action: UncheckedAction) -> Bool {
    guard let thread, pthread_equal(thread, pthread_self()) != 0 else { return false }
    waiting.append((alarm, action))
    return true
  }

  /// Runs what was queued before this call; what these queue waits for the next turn.
  static func run() {
    guard !waiting.isEmpty else { return }
    let now = waiting
    waiting.removeAll(keepingCapacity: true)
    for (alarm, action) in now where !alarm.isCancelled {
      MainActor.assumeIsolated { action.action() }
    }
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
