import FoundationEssentials
import Glibc
@_spi(GrowBuiltIn) import GrowConfig
import GrowCore
import GrowDBus
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// Tells the person what they need and nothing more, through the desktop's notification
/// server: focus over, break over, long break due, a distraction, and optionally a warning
/// before a phase ends. One notification per kind, replaced in place; action buttons where the
/// server has them, which drive the timer.
///
/// It speaks to the server over the daemon's own bus connection, never waiting for an answer
/// (see `FreedesktopNotifications`): a stopped server delays no phase end and no API call.
public final class NotifyPlugin: GrowPlugin {
  public static let id = "notify"
  public static let settings = NotifySettings.declared
  public static var summary: String {
    Message(
      "desktop notifications: focus over, break over, long break due, distraction, "
        + "warning before a phase ends; action buttons drive the timer"
    ).render()
  }
  /// Action keys. "default" is what clicking the notification (or `dunstctl action`) does.
  enum Action: String {
    case primary = "default"
    case startBreak = "start-break"
    case extendFocus = "extend-5m"
    case remindLater = "remind-5m"
    case startFocus = "start-focus"
    case skip
    case taskDone = "task-done"
    case taskNotYet = "task-not-yet"
  }

  private let settings: NotifySettings
  private let log: Logger
  private let loop: any EventLoop
  private let timer: any TimerControl
  private let server: any NotificationServer
  /// The id the server gave each kind's notification, while it may still be on screen.
  private var shownIDs: [NotificationKind: UInt32] = [:]
  /// Each Notify call gets a number. `inFlight`: the call each kind waits for (what comes
  /// meanwhile waits in `queued`, so that it replaces the one in flight instead of standing
  /// next to it). `current`: the call whose notification each kind stands for now; one
  /// withdrawn or replaced while unanswered is closed as soon as its id arrives, even late.
  private var callCount = 0
  private var inFlight: [NotificationKind: Int] = [:]
  private var current: [NotificationKind: Int] = [:]
  private var queued: [NotificationKind: Content] = [:]
  /// Ids answered late for a kind while a newer call of it was in flight: closed once that
  /// call's id is known, unless the server gave it the same id (replaced in place).
  private var staleIDs: [NotificationKind: Set<UInt32>] = [:]
  /// Kinds now showing a prompt that waits for the person.
  private var prompts: Set<NotificationKind> = []
  /// What each of those prompts says: a server that starts while the timer still waits (dunst
  /// restarted, crashed, or replaced) is sent it again, since the old server took it along.
  private var promptContents: [NotificationKind: Content] = [:]
  /// Whether the server lists the "default" action among the others (dunst's context menu,
  /// mako's menu), so a named twin of it would be listed twice.
  private var serverListsDefaultAction = true
  private var capabilities: Set<String>?
  private var serverMissing = false
  private var serverSilent = false
  /// What could not be shown while no server ran; shown when one appears.
  private var pending: (kind: NotificationKind, content: Content)?
  /// What each kind last showed, so a retried action knows what it belonged to.
  private var shownActions: [NotificationKind: [Action: Action]] = [:]
  private var lastEnded: PhaseEnded?
  private var suggestionIndex = 0
  private var warningTimer: (any Alarm)?
  private var reminderTimer: (any Alarm)?
  /// Grow's own Do-Not-Disturb, as the dnd plugin last announced it (`DoNotDisturbChanged`).
  private var doNotDisturb = DoNotDisturbState()
  /// The task of the focus now running or last run (`PhaseStarted.task`, its text the
  /// intention), and the one the "Done?" question on screen asks about.
  private var focusTask: (id: Int64, text: String)?
  private var askedTask: Int64?
  private let publish: (TaskDone) -> Void

  struct Content {
    var summary: String
    var body: String
    var icon: String
    var actions: [(key: Action, label: String)]
    /// A prompt that waits for the person: it does not expire while it waits.
    var waits = false
    /// Instead of the configured urgency: critical, to pass the server's Do-Not-Disturb.
    var urgency: NotificationUrgency?
  }

  public convenience init(context: PluginContext) throws {
    guard let bus = context.sessionBus else {
      throw PluginError.unavailable(
        Message("no session bus to reach a notification server on").render())
    }
    let server: FreedesktopNotifications
    do {
      server = try FreedesktopNotifications(bus: bus, appName: "Grow", context: context)
    } catch {
      throw PluginError.unavailable(
        Message("cannot watch for a notification server: {error}").render(["error": "\(error)"]))
    }
    try self.init(context: context, server: server)
  }

  /// With any server: the D-Bus one, or a recording one in tests.
  init(context: PluginContext, server: any NotificationServer) throws {
    do {
      settings = try NotifySettings(context.config)
    } catch {
      throw PluginError.misconfigured(error.description)
    }
    log = context.log
    timer = context.timer
    loop = context.loop
    publish = { [context] in context.publish($0) }
    self.server = server
    server.onAction = { [weak self] id, key in self?.actionInvoked(id: id, key: key) }
    server.onClosed = { [weak self] id, _ in self?.closedByServer(id: id) }
    server.onServerChanged = { [weak self] present in self?.serverChanged(present: present) }
    askCapabilities()
    context.subscribe(PhaseEnded.self) { [weak self] event in self?.ended(event) }
    context.subscribe(PhaseStarted.self) { [weak self] event in self?.started(event) }
    context.subscribe(PhaseAwaiting.self) { [weak self] event in self?.awaiting(event) }
    context.subscribe(PhasePaused.self) { [weak self] _ in self?.cancelWarning() }
    context.subscribe(PhaseResumed.self) { [weak self] event in self?.armWarning(for: event.phase) }
    context.subscribe(PhaseExtended.self) { [weak self] event in
      self?.armWarning(for: event.phase)
    }
    context.subscribe(SessionStopped.self) { [weak self] _ in
      self?.cancelWarning()
      self?.cancelReminder()
      self?.closeAll()
    }
    context.subscribe(DistractionStarted.self) { [weak self] event in self?.distraction(event) }
    context.subscribe(AwayResumed.self) { [weak self] event in self?.welcomeBack(event) }
    context.subscribe(DoNotDisturbChanged.self) {
      [weak self, environment = context.environment] event in
      // mako shows critical notifications in its do-not-disturb mode only if its config says
      // so; read when the mode goes on (a small file, its size bounded by MakoConfig).
      let makoShowsCritical =
        event.enabled && event.backend == DoNotDisturbBackend.mako.rawValue
        && MakoConfig(environment: environment).modeShowsCritical
      self?.doNotDisturb = DoNotDisturbState(
        enabled: event.enabled, silencesServer: event.silencesServer, backend: event.backend,
        makoShowsCritical: makoShowsCritical)
    }
  }

  public func stop() {
    cancelWarning()
    cancelReminder()
    closeAll()
  }

  // MARK: Timer events

  /// Everything shown during a phase is about that phase (its warning, a distraction in it,
  /// "welcome back", "focus has begun", "take a break"): none of it applies once it ended,
  /// and left open, a paused server would show it again at the next break.
  private func ended(_ event: PhaseEnded) {
    lastEnded = event
    cancelWarning()
    closeAll()
    if event.phase.kind == .focus, event.outcome == .completed, let task = focusTask {
      askIfDone(task)
    }
  }

  private func started(_ event: PhaseStarted) {
    cancelReminder()
    if event.phase.kind == .focus {
      focusTask = event.task.map { ($0, event.intention ?? "") }
    }
    // The prompt that waited for this phase is answered, by its button or by `grow resume`;
    // "Done?" about the task stays through the break.
    for kind in prompts where kind != .taskDone { close(kind) }
    armWarning(for: event.phase)
    guard let lastEnded, lastEnded.outcome == .completed,
      lastEnded.endedAt.timeIntervalSince(event.phase.startedAt) > -5
    else { return }
    if event.phase.kind.isBreak, lastEnded.phase.kind == .focus {
      focusOver(next: event.phase.kind, length: event.phase.duration, waiting: false)
    } else if event.phase.kind == .focus, lastEnded.phase.kind.isBreak {
      breakOver(card: event.phase.card, length: event.phase.duration, waiting: false)
    }
  }

  private func awaiting(_ event: PhaseAwaiting) {
    // Said now; the phase starting later (by hand or by an action) needs no second message.
    lastEnded = nil
    let card = try? timer.deck.card(named: event.card)
    switch event.next {
    case .focus:
      breakOver(card: event.card, length: card?.focus ?? 0, waiting: true)
    case .shortBreak:
      focusOver(next: .shortBreak, length: card?.shortBreak ?? 0, waiting: true)
    case .longBreak:
      focusOver(next: .longBreak, length: card?.longBreak ?? 0, waiting: true)
    }
  }

  // MARK: What is shown

  private func focusOver(next: PhaseKind, length: TimeInterval, waiting: Bool) {
    let long = next == .longBreak
    let kind: NotificationKind = long ? .longBreakDue : .focusOver
    let duration = ["length": DurationText.format(length)]
    let body =
      switch (long, waiting) {
      case (false, true): Message("Your {length} short break is waiting.").render(duration)
      case (true, true): Message("Your {length} long break is waiting.").render(duration)
      case (false, false): Message("Take a {length} short break.").render(duration)
      case (true, false): Message("Take a {length} long break.").render(duration)
      }
    var content = Content(
      summary: long ? Message("Long break due").render() : Message("Focus done").render(),
      // The suggestion is the person's own sentence, from config.ini.
      body: [body, nextSuggestion()].compactMap { $0 }.joined(separator: " "),
      icon: "appointment-soon", actions: [], waits: waiting)
    if waiting {
      let start = Message("Start break").render()
      content.actions = [(.primary, start), (.startBreak, start), (.remindLater, Self.fiveMore)]
    } else {
      content.actions = [(.skip, Message("Skip break").render())]
    }
    show(kind, content)
  }

  private func breakOver(card: String, length: TimeInterval, waiting: Bool) {
    let values: [String: any CustomStringConvertible] = [
      "length": DurationText.format(length), "card": card,
    ]
    var content = Content(
      summary: Message("Break over").render(),
      body: waiting
        ? Message("Ready for {length} of focus on '{card}'?").render(values)
        : Message("{length} of focus on '{card}' has begun.").render(values),
      icon: "appointment-soon", actions: [], waits: waiting)
    if waiting {
      // Not "Skip": skipping the waiting focus would start another break, which nobody who
      // presses it on "Break over" means. "+5 min" says what it does: five more minutes of
      // break, then this prompt again (as "+5 min" on a waiting break gives more focus).
      let start = Message("Start focus").render()
      content.actions = [(.primary, start), (.startFocus, start), (.remindLater, Self.fiveMore)]
    }
    show(.breakOver, content)
  }

  /// At the end of a focus on a task: is it done? "Done" marks it so in the history (through
  /// `TaskDone`); "Not yet" leaves it open for the next focus.
  private func askIfDone(_ task: (id: Int64, text: String)) {
    askedTask = task.id
    let done = Message("Done").render()
    show(
      .taskDone,
      Content(
        summary: Message("Done with this task?").render(), body: task.text,
        icon: "checkbox-checked",
        actions: [(.primary, done), (.taskDone, done), (.taskNotYet, Message("Not yet").render())],
        waits: true))
  }

  /// The button that asks for five more minutes (of focus, or of break).
  private static var fiveMore: String { Message("+5 min").render() }

  /// One gentle nudge per distraction (the X11 monitor flags it after its grace period).
  private func distraction(_ event: DistractionStarted) {
    let body =
      event.app.isEmpty
      ? Message("Something else took your attention during focus on '{card}'.")
        .render(["card": event.card])
      : Message("{app} took your attention during focus on '{card}'.")
        .render(["app": event.app, "card": event.card])
    show(
      .distraction,
      Content(
        summary: Message("Distraction").render(), body: body, icon: "dialog-warning",
        actions: []))
  }

  /// Focus paused itself while nobody was there; say how long, once the person is back.
  private func welcomeBack(_ event: AwayResumed) {
    show(
      .away,
      Content(
        summary: Message("Welcome back").render(),
        body: Message("You were away {duration}; focus on '{card}' goes on.")
          .render(["duration": DurationText.format(event.awaySeconds), "card": event.card]),
        icon: "appointment-soon", actions: []))
  }

  private func warn() {
    guard let phase = timerPhase(), let deadline = phase.deadline else { return }
    let left = ["left": DurationText.format(max(1, deadline.timeIntervalSince(loop.now).rounded()))]
    let focus = phase.kind == .focus
    let summary =
      switch phase.kind {
      case .focus: Message("Focus ends in {left}").render(left)
      case .shortBreak: Message("Short break ends in {left}").render(left)
      case .longBreak: Message("Long break ends in {left}").render(left)
      }
    show(
      .warning,
      Content(
        summary: summary,
        body: focus
          ? Message("Time to wrap up on '{card}'.").render(["card": phase.card])
          : Message("Get ready to focus again.").render(),
        icon: "appointment-soon",
        actions: focus ? [(.extendFocus, Self.fiveMore)] : []))
  }

  private func nextSuggestion() -> String? {
    guard !settings.suggestions.isEmpty else { return nil }
    defer { suggestionIndex += 1 }
    return settings.suggestions[suggestionIndex % settings.suggestions.count]
  }

  private func show(_ kind: NotificationKind, _ content: Content) {
    guard settings.kinds.contains(kind) else { return }
    var content = content
    switch doNotDisturb.passage {
    case .asIs: break
    case .critical: content.urgency = .critical
    case .withheld:
      // It would only wait in the server's queue and surface late, out of date.
      log.debug("held back '\(content.summary)': Do-Not-Disturb is on")
      return
    }
    guard inFlight[kind] == nil else {
      queued[kind] = content
      return
    }
    send(kind, content)
  }

  /// One Notify call; its answer (or its timeout) comes back on the loop.
  private func send(_ kind: NotificationKind, _ content: Content) {
    // Until the server said what it can do, send the buttons: a server without actions
    // ignores them (spec: "actions" capability).
    let withActions = settings.actions && capabilities?.contains("actions") != false
    var actions = withActions ? content.actions : []
    // "default" stands for the first named action; remember what it means this time.
    var meaning: [Action: Action] = [:]
    for action in actions where action.key != .primary { meaning[action.key] = action.key }
    if let first = actions.first(where: { $0.key != .primary }) {
      meaning[.primary] = first.key
      if serverListsDefaultAction, actions.contains(where: { $0.key == .primary }) {
        actions.removeAll { $0.key == first.key }
      }
    }
    shownActions[kind] = meaning
    if content.waits {
      prompts.insert(kind)
      promptContents[kind] = content
    } else {
      prompts.remove(kind)
      promptContents[kind] = nil
    }
    var hints: [String: NotificationHint] = [
      "urgency": .byte((content.urgency ?? settings.urgency).byte),
      "category": .string("x-grow." + kind.rawValue),
      "desktop-entry": .string("grow"),
      "x-dunst-stack-tag": .string(kind.stackTag),
      "x-canonical-private-synchronous": .string(kind.stackTag),
    ]
    // The question about a task comes with the end of focus, which has its sound already.
    if settings.sound, kind != .taskDone {
      hints["sound-name"] = .string(kind == .distraction ? "dialog-warning" : "complete")
    } else {
      hints["suppress-sound"] = .bool(true)
    }
    let request = NotificationRequest(
      summary: content.summary, body: content.body, icon: content.icon,
      actions: actions.map { ($0.key.rawValue, $0.label) }, hints: hints,
      expireTimeout: content.waits ? 0 : settings.timeoutMilliseconds)
    callCount += 1
    let call = callCount
    inFlight[kind] = call
    current[kind] = call
    server.notify(request, replacing: shownIDs[kind] ?? 0) { [weak self] result in
      self?.answered(kind, content, call: call, result)
    }
  }

  /// The answer to Notify call `call`: in time, or (after `noAnswer`) late, from a server
  /// that was stopped and showed the notification once it ran again.
  private func answered(
    _ kind: NotificationKind, _ content: Content, call: Int,
    _ result: Result<UInt32, NotificationError>
  ) {
    if case .success(let id) = result {
      if serverMissing || serverSilent { log.info("the notification server answers again") }
      serverMissing = false
      serverSilent = false
      if current[kind] == call {
        shownIDs[kind] = id
        for stale in staleIDs.removeValue(forKey: kind) ?? [] where stale != id {
          server.close(stale)
        }
      } else if let newer = inFlight[kind], newer != call {
        staleIDs[kind, default: []].insert(id)
      } else {
        // Withdrawn or replaced while unanswered: it no longer applies.
        server.close(id)
      }
    }
    guard inFlight[kind] == call else { return }
    inFlight[kind] = nil
    switch result {
    case .success:
      if pending?.kind == kind { pending = nil }
    case .failure(.noServer(let reason)):
      pending = (kind, content)
      if !serverMissing {
        serverMissing = true
        capabilities = nil
        log.warning(
          "no notification server on the session bus (\(reason)); the timer runs on, "
            + "notifications resume when a server starts")
      }
    case .failure(.noAnswer(let milliseconds)):
      // It may still show it once it runs again; then its late answer says whether it still
      // applies.
      if !serverSilent {
        serverSilent = true
        log.warning(
          "the notification server did not answer within \(milliseconds / 1000) s "
            + "('\(content.summary)'); the timer runs on without waiting for it")
      }
    case .failure(.refused(let reason)):
      log.warning("the notification server refused '\(content.summary)': \(reason)")
    }
    if let next = queued.removeValue(forKey: kind) { send(kind, next) }
  }

  /// Takes a kind's notification away (from the screen and from the server's queue).
  private func close(_ kind: NotificationKind) {
    queued[kind] = nil
    prompts.remove(kind)
    promptContents[kind] = nil
    current[kind] = nil
    for stale in staleIDs.removeValue(forKey: kind) ?? [] { server.close(stale) }
    if let id = shownIDs.removeValue(forKey: kind) { server.close(id) }
  }

  private func closeAll() {
    for kind in NotificationKind.allCases { close(kind) }
  }

  private func askCapabilities() {
    server.capabilities { [weak self] capabilities in
      guard let self, let capabilities else { return }
      self.capabilities = capabilities
    }
    server.serverInformation { [weak self] information in
      guard let self, let information else { return }
      // GNOME Shell, KDE Plasma and xfce4-notifyd make "default" the click on the body, not
      // a button: there the named twin is the only button that says what clicking does.
      serverListsDefaultAction = Self.serversListingDefaultAction.contains(information.name)
    }
  }

  /// Servers that list the "default" action with the named ones (as GetServerInformation
  /// names them).
  static let serversListingDefaultAction: Set<String> = ["dunst", "mako"]

  /// The person picked an action on one of Grow's notifications.
  private func actionInvoked(id: UInt32, key: String) {
    guard let kind = shownIDs.first(where: { $0.value == id })?.key else { return }
    perform(key, from: kind)
  }

  /// The server closed a notification (the person dismissed it, or it expired): a prompt
  /// closed so is answered as far as showing it goes, and not sent again.
  private func closedByServer(id: UInt32) {
    for (kind, shown) in shownIDs where shown == id {
      shownIDs[kind] = nil
      prompts.remove(kind)
      promptContents[kind] = nil
    }
  }

  // MARK: Actions

  private func perform(_ key: String, from kind: NotificationKind) {
    guard let pressed = Action(rawValue: key), let action = shownActions[kind]?[pressed] else {
      log.warning("unknown action '\(key)' on the \(kind.rawValue) notification")
      return
    }
    do {
      switch action {
      case .startBreak, .startFocus, .primary:
        try timer.resume()
      case .extendFocus:
        try timer.extend(by: 300)
      case .skip:
        try timer.skip()
      case .remindLater:
        remindAgain(kind)
      case .taskDone:
        if let task = askedTask { publish(TaskDone(task: task, at: loop.now)) }
        askedTask = nil
        close(.taskDone)
      case .taskNotYet:
        askedTask = nil
        close(.taskDone)
      }
      log.info("\(kind.rawValue) notification: '\(action.rawValue)' done")
    } catch {
      log.warning("\(kind.rawValue) notification: '\(action.rawValue)' refused: \(error.message)")
    }
  }

  /// "+5 min" on a waiting phase: on a waiting break, keep working; on a waiting focus, rest
  /// longer. Either way the prompt goes, and comes back in five minutes if the phase still
  /// waits.
  private func remindAgain(_ kind: NotificationKind) {
    cancelReminder()
    close(kind)
    reminderTimer = loop.at(loop.now.addingTimeInterval(Self.remindAfter)) { [weak self] in
      guard let self, self.timer.status.state == .waiting, let next = self.timer.status.next
      else { return }
      let card = self.timer.status.card
      let lengths = try? self.timer.deck.card(named: card)
      switch next {
      case .focus: self.breakOver(card: card, length: lengths?.focus ?? 0, waiting: true)
      case .shortBreak, .longBreak:
        let length = (next == .longBreak ? lengths?.longBreak : lengths?.shortBreak) ?? 0
        self.focusOver(next: next, length: length, waiting: true)
      }
    }
  }

  /// How long "+5 min" waits before prompting again.
  static let remindAfter: TimeInterval = 300

  private func cancelReminder() {
    reminderTimer?.cancel()
    reminderTimer = nil
  }

  // MARK: Warning before the end

  private func timerPhase() -> (kind: PhaseKind, card: String, deadline: Date?)? {
    let status = timer.status
    guard let kind = PhaseKind(rawValue: status.state.rawValue) else { return nil }
    return (kind, status.card, status.paused ? nil : status.endsAt)
  }

  /// One wall-clock timer at `deadline - warn-before`; never a tick.
  private func armWarning(for phase: Phase) {
    cancelWarning()
    guard let warnBefore = settings.warnBefore, let deadline = phase.deadline,
      phase.duration > warnBefore
    else { return }
    let when = deadline.addingTimeInterval(-warnBefore)
    guard when > loop.now else { return }
    warningTimer = loop.at(when) { [weak self] in self?.warn() }
  }

  private func cancelWarning() {
    warningTimer?.cancel()
    warningTimer = nil
  }

  // MARK: The server coming and going

  /// Without a server, one log line (in `answered`); when one takes the name, what could not
  /// be shown is shown.
  private func serverChanged(present: Bool) {
    capabilities = nil
    // Ids belong to the server that gave them.
    shownIDs.removeAll()
    guard present else {
      log.info("notification server left the bus")
      return
    }
    askCapabilities()
    // The prompts the old server took along, while the timer still waits for the person.
    let waitingPrompts = promptContents.filter { $0.key != pending?.kind }
    if timer.status.state == .waiting {
      for (kind, content) in waitingPrompts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
        log.info("sending the waiting prompt '\(content.summary)' to the new notification server")
        show(kind, content)
      }
    }
    guard let pending else { return }
    self.pending = nil
    show(pending.kind, pending.content)
  }
}

// `grow_plugin_ID`, not `grow_plugin`: the built-in plugins link into one test binary.
@_cdecl("grow_plugin_notify")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(NotifyPlugin.self) }
