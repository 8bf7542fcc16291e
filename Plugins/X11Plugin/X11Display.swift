import CX11
import Foundation

/// Why the X display cannot be used.
enum X11Error: Error, CustomStringConvertible {
  case cannotOpen(String)

  var description: String {
    switch self {
    case .cannotOpen(let name):
      "cannot open the X display '\(name)'; is the X server running and may this user use it?"
    }
  }
}

/// An X window id.
typealias XWindowID = UInt

/// What identifies a window to a person: its WM_CLASS and its title.
struct WindowInfo: Equatable {
  var id: XWindowID
  var instance: String
  var windowClass: String
  var title: String
  var pid: Int?

  /// The application's name as the history keeps it: the class, else the instance.
  var app: String { windowClass.isEmpty ? instance : windowClass }
}

/// What the X server told us, in our terms.
enum X11Notice {
  /// `_NET_ACTIVE_WINDOW` changed on the root window.
  case activeWindowChanged
  /// A window manager started or stopped (`_NET_SUPPORTING_WM_CHECK` or `_NET_SUPPORTED`).
  case windowManagerChanged
  /// A title property of a watched window changed.
  case titleChanged(XWindowID)
  /// The idle alarm fired: the IDLETIME counter reached or crossed the armed value.
  case idleAlarm(milliseconds: Int64)
  /// The recheck alarm fired: still idle after another threshold while an inhibitor held.
  case recheckAlarm(milliseconds: Int64)
}

/// The thin Swift face of Xlib, XSync and MIT-SCREEN-SAVER for the x11 plugin. Everything that
/// touches a C pointer is in here; nothing outside sees an `OpaquePointer`.
///
/// One connection, used on the daemon's event loop only.
@MainActor
final class X11Display {
  let name: String
  /// The connection's socket, for the daemon's `FileWatcher`.
  let descriptor: Int32
  let root: XWindowID

  private let display: OpaquePointer
  /// Set by Xlib's I/O-error exit handler (C) when the connection broke.
  /// nonisolated(unsafe): deinit frees it; nothing else runs by then.
  nonisolated(unsafe) private let ioErrorFlag: UnsafeMutablePointer<Int32>
  private var atoms: [String: Atom] = [:]
  private var syncEventBase: Int32 = 0
  private var idleCounter: XSyncCounter = 0
  private var alarm: XSyncAlarm = 0
  /// A second alarm, so that "input again" stays armed while we wait to look at the
  /// inhibitors once more.
  private var recheckAlarm: XSyncAlarm = 0
  private var closed = false

  private static var errorHandlerInstalled = false

  init(name: String) throws(X11Error) {
    if !Self.errorHandlerInstalled {
      grow_x11_install_error_handler()
      Self.errorHandlerInstalled = true
    }
    guard let display = XOpenDisplay(name) else { throw .cannotOpen(name) }
    self.name = name
    self.display = display
    ioErrorFlag = .allocate(capacity: 1)
    ioErrorFlag.initialize(to: 0)
    grow_x11_survive_io_errors(display, ioErrorFlag)
    descriptor = XConnectionNumber(display)
    root = XDefaultRootWindow(display)
    XSelectInput(display, root, PropertyChangeMask)
    setUpIdleCounter()
    XFlush(display)
  }

  deinit {
    ioErrorFlag.deallocate()
  }

  /// True once the X server went away; then nothing else may be called but `close()`.
  var connectionLost: Bool { ioErrorFlag.pointee != 0 }

  /// Closes the connection. After an I/O error Xlib only frees it (it skips the goodbye).
  func close() {
    guard !closed else { return }
    closed = true
    if alarm != 0, !connectionLost { XSyncDestroyAlarm(display, alarm) }
    if recheckAlarm != 0, !connectionLost { XSyncDestroyAlarm(display, recheckAlarm) }
    XCloseDisplay(display)
  }

  // MARK: Events

  /// Every event Xlib has read or can read without blocking, in our terms. Reading stops at
  /// an I/O error (check `connectionLost`).
  func pendingNotices() -> [X11Notice] {
    var notices: [X11Notice] = []
    let activeAtom = atom("_NET_ACTIVE_WINDOW")
    let windowManagerAtoms = [atom("_NET_SUPPORTING_WM_CHECK"), atom("_NET_SUPPORTED")]
    let titleAtoms = [atom("_NET_WM_NAME"), atom("WM_NAME")]
    while !connectionLost, XPending(display) > 0 {
      var event = XEvent()
      XNextEvent(display, &event)
      if event.type == PropertyNotify {
        let property = event.xproperty
        if property.window == root, property.atom == activeAtom {
          notices.append(.activeWindowChanged)
        } else if property.window == root, windowManagerAtoms.contains(property.atom) {
          notices.append(.windowManagerChanged)
        } else if property.window != root, titleAtoms.contains(property.atom) {
          notices.append(.titleChanged(property.window))
        }
      } else if syncEventBase != 0, event.type == syncEventBase + Int32(XSyncAlarmNotify) {
        let alarmEvent = withUnsafePointer(to: &event) { grow_x11_alarm_event($0) }
        let milliseconds = grow_x11_sync_value(alarmEvent.counter_value)
        if alarmEvent.alarm == alarm {
          notices.append(.idleAlarm(milliseconds: milliseconds))
        } else if recheckAlarm != 0, alarmEvent.alarm == recheckAlarm {
          notices.append(.recheckAlarm(milliseconds: milliseconds))
        }
      }
    }
    return notices
  }

  func flush() {
    if !connectionLost { XFlush(display) }
  }

  // MARK: Windows

  /// The focused window, or nil when there is none (0), no window manager says, or the id
  /// points at a window that no longer exists.
  func activeWindow() -> XWindowID? {
    guard let id = windowProperty(root, "_NET_ACTIVE_WINDOW"), id != 0 else { return nil }
    return id
  }

  /// Class, title and pid of `window`; nil when it was destroyed meanwhile.
  func info(of window: XWindowID) -> WindowInfo? {
    var hint = XClassHint()
    guard XGetClassHint(display, window, &hint) != 0 else {
      // No WM_CLASS (or BadWindow): still a window when it has a title.
      guard let title = title(of: window) else { return nil }
      return WindowInfo(
        id: window, instance: "", windowClass: "", title: title, pid: pid(of: window))
    }
    let instance = hint.res_name.map { String(cString: $0) } ?? ""
    let windowClass = hint.res_class.map { String(cString: $0) } ?? ""
    if let name = hint.res_name { XFree(name) }
    if let windowClass = hint.res_class { XFree(windowClass) }
    return WindowInfo(
      id: window, instance: instance, windowClass: windowClass, title: title(of: window) ?? "",
      pid: pid(of: window))
  }

  /// `_NET_WM_NAME` (UTF-8), else `WM_NAME` (STRING or COMPOUND_TEXT: xterm sets only that).
  func title(of window: XWindowID) -> String? {
    if let bytes = property(window, "_NET_WM_NAME", type: atom("UTF8_STRING")), !bytes.isEmpty {
      return String(decoding: bytes, as: UTF8.self)
    }
    var text = XTextProperty()
    guard XGetTextProperty(display, window, &text, XA_WM_NAME) != 0 else { return nil }
    defer { if let value = text.value { XFree(value) } }
    guard text.value != nil else { return "" }
    // Xutf8…, not Xmb…: the daemon may run in the C locale, and we want UTF-8 regardless.
    var list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    var count: Int32 = 0
    guard Xutf8TextPropertyToTextList(display, &text, &list, &count) >= 0, let list else {
      return ""
    }
    defer { XFreeStringList(list) }
    return (0..<Int(count)).compactMap { list[$0].map { String(cString: $0) } }.joined()
  }

  private func pid(of window: XWindowID) -> Int? {
    guard let bytes = property(window, "_NET_WM_PID", type: XA_CARDINAL), bytes.count >= 8
    else { return nil }
    return bytes.withUnsafeBytes { Int($0.loadUnaligned(as: Int.self)) }
  }

  /// Asks for PropertyNotify on `window` (title changes), or stops asking.
  func watchProperties(of window: XWindowID, _ watch: Bool) {
    XSelectInput(display, window, watch ? PropertyChangeMask : 0)
  }

  /// The window manager's name (`Openbox`, `i3`), from `_NET_SUPPORTING_WM_CHECK`.
  func windowManagerName() -> String? {
    guard let check = windowProperty(root, "_NET_SUPPORTING_WM_CHECK"), check != 0,
      let bytes = property(check, "_NET_WM_NAME", type: atom("UTF8_STRING"))
    else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Whether the window manager says it keeps `_NET_ACTIVE_WINDOW` up to date (EWMH
  /// `_NET_SUPPORTED`); without it no active window can be followed.
  func publishesActiveWindow() -> Bool {
    guard let supported = property(root, "_NET_SUPPORTED", type: XA_ATOM) else { return false }
    let wanted = atom("_NET_ACTIVE_WINDOW")
    // Format-32 properties arrive as C longs.
    return supported.withUnsafeBytes { Array($0.bindMemory(to: Int.self)) }
      .contains { UInt($0) == wanted }
  }

  /// Whether the MIT-SCREEN-SAVER extension is there (the idle fallback).
  var hasScreenSaverExtension: Bool {
    var eventBase: Int32 = 0
    var errorBase: Int32 = 0
    return XScreenSaverQueryExtension(display, &eventBase, &errorBase) != 0
  }

  /// Asks the window manager to minimise `window` (ICCCM WM_CHANGE_STATE).
  func iconify(_ window: XWindowID) {
    XIconifyWindow(display, window, XDefaultScreen(display))
    XFlush(display)
  }

  /// Whether `window` is minimised: WM_STATE Iconic (3).
  func isIconic(_ window: XWindowID) -> Bool {
    let wmState = atom("WM_STATE")
    guard let bytes = property(window, "WM_STATE", type: wmState), bytes.count >= 8 else {
      return false
    }
    return bytes.withUnsafeBytes { $0.loadUnaligned(as: Int.self) } == 3
  }

  // MARK: Idle

  /// Whether the server has the SYNC IDLETIME counter (event-driven idle alarms).
  var hasIdleAlarms: Bool { idleCounter != 0 }

  /// Milliseconds since the last input: the IDLETIME counter, else MIT-SCREEN-SAVER.
  func idleMilliseconds() -> Int64? {
    if idleCounter != 0 {
      var value = XSyncValue()
      if XSyncQueryCounter(display, idleCounter, &value) != 0 {
        return grow_x11_sync_value(value)
      }
    }
    var eventBase: Int32 = 0
    var errorBase: Int32 = 0
    guard XScreenSaverQueryExtension(display, &eventBase, &errorBase) != 0,
      let info = XScreenSaverAllocInfo()
    else { return nil }
    defer { XFree(info) }
    guard XScreenSaverQueryInfo(display, root, info) != 0 else { return nil }
    return Int64(info.pointee.idle)
  }

  /// Arms the one idle alarm: `becomingIdle` fires when IDLETIME reaches `milliseconds`;
  /// otherwise it fires when IDLETIME drops below it (input again).
  func armIdleAlarm(becomingIdle: Bool, milliseconds: Int64) {
    alarm = arm(alarm, positive: becomingIdle, milliseconds: milliseconds)
  }

  /// Arms the recheck alarm: fires when IDLETIME reaches `milliseconds`.
  func armRecheckAlarm(milliseconds: Int64) {
    recheckAlarm = arm(recheckAlarm, positive: true, milliseconds: milliseconds)
  }

  /// Destroys the recheck alarm (input came): left armed, it would fire in a later idle spell.
  func cancelRecheckAlarm() {
    guard recheckAlarm != 0 else { return }
    if !connectionLost { XSyncDestroyAlarm(display, recheckAlarm) }
    recheckAlarm = 0
  }

  /// Creates (`existing == 0`) or changes an absolute alarm on IDLETIME; returns its id.
  private func arm(_ existing: XSyncAlarm, positive: Bool, milliseconds: Int64) -> XSyncAlarm {
    guard idleCounter != 0 else { return existing }
    var attributes = XSyncAlarmAttributes()
    attributes.trigger.counter = idleCounter
    attributes.trigger.value_type = XSyncAbsolute
    XSyncIntToValue(&attributes.trigger.wait_value, Int32(clamping: milliseconds))
    attributes.trigger.test_type =
      positive ? XSyncPositiveComparison : XSyncNegativeComparison
    XSyncIntToValue(&attributes.delta, 0)
    attributes.events = 1
    let mask = UInt(
      XSyncCACounter | XSyncCAValueType | XSyncCAValue | XSyncCATestType | XSyncCADelta
        | XSyncCAEvents)
    var armed = existing
    if armed == 0 {
      armed = XSyncCreateAlarm(display, mask, &attributes)
    } else {
      XSyncChangeAlarm(display, armed, mask, &attributes)
    }
    XFlush(display)
    return armed
  }

  private func setUpIdleCounter() {
    var eventBase: Int32 = 0
    var errorBase: Int32 = 0
    var major: Int32 = 0
    var minor: Int32 = 0
    guard XSyncQueryExtension(display, &eventBase, &errorBase) != 0,
      XSyncInitialize(display, &major, &minor) != 0
    else { return }
    syncEventBase = eventBase
    var count: Int32 = 0
    guard let counters = XSyncListSystemCounters(display, &count) else { return }
    defer { XSyncFreeSystemCounterList(counters) }
    for index in 0..<Int(count) {
      if let name = counters[index].name, String(cString: name) == "IDLETIME" {
        idleCounter = counters[index].counter
      }
    }
  }

  // MARK: Properties

  private func atom(_ name: String) -> Atom {
    if let known = atoms[name] { return known }
    let value = XInternAtom(display, name, 0)
    atoms[name] = value
    return value
  }

  /// A WINDOW/32 property's first value. Format-32 values arrive as C longs (8 bytes here).
  private func windowProperty(_ window: XWindowID, _ name: String) -> XWindowID? {
    guard let bytes = property(window, name, type: XA_WINDOW), bytes.count >= 8 else {
      return nil
    }
    return bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt.self) }
  }

  /// A property's raw bytes, or nil when absent, of another type, or the window is gone.
  private func property(_ window: XWindowID, _ name: String, type: Atom) -> [UInt8]? {
    var actualType: Atom = 0
    var format: Int32 = 0
    var items: UInt = 0
    var bytesAfter: UInt = 0
    var data: UnsafeMutablePointer<UInt8>?
    let status = XGetWindowProperty(
      display, window, atom(name), 0, 4096, 0, type, &actualType, &format, &items, &bytesAfter,
      &data)
    defer { if let data { XFree(data) } }
    guard status == Success, actualType == type, let data else { return nil }
    // Format 32 is delivered as C longs, 16 as shorts.
    let itemSize = format == 32 ? MemoryLayout<Int>.size : Int(format) / 8
    return Array(UnsafeBufferPointer(start: data, count: Int(items) * itemSize))
  }
}
