import Dispatch
import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
@_spi(GrowHost) import GrowPluginKit
import Synchronization

/// The write end of the pipe that SIGTERM and SIGINT are passed through; set once, before the
/// handler is installed, and only read by it after that.
nonisolated(unsafe) private var terminationPipeWriter: Int32 = -1

/// SIGTERM and SIGINT, received on a thread of their own rather than on the event loop, so that
/// the daemon can still leave when the loop is stuck in a plugin's handler that never returns.
///
/// The signal handler only writes the signal's number to a pipe (async-signal-safe, whichever
/// thread the kernel picks); the thread sleeps in `read` until then, so it costs no wake-ups.
/// It marks the daemon as leaving (`isRequested`: plugins' output is no longer read or carried
/// out, so the request comes next on the loop however much a plugin sends) and asks the loop to
/// shut down the normal way (plugins stop and undo what they changed).
///
/// It gives up on the loop only when the loop is stuck, never because it is slow: when the
/// watchdog sees one handler, or a plugin's `stop()`, hold the loop for `loopAnswer` seconds,
/// it runs the plugins' emergency actions (`EmergencyExitActions`) and exits with status 1,
/// leaving the saved session for the next daemon, as after a crash. A loop that takes turns,
/// however slowly (a plugin flooding its output on a machine busy with other work), is left to
/// finish: every step of the normal shutdown has a deadline of its own on the loop. A loop that
/// has not turned at all for `stuckLoopLimit` (stuck where no watchdog sees), or a shutdown not
/// over after `lastResort`, is left the same way.
final class TerminationSignals: Sendable {
  /// How long one handler (or `stop()`) may hold the loop after a termination request.
  static let loopAnswer: Double = 1
  /// How long the emergency actions may take together.
  static let emergencyBudget: Double = 1.5
  /// What a person waits at most from SIGTERM to the exit when a plugin's handler or `stop()`
  /// hangs: the loop's answer, the emergency actions, and the check's own interval.
  static let promise: Double = 3
  /// How often the signal thread looks at the watchdog while the normal shutdown runs.
  static let checkInterval: Double = 0.05
  /// How long the loop may go without a single turn before it counts as stuck where no
  /// watchdog sees (a plugin's D-Bus method or timer, say): one turn of a loop that is only
  /// short of CPU takes a small part of that even on a machine loaded many times over.
  static let stuckLoopLimit: Double = 10
  /// The exit for a shutdown that keeps turning but never ends (a plugin process that even
  /// SIGKILL does not end); far above what a normal shutdown takes on a loaded machine.
  static let lastResort: Double = 30
  /// The normal shutdown's one deadline for every plugin to stop (external ones get 2 s to
  /// exit), counted from when the loop takes the request up.
  static let pluginStopLimit: Double = 2
  /// What the normal shutdown leaves itself, after the plugins, to finish writing the history.
  static let historyLimit: Double = 0.8

  /// Set once SIGTERM or SIGINT came: from then on the loop's work is the shutdown, and what
  /// plugins send is left unread (see ExternalPlugin), so a flood cannot keep the request waiting.
  static var isRequested: Bool { requested.load(ordering: .acquiring) }
  private static let requested = Atomic<Bool>(false)
  /// Blocks the signal thread queued on the main queue that have run: the loop still turns.
  private static let loopTurns = Atomic<UInt64>(0)

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
    Self.requested.store(true, ordering: .releasing)
    // Later signals are left in the pipe: the first one decides.
    if let stuck = watchdog.stuckHandler { leaveWithoutTheLoop(stuck) }
    let shutDownNormally = self.shutDownNormally
    DispatchQueue.main.async {
      Self.loopTurns.add(1, ordering: .releasing)
      MainActor.assumeIsolated { shutDownNormally() }
    }
    // The normal shutdown ends the process; until then, look at the watchdog and whether the
    // loop still turns (one small block on the main queue at a time, each queued once the one
    // before ran). A handler that has held the loop for `loopAnswer` (stuck in an event, or in
    // `stop()` during the shutdown) is left at once, so the emergency undo still fits in the
    // promise; a loop that has not turned for `stuckLoopLimit`, stuck where no watchdog sees,
    // is left too. How long the loop takes to get to the request or through the shutdown is
    // not looked at: a loop that keeps turning is not stuck, only short of CPU, and its own
    // deadlines end the shutdown.
    let tick = DispatchSemaphore(value: 0)
    var turnsSeen: UInt64 = 0
    var waitingSince = received
    while true {
      _ = tick.wait(timeout: .now() + Self.checkInterval)
      if let running = watchdog.runningHandler, running.seconds >= Self.loopAnswer {
        leaveWithoutTheLoop(running)
      }
      let now = DispatchTime.now()
      let turns = Self.loopTurns.load(ordering: .acquiring)
      if turns != turnsSeen {
        turnsSeen = turns
        waitingSince = now
        DispatchQueue.main.async { Self.loopTurns.add(1, ordering: .releasing) }
      } else if now >= waitingSince + Self.stuckLoopLimit {
        leaveWithoutTheLoop(watchdog.runningHandler)
      }
      if now >= received + Self.lastResort {
        leaveWithoutTheLoop(watchdog.runningHandler)
      }
    }
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
