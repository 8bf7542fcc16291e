import CWaylandProtocols
import Foundation
import GrowCore
import GrowLoop

/// Why the Wayland display cannot be used.
enum WaylandError: Error, Equatable, CustomStringConvertible {
  case cannotConnect(String)

  var description: String {
    switch self {
    case .cannotConnect(let name):
      "cannot connect to the Wayland display '\(name)': \(String(cString: strerror(errno)))"
    }
  }
}

/// Idle and return from the compositor itself, through libwayland-client:
/// `ext_idle_notifier_v1` where offered (newer wlroots, KWin, Mutter 47), `org_kde_kwin_idle`
/// otherwise (sway 1.7 offers only that). The compositor honours idle inhibitors (a playing
/// video) itself. The display's socket sits on the daemon's loop: nothing is read until it is
/// readable, so a quiet session costs no wake-up; nothing waits for the compositor.
///
/// Everything that touches a C pointer is in here; the plugin sees `onIdle` and `onActive`.
@MainActor
final class WaylandIdle {
  enum IdleProtocol: String {
    case ext = "ext_idle_notifier_v1"
    case kde = "org_kde_kwin_idle"
  }

  /// Called once the globals are known: the protocol in use, or nil when the compositor
  /// offers neither (or no seat).
  var onReady: ((IdleProtocol?) -> Void)?
  var onIdle: (() -> Void)?
  var onActive: (() -> Void)?
  /// The connection broke (the compositor went away).
  var onLost: ((String) -> Void)?

  let name: String
  private let timeout: UInt32
  private var display: OpaquePointer?
  private var registry: OpaquePointer?
  private var sync: OpaquePointer?
  private var seat: OpaquePointer?
  private var idleGlobal: OpaquePointer?
  private var idleObject: OpaquePointer?
  private var globals: (seat: UInt32?, ext: UInt32?, kde: UInt32?) = (nil, nil, nil)
  private var watch: (any DescriptorWatch)?
  private(set) var idleProtocol: IdleProtocol?

  /// Connects to `name` (`wayland-1`, or an absolute socket path) and asks for the globals;
  /// the answer comes on the loop. `timeoutMilliseconds`: no input this long is idle.
  init(display name: String, timeoutMilliseconds: UInt32, loop: any EventLoop)
    throws(WaylandError)
  {
    self.name = name
    timeout = timeoutMilliseconds
    guard let display = wl_display_connect(name) else { throw .cannotConnect(name) }
    self.display = display
    let me = Unmanaged.passUnretained(self).toOpaque()
    registry = wl_display_get_registry(display)
    wl_registry_add_listener(registry, Self.registryListener, me)
    // The sync's `done` comes after every global the registry announces at bind time.
    sync = wl_display_sync(display)
    wl_callback_add_listener(sync, Self.syncListener, me)
    watch = loop.watch(wl_display_get_fd(display), for: .readable) { [weak self] _ in
      self?.readable()
    }
    wl_display_flush(display)
  }

  /// Destroys everything and disconnects; no callback comes afterwards.
  func close() {
    watch?.cancel()
    watch = nil
    guard let display else { return }
    wl_display_disconnect(display)
    self.display = nil
  }

  // MARK: The loop's half of libwayland's read protocol

  private func readable() {
    guard let display else { return }
    while wl_display_prepare_read(display) != 0 {
      guard wl_display_dispatch_pending(display) >= 0 else { return lost() }
    }
    // Reads what is there without waiting (libwayland reads with MSG_DONTWAIT).
    guard wl_display_read_events(display) >= 0, self.display != nil,
      wl_display_dispatch_pending(display) >= 0
    else { return lost() }
    wl_display_flush(display)
  }

  private func lost() {
    let error = display.map { wl_display_get_error($0) } ?? 0
    close()
    let reason =
      error == 0 ? "the compositor closed the connection" : String(cString: strerror(error))
    onLost?("the Wayland display '\(name)' went away: \(reason)")
  }

  // MARK: Globals

  fileprivate func global(name: UInt32, interface: String) {
    switch interface {
    case "wl_seat" where globals.seat == nil: globals.seat = name
    case IdleProtocol.ext.rawValue: globals.ext = name
    case IdleProtocol.kde.rawValue: globals.kde = name
    default: break
    }
  }

  fileprivate func globalsDone() {
    if let sync { wl_callback_destroy(sync) }
    sync = nil
    guard let display, let registry, let seatName = globals.seat else {
      onReady?(nil)
      return
    }
    let me = Unmanaged.passUnretained(self).toOpaque()
    seat = OpaquePointer(wl_registry_bind(registry, seatName, grow_wl_seat_interface(), 1))
    if let ext = globals.ext {
      idleGlobal = OpaquePointer(
        wl_registry_bind(registry, ext, grow_ext_idle_notifier_v1_interface(), 1))
      idleObject = ext_idle_notifier_v1_get_idle_notification(idleGlobal, timeout, seat)
      ext_idle_notification_v1_add_listener(idleObject, Self.extListener, me)
      idleProtocol = .ext
    } else if let kde = globals.kde {
      idleGlobal = OpaquePointer(
        wl_registry_bind(registry, kde, grow_org_kde_kwin_idle_interface(), 1))
      idleObject = org_kde_kwin_idle_get_idle_timeout(idleGlobal, seat, timeout)
      org_kde_kwin_idle_timeout_add_listener(idleObject, Self.kdeListener, me)
      idleProtocol = .kde
    }
    wl_display_flush(display)
    onReady?(idleProtocol)
  }

  // MARK: Listeners: C function pointers without captures, the instance in `data`

  /// The instance behind a listener's `data`, passed as an address: the callback runs on the
  /// loop's thread (inside `wl_display_dispatch_pending`), never elsewhere.
  private static func instance(_ address: UInt) -> WaylandIdle? {
    UnsafeMutableRawPointer(bitPattern: address).map {
      Unmanaged<WaylandIdle>.fromOpaque($0).takeUnretainedValue()
    }
  }

  // Allocated once and never freed: libwayland keeps the pointer for the proxy's lifetime.
  private nonisolated(unsafe) static let registryListener = {
    let listener = UnsafeMutablePointer<wl_registry_listener>.allocate(capacity: 1)
    listener.initialize(
      to: wl_registry_listener(
        global: { data, _, name, interface, _ in
          guard let interface else { return }
          let text = String(cString: interface)
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated {
            WaylandIdle.instance(address)?.global(name: name, interface: text)
          }
        },
        global_remove: { _, _, _ in }))
    return listener
  }()

  private nonisolated(unsafe) static let syncListener = {
    let listener = UnsafeMutablePointer<wl_callback_listener>.allocate(capacity: 1)
    listener.initialize(
      to: wl_callback_listener(done: { data, _, _ in
        let address = UInt(bitPattern: data)
        return MainActor.assumeIsolated { WaylandIdle.instance(address)?.globalsDone() }
      }))
    return listener
  }()

  private nonisolated(unsafe) static let kdeListener = {
    let listener = UnsafeMutablePointer<org_kde_kwin_idle_timeout_listener>.allocate(capacity: 1)
    listener.initialize(
      to: org_kde_kwin_idle_timeout_listener(
        idle: { data, _ in
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated { WaylandIdle.instance(address)?.onIdle?() }
        },
        resumed: { data, _ in
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated { WaylandIdle.instance(address)?.onActive?() }
        }))
    return listener
  }()

  private nonisolated(unsafe) static let extListener = {
    let listener = UnsafeMutablePointer<ext_idle_notification_v1_listener>.allocate(capacity: 1)
    listener.initialize(
      to: ext_idle_notification_v1_listener(
        idled: { data, _ in
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated { WaylandIdle.instance(address)?.onIdle?() }
        },
        resumed: { data, _ in
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated { WaylandIdle.instance(address)?.onActive?() }
        }))
    return listener
  }()
}
