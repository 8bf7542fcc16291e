import Dispatch
import FoundationEssentials
import Glibc
import GrowCore
import GrowPluginKit

/// The write end of the pipe that SIGTERM and SIGINT are passed through; set once, before the
/// handler is installed, and only read by it after that.
nonisolated(unsafe) private var terminationPipeWriter: Int32 = -1

/// SIGTERM and SIGINT, received on a thread of their own rather than on the event loop, so that
/// the daemon can still leave when the loop is stuck in a plugin's handler that never returns.
///
/// The signal handler only writes the signal's number to a pipe (async-signal-safe, whichever
/// thread the kernel picks); the thread sleeps in `read` until then, so it costs no wake-ups.
/// It asks the loop to shut down the normal way (plugins stop and undo what they changed). If
/// the loop does not take that up within `loopAnswer` seconds, or the watchdog already says a
/// handler is stuck, or the normal way has not exited after `normalShutdownLimit` seconds, it
/// runs the plugins' emergency actions (`EmergencyExitActions`) and exits with status 1,
/// leaving the saved session for the next daemon, as after a crash.
final class TerminationSignals: Sendable {
  /// How long the loop has to pick up a termination request while a plugin's handler runs.
  static let loopAnswer: Double = 1
  /// How long it has while no handler runs (the loop is busy, not stuck in a plugin).
  static let busyLoopAnswer: Double = 2
  /// How long the emergency actions may take together.
  static let emergencyBudget: Double = 1.5
  /// What a person waits at most from SIGTERM to the exit, however many plugins hang.
  static let promise: Double = 3
  /// The normal shutdown's one deadline for every plugin to stop (external ones get 2 s to
  /// exit), counted from when the loop takes the request up.
  static let pluginStopLimit: Double = 2
  /// What the normal shutdown leaves itself, after the plugins, to finish writing the history.
  static let historyLimit: Double = 0.8

  private let log: Logger
  private let watchdog: HandlerWatchdog
  private let emergencyActions: EmergencyExitActions
  private let shutDownNormally: @MainActor @Sendable () -> Void

  /// Installs the handlers and starts the thread. Call once.
  init(
    log: Logger, watchdog: HandlerWatchdog, emergencyActions: EmergencyExitActions,
    shutDownNormally: @escaping @MainActor @Sendable () -> Void
  ) {
    self.log = log
    self.watchdog = watchdog
    self.emergencyActions = emergencyActions
    self.shutDownNormally = shutDownNormally
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else {
      log.error(
        "cannot create the signal pipe (\(String(cString: strerror(errno)))); SIGTERM kills")
      return
    }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    terminationPipeWriter = ends[1]
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
      // Only async-signal-safe calls here; errno is the interrupted code's.
      let saved = errno
      var byte: UInt8 = 1
      _ = write(terminationPipeWriter, &byte, 1)
      errno = saved
    }
    action.sa_flags = SA_RESTART
    sigemptyset(&action.sa_mask)
    for number in [SIGTERM, SIGINT] { sigaction(number, &action, nil) }
    let reader = ends[0]
    BackgroundThread.start(name: "grow-signals") { [self] in wait(reading: reader) }
  }

  private func wait(reading reader: Int32) {
    var byte: UInt8 = 0
    while read(reader, &byte, 1) != 1 {
      guard errno == EINTR else { return }
    }
    let received = DispatchTime.now()
    // Later signals are left in the pipe: the first one decides.
    if let stuck = watchdog.stuckHandler { leaveWithoutTheLoop(stuck) }
    let taken = DispatchSemaphore(value: 0)
    let shutDownNormally = self.shutDownNormally
    DispatchQueue.main.async {
      taken.signal()
      MainActor.assumeIsolated { shutDownNormally() }
    }
    if taken.wait(timeout: .now() + Self.loopAnswer) == .timedOut {
      // Stuck in a plugin's handler: no reason to wait more. A loop that is only busy (a
      // plugin flooding its output, a burst of calls) gets until `busyLoopAnswer`, which still
      // leaves the emergency exit inside the 3 s a person waits for.
      // (A handler that started during the wait is only the busy loop at work.)
      if let running = watchdog.runningHandler, running.seconds >= Self.loopAnswer {
        leaveWithoutTheLoop(running)
      }
      if taken.wait(timeout: .now() + Self.busyLoopAnswer - Self.loopAnswer) == .timedOut {
        leaveWithoutTheLoop(watchdog.runningHandler)
      }
    }
    // The normal shutdown ends the process; this only wakes if it got stuck on the way. A
    // plugin's `stop()` that holds the loop (watched as a handler) is left in time for the
    // emergency undo to fit in the promise; anything else is cut at the promise.
    let never = DispatchSemaphore(value: 0)
    _ = never.wait(timeout: received + Self.promise - Self.emergencyBudget)
    if let running = watchdog.runningHandler, running.seconds >= Self.loopAnswer {
      leaveWithoutTheLoop(running)
    }
    _ = never.wait(timeout: received + Self.promise - 0.2)
    leaveWithoutTheLoop(watchdog.runningHandler, within: 0.1)
  }

  private func leaveWithoutTheLoop(
    _ stuck: HandlerWatchdog.Running?, within budget: Double = emergencyBudget
  ) -> Never {
    let place =
      stuck.map {
        "in plugin '\($0.subscriber)', whose '\($0.event)' handler has not returned for "
          + "\(DurationText.format($0.seconds.rounded()))"
      } ?? "and does not answer"
    let undoing = emergencyActions.ids
    log.error(
      "asked to exit while the event loop is stuck \(place); exiting without it"
        + (undoing.isEmpty ? "" : " after the emergency undo of \(undoing.joined(separator: ", "))")
        + "; the running session stays saved for the next start")
    let late = emergencyActions.runAll(within: budget)
    if !late.isEmpty {
      log.error("emergency undo not finished in time: \(late.joined(separator: ", "))")
    }
    _exit(1)
  }
}
