import CX11
import Dispatch
import FoundationEssentials
import Glibc
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// Why the X display cannot be used.
enum X11Error: WordedError {
  case cannotOpen(String)

  var worded: Worded {
    switch self {
    case .cannotOpen(let name):
      Worded(
        Message(
          "cannot open the X display '{display}'; is the X server running and may this user use it?"
        ), ["display": name])
    }
  }
}

/// An X window id.
typealias XWindowID = UInt32

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
enum X11Notice: Equatable {
  /// `_NET_ACTIVE_WINDOW` changed on the root window.
  case activeWindowChanged
  /// A window manager started or stopped (`_NET_SUPPORTING_WM_CHECK` or `_NET_SUPPORTED`).
  case windowManagerChanged
  /// A title property of a watched window changed.
  case titleChanged(XWindowID)
  /// The idle alarm fired: the IDLETIME counter reached or crossed the armed value.
  case idleAlarm(milliseconds: Int64)
}

/// What the window manager says of itself.
struct WindowManagerFacts: Equatable {
  /// `Openbox`, `i3`; nil without a window manager.
  var name: String?
  /// Whether it keeps `_NET_ACTIVE_WINDOW` up to date (EWMH `_NET_SUPPORTED`).
  var publishesActiveWindow: Bool
  /// i3's IPC socket, from the root window's `I3_SOCKET_PATH` (what `i3 --get-socketpath`
  /// reads); nil under any other window manager.
  var i3Socket: String? = nil
  /// Whether it lists `_NET_CLOSE_WINDOW` in `_NET_SUPPORTED` (dwm, for one, does not).
  var takesCloseRequests = false
}

/// What the x11 plugin asks of an X server. Every question is answered later, on the loop,
/// through its closure (or never, when the connection breaks); nothing here waits. The plugin's
/// distraction and away logic sees only this, so it can be driven without a server.
@MainActor
protocol X11Connection: AnyObject {
  /// The connection's socket, for the daemon's `FileWatcher`.
  var descriptor: Int32 { get }
  /// True once the server went away; then nothing else may be called but `close()`.
  var connectionLost: Bool { get }
  /// Whether the oldest question has waited longer than `X11Display.replyDeadline`; see
  /// `onAnsweringChanged`.
  var answering: Bool { get }
  /// Called when `answering` changes.
  var onAnsweringChanged: ((Bool) -> Void)? { get set }
  /// Known once `whenReady` called back.
  var hasIdleAlarms: Bool { get }
  var hasScreenSaverExtension: Bool { get }

  /// Calls `ready` once the connection is set up (atoms and extensions known).
  func whenReady(_ ready: @escaping () -> Void)
  /// Hands the replies that arrived to their closures and returns what at most `limit` events
  /// said; `more` when it stopped at the limit.
  func take(limit: Int) -> (notices: [X11Notice], more: Bool)
  /// Sends what was asked; true when something was written (the write may have read more
  /// from the server, which then waits in memory: take another turn).
  func flush() -> Bool
  func close()

  func readActiveWindow(_ done: @escaping (XWindowID?) -> Void)
  func readInfo(of window: XWindowID, _ done: @escaping (WindowInfo?) -> Void)
  func readTitle(of window: XWindowID, _ done: @escaping (String?) -> Void)
  func readWindowManager(_ done: @escaping (WindowManagerFacts) -> Void)
  func readIsHidden(_ window: XWindowID, _ done: @escaping (Bool?) -> Void)
  func readIdleMilliseconds(_ done: @escaping (Int64?) -> Void)
  func watchProperties(of window: XWindowID, _ watch: Bool)
  func iconify(_ window: XWindowID)
  func requestClose(_ window: XWindowID)
  func readTakesDeleteWindow(_ window: XWindowID, _ done: @escaping (Bool?) -> Void)
  func sendDeleteWindow(_ window: XWindowID)
  func armIdleAlarm(becomingIdle: Bool, milliseconds: Int64)
}

/// The thin Swift face of XCB and its SYNC extension for the x11 plugin. Everything that
/// touches a C pointer is in here; nothing outside sees an `OpaquePointer`.
///
/// One connection, used on the daemon's event loop only. Requests are written without
/// waiting; each one that has a reply is queued with its closure, and replies are collected
/// in order as they arrive (replies come back in request order, so the closures of a batch
/// run in the order it was sent). An unanswered request older than `replyDeadline` makes the
/// server count as not answering until a reply comes again.
@MainActor
final class X11Display: X11Connection {
  /// How long a question may go unanswered before the server counts as not answering; with the
  /// check's own lag, `grow plugins` says so within 3 s.
  static let replyDeadline: TimeInterval = 2
  /// Longest title read: 4 KiB (in 32-bit units, as X counts). The rest is dropped.
  static let titleLongs: UInt32 = 1024

  let name: String
  let descriptor: Int32
  let root: XWindowID

  private let connection: OpaquePointer
  /// The questions waiting for their replies, and whether the server answers them.
  private var replies: ReplyQueue!
  var answering: Bool { replies.answering }
  var onAnsweringChanged: ((Bool) -> Void)? {
    get { replies.onAnsweringChanged }
    set { replies.onAnsweringChanged = newValue }
  }
  /// Requests written to XCB's buffer since the last flush.
  private var unflushed = false
  private var closed = false

  private var ready = false
  private var readyCallbacks: [() -> Void] = []
  private var atoms: [String: xcb_atom_t] = [:]
  private(set) var hasScreenSaverExtension = false
  private var syncFirstEvent: UInt8 = 0
  private var idleCounter: xcb_sync_counter_t = 0
  private var alarm: xcb_sync_alarm_t = 0

  private static let atomNames = [
    "_NET_ACTIVE_WINDOW", "_NET_SUPPORTING_WM_CHECK", "_NET_SUPPORTED", "_NET_WM_NAME",
    "_NET_WM_PID", "UTF8_STRING", "COMPOUND_TEXT", "WM_STATE", "WM_CHANGE_STATE",
    "_NET_CLOSE_WINDOW", "_NET_WM_STATE", "_NET_WM_STATE_HIDDEN", "I3_SOCKET_PATH",
    "WM_PROTOCOLS", "WM_DELETE_WINDOW",
  ]

  /// Connects (the socket connect and the setup handshake are the only waits, as with any
  /// client library) and sends the setup questions; `whenReady` says when they are answered.
  init(name: String, loop: any EventLoop) throws(X11Error) {
    var screen: Int32 = 0
    guard let connection = xcb_connect(name, &screen) else { throw .cannotOpen(name) }
    guard xcb_connection_has_error(connection) == 0 else {
      xcb_disconnect(connection)
      throw .cannotOpen(name)
    }
    self.name = name
    self.connection = connection
    descriptor = xcb_get_file_descriptor(connection)
    root = grow_xcb_root(connection, screen)
    replies = ReplyQueue(loop: loop, deadline: Self.replyDeadline) { [weak self] in
      self?.connectionLost ?? true
    }
    selectEvents(root, XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue)
    setUp()
    _ = flush()
  }

  var connectionLost: Bool { closed || xcb_connection_has_error(connection) != 0 }

  var hasIdleAlarms: Bool { idleCounter != 0 }

  /// Closes the connection; never waits. The server frees the alarms with the connection.
  func close() {
    guard !closed else { return }
    closed = true
    replies.close()
    readyCallbacks.removeAll()
    xcb_disconnect(connection)
  }

  func whenReady(_ callback: @escaping () -> Void) {
    if ready { callback() } else { readyCallbacks.append(callback) }
  }

  // MARK: Setup

  /// Atoms, then the extensions. XCB's SYNC requests look the extension up first, which waits
  /// for a reply unless it is already there: it is asked for (prefetched) before the atoms,
  /// so it has arrived by the time the last of their replies has.
  private func setUp() {
    xcb_prefetch_extension_data(connection, grow_xcb_sync_extension())
    for name in Self.atomNames {
      let cookie = xcb_intern_atom(connection, 0, UInt16(name.utf8.count), name)
      expect(cookie.sequence) { [weak self] reply in
        guard let reply else { return }
        self?.atoms[name] = reply.assumingMemoryBound(to: xcb_intern_atom_reply_t.self).pointee.atom
      }
    }
    let screenSaver = "MIT-SCREEN-SAVER"
    let query = xcb_query_extension(connection, UInt16(screenSaver.utf8.count), screenSaver)
    expect(query.sequence) { [weak self] reply in
      guard let self else { return }
      hasScreenSaverExtension =
        reply?.assumingMemoryBound(to: xcb_query_extension_reply_t.self).pointee.present ?? 0 != 0
      setUpSync()
    }
  }

  private func setUpSync() {
    guard let sync = xcb_get_extension_data(connection, grow_xcb_sync_extension()),
      sync.pointee.present != 0
    else { return setUpDone() }
    syncFirstEvent = sync.pointee.first_event
    // Version 3.1, what the counter and alarm requests below need.
    expect(xcb_sync_initialize(connection, 3, 1).sequence) { _ in }
    expect(xcb_sync_list_system_counters(connection).sequence) { [weak self] reply in
      guard let self else { return }
      if let reply {
        idleCounter = grow_xcb_idle_counter(
          reply.assumingMemoryBound(to: xcb_sync_list_system_counters_reply_t.self))
      }
      setUpDone()
    }
  }

  private func setUpDone() {
    ready = true
    let callbacks = readyCallbacks
    readyCallbacks.removeAll()
    for callback in callbacks { callback() }
  }

  // MARK: Requests and replies

  /// Queues the closure for the reply to request `sequence` (called with the reply, freed
  /// afterwards, or nil when the server sent an error).
  private func expect(_ sequence: UInt32, _ handle: @escaping (UnsafeMutableRawPointer?) -> Void) {
    replies.expect(sequence, handle)
    unflushed = true
  }

  private func collectReplies() {
    replies.collect { [connection] sequence in
      var reply: UnsafeMutableRawPointer?
      var error: UnsafeMutablePointer<xcb_generic_error_t>?
      guard !connectionLost, xcb_poll_for_reply(connection, sequence, &reply, &error) != 0 else {
        return .waiting
      }
      free(error)
      return .answered(reply)
    }
  }

  func flush() -> Bool {
    guard !connectionLost else { return false }
    replies.watchDeadline()
    guard unflushed else { return false }
    unflushed = false
    _ = xcb_flush(connection)
    return true
  }

  // MARK: Events

  /// Events XCB has read or can read without waiting, at most `limit` of them, after the
  /// replies that came with them. What is left stays in the socket (or XCB's queue) for the
  /// next turn: a client flooding the server cannot hold the loop.
  func take(limit: Int) -> (notices: [X11Notice], more: Bool) {
    var notices: [X11Notice] = []
    var count = 0
    while count < limit, !connectionLost, let event = xcb_poll_for_event(connection) {
      count += 1
      if let notice = notice(event) { notices.append(notice) }
      free(event)
    }
    collectReplies()
    // Collecting replies may have read events too; they wait in XCB's queue, not the socket.
    while count < limit, !connectionLost, let event = xcb_poll_for_queued_event(connection) {
      count += 1
      if let notice = notice(event) { notices.append(notice) }
      free(event)
    }
    return (notices, count >= limit)
  }

  private func notice(_ event: UnsafeMutablePointer<xcb_generic_event_t>) -> X11Notice? {
    let type = event.pointee.response_type & 0x7f
    if type == XCB_PROPERTY_NOTIFY {
      let property = UnsafeRawPointer(event).load(as: xcb_property_notify_event_t.self)
      if property.window == root {
        if property.atom == atom("_NET_ACTIVE_WINDOW") { return .activeWindowChanged }
        if property.atom == atom("_NET_SUPPORTING_WM_CHECK")
          || property.atom == atom("_NET_SUPPORTED")
        {
          return .windowManagerChanged
        }
      } else if property.atom == atom("_NET_WM_NAME")
        || property.atom == XCB_ATOM_WM_NAME.rawValue
      {
        return .titleChanged(property.window)
      }
    } else if syncFirstEvent != 0, type == syncFirstEvent + UInt8(XCB_SYNC_ALARM_NOTIFY) {
      let alarmEvent = UnsafeRawPointer(event).load(as: xcb_sync_alarm_notify_event_t.self)
      let milliseconds = Self.value(alarmEvent.counter_value)
      if alarmEvent.alarm == alarm { return .idleAlarm(milliseconds: milliseconds) }
    }
    // Errors of requests without replies (BadWindow for a window destroyed meanwhile) arrive
    // as events of type 0: normal, each read checks its own result.
    return nil
  }

  // MARK: Windows

  func readActiveWindow(_ done: @escaping (XWindowID?) -> Void) {
    readProperty(root, atom("_NET_ACTIVE_WINDOW"), type: XCB_ATOM_WINDOW.rawValue, longs: 1) {
      guard let id = $0?.firstWord, id != 0 else { return done(nil) }
      done(id)
    }
  }

  /// Class, title and pid of `window`; nil when it was destroyed meanwhile. Four reads in one
  /// go: the last reply comes last, and by then the others have been stored.
  func readInfo(of window: XWindowID, _ done: @escaping (WindowInfo?) -> Void) {
    var wmClass: PropertyValue?
    var title: String?
    readProperty(window, XCB_ATOM_WM_CLASS.rawValue, type: XCB_ATOM_STRING.rawValue, longs: 256) {
      wmClass = $0
    }
    readTitle(of: window) { title = $0 }
    readProperty(window, atom("_NET_WM_PID"), type: XCB_ATOM_CARDINAL.rawValue, longs: 1) {
      guard let wmClass else { return done(nil) }
      // WM_CLASS is "instance\0class\0".
      let parts = wmClass.bytes.split(separator: 0, omittingEmptySubsequences: false)
      let text = { (index: Int) in
        parts.count > index ? String(decoding: parts[index], as: UTF8.self) : ""
      }
      done(
        WindowInfo(
          id: window, instance: text(0), windowClass: text(1), title: title ?? "",
          pid: $0?.firstWord.map(Int.init)))
    }
  }

  /// `_NET_WM_NAME` (UTF-8), else `WM_NAME` (STRING or COMPOUND_TEXT: xterm sets only that);
  /// nil when the window is gone.
  func readTitle(of window: XWindowID, _ done: @escaping (String?) -> Void) {
    var utf8Name: PropertyValue?
    readProperty(window, atom("_NET_WM_NAME"), type: atom("UTF8_STRING"), longs: Self.titleLongs) {
      utf8Name = $0
    }
    readProperty(window, XCB_ATOM_WM_NAME.rawValue, type: 0, longs: Self.titleLongs) {
      [weak self] name in
      guard let self, let name else { return done(nil) }
      if let utf8Name, utf8Name.type == atom("UTF8_STRING"), !utf8Name.bytes.isEmpty {
        return done(String(decoding: utf8Name.bytes, as: UTF8.self))
      }
      done(decodeText(name))
    }
  }

  /// A text property as Unicode: STRING is Latin-1, UTF8_STRING UTF-8; COMPOUND_TEXT is
  /// Latin-1 until an escape sequence switches the character set, and only its UTF-8 segments
  /// (`ESC % G`) are decoded here; other character sets drop out.
  private func decodeText(_ value: PropertyValue) -> String {
    if value.type == atom("UTF8_STRING") { return String(decoding: value.bytes, as: UTF8.self) }
    guard value.type == atom("COMPOUND_TEXT"), value.bytes.contains(0x1b) else {
      return String(value.bytes.map { Character(Unicode.Scalar($0)) })
    }
    var text = ""
    var utf8: [UInt8]?
    var index = 0
    let bytes = value.bytes
    while index < bytes.count {
      if bytes[index] == 0x1b, index + 2 < bytes.count, bytes[index + 1] == 0x25 {
        // ESC % G starts UTF-8, ESC % @ ends it.
        if bytes[index + 2] == 0x47 {
          utf8 = []
        } else if let segment = utf8 {
          text += String(decoding: segment, as: UTF8.self)
          utf8 = nil
        }
        index += 3
      } else if bytes[index] == 0x1b {
        // Another character set: skip the escape's intermediate and final bytes.
        index += 1
        while index < bytes.count, (0x20...0x2f).contains(bytes[index]) { index += 1 }
        index += 1
      } else if utf8 != nil {
        utf8?.append(bytes[index])
        index += 1
      } else {
        text.append(Character(Unicode.Scalar(bytes[index])))
        index += 1
      }
    }
    if let segment = utf8 { text += String(decoding: segment, as: UTF8.self) }
    return text
  }

  /// Asks for PropertyNotify on `window` (title changes), or stops asking.
  func watchProperties(of window: XWindowID, _ watch: Bool) {
    selectEvents(window, watch ? XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue : 0)
  }

  /// The window manager's name (`Openbox`, `i3`), from `_NET_SUPPORTING_WM_CHECK`, whether
  /// it publishes `_NET_ACTIVE_WINDOW`, and i3's IPC socket if it is i3.
  func readWindowManager(_ done: @escaping (WindowManagerFacts) -> Void) {
    var supported: PropertyValue?
    var i3Socket: String?
    readProperty(root, atom("_NET_SUPPORTED"), type: XCB_ATOM_ATOM.rawValue, longs: 4096) {
      supported = $0
    }
    // i3 sets it as UTF8_STRING; any type is taken, a path is bytes.
    readProperty(root, atom("I3_SOCKET_PATH"), type: 0, longs: 1024) {
      guard let bytes = $0?.bytes, !bytes.isEmpty else { return }
      i3Socket = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
    readProperty(root, atom("_NET_SUPPORTING_WM_CHECK"), type: XCB_ATOM_WINDOW.rawValue, longs: 1) {
      [weak self] check in
      guard let self else { return }
      let words = supported?.words ?? []
      let publishes = words.contains(atom("_NET_ACTIVE_WINDOW"))
      let takesClose = words.contains(atom("_NET_CLOSE_WINDOW"))
      guard let check = check?.firstWord, check != 0 else {
        return done(
          WindowManagerFacts(
            name: nil, publishesActiveWindow: publishes, i3Socket: i3Socket,
            takesCloseRequests: takesClose))
      }
      readProperty(check, atom("_NET_WM_NAME"), type: atom("UTF8_STRING"), longs: 256) { name in
        done(
          WindowManagerFacts(
            name: name.flatMap {
              $0.bytes.isEmpty ? nil : String(decoding: $0.bytes, as: UTF8.self)
            },
            publishesActiveWindow: publishes, i3Socket: i3Socket, takesCloseRequests: takesClose))
      }
    }
  }

  /// Asks the window manager to minimise `window` (ICCCM WM_CHANGE_STATE).
  func iconify(_ window: XWindowID) {
    grow_xcb_request_iconify(connection, root, window, atom("WM_CHANGE_STATE"))
    unflushed = true
  }

  /// Asks the window manager to close `window` (EWMH `_NET_CLOSE_WINDOW`).
  func requestClose(_ window: XWindowID) {
    grow_xcb_request_close(connection, root, window, atom("_NET_CLOSE_WINDOW"))
    unflushed = true
  }

  /// Whether `window` takes WM_DELETE_WINDOW (lists it in WM_PROTOCOLS); nil once it is gone.
  func readTakesDeleteWindow(_ window: XWindowID, _ done: @escaping (Bool?) -> Void) {
    readProperty(window, atom("WM_PROTOCOLS"), type: XCB_ATOM_ATOM.rawValue, longs: 32) {
      [weak self] protocols in
      guard let self, let protocols else { return done(nil) }
      done(protocols.words.contains(atom("WM_DELETE_WINDOW")))
    }
  }

  /// Asks the window's own program to close it (ICCCM WM_DELETE_WINDOW), as a window manager
  /// does for its close button: for window managers that take no `_NET_CLOSE_WINDOW`.
  func sendDeleteWindow(_ window: XWindowID) {
    grow_xcb_send_delete_window(connection, window, atom("WM_PROTOCOLS"), atom("WM_DELETE_WINDOW"))
    unflushed = true
  }

  /// Whether `window` is out of sight: `_NET_WM_STATE_HIDDEN` (EWMH: openbox, xfwm4, KWin,
  /// Mutter set it on minimised windows) or WM_STATE Iconic (3, ICCCM, for window managers
  /// without EWMH); nil once the window is gone (closed by its program meanwhile).
  func readIsHidden(_ window: XWindowID, _ done: @escaping (Bool?) -> Void) {
    var iconic: Bool?
    readProperty(window, atom("WM_STATE"), type: atom("WM_STATE"), longs: 2) {
      iconic = $0.map { $0.firstWord == 3 }
    }
    readProperty(window, atom("_NET_WM_STATE"), type: XCB_ATOM_ATOM.rawValue, longs: 64) {
      [weak self] state in
      guard let self, let state, let iconic else { return done(nil) }
      done(iconic || state.words.contains(atom("_NET_WM_STATE_HIDDEN")))
    }
  }

  // MARK: Idle

  /// Milliseconds since the last input: the IDLETIME counter; nil without it.
  func readIdleMilliseconds(_ done: @escaping (Int64?) -> Void) {
    guard idleCounter != 0 else { return done(nil) }
    expect(xcb_sync_query_counter(connection, idleCounter).sequence) { reply in
      done(
        reply.map {
          Self.value(
            $0.assumingMemoryBound(to: xcb_sync_query_counter_reply_t.self).pointee
              .counter_value)
        })
    }
  }

  /// Arms the one idle alarm: `becomingIdle` fires when IDLETIME reaches `milliseconds`;
  /// otherwise it fires when IDLETIME drops below it (input again).
  func armIdleAlarm(becomingIdle: Bool, milliseconds: Int64) {
    alarm = arm(alarm, positive: becomingIdle, milliseconds: milliseconds)
  }

  /// Creates (`existing == 0`) or changes an absolute alarm on IDLETIME; returns its id.
  private func arm(_ existing: xcb_sync_alarm_t, positive: Bool, milliseconds: Int64)
    -> xcb_sync_alarm_t
  {
    guard idleCounter != 0, !connectionLost else { return existing }
    let value = Int64(Int32(clamping: milliseconds))
    let mask =
      XCB_SYNC_CA_COUNTER.rawValue | XCB_SYNC_CA_VALUE_TYPE.rawValue | XCB_SYNC_CA_VALUE.rawValue
      | XCB_SYNC_CA_TEST_TYPE.rawValue | XCB_SYNC_CA_DELTA.rawValue | XCB_SYNC_CA_EVENTS.rawValue
    let testType =
      positive
      ? XCB_SYNC_TESTTYPE_POSITIVE_COMPARISON.rawValue
      : XCB_SYNC_TESTTYPE_NEGATIVE_COMPARISON.rawValue
    var armed = existing
    if armed == 0 {
      armed = xcb_generate_id(connection)
      var values = xcb_sync_create_alarm_value_list_t(
        counter: idleCounter, valueType: XCB_SYNC_VALUETYPE_ABSOLUTE.rawValue,
        value: Self.syncValue(value), testType: testType, delta: Self.syncValue(0), events: 1)
      xcb_sync_create_alarm_aux(connection, armed, mask, &values)
    } else {
      var values = xcb_sync_change_alarm_value_list_t(
        counter: idleCounter, valueType: XCB_SYNC_VALUETYPE_ABSOLUTE.rawValue,
        value: Self.syncValue(value), testType: testType, delta: Self.syncValue(0), events: 1)
      xcb_sync_change_alarm_aux(connection, armed, mask, &values)
    }
    unflushed = true
    return armed
  }

  private static func value(_ value: xcb_sync_int64_t) -> Int64 {
    Int64(value.hi) << 32 | Int64(value.lo)
  }

  private static func syncValue(_ value: Int64) -> xcb_sync_int64_t {
    xcb_sync_int64_t(
      hi: Int32(truncatingIfNeeded: value >> 32), lo: UInt32(truncatingIfNeeded: value))
  }

  // MARK: Properties

  /// Known once set up; 0 (None, which matches nothing) before.
  private func atom(_ name: String) -> xcb_atom_t { atoms[name] ?? 0 }

  private func selectEvents(_ window: XWindowID, _ mask: UInt32) {
    guard !connectionLost else { return }
    var value = mask
    xcb_change_window_attributes(connection, window, XCB_CW_EVENT_MASK.rawValue, &value)
    unflushed = true
  }

  /// A property as the server sent it. Format-32 values are 32-bit words in XCB (not longs).
  struct PropertyValue {
    /// 0 (None) when the window has no such property.
    var type: xcb_atom_t
    var format: UInt8
    var bytes: [UInt8]

    var words: [UInt32] {
      guard format == 32 else { return [] }
      return stride(from: 0, to: bytes.count - 3, by: 4).map { offset in
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
      }
    }

    var firstWord: UInt32? { words.first }
  }

  /// Reads up to `longs` 32-bit units of a property (`type` 0: any type); `done` gets nil when
  /// the server answered with an error (the window is gone), an empty value of type 0 when
  /// the property is absent or of another type.
  private func readProperty(
    _ window: XWindowID, _ property: xcb_atom_t, type: xcb_atom_t, longs: UInt32,
    _ done: @escaping (PropertyValue?) -> Void
  ) {
    guard !connectionLost else { return }
    let cookie = xcb_get_property(connection, 0, window, property, type, 0, longs)
    expect(cookie.sequence) { reply in
      guard let reply else { return done(nil) }
      let typed = reply.assumingMemoryBound(to: xcb_get_property_reply_t.self)
      let header = typed.pointee
      guard header.type != 0, type == 0 || header.type == type,
        let value = xcb_get_property_value(typed)
      else { return done(PropertyValue(type: 0, format: 0, bytes: [])) }
      let count = Int(xcb_get_property_value_length(typed))
      done(
        PropertyValue(
          type: header.type, format: header.format,
          bytes: Array(UnsafeRawBufferPointer(start: value, count: count))))
    }
  }
}
