import GrowPluginKit

/// Test fixture: a library whose entry point faults (SIGSEGV) in whatever process opens it to
/// read it, as `grow plugin install` does to check a library.
public final class CrashesOnLoadPlugin: GrowPlugin {
  public static let id = "crashes-on-load"
  public init(context: PluginContext) throws {}
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer {
  // A real fault, not raise(): a handler that returns (a crash reporter) would resume it.
  faultOnPurpose()
  return growPluginDescriptor(CrashesOnLoadPlugin.self)
}

/// Writes through a pointer to unmapped memory: SIGSEGV.
@inline(never)
func faultOnPurpose() {
  let unmapped = UnsafeMutablePointer<Int>(bitPattern: 16)
  unmapped?.pointee = 1
}
