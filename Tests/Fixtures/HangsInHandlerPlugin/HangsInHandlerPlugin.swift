import Glibc
import GrowCore
import GrowPluginKit

/// Test fixture: a plugin whose handler never returns once the phase is paused (it keeps the
/// CPU out of the way with sleeps, but never gives the loop back).
public final class HangsInHandlerPlugin: GrowPlugin {
  public static let id = "hangs-in-handler"
  public init(context: PluginContext) throws {
    context.subscribe(PhasePaused.self) { _ in
      while true { usleep(100_000) }
    }
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(HangsInHandlerPlugin.self) }
