import CBreakScreen
import FoundationEssentials
import Glibc
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// Why the break screen cannot use the display.
enum BreakScreenError: WordedError {
  case cannotOpen(String)
  /// Wayland: no connection to the compositor's socket.
  case cannotConnect(String, reason: String)
  /// Frames are 32-bit xRGB; a server whose screen takes other pixels is not drawn on.
  case unsupportedScreen(depth: Int, bitsPerPixel: Int)

  var worded: Worded {
    switch self {
    case .cannotOpen(let name):
      Worded(
        Message(
          "cannot open the X display '{display}'; is the X server running and may this user use it?"
        ), ["display": name]
      )
    case .cannotConnect(let name, let reason):
      Worded(
        Message(
          "cannot connect to the Wayland display '{display}': {reason}; is the compositor running "
            + "and is WAYLAND_DISPLAY right?"), ["display": name, "reason": reason]
      )
    case .unsupportedScreen(let depth, let bits):
      Worded(
        Message(
          "the X screen has depth {depth} at {bits} bits per pixel; the break screen draws only on "
            + "24-bit true-colour screens (32 bits per pixel), what Xorg and Xvfb use by default"),
        ["depth": String(depth), "bits": String(bits)]
      )
    }
  }
}

/// What the X server told the break screen, in its terms.
enum BreakScreenNotice: Equatable, Sendable {
  case input(BreakScreenInput)
  /// RandR: monitors were added, removed or moved; Wayland: an output came or went.
  case monitorsChanged
  /// The display can never show the screen, and why (a compositor without a layer shell).
  case cannotCover(String)
}

/// Why a screen could not be shown.
enum ShowRefusal: Equatable, Sendable {
  /// Another client holds the keyboard or the pointer (a menu, a screen locker).
  case grabRefused(what: String)
  case nothingToDrawOn
  /// Wayland: the compositor has no `zwlr_layer_shell_v1` (GNOME's Mutter).
  case noLayerShell

  var description: String {
    switch self {
    case .grabRefused(let what):
      "another program holds the \(what) (an open menu, a screen locker)"
    case .nothingToDrawOn: "the display has no monitor to draw on"
    case .noLayerShell: BreakScreenWayland.noLayerShellReason
    }
  }
}

/// What the break screen asks of a display server: an X server (`BreakScreenDisplay`) or a
/// Wayland compositor (`BreakScreenWayland`). Every question is answered later, on the loop,
/// through its closure (or never, when the connection breaks); nothing here waits. The
/// plugin's logic sees only this, so its tests drive it without a server.
@MainActor
protocol BreakScreenServer: AnyObject {
  var descriptor: Int32 { get }
  /// "the X server", "the Wayland compositor": for the log and `grow plugins`.
  var kind: String { get }
  var connectionLost: Bool { get }
  /// False while a question has waited longer than `BreakScreenDisplay.replyDeadline`.
  var answering: Bool { get }
  var onAnsweringChanged: ((Bool) -> Void)? { get set }
  /// Whether a screen is up (windows mapped, keyboard and pointer grabbed).
  var isShowing: Bool { get }
  /// Monitors covered while showing.
  var monitorCount: Int { get }
  /// Whether frames reach the server through shared memory (MIT-SHM) rather than the socket.
  var sharesFrames: Bool { get }

  func take(limit: Int) -> (notices: [BreakScreenNotice], more: Bool)
  func flush() -> Bool
  func close()

  /// Whether the active window is fullscreen (EWMH `_NET_WM_STATE_FULLSCREEN`).
  func readFullscreen(_ done: @escaping (Bool) -> Void)
  /// Covers every monitor with `content` and grabs keyboard and pointer; `done(nil)` once both
  /// are held, else the refusal, with the windows gone and nothing held.
  func show(_ content: BreakScreenContent, _ done: @escaping (ShowRefusal?) -> Void)
  /// Draws `content`; only what changed is sent.
  func update(_ content: BreakScreenContent)
  /// Reads the monitors again and lays the windows out anew; `refused` if the grab on the new
  /// windows is refused (then they are gone too).
  func relayout(refused: @escaping (ShowRefusal) -> Void)
  /// Releases the grabs and removes the windows.
  func hide()
}

/// The thin Swift face of XCB and RandR for the break screen. Everything that touches a C
/// pointer is here and in `BreakScreenFrame`; nothing outside sees an `OpaquePointer`.
///
/// Requests are written without waiting, as in the x11 plugin's `X11Display`: each that has a
/// reply is queued with its closure, replies are collected as they arrive, and one left
/// unanswered past `replyDeadline` makes the server count as not answering.
@MainActor
final class BreakScreenDisplay: BreakScreenServer {
  static let replyDeadline: TimeInterval = 2
  /// A grab refused because another client holds it is asked again this often, this many times
  /// (a menu closing, xdotool letting go).
  static let grabRetries = 10
  static let grabRetryDelay: TimeInterval = 0.1
  /// XCB_CURRENT_TIME, typed.
  private static let now = xcb_timestamp_t(XCB_CURRENT_TIME)

  let name: String
  let descriptor: Int32
  let kind = "the X server"
  private let loop: any EventLoop
  private let connection: OpaquePointer
  private let screen: UnsafeMutablePointer<xcb_screen_t>
  private let root: xcb_window_t
  /// The questions waiting for their replies, and whether the server answers them.
  private var replies: ReplyQueue!
  var answering: Bool { replies.answering }
  var onAnsweringChanged: ((Bool) -> Void)? {
    get { replies.onAnsweringChanged }
    set { replies.onAnsweringChanged = newValue }
  }
  private var unflushed = false
  private var closed = false

  private var atoms: [String: xcb_atom_t] = [:]
  private static let atomNames = [
    "_NET_ACTIVE_WINDOW", "_NET_WM_STATE", "_NET_WM_STATE_FULLSCREEN", "_NET_WM_NAME",
    "UTF8_STRING",
  ]
  /// keysym of each keycode (no modifier), from GetKeyboardMapping.
  private var keysyms: [xcb_keycode_t: xcb_keysym_t] = [:]
  private var hasMonitors = false
  private var randrFirstEvent: UInt8 = 0
  /// MIT-SHM's first event number, 0 without the extension (a remote display).
  private var shmFirstEvent: UInt8 = 0

  /// One window per monitor while showing, with its frame.
  private final class Cover {
    let window: xcb_window_t
    let rect: ScreenRect
    let frame: BreakScreenFrame
    /// The frame's segment as the server knows it (MIT-SHM); 0 without.
    let segment: xcb_shm_seg_t
    /// The server is still reading the shared frame: it is not drawn into meanwhile.
    var busy = false
    /// Rows to draw and send once it has read it.
    var waiting: Range<Int>?

    init(window: xcb_window_t, rect: ScreenRect, frame: BreakScreenFrame, segment: xcb_shm_seg_t) {
      self.window = window
      self.rect = rect
      self.frame = frame
      self.segment = segment
    }
  }
  private var covers: [Cover] = []
  private var gc: xcb_gcontext_t = 0
  private var content: BreakScreenContent?
  /// Bumped by every show and hide, so late answers to an earlier one are dropped.
  private var generation = 0
  private(set) var isShowing = false
  var monitorCount: Int { covers.count }
  /// Bytes one PutImage may carry: the server's request limit without BIG-REQUESTS (asking
  /// for that extension's limit would wait for a reply), less the request's header.
  private let putLimit: Int

  init(name: String, loop: any EventLoop) throws(BreakScreenError) {
    self.loop = loop
    var number: Int32 = 0
    guard let connection = xcb_connect(name, &number) else { throw .cannotOpen(name) }
    guard xcb_connection_has_error(connection) == 0,
      let screen = grow_bs_screen(connection, number)
    else {
      xcb_disconnect(connection)
      throw .cannotOpen(name)
    }
    let bits = Int(grow_bs_bits_per_pixel(connection, screen.pointee.root_depth))
    guard screen.pointee.root_depth == 24, bits == 32, grow_bs_lsb_first(connection) != 0 else {
      xcb_disconnect(connection)
      throw .unsupportedScreen(depth: Int(screen.pointee.root_depth), bitsPerPixel: bits)
    }
    self.name = name
    self.connection = connection
    self.screen = screen
    root = screen.pointee.root
    descriptor = xcb_get_file_descriptor(connection)
    putLimit = Int(xcb_get_setup(connection).pointee.maximum_request_length) * 4 - 64
    replies = ReplyQueue(loop: loop, deadline: Self.replyDeadline) { [weak self] in
      self?.connectionLost ?? true
    }
    setUp()
    _ = flush()
  }

  var connectionLost: Bool { closed || xcb_connection_has_error(connection) != 0 }

  func close() {
    guard !closed else { return }
    closed = true
    replies.close()
    covers.removeAll()
    // The server frees the windows and the grabs with the connection.
    xcb_disconnect(connection)
  }

  // MARK: Setup

  /// Atoms, the keyboard map and RandR. RandR's extension data is asked for (prefetched)
  /// first and read once a later reply came, so reading it does not wait.
  private func setUp() {
    xcb_prefetch_extension_data(connection, grow_bs_randr_extension())
    xcb_prefetch_extension_data(connection, grow_bs_shm_extension())
    for name in Self.atomNames {
      let cookie = xcb_intern_atom(connection, 0, UInt16(name.utf8.count), name)
      expect(cookie.sequence) { [weak self] reply in
        guard let reply else { return }
        self?.atoms[name] = reply.assumingMemoryBound(to: xcb_intern_atom_reply_t.self).pointee.atom
      }
    }
    let setup = xcb_get_setup(connection).pointee
    let first = setup.min_keycode
    let count = UInt8(setup.max_keycode - setup.min_keycode) + 1
    expect(xcb_get_keyboard_mapping(connection, first, count).sequence) { [weak self] reply in
      guard let self, let reply else { return }
      let typed = reply.assumingMemoryBound(to: xcb_get_keyboard_mapping_reply_t.self)
      for offset in 0..<Int(count) {
        let code = xcb_keycode_t(Int(first) + offset)
        keysyms[code] = grow_bs_keysym(typed, first, code, 0)
      }
      if let shm = xcb_get_extension_data(connection, grow_bs_shm_extension()),
        shm.pointee.present != 0
      {
        shmFirstEvent = shm.pointee.first_event
      }
      setUpRandR()
    }
  }

  /// Whether frames go through shared memory: the extension is there and the connection is
  /// local (a segment cannot be shared with a server on another machine).
  var sharesFrames: Bool { shmFirstEvent != 0 && isLocal }
  private var isLocal: Bool {
    guard let colon = name.lastIndex(of: ":") else { return false }
    return name[..<colon].isEmpty || name[..<colon] == "unix"
  }

  private func setUpRandR() {
    guard let randr = xcb_get_extension_data(connection, grow_bs_randr_extension()),
      randr.pointee.present != 0
    else { return }
    randrFirstEvent = randr.pointee.first_event
    // Monitors (RandR 1.5) are answered only to a client that said it knows them.
    expect(xcb_randr_query_version(connection, 1, 5).sequence) { [weak self] reply in
      guard let self, let reply else { return }
      let version = reply.assumingMemoryBound(to: xcb_randr_query_version_reply_t.self).pointee
      hasMonitors = version.major_version > 1 || version.minor_version >= 5
    }
  }

  // MARK: Requests and replies

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

  func take(limit: Int) -> (notices: [BreakScreenNotice], more: Bool) {
    var notices: [BreakScreenNotice] = []
    var count = 0
    while count < limit, !connectionLost, let event = xcb_poll_for_event(connection) {
      count += 1
      if let notice = notice(event) { notices.append(notice) }
      free(event)
    }
    collectReplies()
    while count < limit, !connectionLost, let event = xcb_poll_for_queued_event(connection) {
      count += 1
      if let notice = notice(event) { notices.append(notice) }
      free(event)
    }
    return (notices, count >= limit)
  }

  private func notice(_ event: UnsafeMutablePointer<xcb_generic_event_t>) -> BreakScreenNotice? {
    let type = event.pointee.response_type & 0x7f
    switch type {
    case UInt8(XCB_KEY_PRESS):
      let key = UnsafeRawPointer(event).load(as: xcb_key_press_event_t.self)
      let shift = key.state & UInt16(XCB_MOD_MASK_SHIFT.rawValue) != 0
      switch keysyms[key.detail] ?? 0 {
      case 0xff09: return .input(.tab(backwards: shift))  // Tab
      case 0xfe20: return .input(.tab(backwards: true))  // ISO_Left_Tab
      case 0xff51, 0xff52: return .input(.tab(backwards: true))  // Left, Up
      case 0xff53, 0xff54: return .input(.tab(backwards: false))  // Right, Down
      case 0xff0d, 0xff8d, 0x20: return .input(.enter)  // Return, KP_Enter, space
      case 0xff1b: return .input(.escape)
      default: return nil
      }
    case UInt8(XCB_BUTTON_RELEASE):
      let button = UnsafeRawPointer(event).load(as: xcb_button_release_event_t.self)
      guard button.detail == 1,
        let cover = covers.first(where: { $0.window == button.event })
      else { return nil }
      let x = Int(button.event_x)
      let y = Int(button.event_y)
      guard let hit = cover.frame.buttons.first(where: { $0.rect.contains(x: x, y: y) }) else {
        return nil
      }
      return .input(.clicked(hit.button))
    case UInt8(XCB_EXPOSE):
      let expose = UnsafeRawPointer(event).load(as: xcb_expose_event_t.self)
      if expose.count == 0, let cover = covers.first(where: { $0.window == expose.window }) {
        send(cover, rows: 0..<cover.rect.height)
      }
      return nil
    case UInt8(XCB_CONFIGURE_NOTIFY):
      let configure = UnsafeRawPointer(event).load(as: xcb_configure_notify_event_t.self)
      return configure.window == root ? .monitorsChanged : nil
    default:
      if randrFirstEvent != 0, type == randrFirstEvent + UInt8(XCB_RANDR_SCREEN_CHANGE_NOTIFY) {
        return .monitorsChanged
      }
      if shmFirstEvent != 0, type == shmFirstEvent + UInt8(XCB_SHM_COMPLETION) {
        let done = UnsafeRawPointer(event).load(as: xcb_shm_completion_event_t.self)
        if let cover = covers.first(where: { $0.segment == done.shmseg }) { read(cover) }
      }
      return nil
    }
  }

  // MARK: Fullscreen

  func readFullscreen(_ done: @escaping (Bool) -> Void) {
    guard !connectionLost else { return done(false) }
    let active = xcb_get_property(
      connection, 0, root, atom("_NET_ACTIVE_WINDOW"), XCB_ATOM_WINDOW.rawValue, 0, 1)
    expect(active.sequence) { [weak self] reply in
      guard let self, let window = Self.words(reply).first, window != 0 else { return done(false) }
      let state = xcb_get_property(
        connection, 0, window, atom("_NET_WM_STATE"), XCB_ATOM_ATOM.rawValue, 0, 64)
      expect(state.sequence) { [weak self] reply in
        guard let self else { return }
        let fullscreen = atom("_NET_WM_STATE_FULLSCREEN")
        done(fullscreen != 0 && Self.words(reply).contains(fullscreen))
      }
      _ = flush()
    }
    unflushed = true
  }

  /// A format-32 property's words; none for an error or another format.
  private static func words(_ reply: UnsafeMutableRawPointer?) -> [UInt32] {
    guard let reply else { return [] }
    let typed = reply.assumingMemoryBound(to: xcb_get_property_reply_t.self)
    guard typed.pointee.format == 32, let value = xcb_get_property_value(typed) else { return [] }
    let count = Int(xcb_get_property_value_length(typed)) / 4
    return (0..<count).map { value.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self) }
  }

  private func atom(_ name: String) -> xcb_atom_t { atoms[name] ?? 0 }

  // MARK: Showing

  func show(_ content: BreakScreenContent, _ done: @escaping (ShowRefusal?) -> Void) {
    hide()
    generation += 1
    let generation = generation
    self.content = content
    isShowing = true
    readMonitors { [weak self] monitors in
      guard let self, self.generation == generation else { return }
      guard !monitors.isEmpty else {
        hide()
        return done(.nothingToDrawOn)
      }
      lay(out: monitors)
      grab(retries: Self.grabRetries, generation: generation, done)
    }
    // Monitors made or removed by a client (xrandr --setmonitor) are announced only as a
    // ConfigureNotify on the root window; a new or resized output as RandR's screen change.
    var structure = XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue
    xcb_change_window_attributes(connection, root, XCB_CW_EVENT_MASK.rawValue, &structure)
    if hasMonitors {
      xcb_randr_select_input(
        connection, root, UInt16(XCB_RANDR_NOTIFY_MASK_SCREEN_CHANGE.rawValue))
    }
  }

  func update(_ content: BreakScreenContent) {
    guard isShowing else { return }
    let previous = self.content
    self.content = content
    var onlyClock = previous != nil
    if var previous {
      previous.timeLeft = content.timeLeft
      onlyClock = previous == content
    }
    for cover in covers {
      send(cover, rows: onlyClock ? cover.frame.clockRows : 0..<cover.rect.height)
    }
  }

  /// Draws the content into the cover's frame and sends `rows` of it; while the server still
  /// reads a shared frame, only notes them.
  private func send(_ cover: Cover, rows: Range<Int>) {
    guard let content else { return }
    if cover.busy {
      let waiting = cover.waiting ?? rows
      cover.waiting =
        min(waiting.lowerBound, rows.lowerBound)..<max(waiting.upperBound, rows.upperBound)
      return
    }
    cover.frame.draw(content)
    put(cover, rows: rows)
  }

  /// The server has read the cover's shared frame (ShmCompletion).
  private func read(_ cover: Cover) {
    cover.busy = false
    if let rows = cover.waiting {
      cover.waiting = nil
      send(cover, rows: rows)
    }
  }

  func relayout(refused: @escaping (ShowRefusal) -> Void) {
    guard isShowing else { return }
    let generation = generation
    readMonitors { [weak self] monitors in
      guard let self, self.generation == generation, !monitors.isEmpty,
        monitors != covers.map(\.rect)
      else { return }
      let old = covers
      lay(out: monitors)
      // The grab window is the first cover: grab again on the new one before the old goes.
      grab(retries: Self.grabRetries, generation: generation) { refusal in
        if let refusal { refused(refusal) }
      }
      for cover in old {
        xcb_destroy_window(connection, cover.window)
        if cover.segment != 0 { xcb_shm_detach(connection, cover.segment) }
      }
      unflushed = true
    }
  }

  func hide() {
    generation += 1
    guard isShowing else { return }
    isShowing = false
    content = nil
    if !connectionLost {
      xcb_ungrab_keyboard(connection, Self.now)
      xcb_ungrab_pointer(connection, Self.now)
      for cover in covers {
        xcb_destroy_window(connection, cover.window)
        if cover.segment != 0 { xcb_shm_detach(connection, cover.segment) }
      }
      if gc != 0 { xcb_free_gc(connection, gc) }
      var none: UInt32 = 0
      xcb_change_window_attributes(connection, root, XCB_CW_EVENT_MASK.rawValue, &none)
      if hasMonitors { xcb_randr_select_input(connection, root, 0) }
      unflushed = true
    }
    gc = 0
    covers = []
  }

  /// The monitors' rectangles (RandR 1.5), or the whole screen without them.
  private func readMonitors(_ done: @escaping ([ScreenRect]) -> Void) {
    let whole = [
      ScreenRect(
        x: 0, y: 0, width: Int(screen.pointee.width_in_pixels),
        height: Int(screen.pointee.height_in_pixels))
    ]
    guard hasMonitors else { return done(whole) }
    expect(xcb_randr_get_monitors(connection, root, 1).sequence) { reply in
      guard let reply else { return done(whole) }
      let typed = reply.assumingMemoryBound(to: xcb_randr_get_monitors_reply_t.self)
      var rects: [ScreenRect] = []
      var x: Int16 = 0
      var y: Int16 = 0
      var width: UInt16 = 0
      var height: UInt16 = 0
      while grow_bs_monitor(typed, Int32(rects.count), &x, &y, &width, &height) != 0 {
        rects.append(ScreenRect(x: Int(x), y: Int(y), width: Int(width), height: Int(height)))
      }
      done(rects.isEmpty ? whole : rects)
    }
  }

  /// One override-redirect window per monitor (the window manager leaves those alone), drawn.
  private func lay(out monitors: [ScreenRect]) {
    guard let content else { return }
    covers = monitors.compactMap { rect in
      guard
        let frame = BreakScreenFrame(
          width: rect.width, height: rect.height, memory: sharesFrames ? .systemV : .process)
      else { return nil }
      var segment: xcb_shm_seg_t = 0
      if let id = frame.sharedMemoryID {
        segment = xcb_generate_id(connection)
        xcb_shm_attach(connection, segment, UInt32(id), 1)
      }
      let window = xcb_generate_id(connection)
      // In the order of their mask bits: back pixel, override redirect, event mask.
      let events =
        XCB_EVENT_MASK_EXPOSURE.rawValue | XCB_EVENT_MASK_KEY_PRESS.rawValue
        | XCB_EVENT_MASK_BUTTON_PRESS.rawValue | XCB_EVENT_MASK_BUTTON_RELEASE.rawValue
      var values: [UInt32] = [BreakScreenFrame.backgroundPixel, 1, events]
      xcb_create_window(
        connection, UInt8(XCB_COPY_FROM_PARENT), window, root, Int16(rect.x), Int16(rect.y),
        UInt16(rect.width), UInt16(rect.height), 0, UInt16(XCB_WINDOW_CLASS_INPUT_OUTPUT.rawValue),
        screen.pointee.root_visual,
        XCB_CW_BACK_PIXEL.rawValue | XCB_CW_OVERRIDE_REDIRECT.rawValue
          | XCB_CW_EVENT_MASK.rawValue, &values)
      name(window)
      xcb_map_window(connection, window)
      frame.draw(content)
      return Cover(window: window, rect: rect, frame: frame, segment: segment)
    }
    if gc == 0, let first = covers.first {
      gc = xcb_generate_id(connection)
      xcb_create_gc(connection, gc, first.window, 0, nil)
    }
    for cover in covers { put(cover, rows: 0..<cover.rect.height) }
    unflushed = true
  }

  /// WM_CLASS `grow-break`, `Grow` and a title, so tools (and people) can tell what it is.
  private func name(_ window: xcb_window_t) {
    let wmClass = Array("grow-break\0Grow\0".utf8)
    xcb_change_property(
      connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), window, XCB_ATOM_WM_CLASS.rawValue,
      XCB_ATOM_STRING.rawValue, 8, UInt32(wmClass.count), wmClass)
    let title = Array("Grow break".utf8)
    xcb_change_property(
      connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), window, XCB_ATOM_WM_NAME.rawValue,
      XCB_ATOM_STRING.rawValue, 8, UInt32(title.count), title)
  }

  /// Sends `rows` of the cover's frame: a request of a few bytes for a shared frame (the
  /// server says when it has read it), else the pixels, in pieces the server takes.
  private func put(_ cover: Cover, rows: Range<Int>) {
    guard gc != 0, !rows.isEmpty, !connectionLost else { return }
    let frame = cover.frame
    if cover.segment != 0 {
      xcb_shm_put_image(
        connection, cover.window, gc, UInt16(frame.width), UInt16(frame.height), 0,
        UInt16(rows.lowerBound), UInt16(frame.width), UInt16(rows.count), 0,
        Int16(rows.lowerBound), 24, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), 1, cover.segment, 0)
      cover.busy = true
      unflushed = true
      return
    }
    let perRequest = max(1, putLimit / frame.stride)
    var start = rows.lowerBound
    while start < rows.upperBound {
      let end = min(start + perRequest, rows.upperBound)
      frame.withRows(start..<end) { bytes in
        guard let base = bytes.baseAddress else { return }
        xcb_put_image(
          connection, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), cover.window, gc,
          UInt16(frame.width), UInt16(end - start), 0, Int16(start), 0, 24, UInt32(bytes.count),
          base.assumingMemoryBound(to: UInt8.self))
      }
      start = end
    }
    unflushed = true
  }

  /// Keyboard, then pointer, on the first cover. A refusal because another client holds one
  /// is asked again a few times; after that, or on any other refusal, whatever was taken is
  /// let go and the windows go too: never a grab without a screen, nor a screen that eats
  /// input it cannot act on.
  private func grab(
    retries: Int, generation: Int, _ done: @escaping (ShowRefusal?) -> Void
  ) {
    guard let window = covers.first?.window else { return done(.nothingToDrawOn) }
    let keyboard = xcb_grab_keyboard(
      connection, 1, window, Self.now, UInt8(XCB_GRAB_MODE_ASYNC.rawValue),
      UInt8(XCB_GRAB_MODE_ASYNC.rawValue))
    var keyboardStatus: UInt8?
    expect(keyboard.sequence) { reply in
      keyboardStatus =
        reply?.assumingMemoryBound(to: xcb_grab_keyboard_reply_t.self).pointee.status
    }
    let mask = UInt16(
      XCB_EVENT_MASK_BUTTON_PRESS.rawValue | XCB_EVENT_MASK_BUTTON_RELEASE.rawValue)
    let pointer = xcb_grab_pointer(
      connection, 1, window, mask, UInt8(XCB_GRAB_MODE_ASYNC.rawValue),
      UInt8(XCB_GRAB_MODE_ASYNC.rawValue), xcb_window_t(XCB_NONE), xcb_cursor_t(XCB_NONE),
      Self.now)
    expect(pointer.sequence) { [weak self] reply in
      guard let self, self.generation == generation else { return }
      let pointerStatus =
        reply?.assumingMemoryBound(to: xcb_grab_pointer_reply_t.self).pointee.status
      let success = UInt8(XCB_GRAB_STATUS_SUCCESS.rawValue)
      if keyboardStatus == success, pointerStatus == success { return done(nil) }
      let what = keyboardStatus != success ? "keyboard" : "pointer"
      if keyboardStatus == success { xcb_ungrab_keyboard(connection, Self.now) }
      if pointerStatus == success { xcb_ungrab_pointer(connection, Self.now) }
      unflushed = true
      guard retries > 0 else {
        hide()
        _ = flush()
        return done(.grabRefused(what: what))
      }
      _ = loop.after(seconds: Self.grabRetryDelay) { [weak self] in
        guard let self, self.generation == generation, !connectionLost else { return }
        grab(retries: retries - 1, generation: generation, done)
        _ = flush()
      }
    }
  }
}
