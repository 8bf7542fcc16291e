import FoundationEssentials
import Glibc
import GrowConfig
import GrowCore
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// The Wayland desktop monitor: flags distracting windows during focus and pauses when nobody
/// is there, like the x11 plugin, through the same `DistractionWatch`. It runs when
/// `WAYLAND_DISPLAY` is set (the x11 plugin stands down then) and picks its sources from the
/// session:
/// - the focused window: sway's or i3's IPC (`$SWAYSOCK`, `$I3SOCK`), Hyprland's event socket
///   (`$HYPRLAND_INSTANCE_SIGNATURE`), else wlroots' toplevel list (WaylandDisplay); GNOME
///   and KDE give a plain client no active window, and the plugin says so rather than pretend;
/// - idle and return: the compositor's idle protocol (WaylandDisplay), on GNOME Mutter's idle
///   monitor over D-Bus (MutterIdle).
/// Every source is a socket on the daemon's loop with a reply deadline and a reconnect.
public final class WaylandPlugin: GrowPlugin {
  public static let id = "wayland"
  public static var summary: String {
    Message(
      "flags distracting windows during focus and pauses when you are away (Wayland)"
    ).render()
  }
  public static let settings = DistractionWatch.settings

  private let context: PluginContext
  private var watch: DistractionWatch!
  private var windows: (any WindowSource)?
  private var display: WaylandDisplay?
  /// Whether the focused window comes from the display's toplevel list.
  private var toplevelSource = false
  private var mutterIdle: MutterIdle?
  /// What the session gives the monitor, for `grow plugins` and `grow doctor`.
  private var facts: [Worded] = []
  /// What the last `block` could not do, shown after the facts until a later block works.
  private var blockProblem: Worded?
  private var windowTrouble: Worded?
  /// Whether the compositor withholds something the monitor needs (the active window, idle):
  /// the note's kind, `PluginLimit.compositorWithholds`, for `grow doctor`.
  private var withheld = false

  public init(context: PluginContext) throws {
    self.context = context
    try context.config.check(against: Self.settings, cards: [])
    let environment = context.environment
    guard let display = environment["WAYLAND_DISPLAY"], !display.isEmpty else {
      throw PluginError.limited(
        Message(
          "not a Wayland session (WAYLAND_DISPLAY is not set); the x11 plugin watches X sessions"
        ).render(), .otherSession)
    }
    let session = CompositorSession(environment: environment)
    watch = try DistractionWatch(context: context) { [weak self] window, action in
      guard let self else { return }
      guard toplevelSource else {
        windows?.block(window, action)
        return
      }
      switch action {
      case .minimize: minimizeToplevel(window)
      case .close:
        self.display?.requestClose(window)
        context.log.info("asked the compositor to close \(window.app) (block = close)")
      }
    }
    var facts = [Worded(Message("compositor: {compositor}"), ["compositor": session.compositor])]
    switch session.windowSource {
    case .i3IPC(let path, let compositor):
      let source = I3WindowSource(
        path: path, compositor: compositor, loop: context.loop, log: context.log)
      windows = source
      source.start()
    case .hyprland(let events, let requests):
      windows = HyprlandWindowSource(
        events: events, requests: requests, loop: context.loop, log: context.log)
    case .foreignToplevel:
      toplevelSource = true
    case .none(let why):
      facts.append(why)
      withheld = true
    }
    if let windows {
      facts.append(windows.activeWindowFact)
      facts.append(windows.blockFact)
      windows.onWindow = { [weak self] window in self?.watch.windowChanged(window) }
      windows.onTrouble = { [weak self] trouble in self?.windowTroubleChanged(trouble) }
    }
    self.facts = facts
    windows?.onBlockOutcome = { [weak self] problem in self?.blockOutcome(problem) }
    showNote()
    context.log.info(
      "watching Wayland display \(display): " + facts.map(\.english).joined(separator: "; "))
    if session.isGNOME {
      startMutterIdle()
    } else {
      connect(to: display)
    }
  }

  public func stop() {
    windows?.stop()
    windows = nil
    self.display?.close()
    self.display = nil
    mutterIdle?.stop()
    mutterIdle = nil
    watch.stop()
  }

  // MARK: Away

  /// The Wayland connection: the compositor's idle notification, armed at `idle-pause` ("idle"
  /// once that long passed without input, "resumed" at the next input), and the toplevel list
  /// when no IPC names the focused window.
  private func connect(to name: String) {
    let milliseconds = UInt32(min(watch.idlePause * 1000, Double(UInt32.max)))
    let display: WaylandDisplay
    do {
      display = try WaylandDisplay(
        display: name, timeoutMilliseconds: milliseconds, watchToplevels: toplevelSource,
        loop: context.loop)
    } catch {
      let reason = error.message
      if toplevelSource {
        facts.append(Worded(Message("no window source: {error}"), ["error": reason]))
      }
      withheld = true
      return addFact(Worded(Message("{error}: away detection is off"), ["error": reason]))
    }
    self.display = display
    display.onReady = { [weak self] idleProtocol, toplevels in
      guard let self else { return }
      if !toplevels && toplevelSource || idleProtocol == nil { withheld = true }
      if toplevelSource {
        facts +=
          toplevels
          ? [
            Worded(
              Message("active window from {protocol}"),
              ["protocol": "zwlr_foreign_toplevel_manager_v1"]),
            Worded(Message("block = minimize asks the compositor to minimise the window")),
          ]
          : [
            Worded(
              Message(
                "no window source: no SWAYSOCK, I3SOCK or HYPRLAND_INSTANCE_SIGNATURE, and the "
                  + "compositor offers no zwlr_foreign_toplevel_manager_v1, so distractions are "
                  + "not flagged"))
          ]
      }
      addFact(
        idleProtocol.map { Worded(Message("idle from {protocol}"), ["protocol": $0.rawValue]) }
          ?? Worded(
            Message(
              "the compositor offers neither ext_idle_notifier_v1 nor org_kde_kwin_idle: "
                + "away detection is off")))
    }
    display.onWindow = { [weak self] window in self?.watch.windowChanged(window) }
    display.onIdle = { [weak self] in
      guard let self else { return }
      watch.becameIdle(idleSeconds: watch.idlePause)
    }
    display.onActive = { [weak self] in self?.watch.becameActive() }
    display.onLost = { [weak self] reason in
      guard let self else { return }
      self.display = nil
      watch.becameActive()
      if toplevelSource { watch.windowChanged(nil) }
      context.log.warning(reason.english)
      context.setUnavailable(
        Message("{reason}; 'grow plugins reload wayland' connects again").render([
          "reason": reason.text
        ]))
    }
  }

  /// `set_minimized` on the toplevel, then a look whether the compositor did it: sway, for
  /// one, has no minimised state and ignores it, which the log says rather than pretend.
  private func minimizeToplevel(_ window: DesktopWindow) {
    guard let display else { return }
    display.minimize(window)
    _ = context.loop.after(seconds: 0.5) { [weak self] in
      guard let self, self.display === display, let minimized = display.isMinimized(window) else {
        return
      }
      guard !minimized else { return blockOutcome(nil) }
      context.log.warning(
        "the compositor did not minimise \(window.app); block = minimize only flags it here")
      blockOutcome(
        Worded(
          Message(
            "the compositor ignored the minimise request for {app}: "
              + "block = minimize only flags windows here"), ["app": window.app]))
    }
  }

  /// A block worked (nil) or could not be done: `grow plugins` says so until one works.
  private func blockOutcome(_ problem: Worded?) {
    guard problem != blockProblem else { return }
    blockProblem = problem
    showNote()
  }

  private func showNote() {
    watch.sessionLimit = withheld ? .compositorWithholds : nil
    watch.sessionFacts = (facts + (blockProblem.map { [$0] } ?? [])).map(\.text)
  }

  /// GNOME: Mutter's idle monitor over the session bus (any Mutter version; the Wayland idle
  /// protocol came to Mutter only in 47).
  private func startMutterIdle() {
    guard let bus = context.sessionBus else {
      withheld = true
      return addFact(
        Worded(
          Message("no session bus for {service}: away detection is off"),
          ["service": MutterIdle.service]))
    }
    let idle = MutterIdle(
      bus: bus, milliseconds: UInt64(watch.idlePause * 1000), context: context)
    mutterIdle = idle
    idle.onReady = { [weak self] problem in
      if problem != nil { self?.withheld = true }
      self?.addFact(
        problem ?? Worded(Message("idle from {protocol}"), ["protocol": MutterIdle.service]))
    }
    idle.onIdle = { [weak self] in
      guard let self else { return }
      watch.becameIdle(idleSeconds: watch.idlePause)
    }
    idle.onActive = { [weak self] in self?.watch.becameActive() }
    idle.start()
  }

  private func addFact(_ fact: Worded) {
    facts.append(fact)
    showNote()
    context.log.info(fact.english)
  }

  private func windowTroubleChanged(_ trouble: Worded?) {
    windowTrouble = trouble
    if let trouble {
      context.setUnavailable(trouble.text)
    } else {
      context.setAvailable()
    }
  }
}

/// Which Wayland session this is and what it offers a plain client, from the environment the
/// compositor gave the daemon.
struct CompositorSession {
  enum WindowSourceChoice: Equatable {
    case i3IPC(path: String, compositor: String)
    case hyprland(events: String, requests: String)
    /// wlroots' toplevel list on the Wayland connection, if the compositor offers it.
    case foreignToplevel
    /// No source: why, as the note says it.
    case none(Worded)
  }

  let compositor: String
  let windowSource: WindowSourceChoice
  /// GNOME Shell: idle comes from Mutter's D-Bus idle monitor.
  var isGNOME: Bool { compositor.hasPrefix("GNOME") }

  init(environment: [String: String]) {
    func value(_ name: String) -> String? {
      environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
    let desktop = value("XDG_CURRENT_DESKTOP")?.uppercased() ?? ""
    if let sway = value("SWAYSOCK") {
      compositor = "sway"
      windowSource = .i3IPC(path: sway, compositor: "sway")
    } else if let i3 = value("I3SOCK") {
      compositor = "i3"
      windowSource = .i3IPC(path: i3, compositor: "i3")
    } else if let signature = value("HYPRLAND_INSTANCE_SIGNATURE") {
      compositor = "Hyprland"
      // Hyprland 0.40 and later keep the sockets in the runtime directory; older ones in /tmp.
      let base =
        value("XDG_RUNTIME_DIR").map { "\($0)/hypr/\(signature)" } ?? "/tmp/hypr/\(signature)"
      windowSource = .hyprland(events: base + "/.socket2.sock", requests: base + "/.socket.sock")
    } else if desktop.split(separator: ":").contains("GNOME") {
      compositor = "GNOME Shell (Mutter)"
      windowSource = .none(
        Worded(Message("GNOME gives a plain client no active window: distractions are not flagged"))
      )
    } else if desktop.split(separator: ":").contains("KDE") {
      compositor = "KDE Plasma (KWin)"
      windowSource = .none(
        Worded(Message("KWin gives a plain client no active window: distractions are not flagged")))
    } else {
      // river, labwc, Wayfire (or sway without SWAYSOCK): the toplevel list, if offered.
      compositor = desktop.isEmpty ? "unknown compositor" : desktop.lowercased()
      windowSource = .foreignToplevel
    }
  }
}

// `grow_plugin_ID`, not `grow_plugin`: the built-in plugins link into one test binary.
@_cdecl("grow_plugin_wayland")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(WaylandPlugin.self) }
