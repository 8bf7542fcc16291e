import GrowPluginKit

/// Test fixture: a library that loads fine (entry point, API version) and then faults in
/// `init(context:)` with SIGSEGV, as a plugin with a bad pointer would: the process that set it
/// up dies. `grow plugin install` and the daemon's start-up quarantine are tested with it.
public final class CrashesOnInitPlugin: GrowPlugin {
  public static let id = "crashes-on-init"
  public init(context: PluginContext) throws {
    context.log.warning("fixture: faulting in init")
    // A real fault, not raise(): a handler that returns (a crash reporter) would resume it.
    faultOnPurpose()
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(CrashesOnInitPlugin.self) }

/// Writes through a pointer to unmapped memory: SIGSEGV.
@inline(never)
func faultOnPurpose() {
  let unmapped = UnsafeMutablePointer<Int>(bitPattern: 16)
  unmapped?.pointee = 1
}
