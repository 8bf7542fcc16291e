import GrowCore
import GrowPluginKit

/// Test fixture: a plugin whose event handler throws when a phase starts.
public final class ThrowsInHandlerPlugin: GrowPlugin {
  public static let id = "throws-in-handler"
  struct Broken: Error, CustomStringConvertible {
    var description: String { "fixture: broken handler" }
  }
  public init(context: PluginContext) throws {
    context.subscribe(PhaseStarted.self) { _ in throw Broken() }
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(ThrowsInHandlerPlugin.self) }
