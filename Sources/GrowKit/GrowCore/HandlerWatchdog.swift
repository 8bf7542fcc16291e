import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Notices an event handler that keeps the event loop busy for longer than `limit`.
///
/// In-process code cannot be pre-empted, so the watchdog can only tell: it reports which
/// subscriber is stuck in which event (once per call), and answers `stuckHandler` for the
/// daemon's signal thread, which then leaves without the loop (see Daemon's emergency exit).
///
/// It costs nothing while no handler runs: its thread sleeps on a semaphore until a handler
/// starts. `handlerStarted` stores the handler and signals only when the thread sleeps for
/// good; the thread then waits `limit`, and a handler that finishes before that is noticed at
/// the deadline, with no signal from `handlerFinished`.
@_spi(GrowHost) public final class HandlerWatchdog: Sendable {
  /// One handler call that is running.
  public struct Running: Sendable, Equatable {
    public var subscriber: String
    public var event: String
    /// `DispatchTime` uptime in nanoseconds when it started.
    public var startedAt: UInt64
    /// How long it has been running.
    public var seconds: Double {
      Double(DispatchTime.now().uptimeNanoseconds &- startedAt) / 1e9
    }
  }

  private struct State {
    var running: Running?
    /// Counts handler calls, so a report is made once per call.
    var call: UInt64 = 0
    var reportedCall: UInt64 = 0
    /// The watchdog thread waits without a deadline; the next `handlerStarted` wakes it.
    var sleepsForGood = false
  }

  /// Handlers that run longer than this are reported.
  public let limit: Double
  private let state = Mutex(State())
  private let wake = DispatchSemaphore(value: 0)
  private let onStuck: @Sendable (Running) -> Void
  private let onReturned: @Sendable (Running) -> Void

  /// - Parameters:
  ///   - onStuck: called on the watchdog's thread when a handler has run for `limit` seconds.
  ///   - onReturned: called on the loop when such a handler returns at last.
  public init(
    limit: Double, onStuck: @escaping @Sendable (Running) -> Void,
    onReturned: @escaping @Sendable (Running) -> Void = { _ in }
  ) {
    self.limit = limit
    self.onStuck = onStuck
    self.onReturned = onReturned
    BackgroundThread.start(name: "grow-watchdog") { [self] in watch() }
  }

  /// The handler running now, however long it has run.
  public var runningHandler: Running? { state.withLock { $0.running } }

  /// The handler running now, if it has run longer than `limit`.
  public var stuckHandler: Running? {
    runningHandler.flatMap { $0.seconds >= limit ? $0 : nil }
  }

  public func handlerStarted(subscriber: String, event: String) {
    let running = Running(
      subscriber: subscriber, event: event, startedAt: DispatchTime.now().uptimeNanoseconds)
    let mustWake = state.withLock { state in
      state.running = running
      state.call &+= 1
      defer { state.sleepsForGood = false }
      return state.sleepsForGood
    }
    if mustWake { wake.signal() }
  }

  public func handlerFinished() {
    let reported = state.withLock { state -> Running? in
      defer { state.running = nil }
      // Reported as stuck: tell the thread, which is waiting for good, that it returned.
      guard state.reportedCall == state.call, state.running != nil else { return nil }
      return state.running
    }
    if let reported { onReturned(reported) }
  }

  private func watch() {
    while true {
      let next = state.withLock { state -> (Running, UInt64)? in
        guard let running = state.running, state.reportedCall != state.call else {
          state.sleepsForGood = true
          return nil
        }
        return (running, state.call)
      }
      guard let (running, call) = next else {
        wake.wait()
        continue
      }
      let left = limit - running.seconds
      if left > 0 {
        // A signal here only means a new handler started; the loop looks again either way.
        _ = wake.wait(timeout: .now() + left)
        continue
      }
      let stillThatCall = state.withLock { state in
        guard state.call == call, state.running != nil else { return false }
        state.reportedCall = call
        return true
      }
      if stillThatCall { onStuck(running) }
    }
  }
}
