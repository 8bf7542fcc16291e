import GrowDBus
import GrowLoop
@_spi(GrowBuiltIn) import GrowPluginKit

/// One notification server's own Do-Not-Disturb switch; each class below names the D-Bus
/// property or method its server offers for it and how the server tells of a change.
///
/// Reads and writes are asynchronous on the daemon's loop; each waits at most `timeout`
/// milliseconds for the server (shorter while the daemon stops).
@MainActor
protocol DndBackend: AnyObject {
  /// What `Backend` shows: `dunst`, `xfce4-notifyd`, `swaync`, `mako`, `gnome`, `kde`.
  var name: String { get }
  /// The server's DND state; nil when it could not be read.
  func read(timeout: Int32, _ done: @escaping (Bool?) -> Void)
  /// Switches it; `done(false)` when the server refused or did not answer in time.
  func write(_ enabled: Bool, timeout: Int32, _ done: @escaping (Bool) -> Void)
  /// Calls `changed` when the server's state changes, whoever changed it (where it says so).
  func watch(_ changed: @escaping (Bool) -> Void)
}

/// The backend for a server, from the name `GetServerInformation` gave (the table is
/// `DoNotDisturbBackend` in GrowPluginKit, which `grow doctor` reads too).
@MainActor
func makeBackend(serverName: String, bus: BusConnection, context: PluginContext)
  -> (any DndBackend)?
{
  switch DoNotDisturbBackend(serverName: serverName) {
  case .dunst: DunstBackend(bus: bus, context: context)
  case .xfce: XfceBackend(bus: bus, context: context)
  case .swaync: SwayncBackend(bus: bus, context: context)
  case .mako: MakoBackend(bus: bus)
  case .kde: PlasmaBackend(bus: bus)
  case .gnome: GnomeBackend(loop: context.loop)
  case nil: nil
  // A server a newer GrowKit names (the kit is built with library evolution, see
  // Sources/GrowKit/Package.swift) has no backend in this plugin yet.
  @unknown default: nil
  }
}

/// The one call that switches `backend` back to `enabled`, for the emergency exit (from any
/// thread, on a connection of its own): dunst, xfce4-notifyd and swaync take one call; mako's
/// modes are a list, so its current one is read first (`MakoBackend.emergencyWriteCall`). KDE
/// releases its inhibition when the daemon's connection closes; GNOME is left to the next
/// start, which finds the restore record.
func emergencyWrite(backend: String, enabled: Bool, busAddress: String) -> BusMessage? {
  switch DoNotDisturbBackend(rawValue: backend) {
  case .dunst, .xfce, .swaync: DoNotDisturbBackend(rawValue: backend)?.writeCall(enabled)
  case .mako: MakoBackend.emergencyWriteCall(enabled, busAddress: busAddress)
  case .kde, .gnome, nil: nil
  @unknown default: nil
  }
}

/// Reads a server's switch with the kit's call (`DoNotDisturbBackend.readCall`); nil when it
/// did not answer in time or said something else.
@MainActor
private func readSwitch(
  _ backend: DoNotDisturbBackend, on bus: BusConnection, timeout: Int32,
  _ done: @escaping (Bool?) -> Void
) {
  guard let message = backend.readCall() else { return done(nil) }
  bus.call(message, timeout: timeout) { done(backend.switchState(in: $0)) }
}

/// An asynchronous D-Bus call; a failed call is nil.
@MainActor
private func call(
  _ bus: BusConnection, _ message: BusMessage?, timeout: Int32,
  _ done: @escaping ([BusValue]?) -> Void
) {
  guard let message else { return done(nil) }
  bus.call(message, timeout: timeout) { result in done(try? result.get().arguments) }
}

@MainActor
private func call(
  _ bus: BusConnection, _ destination: String, _ path: String, _ interface: String,
  _ member: String, _ arguments: [BusValue] = [], timeout: Int32,
  _ done: @escaping ([BusValue]?) -> Void
) {
  call(
    bus,
    try? BusMessage.methodCall(
      destination: destination, path: path, interface: interface, member: member,
      arguments: arguments), timeout: timeout, done)
}

private let notificationsName = "org.freedesktop.Notifications"
private let notificationsPath = "/org/freedesktop/Notifications"
private let propertiesInterface = "org.freedesktop.DBus.Properties"

/// dunst: the read-write property `paused` on `org.dunstproject.cmd0`, with PropertiesChanged.
/// dunst 1.9 queues even critical notifications while paused.
final class DunstBackend: DndBackend {
  let name = DoNotDisturbBackend.dunst.rawValue
  private let bus: BusConnection
  nonisolated private static let interface = "org.dunstproject.cmd0"
  /// Where the signals are subscribed: they end when the plugin stops.
  private let context: PluginContext
  init(bus: BusConnection, context: PluginContext) {
    self.bus = bus
    self.context = context
  }

  func read(timeout: Int32, _ done: @escaping (Bool?) -> Void) {
    readSwitch(.dunst, on: bus, timeout: timeout, done)
  }

  func write(_ enabled: Bool, timeout: Int32, _ done: @escaping (Bool) -> Void) {
    call(bus, DoNotDisturbBackend.dunst.writeCall(enabled), timeout: timeout) { done($0 != nil) }
  }

  func watch(_ changed: @escaping (Bool) -> Void) {
    let rule =
      "type='signal',sender='\(notificationsName)',path='\(notificationsPath)',"
      + "interface='\(propertiesInterface)',member='PropertiesChanged'"
    _ = try? context.onSignal(match: rule) { message in
      let arguments = message.arguments
      guard arguments.first?.stringValue == Self.interface,
        let paused = arguments.dropFirst().first?.vardictEntries?["paused"]?.boolValue
      else { return }
      changed(paused)
    }
  }
}

/// xfce4-notifyd: xfconf channel `xfce4-notifyd`, property `/do-not-disturb` (absent until
/// someone sets it, which means off). Critical notifications still show.
final class XfceBackend: DndBackend {
  let name = DoNotDisturbBackend.xfce.rawValue
  private let bus: BusConnection
  nonisolated private static let service = "org.xfce.Xfconf"
  nonisolated private static let path = "/org/xfce/Xfconf"
  nonisolated private static let channel = "xfce4-notifyd"
  nonisolated private static let property = "/do-not-disturb"
  /// Where the signals are subscribed: they end when the plugin stops.
  private let context: PluginContext
  init(bus: BusConnection, context: PluginContext) {
    self.bus = bus
    self.context = context
  }

  // "Property does not exist" reads as off: nobody has switched DND yet (the kit's
  // switchState).
  func read(timeout: Int32, _ done: @escaping (Bool?) -> Void) {
    readSwitch(.xfce, on: bus, timeout: timeout, done)
  }

  func write(_ enabled: Bool, timeout: Int32, _ done: @escaping (Bool) -> Void) {
    call(bus, DoNotDisturbBackend.xfce.writeCall(enabled), timeout: timeout) { done($0 != nil) }
  }

  func watch(_ changed: @escaping (Bool) -> Void) {
    // Only xfconfd's own signals: the bus resolves the sender to the name's owner.
    let rule =
      "type='signal',sender='\(Self.service)',interface='\(Self.service)',"
      + "member='PropertyChanged'"
    _ = try? context.onSignal(match: rule) { message in
      let arguments = message.arguments
      guard arguments.count == 3, arguments[0].stringValue == Self.channel,
        arguments[1].stringValue == Self.property
      else { return }
      changed(arguments[2].unwrapped.boolValue ?? false)
    }
  }
}

/// SwayNotificationCenter: `GetDnd`/`SetDnd` on its control interface, `Subscribe` signal.
final class SwayncBackend: DndBackend {
  let name = DoNotDisturbBackend.swaync.rawValue
  private let bus: BusConnection
  nonisolated private static let service = "org.erikreider.swaync.cc"
  nonisolated private static let path = "/org/erikreider/swaync/cc"
  /// Where the signals are subscribed: they end when the plugin stops.
  private let context: PluginContext
  init(bus: BusConnection, context: PluginContext) {
    self.bus = bus
    self.context = context
  }

  func read(timeout: Int32, _ done: @escaping (Bool?) -> Void) {
    readSwitch(.swaync, on: bus, timeout: timeout, done)
  }

  func write(_ enabled: Bool, timeout: Int32, _ done: @escaping (Bool) -> Void) {
    call(bus, DoNotDisturbBackend.swaync.writeCall(enabled), timeout: timeout) { done($0 != nil) }
  }

  func watch(_ changed: @escaping (Bool) -> Void) {
    let rule =
      "type='signal',sender='\(Self.service)',interface='\(Self.service)',member='Subscribe'"
    _ = try? context.onSignal(match: rule) { message in
      guard message.arguments.count == 3, let dnd = message.arguments[1].boolValue else { return }
      changed(dnd)
    }
  }
}

/// mako: the `do-not-disturb` mode, by convention. It only hides anything if the person's mako
/// config has a `[mode=do-not-disturb]` section with `invisible=1`. mako sends no signal.
final class MakoBackend: DndBackend {
  let name = DoNotDisturbBackend.mako.rawValue
  private let bus: BusConnection
  /// The emergency exit's read: short, so that read and write stay within the exit's budget.
  nonisolated static let emergencyReadTimeout: Int32 = 500
  init(bus: BusConnection) { self.bus = bus }

  /// For the emergency exit (any thread): reads mako's modes on a connection of its own and
  /// returns the SetModes call that puts Grow's mode as `enabled`; nil when mako does not answer
  /// in `emergencyReadTimeout` (the record then waits for the next start).
  nonisolated static func emergencyWriteCall(_ enabled: Bool, busAddress: String) -> BusMessage? {
    guard let list = DoNotDisturbBackend.mako.readCall(),
      let reply = try? BusConnection.callOnce(
        list, address: busAddress, timeout: emergencyReadTimeout),
      let modes = DoNotDisturbBackend.makoModes(in: reply)
    else { return nil }
    return DoNotDisturbBackend.mako.writeCall(enabled, makoModes: modes)
  }

  private func modes(timeout: Int32, _ done: @escaping ([String]?) -> Void) {
    guard let list = DoNotDisturbBackend.mako.readCall() else { return done(nil) }
    bus.call(list, timeout: timeout) { done(try? DoNotDisturbBackend.makoModes(in: $0.get())) }
  }

  func read(timeout: Int32, _ done: @escaping (Bool?) -> Void) {
    readSwitch(.mako, on: bus, timeout: timeout, done)
  }

  func write(_ enabled: Bool, timeout: Int32, _ done: @escaping (Bool) -> Void) {
    modes(timeout: timeout) { [bus] current in
      guard let current else { return done(false) }
      call(
        bus, DoNotDisturbBackend.mako.writeCall(enabled, makoModes: current), timeout: timeout
      ) { done($0 != nil) }
    }
  }

  func watch(_ changed: @escaping (Bool) -> Void) {}
}

/// KDE Plasma: `Inhibit` returns a cookie that holds DND until `UnInhibit`, or until this
/// connection closes, so a crashed daemon cannot leave Plasma silenced. The daemon's session
/// bus connection lives as long as the daemon, which is what holds the inhibition.
final class PlasmaBackend: DndBackend {
  let name = DoNotDisturbBackend.kde.rawValue
  private let bus: BusConnection
  private var cookie: UInt32?
  init(bus: BusConnection) { self.bus = bus }

  func read(timeout: Int32, _ done: @escaping (Bool?) -> Void) {
    call(
      bus, notificationsName, notificationsPath, propertiesInterface, "Get",
      [.string(notificationsName), .string("Inhibited")], timeout: timeout
    ) { [weak self] in done($0?.first?.unwrapped.boolValue ?? (self?.cookie != nil)) }
  }

  func write(_ enabled: Bool, timeout: Int32, _ done: @escaping (Bool) -> Void) {
    if enabled {
      guard cookie == nil else { return done(true) }
      call(
        bus, notificationsName, notificationsPath, notificationsName, "Inhibit",
        [.string("grow"), .string("Focus session"), .vardict([:])], timeout: timeout
      ) { [weak self] reply in
        guard case .uint32(let cookie)? = reply?.first else { return done(false) }
        self?.cookie = cookie
        done(true)
      }
    } else {
      guard let cookie else { return done(true) }
      self.cookie = nil
      call(
        bus, notificationsName, notificationsPath, notificationsName, "UnInhibit",
        [.uint32(cookie)], timeout: timeout
      ) { done($0 != nil) }
    }
  }

  func watch(_ changed: @escaping (Bool) -> Void) {}
}

/// GNOME Shell: GSettings `org.gnome.desktop.notifications show-banners` (false = DND).
/// Critical notifications still show.
final class GnomeBackend: DndBackend {
  let name = DoNotDisturbBackend.gnome.rawValue
  private let showBanners = GSettingsBoolean(
    schema: "org.gnome.desktop.notifications", key: "show-banners")
  private let loop: any EventLoop

  init(loop: any EventLoop) { self.loop = loop }

  func read(timeout: Int32, _ done: @escaping (Bool?) -> Void) {
    done(showBanners.map { !$0.value })
  }

  func write(_ enabled: Bool, timeout: Int32, _ done: @escaping (Bool) -> Void) {
    guard let showBanners else { return done(false) }
    showBanners.set(!enabled, on: loop, timeout: Double(timeout) / 1000, done)
  }

  func watch(_ changed: @escaping (Bool) -> Void) {}
}

/// Why no notification server could be asked which it is.
struct DndLookupFailure: Error {
  /// The D-Bus error name (`org.freedesktop.DBus.Error.ServiceUnknown`, …).
  let reason: String
}

/// Finds the notification server and its backend, and hears it come and go: the seam between
/// the plugin's restore policy and the bus (its tests script it).
@MainActor
protocol DndServerLookup: AnyObject {
  /// The running server's name (from `GetServerInformation`) and its backend, nil when Grow
  /// has none for it.
  func find(_ done: @escaping (Result<(String, (any DndBackend)?), DndLookupFailure>) -> Void)
  /// Calls `changed(true)` when a server takes the notifications name, `false` when it leaves.
  func onPresenceChanged(_ changed: @escaping (Bool) -> Void)
}

/// The server on the session bus.
final class BusDndServerLookup: DndServerLookup {
  private let bus: BusConnection
  /// Where the signals are subscribed: they end when the plugin stops.
  private let context: PluginContext
  init(bus: BusConnection, context: PluginContext) {
    self.bus = bus
    self.context = context
  }

  func find(_ done: @escaping (Result<(String, (any DndBackend)?), DndLookupFailure>) -> Void) {
    guard
      let call = try? BusMessage.methodCall(
        destination: notificationsName, path: notificationsPath, interface: notificationsName,
        member: "GetServerInformation")
    else { return done(.failure(DndLookupFailure(reason: "cannot make the call"))) }
    bus.call(call, timeout: 3000) { [bus, context] result in
      switch result {
      case .success(let reply):
        let name = reply.arguments.first?.stringValue ?? "?"
        done(.success((name, makeBackend(serverName: name, bus: bus, context: context))))
      case .failure(let error):
        done(.failure(DndLookupFailure(reason: error.name)))
      }
    }
  }

  func onPresenceChanged(_ changed: @escaping (Bool) -> Void) {
    let rule =
      "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
      + "member='NameOwnerChanged',arg0='\(notificationsName)'"
    _ = try? context.onSignal(match: rule) { message in
      guard message.arguments.count == 3, let owner = message.arguments[2].stringValue else {
        return
      }
      changed(!owner.isEmpty)
    }
  }
}
