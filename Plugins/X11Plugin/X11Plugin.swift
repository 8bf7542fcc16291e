import GrowPluginKit

/// The X11 idle and active-window monitor. This slot checks that an X display is there; the
/// monitoring itself (distractions, pausing when away) is built on it.
public final class X11Plugin: GrowPlugin {
  public static let id = "x11"
  public static let summary = "X11 idle and active-window monitor (checks for a display)"

  public init(context: PluginContext) throws {
    let display = context.environment["DISPLAY"] ?? ""
    guard !display.isEmpty else {
      let wayland = !(context.environment["WAYLAND_DISPLAY"] ?? "").isEmpty
      throw PluginError.unavailable(
        wayland
          ? "this is a Wayland session without XWayland (DISPLAY is not set)"
          : "DISPLAY is not set; the X11 monitor needs an X session")
    }
    context.log.debug("X display \(display)")
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(X11Plugin.self) }
