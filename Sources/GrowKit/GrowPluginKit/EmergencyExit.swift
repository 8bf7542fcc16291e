import Dispatch
import Synchronization

/// What plugins must undo outside the process if the daemon has to leave while its event loop
/// is stuck (an in-process plugin's handler that never returns, then SIGTERM): `stop()` cannot
/// run then, because it runs on that loop.
///
/// A plugin registers one action with `PluginContext.onEmergencyExit`. The action runs on the
/// daemon's signal thread, never on the loop, so it must not touch the plugin's main-actor
/// state: it works from what the plugin keeps on disk (the dnd plugin's restore record) and
/// its own short, bounded calls (`BusConnection.callOnce`). The process exits right after.
@_spi(GrowHost) public final class EmergencyExitActions: Sendable {
  private let actions = Mutex<[String: @Sendable () -> Void]>([:])

  public init() {}

  /// Sets (or, with nil, removes) the action of plugin `id`.
  public func set(_ id: String, _ action: (@Sendable () -> Void)?) {
    actions.withLock { $0[id] = action }
  }

  /// The plugins that have an action, sorted.
  public var ids: [String] { actions.withLock { $0.keys.sorted() } }

  /// Runs every action at once, each on its own thread, and waits at most `seconds` for them.
  /// - Returns: the ids whose action had not finished in time.
  public func runAll(within seconds: Double) -> [String] {
    let all = actions.withLock { $0 }
    let finished = Mutex<Set<String>>([])
    let group = DispatchGroup()
    for (id, action) in all {
      DispatchQueue.global().async(group: group) {
        action()
        finished.withLock { _ = $0.insert(id) }
      }
    }
    _ = group.wait(timeout: .now() + seconds)
    let done = finished.withLock { $0 }
    return all.keys.filter { !done.contains($0) }.sorted()
  }
}
