import Foundation
import GrowCore
import GrowPluginKit

/// Test fixture: a plugin whose handler never returns once the event named by its `hang-on`
/// key arrives (`phase-paused` unless told otherwise). It sleeps rather than spins, as a
/// handler stuck on a lock or a blocking call would, so the machine stays usable while the
/// daemon's loop is stuck in it. The soak's plugin-hang rounds use it (Tools/GrowSoak).
/// `hang-on = stop` makes it hang in `stop()` instead, as the daemon stops or reloads it.
public final class HangsInHandlerPlugin: GrowPlugin {
  public static let id = "hangs-in-handler"
  private let log: Logger
  private let hangsInStop: Bool

  public init(context: PluginContext) throws {
    try context.config.checkKeys(["hang-on"])
    let event = context.config.string("hang-on", default: PhasePaused.eventName)
    log = context.log
    hangsInStop = event == "stop"
    context.subscribeToAll { published in
      guard type(of: published).eventName == event else { return }
      context.log.warning("fixture: hanging in the handler of \(event), for good")
      while true { sleep(60) }
    }
  }

  public func stop() {
    guard hangsInStop else { return }
    log.warning("fixture: hanging in stop(), for good")
    while true { sleep(60) }
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(HangsInHandlerPlugin.self) }
