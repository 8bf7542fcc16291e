@_spi(GrowHost) import GrowCore
import GrowLoop
@_spi(GrowHost) import GrowPluginKit

/// A loaded plugin as `PluginHost` drives it, whether its code runs on the daemon's loop
/// (`InProcessPlugin`) or in a process of its own (`ExternalPlugin`): the host keeps one table
/// of them and stops each the same way.
@MainActor
protocol HostedPlugin: AnyObject {
  /// Stops the plugin so it can undo what it changed; `completion` runs once it has, or once
  /// the host gave up waiting for it.
  func stop(by deadline: MonotonicInstant, then completion: @escaping () -> Void)
}

/// A plugin library's instance, run on the daemon's loop.
@MainActor
final class InProcessPlugin: HostedPlugin {
  let id: String
  let plugin: any GrowPlugin
  private let loop: any EventLoop
  private let log: Logger
  /// A synchronous `stop()` runs on the loop: the signal thread must see one that never
  /// returns as it sees a stuck handler (TerminationSignals).
  private let watchdog: HandlerWatchdog?
  /// Called once it has stopped, before `completion`.
  private let stopped: () -> Void

  init(
    id: String, plugin: any GrowPlugin, loop: any EventLoop, log: Logger,
    watchdog: HandlerWatchdog?, stopped: @escaping () -> Void
  ) {
    self.id = id
    self.plugin = plugin
    self.loop = loop
    self.log = log
    self.watchdog = watchdog
    self.stopped = stopped
  }

  /// `stop(then:)` for a plugin that needs answers from elsewhere, bounded by `deadline` and
  /// `PluginHost.stopGrace`; `stop()` for the rest.
  func stop(by deadline: MonotonicInstant, then completion: @escaping () -> Void) {
    guard let asynchronous = plugin as? any StopsAsynchronously else {
      watchdog?.handlerStarted(subscriber: id, event: "stop")
      plugin.stop()
      watchdog?.handlerFinished()
      stopped()
      return completion()
    }
    var grace: (any Alarm)?
    let finish = { [log, id, stopped] (timedOut: Bool) in
      guard grace != nil else { return }
      grace?.cancel()
      grace = nil
      if timedOut {
        log.warning("plugin '\(id)' did not finish stopping in time; going on without it")
      }
      stopped()
      // The plugin lives until it has finished, or the host gave up on it.
      withExtendedLifetime(self) { completion() }
    }
    let left = deadline - loop.monotonicNow
    grace = loop.after(seconds: max(0, min(left, PluginHost.stopGrace))) { finish(true) }
    asynchronous.stop { finish(false) }
  }
}

extension ExternalPlugin: HostedPlugin {
  /// Bounded by the plugin's own grace (SIGTERM, then SIGKILL), not by `deadline`.
  func stop(by deadline: MonotonicInstant, then completion: @escaping () -> Void) {
    onStateChange = nil
    // The closure keeps the plugin alive until its process is gone.
    stop { withExtendedLifetime(self) { completion() } }
  }
}
