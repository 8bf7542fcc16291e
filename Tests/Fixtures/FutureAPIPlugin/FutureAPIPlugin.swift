import GrowPluginKit

/// Test fixture: a plugin that claims to be built for a plugin API this grow does not have.
public final class FutureAPIPlugin: GrowPlugin {
  public static let id = "future-api"
  public init(context: PluginContext) throws {}
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer {
  let descriptor = UnsafeMutablePointer<GrowPluginDescriptor>.allocate(capacity: 1)
  descriptor.initialize(
    to: GrowPluginDescriptor(
      magic: GrowPluginAPI.magic, apiVersion: 99,
      pluginType: unsafeBitCast(FutureAPIPlugin.self as Any.Type, to: UnsafeRawPointer.self)))
  return UnsafeRawPointer(descriptor)
}
