import CWaylandProtocols
import FoundationEssentials
import Glibc
import GrowCore
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// Why the Wayland display cannot be used.
enum WaylandError: WordedError, Equatable {
  case cannotConnect(String, reason: String)

  var worded: Worded {
    switch self {
    case .cannotConnect(let name, let reason):
      Worded(
        Message("cannot connect to the Wayland display '{display}': {reason}"),
        ["display": name, "reason": reason])
    }
  }
}

/// The compositor itself, through libwayland-client, on one connection:
/// - idle and return: `ext_idle_notifier_v1` where offered (newer wlroots, KWin, Mutter 47),
///   `org_kde_kwin_idle` otherwise (sway 1.7 offers only that). The compositor honours idle
///   inhibitors (a playing video) itself;
/// - when asked (`watchToplevels`), the focused window from `zwlr_foreign_toplevel_manager_v1`
///   (wlroots compositors: river, labwc, Wayfire, sway): each toplevel's app_id, title and
///   `activated` state, applied at its `done`.
/// The display's socket sits on the daemon's loop: nothing is read until it is readable, so a
/// quiet session costs no wake-up; nothing waits for the compositor.
///
/// Everything that touches a C pointer is in here; the plugin sees the callbacks.
@MainActor
final class WaylandDisplay {
  enum IdleProtocol: String {
    case ext = "ext_idle_notifier_v1"
    case kde = "org_kde_kwin_idle"
  }

  /// Called once the globals are known: the idle protocol in use, or nil when the compositor
  /// offers neither (or no seat); whether the toplevel list is followed.
  var onReady: ((IdleProtocol?, Bool) -> Void)?
  /// The focused toplevel, or nil when none is (with `watchToplevels`).
  var onWindow: ((DesktopWindow?) -> Void)?
  var onIdle: (() -> Void)?
  var onActive: (() -> Void)?
  /// The connection broke (the compositor went away).
  var onLost: ((Worded) -> Void)?

  let name: String
  private let timeout: UInt32
  private var display: OpaquePointer?
  private var registry: OpaquePointer?
  private var sync: OpaquePointer?
  private var seat: OpaquePointer?
  private var idleGlobal: OpaquePointer?
  private var idleObject: OpaquePointer?
  private var globals: (seat: UInt32?, ext: UInt32?, kde: UInt32?, toplevels: UInt32?) = (
    nil, nil, nil, nil
  )
  private var toplevelVersion: UInt32 = 1
  private let watchToplevels: Bool
  private var toplevelManager: OpaquePointer?
  /// One per toplevel, by its handle's address; `pending` is what came since its last `done`.
  fileprivate struct Toplevel {
    let id: Int
    var appID = ""
    var title = ""
    var activated = false
    var minimized = false
  }
  private var toplevels: [UInt: (applied: Toplevel, pending: Toplevel)] = [:]
  private var nextToplevel = 1
  private var focused: DesktopWindow?
  private var watch: (any DescriptorWatch)?
  private(set) var idleProtocol: IdleProtocol?

  /// Connects to `name` (`wayland-1`, or an absolute socket path) and asks for the globals;
  /// the answer comes on the loop. `timeoutMilliseconds`: no input this long is idle.
  init(
    display name: String, timeoutMilliseconds: UInt32, watchToplevels: Bool,
    loop: any EventLoop
  ) throws(WaylandError) {
    self.name = name
    timeout = timeoutMilliseconds
    self.watchToplevels = watchToplevels
    guard let display = wl_display_connect(name) else {
      throw .cannotConnect(name, reason: String(cString: strerror(errno)))
    }
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
    onLost?(
      error == 0
        ? Worded(
          Message(
            "the Wayland display '{display}' went away: the compositor closed the connection"),
          ["display": name])
        : Worded(
          Message("the Wayland display '{display}' went away: {error}"),
          ["display": name, "error": String(cString: strerror(error))]))
  }

  // MARK: Globals

  fileprivate func global(name: UInt32, interface: String, version: UInt32) {
    switch interface {
    case "wl_seat" where globals.seat == nil: globals.seat = name
    case IdleProtocol.ext.rawValue: globals.ext = name
    case IdleProtocol.kde.rawValue: globals.kde = name
    case "zwlr_foreign_toplevel_manager_v1":
      globals.toplevels = name
      toplevelVersion = version
    default: break
    }
  }

  fileprivate func globalsDone() {
    if let sync { wl_callback_destroy(sync) }
    sync = nil
    guard let display, let registry else { return }
    let me = Unmanaged.passUnretained(self).toOpaque()
    if watchToplevels, let manager = globals.toplevels {
      // Version 3 at most: the events this build knows (`parent` came in 3).
      toplevelManager = OpaquePointer(
        wl_registry_bind(
          registry, manager, grow_zwlr_foreign_toplevel_manager_v1_interface(),
          min(toplevelVersion, 3)))
      zwlr_foreign_toplevel_manager_v1_add_listener(toplevelManager, Self.managerListener, me)
    }
    guard let seatName = globals.seat else {
      wl_display_flush(display)
      onReady?(nil, toplevelManager != nil)
      return
    }
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
    onReady?(idleProtocol, toplevelManager != nil)
  }

  // MARK: Toplevels

  /// Asks the compositor to minimise the toplevel; sway, for one, ignores it (the plugin's
  /// check says so).
  func minimize(_ window: DesktopWindow) {
    guard let display,
      let handle = toplevels.first(where: { String($0.value.applied.id) == window.id })?.key
    else { return }
    zwlr_foreign_toplevel_handle_v1_set_minimized(OpaquePointer(bitPattern: handle))
    wl_display_flush(display)
  }

  /// Asks the compositor to close the toplevel (the protocol's `close`: the client is asked,
  /// as by its close button, and may still ask to save).
  func requestClose(_ window: DesktopWindow) {
    guard let display,
      let handle = toplevels.first(where: { String($0.value.applied.id) == window.id })?.key
    else { return }
    zwlr_foreign_toplevel_handle_v1_close(OpaquePointer(bitPattern: handle))
    wl_display_flush(display)
  }

  /// Whether the toplevel is minimised now, as the compositor last said; nil once it is gone.
  func isMinimized(_ window: DesktopWindow) -> Bool? {
    toplevels.values.first { String($0.applied.id) == window.id }?.applied.minimized
  }

  fileprivate func toplevelCreated(_ handle: OpaquePointer?) {
    guard let handle else { return }
    let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(handle)))
    let toplevel = Toplevel(id: nextToplevel)
    nextToplevel += 1
    toplevels[key] = (toplevel, toplevel)
    zwlr_foreign_toplevel_handle_v1_add_listener(
      handle, Self.handleListener, Unmanaged.passUnretained(self).toOpaque())
  }

  fileprivate func toplevelChanged(_ key: UInt, _ change: (inout Toplevel) -> Void) {
    guard var entry = toplevels[key] else { return }
    change(&entry.pending)
    toplevels[key] = entry
  }

  fileprivate func toplevelDone(_ key: UInt) {
    guard var entry = toplevels[key] else { return }
    entry.applied = entry.pending
    toplevels[key] = entry
    publishFocus()
  }

  fileprivate func toplevelClosed(_ key: UInt) {
    guard toplevels.removeValue(forKey: key) != nil else { return }
    zwlr_foreign_toplevel_handle_v1_destroy(OpaquePointer(bitPattern: key))
    publishFocus()
  }

  /// The activated toplevel, as last applied; nil when none is (a focus change reports the old
  /// one's `done` and the new one's separately: in between, none or two may look activated).
  private func publishFocus() {
    let active = toplevels.values.map(\.applied).filter(\.activated).max { $0.id < $1.id }
    let window = active.map {
      DesktopWindow(id: String($0.id), windowClass: $0.appID, instance: "", title: $0.title)
    }
    guard window != focused else { return }
    focused = window
    onWindow?(window)
  }

  // MARK: Listeners: C function pointers without captures, the instance in `data`

  /// The instance behind a listener's `data`, passed as an address: the callback runs on the
  /// loop's thread (inside `wl_display_dispatch_pending`), never elsewhere.
  private static func instance(_ address: UInt) -> WaylandDisplay? {
    UnsafeMutableRawPointer(bitPattern: address).map {
      Unmanaged<WaylandDisplay>.fromOpaque($0).takeUnretainedValue()
    }
  }

  // Allocated once and never freed: libwayland keeps the pointer for the proxy's lifetime.
  private nonisolated(unsafe) static let registryListener = {
    let listener = UnsafeMutablePointer<wl_registry_listener>.allocate(capacity: 1)
    listener.initialize(
      to: wl_registry_listener(
        global: { data, _, name, interface, version in
          guard let interface else { return }
          let text = String(cString: interface)
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated {
            WaylandDisplay.instance(address)?.global(
              name: name, interface: text, version: version)
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
        return MainActor.assumeIsolated { WaylandDisplay.instance(address)?.globalsDone() }
      }))
    return listener
  }()

  private nonisolated(unsafe) static let kdeListener = {
    let listener = UnsafeMutablePointer<org_kde_kwin_idle_timeout_listener>.allocate(capacity: 1)
    listener.initialize(
      to: org_kde_kwin_idle_timeout_listener(
        idle: { data, _ in
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated { WaylandDisplay.instance(address)?.onIdle?() }
        },
        resumed: { data, _ in
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated { WaylandDisplay.instance(address)?.onActive?() }
        }))
    return listener
  }()

  private nonisolated(unsafe) static let extListener = {
    let listener = UnsafeMutablePointer<ext_idle_notification_v1_listener>.allocate(capacity: 1)
    listener.initialize(
      to: ext_idle_notification_v1_listener(
        idled: { data, _ in
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated { WaylandDisplay.instance(address)?.onIdle?() }
        },
        resumed: { data, _ in
          let address = UInt(bitPattern: data)
          return MainActor.assumeIsolated { WaylandDisplay.instance(address)?.onActive?() }
        }))
    return listener
  }()

  private nonisolated(unsafe) static let managerListener = {
    let listener = UnsafeMutablePointer<zwlr_foreign_toplevel_manager_v1_listener>.allocate(
      capacity: 1)
    listener.initialize(
      to: zwlr_foreign_toplevel_manager_v1_listener(
        toplevel: { data, _, handle in
          let address = UInt(bitPattern: data)
          let handleAddress = UInt(bitPattern: Int(bitPattern: handle.map { UnsafeRawPointer($0) }))
          MainActor.assumeIsolated {
            WaylandDisplay.instance(address)?.toplevelCreated(
              OpaquePointer(bitPattern: handleAddress))
          }
        },
        finished: { _, _ in }))
    return listener
  }()

  /// The handle's address, the key of `toplevels`.
  private nonisolated static func key(_ handle: OpaquePointer?) -> UInt {
    UInt(bitPattern: Int(bitPattern: handle.map { UnsafeRawPointer($0) }))
  }

  private nonisolated(unsafe) static let handleListener = {
    let listener = UnsafeMutablePointer<zwlr_foreign_toplevel_handle_v1_listener>.allocate(
      capacity: 1)
    listener.initialize(
      to: zwlr_foreign_toplevel_handle_v1_listener(
        title: { data, handle, title in
          let (address, key) = (UInt(bitPattern: data), WaylandDisplay.key(handle))
          let text = title.map { String(cString: $0) } ?? ""
          MainActor.assumeIsolated {
            WaylandDisplay.instance(address)?.toplevelChanged(key) { $0.title = text }
          }
        },
        app_id: { data, handle, appID in
          let (address, key) = (UInt(bitPattern: data), WaylandDisplay.key(handle))
          let text = appID.map { String(cString: $0) } ?? ""
          MainActor.assumeIsolated {
            WaylandDisplay.instance(address)?.toplevelChanged(key) { $0.appID = text }
          }
        },
        output_enter: { _, _, _ in },
        output_leave: { _, _, _ in },
        state: { data, handle, states in
          let (address, key) = (UInt(bitPattern: data), WaylandDisplay.key(handle))
          // An array of uint32 state values; `activated` is 2.
          var activated = false
          var minimized = false
          if let states, let values = states.pointee.data {
            let count = states.pointee.size / MemoryLayout<UInt32>.size
            let words = values.bindMemory(to: UInt32.self, capacity: count)
            activated = (0..<count).contains {
              words[$0] == ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_ACTIVATED.rawValue
            }
            minimized = (0..<count).contains {
              words[$0] == ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_MINIMIZED.rawValue
            }
          }
          MainActor.assumeIsolated {
            WaylandDisplay.instance(address)?.toplevelChanged(key) {
              $0.activated = activated
              $0.minimized = minimized
            }
          }
        },
        done: { data, handle in
          let (address, key) = (UInt(bitPattern: data), WaylandDisplay.key(handle))
          MainActor.assumeIsolated { WaylandDisplay.instance(address)?.toplevelDone(key) }
        },
        closed: { data, handle in
          let (address, key) = (UInt(bitPattern: data), WaylandDisplay.key(handle))
          MainActor.assumeIsolated { WaylandDisplay.instance(address)?.toplevelClosed(key) }
        },
        parent: { _, _, _ in }))
    return listener
  }()
}
