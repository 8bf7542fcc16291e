import CNotify
import Dispatch
import Glibc
import GrowLoop

/// Runs GLib's default main context on the daemon's event loop, without polling.
///
/// libnotify hears `ActionInvoked` and `NotificationClosed` through GDBus, which hands them to
/// GLib's default main context; something has to run that context. A GLib main loop on its
/// own thread would need locks around the timer; a loop that iterates every N ms would wake
/// the process N times a second. Instead this asks the context what it waits for
/// (`g_main_context_prepare`/`query`: descriptors and a timeout), watches those descriptors
/// with `FileWatcher.shared` and arms one one-shot timer for the timeout; when either fires it
/// lets GLib `check` and `dispatch`, then asks again. Between events the process sleeps.
/// GDBus's worker thread wakes the context through its wake-up descriptor, which is among
/// the ones queried, so a signal arriving on that thread reaches the main queue at once.
@MainActor
final class GLibLoop {
  /// The one driver of the default context in this process.
  static let shared = GLibLoop()

  private let context: OpaquePointer?
  private var descriptors: [GPollFD] = []
  private var descriptorCount = 0
  private var maximumPriority: gint = 0
  private var watches: [Int32: (events: UInt16, watch: FileWatcher.Watch)] = [:]
  private var timeout: (any DispatchSourceTimer)?
  private var iterationQueued = false
  private(set) var isRunning = false
  /// How many times GLib sources were dispatched (for tests and measurements).
  private(set) var dispatchCount = 0

  private init() {
    context = g_main_context_default()
  }

  /// Starts driving the context; false when another thread already owns it.
  @discardableResult
  func start() -> Bool {
    guard !isRunning else { return true }
    guard g_main_context_acquire(context) != 0 else { return false }
    isRunning = true
    prepareAndWait()
    return true
  }

  /// Checks at once (after code that may have queued GLib work, such as a D-Bus call).
  func wakeUp() {
    guard isRunning, !iterationQueued else { return }
    iterationQueued = true
    DispatchQueue.main.async { MainActor.assumeIsolated { self.iterate() } }
  }

  /// One turn: which descriptors are ready (a poll that does not wait), check, dispatch.
  private func iterate() {
    iterationQueued = false
    guard isRunning else { return }
    if descriptorCount > 0 {
      _ = descriptors.withUnsafeMutableBufferPointer { buffer in
        buffer.withMemoryRebound(to: pollfd.self) {
          poll($0.baseAddress, nfds_t(descriptorCount), 0)
        }
      }
    }
    let ready = descriptors.withUnsafeMutableBufferPointer { buffer in
      g_main_context_check(context, maximumPriority, buffer.baseAddress, gint(descriptorCount))
    }
    if ready != 0 {
      dispatchCount += 1
      g_main_context_dispatch(context)
    }
    prepareAndWait()
  }

  /// Asks GLib what to wait for and sets up exactly that.
  private func prepareAndWait() {
    let readyNow = g_main_context_prepare(context, &maximumPriority) != 0
    var timeoutMilliseconds: gint = -1
    if descriptors.isEmpty { descriptors = Array(repeating: GPollFD(), count: 8) }
    while true {
      let capacity = descriptors.count
      let needed = descriptors.withUnsafeMutableBufferPointer { buffer in
        g_main_context_query(
          context, maximumPriority, &timeoutMilliseconds, buffer.baseAddress, gint(capacity))
      }
      if Int(needed) <= capacity {
        descriptorCount = Int(needed)
        break
      }
      descriptors = Array(repeating: GPollFD(), count: Int(needed))
    }
    syncWatches()
    timeout?.cancel()
    timeout = nil
    if readyNow || timeoutMilliseconds == 0 {
      wakeUp()
    } else if timeoutMilliseconds > 0 {
      let timer = DispatchSource.makeTimerSource(queue: .main)
      timer.schedule(deadline: .now() + .milliseconds(Int(timeoutMilliseconds)))
      timer.setEventHandler { MainActor.assumeIsolated { self.iterate() } }
      timer.resume()
      timeout = timer
    }
  }

  /// Makes the FileWatcher watches match the descriptors GLib asked for.
  private func syncWatches() {
    var wanted: [Int32: UInt16] = [:]
    for descriptor in descriptors.prefix(descriptorCount) {
      wanted[descriptor.fd, default: 0] |= descriptor.events
    }
    for (fd, existing) in watches where wanted[fd] != existing.events {
      existing.watch.cancel()
      watches[fd] = nil
    }
    for (fd, events) in wanted where watches[fd] == nil {
      var interest = FileWatcher.Readiness()
      if events & UInt16(G_IO_IN.rawValue | G_IO_PRI.rawValue) != 0 { interest.insert(.readable) }
      if events & UInt16(G_IO_OUT.rawValue) != 0 { interest.insert(.writable) }
      let watch = FileWatcher.shared.watch(fd, for: interest) { [weak self] _ in
        self?.iterate()
      }
      watches[fd] = (events, watch)
    }
  }
}
