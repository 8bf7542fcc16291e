import CBreakScreen
import CWaylandProtocols
import FoundationEssentials
import Glibc
import GrowLoop

/// The thin Swift face of libwayland-client for the break screen, on a Wayland compositor with
/// wlroots' layer shell (sway, Hyprland, river, labwc, KDE): one `zwlr_layer_surface_v1` per
/// `wl_output` on the overlay layer, anchored to every edge, over panels (exclusive zone -1),
/// with the keyboard exclusively its own; frames drawn by `BreakScreenFrame` into memfd-backed
/// `wl_shm` buffers, two per output so one can be drawn while the compositor reads the other.
/// Keys come as evdev codes read through the keymap (`WaylandKeys`); clicks are hit-tested on
/// the buttons the frame drew, as on X11.
///
/// Nothing waits for the compositor: the plugin watches `descriptor` and calls `take`, which
/// reads what is there (libwayland reads with MSG_DONTWAIT) and dispatches it; `flush` writes
/// and, when the socket is full, finishes writing once it is writable. Each show and each
/// redraw sends a `wl_display.sync`; one unanswered past `replyDeadline` makes the compositor
/// count as not answering (a compositor stopped with SIGSTOP).
///
/// Everything that touches a C pointer is in here; nothing outside sees an `OpaquePointer`.
@MainActor
final class BreakScreenWayland: BreakScreenServer {
  static let replyDeadline = BreakScreenDisplay.replyDeadline
  nonisolated static let noLayerShellReason =
    "the Wayland compositor offers no layer shell (zwlr_layer_shell_v1; GNOME has none), so "
    + "nothing can cover its outputs; a critical notification stands in at each break"

  let name: String
  let descriptor: Int32
  let kind = "the Wayland compositor"
  /// Frames are always in memory the compositor maps (wl_shm).
  let sharesFrames = true
  private let loop: any EventLoop
  private var display: OpaquePointer?
  private var registry: OpaquePointer?
  private var globalsSync: OpaquePointer?
  private var globalsKnown = false
  private var compositor: OpaquePointer?
  private var compositorVersion: UInt32 = 1
  private var shm: OpaquePointer?
  private var layerShell: OpaquePointer?
  private var seat: OpaquePointer?
  private var seatVersion: UInt32 = 1
  private var keyboard: OpaquePointer?
  private var pointer: OpaquePointer?
  /// wlroots' toplevel list (name, version), asked only at a break for a fullscreen window.
  private var toplevelGlobal: (name: UInt32, version: UInt32)?
  /// While a fullscreen check runs: the manager, each toplevel's last state, the sync that
  /// ends the check, and who waits for the answer.
  private var check:
    (
      manager: OpaquePointer, states: [UInt: [UInt32]], sync: OpaquePointer,
      done: [(Bool) -> Void]
    )?
  /// The outputs by their registry name, in the order announced.
  private var outputs: [(name: UInt32, proxy: OpaquePointer)] = []
  private(set) var answering = true
  var onAnsweringChanged: ((Bool) -> Void)?
  /// `wl_display.sync` callbacks in flight, by address, with when they were sent.
  private var pings: [UInt: MonotonicInstant] = [:]
  private var deadlineArmed = false
  private var failed = false
  private var writable: (any DescriptorWatch)?
  /// What dispatching brought, for the next `take`.
  private var notices: [BreakScreenNotice] = []
  private var keys = WaylandKeys()
  private var shift = false
  /// The surface (by address) the pointer is over, and where on it.
  private var pointerAt: (surface: UInt, x: Int, y: Int)?

  /// One wl_buffer over one frame's memory.
  private final class Buffer {
    let frame: BreakScreenFrame
    let proxy: OpaquePointer
    /// Attached and not yet released by the compositor: not drawn into meanwhile.
    var busy = false
    init(frame: BreakScreenFrame, proxy: OpaquePointer) {
      self.frame = frame
      self.proxy = proxy
    }
  }

  /// One layer surface per output while showing.
  private final class Cover {
    let output: UInt32
    let surface: OpaquePointer
    let layer: OpaquePointer
    var buffers: [Buffer] = []
    /// The buffer last attached: its frame has the buttons where the person sees them.
    var shown: Buffer?
    /// The compositor has said the size and the first frame is committed.
    var configured = false
    /// Rows to draw and send once a buffer is released.
    var waiting: Range<Int>?
    init(output: UInt32, surface: OpaquePointer, layer: OpaquePointer) {
      self.output = output
      self.surface = surface
      self.layer = layer
    }
  }
  private var covers: [Cover] = []
  private var content: BreakScreenContent?
  private(set) var isShowing = false
  /// Called once every cover has its first frame (or with a refusal).
  private var showDone: ((ShowRefusal?) -> Void)?
  var monitorCount: Int { covers.count }

  /// Connects to `name` (`wayland-1`, or an absolute socket path) and asks for the globals;
  /// they come on the loop.
  init(name: String, loop: any EventLoop) throws(BreakScreenError) {
    self.name = name
    self.loop = loop
    guard let display = wl_display_connect(name) else {
      throw .cannotConnect(name, reason: String(cString: strerror(errno)))
    }
    self.display = display
    descriptor = wl_display_get_fd(display)
    let me = Unmanaged.passUnretained(self).toOpaque()
    registry = wl_display_get_registry(display)
    wl_registry_add_listener(registry, Self.registryListener, me)
    // Its `done` comes after every global the registry announces at once.
    globalsSync = wl_display_sync(display)
    wl_callback_add_listener(globalsSync, Self.callbackListener, me)
    _ = flush()
  }

  var connectionLost: Bool {
    guard let display, !failed else { return true }
    return wl_display_get_error(display) != 0
  }

  func close() {
    writable?.cancel()
    writable = nil
    onAnsweringChanged = nil
    showDone = nil
    guard let display else { return }
    // The compositor frees every object of the connection with it.
    wl_display_disconnect(display)
    self.display = nil
    covers = []
    isShowing = false
  }

  // MARK: The loop's half of libwayland's read protocol

  func take(limit: Int) -> (notices: [BreakScreenNotice], more: Bool) {
    if let display, !failed {
      while wl_display_prepare_read(display) != 0 {
        guard wl_display_dispatch_pending(display) >= 0 else {
          failed = true
          break
        }
      }
      // Reads what is there without waiting (EAGAIN is no error to libwayland here).
      if !failed, wl_display_read_events(display) < 0 || wl_display_dispatch_pending(display) < 0 {
        failed = true
      }
    }
    let taken = notices
    notices = []
    return (taken, false)
  }

  func flush() -> Bool {
    guard let display, !failed else { return false }
    if wl_display_flush(display) < 0 {
      if errno == EAGAIN { finishWritingLater() } else { failed = true }
    }
    watchDeadline()
    return false
  }

  /// The socket is full (the compositor reads slowly or not at all): the rest is written when
  /// it can take it, without waiting here.
  private func finishWritingLater() {
    guard writable == nil else { return }
    writable = loop.watch(descriptor, for: .writable) { [weak self] _ in
      guard let self, let display, !failed else { return }
      if wl_display_flush(display) >= 0 {
        writable?.cancel()
        writable = nil
      } else if errno != EAGAIN {
        failed = true
        writable?.cancel()
        writable = nil
      }
    }
  }

  // MARK: Answers within the deadline

  private func ping() {
    guard let display, !failed, let callback = wl_display_sync(display) else { return }
    wl_callback_add_listener(
      callback, Self.callbackListener, Unmanaged.passUnretained(self).toOpaque())
    pings[Self.key(callback)] = loop.monotonicNow
  }

  fileprivate func callbackDone(_ key: UInt) {
    if let check, key == Self.key(check.sync) {
      wl_callback_destroy(check.sync)
      return checkDone()
    }
    if let globalsSync, key == Self.key(globalsSync) {
      wl_callback_destroy(globalsSync)
      self.globalsSync = nil
      return globalsDone()
    }
    guard pings.removeValue(forKey: key) != nil else { return }
    wl_callback_destroy(OpaquePointer(bitPattern: key))
    let oldest = pings.values.min()
    if !answering, oldest.map({ loop.monotonicNow < $0 + Self.replyDeadline }) ?? true {
      answering = true
      onAnsweringChanged?(true)
    }
  }

  /// One alarm at a time, none while nothing is asked: no wake-up when idle.
  private func watchDeadline() {
    guard !deadlineArmed, answering, let oldest = pings.values.min() else { return }
    deadlineArmed = true
    _ = loop.after(seconds: oldest + Self.replyDeadline - loop.monotonicNow) { [weak self] in
      guard let self else { return }
      deadlineArmed = false
      guard !connectionLost, let oldest = pings.values.min() else { return }
      if loop.monotonicNow >= oldest + Self.replyDeadline {
        answering = false
        onAnsweringChanged?(false)
      } else {
        watchDeadline()
      }
    }
  }

  // MARK: Globals

  private func bind(_ name: UInt32, _ interface: UnsafePointer<wl_interface>?, _ version: UInt32)
    -> OpaquePointer?
  {
    OpaquePointer(wl_registry_bind(registry, name, interface, version))
  }

  fileprivate func global(name: UInt32, interface: String, version: UInt32) {
    let me = Unmanaged.passUnretained(self).toOpaque()
    switch interface {
    case "wl_compositor" where compositor == nil:
      // Version 4 has damage_buffer.
      compositorVersion = min(version, 4)
      compositor = bind(name, grow_wl_compositor_interface(), compositorVersion)
    case "wl_shm" where shm == nil:
      shm = bind(name, grow_wl_shm_interface(), 1)
    case "zwlr_layer_shell_v1" where layerShell == nil:
      layerShell = bind(name, grow_zwlr_layer_shell_v1_interface(), min(version, 4))
    case "wl_seat" where seat == nil:
      // Version 5: the pointer's events this build's listener knows.
      seatVersion = min(version, 5)
      seat = bind(name, grow_wl_seat_interface(), seatVersion)
      wl_seat_add_listener(seat, Self.seatListener, me)
    case "zwlr_foreign_toplevel_manager_v1":
      toplevelGlobal = (name, version)
    case "wl_output":
      guard let output = bind(name, grow_wl_output_interface(), 1) else { return }
      outputs.append((name, output))
      if isShowing { notices.append(.monitorsChanged) }
    default: break
    }
  }

  fileprivate func globalRemoved(name: UInt32) {
    guard let index = outputs.firstIndex(where: { $0.name == name }) else { return }
    wl_output_destroy(outputs[index].proxy)
    outputs.remove(at: index)
    if isShowing { notices.append(.monitorsChanged) }
  }

  private func globalsDone() {
    globalsKnown = true
    if compositor == nil || shm == nil || layerShell == nil {
      notices.append(.cannotCover(Self.noLayerShellReason))
    }
    if showDone != nil { lay() }
  }

  // MARK: Input

  fileprivate func capabilities(_ capabilities: UInt32) {
    let me = Unmanaged.passUnretained(self).toOpaque()
    let hasKeyboard = capabilities & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0
    let hasPointer = capabilities & WL_SEAT_CAPABILITY_POINTER.rawValue != 0
    if hasKeyboard, keyboard == nil {
      keyboard = wl_seat_get_keyboard(seat)
      wl_keyboard_add_listener(keyboard, Self.keyboardListener, me)
    } else if !hasKeyboard, let keyboard {
      if seatVersion >= 3 { wl_keyboard_release(keyboard) } else { wl_keyboard_destroy(keyboard) }
      self.keyboard = nil
    }
    if hasPointer, pointer == nil {
      pointer = wl_seat_get_pointer(seat)
      wl_pointer_add_listener(pointer, Self.pointerListener, me)
    } else if !hasPointer, let pointer {
      if seatVersion >= 3 { wl_pointer_release(pointer) } else { wl_pointer_destroy(pointer) }
      self.pointer = nil
      pointerAt = nil
    }
  }

  /// The keymap's text (a file the compositor passes, closed here).
  fileprivate func keymap(format: UInt32, descriptor: Int32, size: UInt32) {
    defer { Glibc.close(descriptor) }
    guard format == WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.rawValue, size > 0,
      let mapped = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, descriptor, 0),
      mapped != MAP_FAILED
    else { return }
    defer { munmap(mapped, Int(size)) }
    let bytes = UnsafeRawBufferPointer(start: mapped, count: Int(size))
    keys = WaylandKeys(keymap: String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self))
  }

  fileprivate func key(_ code: UInt32, pressed: Bool) {
    guard pressed, isShowing, let input = keys.input(code: code, shift: shift) else { return }
    notices.append(.input(input))
  }

  fileprivate func modifiers(depressed: UInt32) {
    // Shift is modifier 0 of every XKB keymap.
    shift = depressed & 1 != 0
  }

  fileprivate func pointerEntered(_ surface: UInt, x: Int32, y: Int32) {
    pointerAt = (surface, Int(x) / 256, Int(y) / 256)
  }

  fileprivate func pointerMoved(x: Int32, y: Int32) {
    pointerAt?.x = Int(x) / 256
    pointerAt?.y = Int(y) / 256
  }

  fileprivate func pointerLeft() { pointerAt = nil }

  /// The left button let go over a button of the screen.
  fileprivate func pointerButton(_ button: UInt32, released: Bool) {
    guard released, button == 0x110, isShowing, let at = pointerAt,
      let cover = covers.first(where: { Self.key($0.surface) == at.surface }),
      let frame = cover.shown?.frame,
      let hit = frame.buttons.first(where: { $0.rect.contains(x: at.x, y: at.y) })
    else { return }
    notices.append(.input(.clicked(hit.button)))
  }

  // MARK: Fullscreen

  /// Whether the activated toplevel is fullscreen, from wlroots' toplevel list: bound for the
  /// question only (its titles would otherwise wake the daemon at every change), read up to a
  /// `wl_display.sync` (the compositor sends every toplevel's state at once on binding), and
  /// let go. Without the list (KDE, GNOME), false: the MPRIS check still applies.
  func readFullscreen(_ done: @escaping (Bool) -> Void) {
    if check != nil {
      check?.done.append(done)
      return
    }
    guard globalsKnown, let global = toplevelGlobal, let display, !failed,
      let manager = bind(
        global.name, grow_zwlr_foreign_toplevel_manager_v1_interface(), min(global.version, 3)),
      let sync = wl_display_sync(display)
    else { return done(false) }
    let me = Unmanaged.passUnretained(self).toOpaque()
    zwlr_foreign_toplevel_manager_v1_add_listener(manager, Self.managerListener, me)
    wl_callback_add_listener(sync, Self.callbackListener, me)
    check = (manager, [:], sync, [done])
  }

  fileprivate func toplevel(_ handle: OpaquePointer?) {
    guard let handle else { return }
    guard check != nil else {
      // One announced after the check ended, before the compositor saw `stop`.
      return zwlr_foreign_toplevel_handle_v1_destroy(handle)
    }
    check?.states[Self.key(handle)] = []
    zwlr_foreign_toplevel_handle_v1_add_listener(
      handle, Self.handleListener, Unmanaged.passUnretained(self).toOpaque())
  }

  fileprivate func toplevelState(_ handle: UInt, _ states: [UInt32]) {
    if check?.states[handle] != nil { check?.states[handle] = states }
  }

  private func checkDone() {
    guard let check else { return }
    self.check = nil
    let activated = ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_ACTIVATED.rawValue
    let fullscreen = ZWLR_FOREIGN_TOPLEVEL_HANDLE_V1_STATE_FULLSCREEN.rawValue
    let answer = check.states.values.contains { $0.contains(activated) && $0.contains(fullscreen) }
    for handle in check.states.keys {
      zwlr_foreign_toplevel_handle_v1_destroy(OpaquePointer(bitPattern: handle))
    }
    // The manager goes at its `finished`, the compositor's answer to `stop`.
    zwlr_foreign_toplevel_manager_v1_stop(check.manager)
    for done in check.done { done(answer) }
  }

  // MARK: Showing

  func show(_ content: BreakScreenContent, _ done: @escaping (ShowRefusal?) -> Void) {
    hide()
    self.content = content
    isShowing = true
    showDone = done
    // Before the globals are known, laid out when they are.
    if globalsKnown { lay() }
  }

  /// A layer surface on every output without one; `showDone` once each has its first frame.
  private func lay() {
    guard let compositor, shm != nil, let layerShell else {
      let done = showDone
      hide()
      done?(.noLayerShell)
      return
    }
    guard !outputs.isEmpty else {
      let done = showDone
      hide()
      done?(.nothingToDrawOn)
      return
    }
    let me = Unmanaged.passUnretained(self).toOpaque()
    for output in outputs where !covers.contains(where: { $0.output == output.name }) {
      guard let surface = wl_compositor_create_surface(compositor),
        let layer = zwlr_layer_shell_v1_get_layer_surface(
          layerShell, surface, output.proxy, ZWLR_LAYER_SHELL_V1_LAYER_OVERLAY.rawValue,
          "grow-break")
      else { continue }
      zwlr_layer_surface_v1_add_listener(layer, Self.layerListener, me)
      zwlr_layer_surface_v1_set_anchor(
        layer,
        ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP.rawValue | ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM.rawValue
          | ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT.rawValue
          | ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT.rawValue)
      // Over panels and bars too, not beside them.
      zwlr_layer_surface_v1_set_exclusive_zone(layer, -1)
      zwlr_layer_surface_v1_set_keyboard_interactivity(
        layer, ZWLR_LAYER_SURFACE_V1_KEYBOARD_INTERACTIVITY_EXCLUSIVE.rawValue)
      // Committed without a buffer: the compositor answers with the size (configure).
      wl_surface_commit(surface)
      covers.append(Cover(output: output.name, surface: surface, layer: layer))
    }
    ping()
  }

  fileprivate func configure(_ layer: UInt, serial: UInt32, width: UInt32, height: UInt32) {
    guard let cover = covers.first(where: { Self.key($0.layer) == layer }) else { return }
    zwlr_layer_surface_v1_ack_configure(cover.layer, serial)
    let (width, height) = (Int(width), Int(height))
    if let frame = cover.buffers.first?.frame, frame.width == width, frame.height == height {
      wl_surface_commit(cover.surface)
    } else {
      for buffer in cover.buffers { wl_buffer_destroy(buffer.proxy) }
      cover.shown = nil
      cover.buffers = (0..<2).compactMap { _ in makeBuffer(width: width, height: height) }
      cover.configured = !cover.buffers.isEmpty
      // No memory for a frame (or a size of 0): a screen that cannot show is refused, not
      // waited for.
      guard cover.configured else {
        let done = showDone
        hide()
        done?(.nothingToDrawOn)
        return
      }
      send(cover, rows: 0..<height)
    }
    if let done = showDone, covers.allSatisfy(\.configured) {
      showDone = nil
      done(nil)
    }
  }

  /// The compositor removed the surface (its output went).
  fileprivate func closed(_ layer: UInt) {
    guard let index = covers.firstIndex(where: { Self.key($0.layer) == layer }) else { return }
    destroy(covers.remove(at: index))
    notices.append(.monitorsChanged)
  }

  private func makeBuffer(width: Int, height: Int) -> Buffer? {
    guard width > 0, height > 0,
      let frame = BreakScreenFrame(width: width, height: height, memory: .file),
      let descriptor = frame.fileDescriptor,
      let pool = wl_shm_create_pool(shm, descriptor, Int32(frame.byteCount))
    else { return nil }
    // The buffer keeps the pool's memory; libwayland sent a duplicate of the descriptor.
    defer { wl_shm_pool_destroy(pool) }
    guard
      let proxy = wl_shm_pool_create_buffer(
        pool, 0, Int32(width), Int32(height), Int32(frame.stride),
        WL_SHM_FORMAT_XRGB8888.rawValue)
    else { return nil }
    wl_buffer_add_listener(proxy, Self.bufferListener, Unmanaged.passUnretained(self).toOpaque())
    return Buffer(frame: frame, proxy: proxy)
  }

  func update(_ content: BreakScreenContent) {
    guard isShowing else { return }
    var onlyClock = self.content != nil
    if var previous = self.content {
      previous.timeLeft = content.timeLeft
      onlyClock = previous == content
    }
    self.content = content
    for cover in covers where cover.configured {
      let clock = cover.shown?.frame.clockRows ?? 0..<0
      send(cover, rows: onlyClock && !clock.isEmpty ? clock : 0..<(cover.buffers[0].frame.height))
    }
    // Each redraw asks for an answer: a stopped compositor shows within the deadline.
    ping()
  }

  /// Draws the content into a free buffer and commits it with `rows` as the damage; while the
  /// compositor holds both buffers, only notes the rows.
  private func send(_ cover: Cover, rows: Range<Int>) {
    guard let content, cover.configured else { return }
    guard let buffer = cover.buffers.first(where: { !$0.busy }) else {
      let waiting = cover.waiting ?? rows
      cover.waiting =
        min(waiting.lowerBound, rows.lowerBound)..<max(waiting.upperBound, rows.upperBound)
      return
    }
    buffer.frame.draw(content)
    wl_surface_attach(cover.surface, buffer.proxy, 0, 0)
    let (top, width, count) = (Int32(rows.lowerBound), Int32(buffer.frame.width), Int32(rows.count))
    if compositorVersion >= 4 {
      wl_surface_damage_buffer(cover.surface, 0, top, width, count)
    } else {
      wl_surface_damage(cover.surface, 0, top, width, count)
    }
    wl_surface_commit(cover.surface)
    buffer.busy = true
    cover.shown = buffer
  }

  /// The compositor is done reading the buffer.
  fileprivate func released(_ proxy: UInt) {
    for cover in covers {
      guard let buffer = cover.buffers.first(where: { Self.key($0.proxy) == proxy }) else {
        continue
      }
      buffer.busy = false
      if let rows = cover.waiting {
        cover.waiting = nil
        send(cover, rows: rows)
      }
      return
    }
  }

  func relayout(refused: @escaping (ShowRefusal) -> Void) {
    guard isShowing, showDone == nil else { return }
    for cover in covers where !outputs.contains(where: { $0.name == cover.output }) {
      destroy(cover)
    }
    covers.removeAll { cover in !outputs.contains(where: { $0.name == cover.output }) }
    guard !outputs.isEmpty else {
      hide()
      return refused(.nothingToDrawOn)
    }
    lay()
  }

  func hide() {
    showDone = nil
    guard isShowing else { return }
    isShowing = false
    content = nil
    for cover in covers { destroy(cover) }
    covers = []
    pointerAt = nil
  }

  private func destroy(_ cover: Cover) {
    guard display != nil, !failed else { return }
    zwlr_layer_surface_v1_destroy(cover.layer)
    wl_surface_destroy(cover.surface)
    for buffer in cover.buffers { wl_buffer_destroy(buffer.proxy) }
  }

  // MARK: Listeners: C function pointers without captures, the instance in `data`

  /// A proxy's address: how a listener says which object an event is for.
  private nonisolated static func key(_ proxy: OpaquePointer?) -> UInt {
    UInt(bitPattern: Int(bitPattern: proxy.map { UnsafeRawPointer($0) }))
  }

  /// The instance behind a listener's `data`: events are dispatched by `take`, on the loop.
  private static func instance(_ address: UInt) -> BreakScreenWayland? {
    UnsafeMutableRawPointer(bitPattern: address).map {
      Unmanaged<BreakScreenWayland>.fromOpaque($0).takeUnretainedValue()
    }
  }

  // Allocated once and never freed: libwayland keeps the pointer for the proxy's lifetime.
  private nonisolated(unsafe) static let registryListener = {
    let listener = UnsafeMutablePointer<wl_registry_listener>.allocate(capacity: 1)
    listener.initialize(
      to: wl_registry_listener(
        global: { data, _, name, interface, version in
          guard let interface else { return }
          let (address, text) = (UInt(bitPattern: data), String(cString: interface))
          MainActor.assumeIsolated {
            instance(address)?.global(name: name, interface: text, version: version)
          }
        },
        global_remove: { data, _, name in
          let address = UInt(bitPattern: data)
          MainActor.assumeIsolated { instance(address)?.globalRemoved(name: name) }
        }))
    return listener
  }()

  private nonisolated(unsafe) static let callbackListener = {
    let listener = UnsafeMutablePointer<wl_callback_listener>.allocate(capacity: 1)
    listener.initialize(
      to: wl_callback_listener(done: { data, callback, _ in
        let (address, callback) = (UInt(bitPattern: data), key(callback))
        MainActor.assumeIsolated { instance(address)?.callbackDone(callback) }
      }))
    return listener
  }()

  private nonisolated(unsafe) static let seatListener = {
    let listener = UnsafeMutablePointer<wl_seat_listener>.allocate(capacity: 1)
    listener.initialize(
      to: wl_seat_listener(
        capabilities: { data, _, capabilities in
          let address = UInt(bitPattern: data)
          MainActor.assumeIsolated { instance(address)?.capabilities(capabilities) }
        },
        name: { _, _, _ in }))
    return listener
  }()

  private nonisolated(unsafe) static let keyboardListener = {
    let listener = UnsafeMutablePointer<wl_keyboard_listener>.allocate(capacity: 1)
    listener.initialize(
      to: wl_keyboard_listener(
        keymap: { data, _, format, descriptor, size in
          let address = UInt(bitPattern: data)
          MainActor.assumeIsolated {
            guard let me = instance(address) else {
              _ = Glibc.close(descriptor)
              return
            }
            me.keymap(format: format, descriptor: descriptor, size: size)
          }
        },
        enter: { _, _, _, _, _ in },
        leave: { _, _, _, _ in },
        key: { data, _, _, _, key, state in
          let address = UInt(bitPattern: data)
          let pressed = state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue
          MainActor.assumeIsolated { instance(address)?.key(key, pressed: pressed) }
        },
        modifiers: { data, _, _, depressed, _, _, _ in
          let address = UInt(bitPattern: data)
          MainActor.assumeIsolated { instance(address)?.modifiers(depressed: depressed) }
        },
        repeat_info: { _, _, _, _ in }))
    return listener
  }()

  private nonisolated(unsafe) static let pointerListener = {
    let listener = UnsafeMutablePointer<wl_pointer_listener>.allocate(capacity: 1)
    listener.initialize(
      to: wl_pointer_listener(
        enter: { data, _, _, surface, x, y in
          let (address, surface) = (UInt(bitPattern: data), key(surface))
          MainActor.assumeIsolated { instance(address)?.pointerEntered(surface, x: x, y: y) }
        },
        leave: { data, _, _, _ in
          let address = UInt(bitPattern: data)
          MainActor.assumeIsolated { instance(address)?.pointerLeft() }
        },
        motion: { data, _, _, x, y in
          let address = UInt(bitPattern: data)
          MainActor.assumeIsolated { instance(address)?.pointerMoved(x: x, y: y) }
        },
        button: { data, _, _, _, button, state in
          let address = UInt(bitPattern: data)
          let released = state == WL_POINTER_BUTTON_STATE_RELEASED.rawValue
          MainActor.assumeIsolated { instance(address)?.pointerButton(button, released: released) }
        },
        axis: { _, _, _, _, _ in },
        frame: { _, _ in },
        axis_source: { _, _, _ in },
        axis_stop: { _, _, _, _ in },
        axis_discrete: { _, _, _, _ in },
        axis_value120: { _, _, _, _ in }))
    return listener
  }()

  private nonisolated(unsafe) static let layerListener = {
    let listener = UnsafeMutablePointer<zwlr_layer_surface_v1_listener>.allocate(capacity: 1)
    listener.initialize(
      to: zwlr_layer_surface_v1_listener(
        configure: { data, layer, serial, width, height in
          let (address, layer) = (UInt(bitPattern: data), key(layer))
          MainActor.assumeIsolated {
            instance(address)?.configure(layer, serial: serial, width: width, height: height)
          }
        },
        closed: { data, layer in
          let (address, layer) = (UInt(bitPattern: data), key(layer))
          MainActor.assumeIsolated { instance(address)?.closed(layer) }
        }))
    return listener
  }()

  private nonisolated(unsafe) static let managerListener = {
    let listener = UnsafeMutablePointer<zwlr_foreign_toplevel_manager_v1_listener>.allocate(
      capacity: 1)
    listener.initialize(
      to: zwlr_foreign_toplevel_manager_v1_listener(
        toplevel: { data, _, handle in
          let (address, handle) = (UInt(bitPattern: data), key(handle))
          MainActor.assumeIsolated {
            instance(address)?.toplevel(OpaquePointer(bitPattern: handle))
          }
        },
        finished: { _, manager in zwlr_foreign_toplevel_manager_v1_destroy(manager) }))
    return listener
  }()

  private nonisolated(unsafe) static let handleListener = {
    let listener = UnsafeMutablePointer<zwlr_foreign_toplevel_handle_v1_listener>.allocate(
      capacity: 1)
    listener.initialize(
      to: zwlr_foreign_toplevel_handle_v1_listener(
        title: { _, _, _ in },
        app_id: { _, _, _ in },
        output_enter: { _, _, _ in },
        output_leave: { _, _, _ in },
        state: { data, handle, array in
          let (address, handle) = (UInt(bitPattern: data), key(handle))
          // An array of uint32 states.
          var states: [UInt32] = []
          if let array, let values = array.pointee.data {
            let count = array.pointee.size / MemoryLayout<UInt32>.size
            let words = values.bindMemory(to: UInt32.self, capacity: count)
            states = (0..<count).map { words[$0] }
          }
          MainActor.assumeIsolated { instance(address)?.toplevelState(handle, states) }
        },
        done: { _, _ in },
        closed: { _, _ in },
        parent: { _, _, _ in }))
    return listener
  }()

  private nonisolated(unsafe) static let bufferListener = {
    let listener = UnsafeMutablePointer<wl_buffer_listener>.allocate(capacity: 1)
    listener.initialize(
      to: wl_buffer_listener(release: { data, buffer in
        let (address, buffer) = (UInt(bitPattern: data), key(buffer))
        MainActor.assumeIsolated { instance(address)?.released(buffer) }
      }))
    return listener
  }()
}
