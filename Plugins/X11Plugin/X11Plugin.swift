import FoundationEssentials
import Glibc
import GrowConfig
import GrowCore
import GrowDBus
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// The X11 idle and active-window monitor: flags distracting windows during focus, pauses
/// focus when nobody is there. Event-driven: PropertyNotify for the active window and its
/// title, XSync IDLETIME alarms for idle; the X connection sits in the daemon's FileWatcher,
/// so the plugin costs no wake-up while nothing happens on the desktop.
///
/// Nothing waits for the X server (a stopped server must not stop the daemon): every read is a
/// request whose reply comes on a later turn of the loop (X11Display); under i3, `block` goes
/// over i3's IPC (I3Command), answered on the loop with a deadline. Changes are coalesced: a
/// window's title is read again at most once per reply and per `titleInterval`, however fast a
/// client retitles it, and each turn handles at most `eventsPerTurn` events. A server that leaves a
/// request unanswered for `X11Display.replyDeadline` shows the plugin as unavailable until it
/// answers.
public final class X11Plugin: GrowPlugin {
  public static let id = "x11"
  public static var summary: String {
    Message(
      "flags distracting windows during focus and pauses when you are away"
    ).render()
  }
  public static let settings = DistractionWatch.settings

  private let context: PluginContext
  /// The distraction and away logic this plugin feeds (shared with the wayland plugin).
  private var watch: DistractionWatch!
  /// `DISPLAY`, as it was when the plugin started.
  private let displayName: String
  private let connect: (String, any EventLoop) throws(X11Error) -> any X11Connection
  private var display: (any X11Connection)?
  /// Events handled per turn of the loop; the rest wait for the next turn.
  static let eventsPerTurn = 256
  /// A title is read again at most this often: a flood of retitles costs ten reads a second.
  static let titleInterval: TimeInterval = 0.1
  /// What changed and is to be read again. At most one read of each kind is in flight.
  private var activeStale = false
  private var staleTitles: Set<XWindowID> = []
  private var sessionStale = false
  private var readingActive = false
  private var readingTitle = false
  private var readingSession = false
  /// When the last title read was sent, on the loop's monotonic clock.
  private var lastTitleRead: MonotonicInstant?
  private var titleWork: (any Alarm)?
  /// The active window whose PropertyNotify is off until its next title read.
  private var titleWatchPaused: XWindowID?
  /// Whether a turn is queued on the loop already.
  private var turnQueued = false
  /// Whether the display answered its setup questions (atoms are known only then).
  private var displayReady = false
  private var displayWatch: (any DescriptorWatch)?
  private var windowManager = ""
  /// i3's IPC socket, when the window manager is i3: `block` goes through it (i3 ignores
  /// iconify requests, but moves a window to its scratchpad when told over IPC).
  private var i3Socket: String?
  /// Whether the window manager takes `_NET_CLOSE_WINDOW`; without it, `block = close` asks
  /// the window's program itself (WM_DELETE_WINDOW).
  private var windowManagerTakesClose = true
  /// The session's facts as last read, and what the last `block` could not do: the note.
  private var sessionFacts: [String] = []
  private var blockProblem: Worded?
  /// While the X server is away: the socket directory, watched for the server's socket.
  private var serverWatch: DirectoryWatch?
  private var reconnectWork: (any Alarm)?

  /// The focused window, and the one whose title we follow.
  private var active: WindowInfo?
  /// Whether the idle alarm waits for "idle" (true) or for "input again" (false).
  private var waitingForIdle = true
  /// Counts idle spells, so an answer about the counter that arrives after input is dropped.
  private var idleSpell = 0

  public convenience init(context: PluginContext) throws {
    try self.init(context: context) { name, loop throws(X11Error) in
      try X11Display(name: name, loop: loop)
    }
  }

  /// Opens the display through `connect` (the seam the plugin's own tests use to
  /// hand it a scripted `X11Connection`).
  init(
    context: PluginContext,
    connect: @escaping (String, any EventLoop) throws(X11Error) -> any X11Connection
  ) throws {
    self.context = context
    self.connect = connect
    try context.config.check(against: Self.settings, cards: [])
    // Xwayland is no view of a Wayland session: _NET_ACTIVE_WINDOW is 0 whenever a native
    // window has focus, and its idle counter climbs while the person types into one.
    if let wayland = context.environment["WAYLAND_DISPLAY"], !wayland.isEmpty {
      throw PluginError.limited(
        Message(
          "this is a Wayland session (WAYLAND_DISPLAY={display}): the wayland plugin watches it; "
            + "Xwayland sees neither native windows nor their input"
        ).render(["display": wayland]), .otherSession)
    }
    let name = context.environment["DISPLAY"] ?? ""
    guard !name.isEmpty else {
      throw PluginError.unavailable(
        Message("DISPLAY is not set; the X11 monitor needs an X session").render())
    }
    displayName = name
    let display: any X11Connection
    do {
      display = try connect(name, context.loop)
    } catch {
      throw PluginError.unavailable(error.message)
    }
    watch = try DistractionWatch(context: context) { [weak self] window, action in
      self?.block(window, action)
    }
    connected(to: display, again: false)
  }

  /// Starts watching a freshly opened display: at start, and when the server came back. The
  /// display answers its setup questions on later turns; watching starts when it has.
  private func connected(to display: any X11Connection, again: Bool) {
    self.display = display
    displayReady = false
    display.onAnsweringChanged = { [weak self] answering in self?.answeringChanged(answering) }
    displayWatch = context.loop.watch(display.descriptor, for: .readable) { [weak self] _ in
      self?.readX()
    }
    display.whenReady { [weak self] in
      guard let self, self.display === display else { return }
      displayReady = true
      if !display.hasIdleAlarms {
        context.log.warning("the X server has no SYNC IDLETIME counter; away detection is off")
      }
      describeSession { [weak self] in
        guard let self else { return }
        context.log.info(
          (again
            ? "the X server on \(displayName) is back; watching it again"
            : "watching X display \(displayName)") + " (window manager: \(windowManager))")
      }
      activeStale = true
      armIdleAlarm()
      refresh()
    }
    readX()
  }

  /// The display left a request unanswered past its deadline (the server is stopped or hung),
  /// or answers again. The timer and the bus go on meanwhile; what changed while the server
  /// was silent is read again once it answers.
  private func answeringChanged(_ answering: Bool) {
    if answering {
      context.log.info("the X server on \(displayName) answers again")
      context.setAvailable()
      activeStale = true
      sessionStale = true
      queueTurn()
    } else {
      context.log.warning(
        "the X server on \(displayName) has not answered for "
          + "\(DurationText.format(X11Display.replyDeadline)); waiting for it")
      context.setUnavailable(
        Message("X server not answering ({display}); the monitor goes on when it answers").render([
          "display": displayName
        ]))
    }
  }

  /// What `grow plugins` and `grow doctor` show: what this X session gives the monitor. Again
  /// whenever a window manager starts, which may be after the server (at login, or when the
  /// server came back).
  private func describeSession(then done: (() -> Void)? = nil) {
    guard let display else { return }
    readingSession = true
    display.readWindowManager { [weak self] facts in
      guard let self, self.display === display else { return }
      readingSession = false
      describe(facts, display: display)
      done?()
      refresh()
    }
  }

  private func describe(_ session: WindowManagerFacts, display: any X11Connection) {
    let previous = windowManager
    windowManager = session.name ?? "no window manager"
    let manager = ["manager": session.name ?? Message("no window manager").render()]
    var facts = [
      session.publishesActiveWindow
        ? Message("{manager} publishes _NET_ACTIVE_WINDOW").render(manager)
        : Message("{manager} publishes NO _NET_ACTIVE_WINDOW").render(manager),
      display.hasIdleAlarms
        ? Message("XSync idle alarms").render() : Message("NO XSync IDLETIME").render(),
      // The extension's name, no sentence.
      display.hasScreenSaverExtension ? "XScreenSaver" : Message("no XScreenSaver").render(),
    ]
    let isI3 = windowManager.lowercased().hasPrefix("i3")
    // The root property names this display's i3; I3SOCK is what an i3 session exports.
    i3Socket =
      isI3
      ? session.i3Socket ?? context.environment["I3SOCK"].flatMap { $0.isEmpty ? nil : $0 }
      : nil
    if isI3 {
      facts.append(
        i3Socket == nil
          ? Message(
            "i3 ignores minimise requests and its IPC socket was not found: "
              + "block = minimize only flags windows here"
          ).render()
          : Message("block = minimize moves windows to i3's scratchpad (IPC)").render())
    }
    windowManagerTakesClose = session.takesCloseRequests
    if windowManager != previous { blockProblem = nil }
    sessionFacts = facts
    // No _NET_ACTIVE_WINDOW or no idle alarms: another window manager or X server has them.
    watch.sessionLimit =
      session.publishesActiveWindow && display.hasIdleAlarms ? nil : .desktopLacks
    showNote()
    if isI3, i3Socket == nil, windowManager != previous {
      context.log.warning(
        "i3 ignores minimise requests and its IPC socket was not found (no I3_SOCKET_PATH on the "
          + "root window, no I3SOCK); block = minimize only flags windows")
    }
  }

  private func showNote() {
    watch.sessionFacts = sessionFacts + (blockProblem.map { [$0.text] } ?? [])
  }

  public func stop() {
    watch.stop()
    titleWork?.cancel()
    reconnectWork?.cancel()
    serverWatch?.cancel()
    serverWatch = nil
    displayWatch?.cancel()
    displayWatch = nil
    display?.close()
    display = nil
  }

  // MARK: X events

  /// One turn: the replies that came and a bounded batch of events, then at most one read of
  /// each thing that changed, then what was asked is sent. Another turn is queued when events
  /// are left, or when sending may have read more from the server (XCB reads while it
  /// writes, and what it read then waits in memory, where the socket no longer says so).
  private func readX() {
    turnQueued = false
    guard let display else { return }
    let (notices, more) = display.take(limit: Self.eventsPerTurn)
    if display.connectionLost { return serverGone() }
    handle(notices)
    // handle() may have disabled the plugin.
    guard self.display === display else { return }
    refresh()
    let wrote = display.flush()
    if display.connectionLost { return serverGone() }
    if more || wrote { queueTurn() }
  }

  private func queueTurn() {
    guard !turnQueued else { return }
    turnQueued = true
    _ = context.loop.after(seconds: 0) { [weak self] in self?.readX() }
  }

  /// Notes what changed; `refresh()` reads it again.
  private func handle(_ notices: [X11Notice]) {
    guard let display else { return }
    for notice in notices {
      switch notice {
      case .activeWindowChanged:
        activeStale = true
      case .windowManagerChanged:
        sessionStale = true
      case .titleChanged(let window):
        // Also for a window whose info is being read: its reply may be handled after this.
        staleTitles.insert(window)
      case .idleAlarm(let milliseconds):
        idleAlarmFired(counter: milliseconds)
      }
      if display.connectionLost { return serverGone() }
    }
  }

  // MARK: The X server going and coming back

  /// The connection broke (the server crashed or was stopped). A local display's server is
  /// waited for: its socket (`/tmp/.X11-unix/XN`) is made anew when one starts on the same
  /// display, and inotify says so; the plugin stays loaded, shown as unavailable meanwhile.
  private func serverGone() {
    disconnect()
    guard let socket = X11Socket.path(forDisplay: displayName) else {
      stop()
      return context.disable(
        because: .unavailable(
          Message("the X server on {display} went away; 'grow plugins reload x11' reconnects")
            .render(["display": displayName])))
    }
    do {
      serverWatch = try DirectoryWatch(directory: socket.directory) { [weak self] name in
        if name == socket.name { self?.reconnect() }
      }
    } catch {
      stop()
      return context.disable(
        because: .unavailable(
          Message(
            "the X server on {display} went away, and its socket cannot be watched ({error}); "
              + "'grow plugins reload x11' reconnects"
          ).render(["display": displayName, "error": "\(error)"])))
    }
    context.setUnavailable(
      Message("the X server on {display} went away; the monitor reconnects when it is back")
        .render(["display": displayName]))
    // It may be back already (or only our connection was closed, by xkill say).
    reconnect(retries: 0)
  }

  /// Forgets the broken connection and what was seen through it. A flagged distraction ends
  /// now: nothing can say how long it went on.
  private func disconnect() {
    watch.sourceLost()
    displayWatch?.cancel()
    displayWatch = nil
    display?.close()
    display = nil
    activeStale = false
    staleTitles.removeAll()
    sessionStale = false
    readingActive = false
    readingTitle = false
    readingSession = false
    titleWork?.cancel()
    titleWork = nil
    titleWatchPaused = nil
    active = nil
    waitingForIdle = true
    idleSpell += 1
    context.setNote(nil)
  }

  /// Connects to the display again. The socket exists a moment before the server accepts
  /// connections: a refused connection is tried again a few times, backing off (about 3 s in
  /// all); after that the plugin waits for the socket to be made again.
  private func reconnect(retries: Int = 6, delay: TimeInterval = 0.05) {
    reconnectWork?.cancel()
    reconnectWork = nil
    guard display == nil, serverWatch != nil else { return }
    guard let display = try? connect(displayName, context.loop) else {
      guard retries > 0 else { return }
      reconnectWork = context.loop.after(seconds: delay) { [weak self] in
        self?.reconnect(retries: retries - 1, delay: delay * 2)
      }
      return
    }
    serverWatch?.cancel()
    serverWatch = nil
    context.setAvailable()
    connected(to: display, again: true)
  }

  /// Reads again what changed, one read of each at a time: while one is in flight, further
  /// changes only mark it stale, and its reply's handler comes back here.
  private func refresh() {
    guard let display, displayReady, display.answering else { return }
    if sessionStale, !readingSession {
      sessionStale = false
      describeSession()
    }
    if activeStale, !readingActive {
      activeStale = false
      readActiveWindow(display)
    }
    // The active window's own title; a read of the active window reads its title anyway.
    staleTitles = staleTitles.filter { $0 == active?.id }
    if let id = active?.id, staleTitles.contains(id), !readingActive, !readingTitle {
      let now = context.loop.monotonicNow
      if let last = lastTitleRead, case let wait = last + Self.titleInterval - now, wait > 0 {
        guard titleWork == nil else { return }
        // Until the next read nothing but the title's latest value matters: the server is
        // asked to stop sending the window's PropertyNotify, so a client retitling it as
        // fast as it can costs a few events per interval, not one per retitle. Watching again
        // before the read loses no change (the server handles requests in order).
        display.watchProperties(of: id, false)
        titleWatchPaused = id
        titleWork = context.loop.after(seconds: wait) { [weak self] in
          self?.titleWork = nil
          self?.readX()
        }
        return
      }
      staleTitles.remove(id)
      if titleWatchPaused == id { display.watchProperties(of: id, true) }
      titleWatchPaused = nil
      readTitle(of: id, display)
    }
  }

  private func readActiveWindow(_ display: any X11Connection) {
    readingActive = true
    display.readActiveWindow { [weak self] window in
      guard let self, self.display === display else { return }
      guard let window else { return activeWindowRead(nil, display) }
      // Watch before reading, so that a title change after the read is heard (the server
      // handles requests in order).
      if window != active?.id { display.watchProperties(of: window, true) }
      // The window may be destroyed between the notice and these reads: info is nil then.
      display.readInfo(of: window) { [weak self] info in
        guard let self, self.display === display else { return }
        activeWindowRead(info, display)
      }
    }
  }

  private func activeWindowRead(_ info: WindowInfo?, _ display: any X11Connection) {
    readingActive = false
    if let old = active?.id, old != info?.id {
      display.watchProperties(of: old, false)
      // A paused watch ends with the window's turn as the active one.
      if titleWatchPaused == old { titleWatchPaused = nil }
    }
    // Any client may set _NET_ACTIVE_WINDOW on the root window, as often as it likes: only a
    // change is news for the other plugins.
    if info != active {
      active = info
      watch.windowChanged(info?.desktopWindow)
    }
    refresh()
  }

  private func readTitle(of id: XWindowID, _ display: any X11Connection) {
    readingTitle = true
    lastTitleRead = context.loop.monotonicNow
    display.readTitle(of: id) { [weak self] title in
      guard let self, self.display === display else { return }
      readingTitle = false
      if let title, id == active?.id, title != active?.title {
        active?.title = title
        watch.windowChanged(active?.desktopWindow)
      }
      refresh()
    }
  }

  // MARK: Block

  /// Minimises or closes a flagged window the way this window manager takes it: over i3's IPC
  /// under i3, else by the EWMH/ICCCM requests every other window manager reads.
  private func block(_ window: DesktopWindow, _ action: WindowBlock) {
    guard let id = XWindowID(window.id) else { return }
    if let i3Socket { return blockOverI3(window, id, action, socket: i3Socket) }
    guard let display else { return }
    switch action {
    case .minimize:
      display.iconify(id)
      // The request has no answer: a look at the window's state says whether it was honoured.
      _ = context.loop.after(seconds: 0.5) { [weak self] in
        guard let self, let display = self.display, display.answering else { return }
        display.readIsHidden(id) { [weak self] hidden in
          // Nil: the window is gone meanwhile, and out of sight all the same.
          guard let self, let hidden else { return }
          blockDone(
            window, action,
            problem: hidden
              ? nil
              : Worded(
                Message(
                  "{manager} ignored the minimise request for {app}: "
                    + "block = {action} only flags windows here"),
                [
                  "manager": windowManager, "app": window.app, "action": action.rawValue,
                ]))
        }
        readX()
      }
    case .close where windowManagerTakesClose:
      display.requestClose(id)
      context.log.info("asked \(windowManager) to close \(window.app) (block = close)")
    case .close:
      // What a window manager's close button sends; a program that does not take it would
      // have to be killed, which block = close never does.
      display.readTakesDeleteWindow(id) { [weak self] takes in
        guard let self, let display = self.display, let takes else { return }
        guard takes else {
          return blockDone(
            window, action,
            problem: Worded(
              Message(
                "{manager} has no _NET_CLOSE_WINDOW and {app} takes no WM_DELETE_WINDOW: "
                  + "block = {action} only flags windows here"),
              ["manager": windowManager, "app": window.app, "action": action.rawValue]))
        }
        display.sendDeleteWindow(id)
        context.log.info(
          "asked \(window.app) to close (WM_DELETE_WINDOW; \(windowManager) has no _NET_CLOSE_WINDOW)"
        )
        readX()
      }
    }
    readX()
  }

  /// i3's own commands (`[id=…] move scratchpad`, `[id=…] kill`) on a connection of their
  /// own, answered on the loop within `I3Command.standardDeadline`.
  private func blockOverI3(
    _ window: DesktopWindow, _ id: XWindowID, _ action: WindowBlock, socket: String
  ) {
    let command = I3Command.blocking("[id=\(id)]", action)
    I3Command.run(command, socket: socket, loop: context.loop) { [weak self] result in
      guard let self else { return }
      switch result {
      case .success: blockDone(window, action, problem: nil)
      case .failure(let error):
        blockDone(
          window, action,
          problem: Worded(
            Message(
              "{manager} did not run '{command}' for {app}: {error}: "
                + "block = {action} only flags windows here"),
            [
              "manager": windowManager, "app": window.app, "action": action.rawValue,
              "command": command, "error": "\(error)",
            ]))
        // i3 restarted in place or moved its socket: read I3_SOCKET_PATH again for the next.
        if case .connection = error {
          sessionStale = true
          queueTurn()
        }
      }
    }
  }

  /// Logs what `block` did; what it could not do goes into the note too, so `grow plugins`
  /// says block = minimize only flags windows here, until a later block works.
  private func blockDone(_ window: DesktopWindow, _ action: WindowBlock, problem: Worded?) {
    let wanted = action == .minimize ? "minimised" : "closed"
    guard let problem else {
      context.log.info("\(wanted) \(window.app) (block = \(action.rawValue))")
      if blockProblem != nil {
        blockProblem = nil
        showNote()
      }
      return
    }
    context.log.warning(problem.english)
    blockProblem = problem
    showNote()
  }

  // MARK: Away

  private func armIdleAlarm() {
    guard let display, display.hasIdleAlarms else { return }
    let threshold = Int64(watch.idlePause * 1000)
    display.armIdleAlarm(becomingIdle: waitingForIdle, milliseconds: threshold)
    guard waitingForIdle else { return }
    // An alarm armed while already past its value may not fire (a transition alarm fires only on a
    // crossing): look too. Should it fire after all, the second notice is dropped as late
    // (idleAlarmFired).
    let spell = idleSpell
    display.readIdleMilliseconds { [weak self] now in
      guard let self, self.display === display, spell == idleSpell, waitingForIdle,
        let now, now >= threshold
      else { return }
      becameIdle(milliseconds: now)
    }
  }

  private func idleAlarmFired(counter: Int64) {
    let threshold = Int64(watch.idlePause * 1000)
    if waitingForIdle {
      // The "input again" alarm can fire twice for one key press (seen on Xvfb); a late second
      // notice arrives after we re-armed for idle, with a counter below the threshold.
      guard counter >= threshold else { return armIdleAlarm() }
      becameIdle(milliseconds: counter)
    } else if counter >= threshold {
      // Likewise a late "idle" notice after input: still idle, nothing changed.
      return
    } else {
      waitingForIdle = true
      idleSpell += 1
      armIdleAlarm()
      watch.becameActive()
    }
  }

  private func becameIdle(milliseconds: Int64) {
    waitingForIdle = false
    armIdleAlarm()
    watch.becameIdle(idleSeconds: TimeInterval(milliseconds) / 1000)
    // The inhibitor check may have asked the bus; what the watch asked of X goes out now.
    readX()
  }
}

extension WindowInfo {
  /// What the distraction logic sees of an X window.
  var desktopWindow: DesktopWindow {
    DesktopWindow(
      id: String(id), windowClass: windowClass, instance: instance, title: title, pid: pid)
  }
}

// `grow_plugin_ID`, not `grow_plugin`: the built-in plugins link into one test binary.
@_cdecl("grow_plugin_x11")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(X11Plugin.self) }
