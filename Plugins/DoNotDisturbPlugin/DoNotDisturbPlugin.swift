import GrowDBus
import GrowPluginKit

/// Do-Not-Disturb while focusing. This slot finds out which notification server runs (which
/// decides how DND is switched); switching it is built on this.
public final class DoNotDisturbPlugin: GrowPlugin {
  public static let id = "dnd"
  public static let summary = "Do-Not-Disturb during focus (detects the notification server)"

  public init(context: PluginContext) throws {
    guard let bus = context.sessionBus else {
      throw PluginError.unavailable("no session bus")
    }
    let call = try BusMessage.methodCall(
      destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
      interface: "org.freedesktop.Notifications", member: "GetServerInformation")
    let log = context.log
    bus.call(call, timeout: 2000) { result in
      switch result {
      case .success(let reply):
        let fields = reply.arguments.compactMap(\.stringValue)
        log.info("notification server: \(fields.prefix(3).joined(separator: " "))")
      case .failure(let error):
        log.warning("no notification server answers (\(error.name)); nothing to silence yet")
      }
    }
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(DoNotDisturbPlugin.self) }
