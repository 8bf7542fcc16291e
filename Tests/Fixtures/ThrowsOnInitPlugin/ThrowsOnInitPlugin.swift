import GrowPluginKit

/// Test fixture: a plugin whose set-up fails.
public final class ThrowsOnInitPlugin: GrowPlugin {
  public static let id = "throws-on-init"
  public init(context: PluginContext) throws {
    throw PluginError.failed("fixture: refusing to start")
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(ThrowsOnInitPlugin.self) }
