import FoundationEssentials
import GrowConfig
import GrowCore
import GrowDBus
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// At a break whose card asks for it (`break-screen = short | long | all`), covers every
/// monitor with Grow's own screen: the time left in large type, what was done, a suggestion,
/// and Skip and Postpone (keyboard: Tab, Enter, Esc), so the person really looks away.
///
/// Postpone works as in Safe Eyes and Workrave: the screen goes and the break comes back later
/// *whole* (the break is made `postpone-length` longer and the screen returns when that much
/// has passed, with the same time left), at most `postpone-limit` times. A fullscreen active
/// window (a talk, a call) or a playing MPRIS media player postpones it the same way.
///
/// On X11 the screen is `BreakScreenDisplay` (XCB); in a Wayland session `BreakScreenWayland`
/// (wlroots' layer shell), and where the compositor has none (GNOME) a critical notification
/// stands in for it. Nothing waits for the display server; the screen redraws only when its
/// clock's second changes, and nothing runs while no screen shows. A screen that cannot show
/// (a grab refused, the server gone) is logged and the break goes on without it.
public final class BreakScreenPlugin: GrowPlugin {
  public static let id = "breakscreen"
  public static var summary: String {
    Message(
      "covers every monitor at a break, with the time left, Skip and Postpone (X11, and Wayland "
        + "compositors with a layer shell)"
    ).render()
  }
  public static let settings = BreakScreenSettings.declared
  static let eventsPerTurn = 64

  private let context: PluginContext
  private let settings: BreakScreenSettings
  private let displayName: String
  /// "the X server on :0", "the Wayland compositor at wayland-1": for the log.
  private let serverName: String
  /// Whether the server is a Wayland compositor (else an X server): each says its own
  /// sentences to the person.
  private let onWayland: Bool
  private let connect: (String, any EventLoop) throws(BreakScreenError) -> any BreakScreenServer
  private var display: (any BreakScreenServer)?
  private var displayWatch: (any DescriptorWatch)?
  private var turnQueued = false

  /// The break the screen is for, as the timer last announced it.
  private var phase: Phase?
  private var state: BreakScreenState?
  /// The next redraw, while the screen shows and the break runs.
  private var tick: (any Alarm)?
  /// When a postponed screen comes back.
  private var comeBack: (any Alarm)?
  /// What was last drawn.
  private var shown: BreakScreenContent?

  public convenience init(context: PluginContext) throws {
    let wayland = !(context.environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    try self.init(context: context) { name, loop throws(BreakScreenError) in
      // On Wayland an X window (Xwayland) would cover no native window: the compositor's own.
      wayland
        ? try BreakScreenWayland(name: name, loop: loop) as any BreakScreenServer
        : try BreakScreenDisplay(name: name, loop: loop)
    }
  }

  /// Opens the display through `connect`: the seam the plugin's tests hand a scripted server.
  init(
    context: PluginContext,
    connect: @escaping (String, any EventLoop) throws(BreakScreenError) -> any BreakScreenServer
  ) throws {
    self.context = context
    self.connect = connect
    do {
      settings = try BreakScreenSettings(context.config, cards: context.timer.deck.names)
    } catch {
      throw PluginError.misconfigured(error.description)
    }
    if let wayland = context.environment["WAYLAND_DISPLAY"], !wayland.isEmpty {
      displayName = wayland
      serverName = "the Wayland compositor at \(wayland)"
      onWayland = true
    } else {
      let name = context.environment["DISPLAY"] ?? ""
      guard !name.isEmpty else {
        throw PluginError.unavailable(
          Message(
            "neither WAYLAND_DISPLAY nor DISPLAY is set; the break screen needs a desktop session"
          ).render())
      }
      displayName = name
      serverName = "the X server on \(name)"
      onWayland = false
    }
    do {
      attach(try connect(displayName, context.loop))
    } catch {
      throw PluginError.unavailable(error.message)
    }
    context.subscribe(PhaseStarted.self) { [weak self] event in self?.started(event.phase) }
    context.subscribe(PhaseEnded.self) { [weak self] event in
      guard let self, event.phase.startedAt == phase?.startedAt else { return }
      end()
    }
    context.subscribe(PhasePaused.self) { [weak self] event in self?.changed(event.phase) }
    context.subscribe(PhaseResumed.self) { [weak self] event in self?.changed(event.phase) }
    context.subscribe(PhaseExtended.self) { [weak self] event in self?.changed(event.phase) }
    // Started during a break (the plugin reloaded, the daemon restarted into a saved session):
    // the screen shows for the rest of it.
    if let phase = runningPhase() { started(phase) }
  }

  /// The running phase, made again from the timer's status.
  private func runningPhase() -> Phase? {
    let status = context.timer.status
    guard let kind = status.state.phaseKind, let startedAt = status.startedAt else { return nil }
    var phase = Phase(
      kind: kind, card: status.card, cycle: status.cycle, duration: status.duration,
      startedAt: startedAt)
    let now = context.loop.now
    phase.pausedTotal = max(now.timeIntervalSince(startedAt) - status.elapsed, 0)
    if status.paused { phase.pausedAt = now }
    return phase
  }

  public func stop() {
    end()
    displayWatch?.cancel()
    displayWatch = nil
    display?.close()
    display = nil
  }

  // MARK: The break

  private func started(_ phase: Phase) {
    end()
    guard phase.kind != .focus, let card = try? context.timer.deck.card(named: phase.card),
      card.breakScreen.covers(phase.kind)
    else { return }
    self.phase = phase
    state = BreakScreenState(phase: phase, setLength: card.longBreakAfter, settings: settings)
    present()
  }

  private func changed(_ phase: Phase) {
    guard phase.startedAt == self.phase?.startedAt else { return }
    self.phase = phase
    redraw()
  }

  /// The break ended (ran out, skipped, stopped): the screen goes.
  private func end() {
    tick?.cancel()
    tick = nil
    comeBack?.cancel()
    comeBack = nil
    phase = nil
    state = nil
    shown = nil
    if let display, display.isShowing {
      display.hide()
      turn()
    }
  }

  private var remaining: TimeInterval {
    guard let phase else { return 0 }
    return phase.remaining(at: context.loop.now)
  }

  /// Shows the screen, unless a fullscreen window or a playing media player asks to wait.
  private func present() {
    guard state != nil, let display = usableDisplay() else { return }
    guard settings.skipWhenFullscreen else { return reveal(on: display) }
    let startedAt = phase?.startedAt
    let still = { [weak self] in
      self?.phase?.startedAt == startedAt && self?.display === display
    }
    display.readFullscreen { [weak self] fullscreen in
      guard let self, still() else { return }
      if fullscreen { return postpone(because: "a fullscreen window is active") }
      guard let bus = context.sessionBus else { return reveal(on: display) }
      MediaPlayers.anyPlaying(on: bus) { [weak self] playing in
        guard let self, still() else { return }
        if playing {
          postpone(because: "a media player is playing")
        } else {
          reveal(on: display)
          turn()
        }
      }
    }
    turn()
  }

  private func reveal(on display: any BreakScreenServer) {
    guard let state else { return }
    let content = state.content(remaining: remaining)
    let startedAt = phase?.startedAt
    display.show(content) { [weak self] refusal in
      guard let self, phase?.startedAt == startedAt, self.display === display else { return }
      if let refusal { return refused(refusal) }
      shown = content
      context.log.info(
        "break screen shown on \(display.monitorCount) monitor(s), frames "
          + (display.sharesFrames
            ? "in memory shared with \(display.kind)" : "sent whole (the server has no MIT-SHM)"))
      scheduleTick()
    }
    turn()
  }

  private func refused(_ refusal: ShowRefusal) {
    if refusal == .noLayerShell { return notifyInstead() }
    context.log.warning(
      "the break screen cannot show: \(refusal.description); the break goes on without it")
    end()
  }

  /// Draws the time left when its second has changed, and arms the next redraw.
  private func redraw() {
    tick?.cancel()
    tick = nil
    guard let state, let display, display.isShowing, shown != nil else { return }
    let content = state.content(remaining: remaining)
    if content != shown {
      display.update(content)
      shown = content
      turn()
    }
    scheduleTick()
  }

  private func scheduleTick() {
    tick?.cancel()
    tick = nil
    guard let phase, !phase.isPaused, let wait = BreakScreenState.nextChange(remaining: remaining)
    else { return }
    tick = context.loop.at(context.loop.now.addingTimeInterval(wait)) { [weak self] in
      self?.tick = nil
      self?.redraw()
    }
  }

  /// Hides the screen and makes the break `postpone-length` longer; the screen comes back when
  /// that much has passed, with the time that was left. Without postpones left, a screen that
  /// is up stays; one not up yet (a fullscreen window) is given up for this break.
  private func postpone(because reason: String) {
    guard var state else { return }
    guard state.postpone() else {
      if display?.isShowing != true {
        context.log.info("\(reason) and no postpone is left: the break goes on without a screen")
        end()
      }
      return
    }
    do {
      try context.timer.extend(by: settings.postponeLength)
    } catch {
      context.log.warning("cannot postpone the break: \(error)")
      return
    }
    self.state = state
    tick?.cancel()
    tick = nil
    shown = nil
    if let display, display.isShowing {
      display.hide()
      turn()
    }
    context.log.info(
      "\(reason): the break screen comes back in \(DurationText.format(settings.postponeLength))")
    comeBack = context.loop.after(seconds: settings.postponeLength) { [weak self] in
      self?.comeBack = nil
      self?.present()
    }
  }

  private func handle(_ input: BreakScreenInput) {
    guard var state, shown != nil else { return }
    let pressed = state.handle(input)
    self.state = state
    switch pressed {
    case .skip:
      do {
        try context.timer.skip()
      } catch {
        context.log.warning("cannot skip the break: \(error)")
      }
    case .postpone:
      postpone(because: "postponed")
    case nil:
      redraw()
    }
  }

  // MARK: GNOME: a notification instead

  /// The break's critical notification (urgency 2: shown until dismissed, over a fullscreen
  /// window too), sent straight to the notification server; logged when there is no bus.
  private func notifyInstead() {
    guard let state else { return }
    let content = state.content(remaining: remaining)
    let body = "\(content.headline). \(content.suggestion) (\(content.timeLeft))"
    end()
    context.log.info(
      "no break screen here; a critical notification instead: \(content.title): \(body)")
    guard let bus = context.sessionBus,
      let notify = try? BusMessage.methodCall(
        destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
        interface: "org.freedesktop.Notifications", member: "Notify",
        arguments: [
          .string("Grow"), .uint32(0), .string("grow"), .string(content.title), .string(body),
          .array(element: "s", []), .vardict(["urgency": .byte(2)]), .int32(-1),
        ])
    else { return }
    bus.call(notify, timeout: 3000) { [weak self] result in
      if case .failure(let error) = result {
        self?.context.log.warning("the break's notification was not shown: \(error)")
      }
    }
  }

  // MARK: The display server

  /// The display, connected again if the server went away since the last break.
  private func usableDisplay() -> (any BreakScreenServer)? {
    if let display, !display.connectionLost, display.answering { return display }
    guard display == nil || display?.connectionLost == true else {
      context.log.warning(
        "\(serverName) does not answer; the break goes on without a screen")
      return nil
    }
    disconnect()
    do {
      attach(try connect(displayName, context.loop))
      context.setAvailable()
      context.log.info("connected to \(serverName) again")
      return display
    } catch {
      context.log.warning("\(error); the break goes on without a screen")
      return nil
    }
  }

  private func attach(_ display: any BreakScreenServer) {
    self.display = display
    display.onAnsweringChanged = { [weak self] answering in
      guard let self else { return }
      if answering {
        context.setAvailable()
      } else {
        context.log.warning(
          "\(serverName) has not answered for "
            + "\(DurationText.format(BreakScreenDisplay.replyDeadline)); no screen until it does")
        let said =
          onWayland
          ? Worded(
            Message("the Wayland compositor at {display} is not answering"),
            ["display": displayName])
          : Worded(Message("the X server on {display} is not answering"), ["display": displayName])
        context.setUnavailable(said.text)
      }
    }
    displayWatch = context.loop.watch(display.descriptor, for: .readable) { [weak self] _ in
      self?.turn()
    }
  }

  private func disconnect() {
    displayWatch?.cancel()
    displayWatch = nil
    display?.close()
    display = nil
  }

  /// One turn: replies and a bounded batch of events, then what was asked is sent.
  private func turn() {
    turnQueued = false
    guard let display else { return }
    let (notices, more) = display.take(limit: Self.eventsPerTurn)
    if display.connectionLost { return serverGone() }
    for notice in notices {
      switch notice {
      case .input(let input): handle(input)
      case .monitorsChanged:
        display.relayout { [weak self] refusal in self?.refused(refusal) }
      case .cannotCover(let reason):
        // The screen is refused at each break (`ShowRefusal.noLayerShell`); a notification
        // stands in for it then.
        context.log.warning(reason)
        context.setUnavailable(
          Message(
            "the Wayland compositor offers no layer shell (zwlr_layer_shell_v1; GNOME has none), "
              + "so nothing can cover its outputs; a critical notification stands in at each break"
          ).render(), limit: .compositorWithholds)
      }
      guard self.display === display else { return }
    }
    let wrote = display.flush()
    if display.connectionLost { return serverGone() }
    if more || wrote { queueTurn() }
  }

  private func queueTurn() {
    guard !turnQueued else { return }
    turnQueued = true
    _ = context.loop.after(seconds: 0) { [weak self] in self?.turn() }
  }

  /// The server went away (crashed, killed): the screen is gone with it. The next break
  /// connects again.
  private func serverGone() {
    context.log.warning(
      "\(serverName) went away; the break screen connects again at the next break")
    disconnect()
    tick?.cancel()
    tick = nil
    shown = nil
    let said =
      onWayland
      ? Worded(
        Message("the Wayland compositor at {display} went away; tried again at the next break"),
        ["display": displayName])
      : Worded(
        Message("the X server on {display} went away; tried again at the next break"),
        ["display": displayName])
    context.setUnavailable(said.text)
  }
}

@_cdecl("grow_plugin_breakscreen")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(BreakScreenPlugin.self) }
