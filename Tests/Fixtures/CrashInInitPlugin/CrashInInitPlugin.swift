import GrowPluginKit

/// Test fixture: a plugin that loads fine and then faults (SIGSEGV) in its set-up, as a
/// plugin with a bug in `init(context:)` would. An in-process plugin takes the daemon with it.
public final class CrashInInitPlugin: GrowPlugin {
  public static let id = "crash-in-init"
  public init(context: PluginContext) throws {
    // A store through a pointer near null: a real segmentation fault, not a raised signal.
    unsafeBitCast(8, to: UnsafeMutablePointer<Int>.self).pointee = 1
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(CrashInInitPlugin.self) }
