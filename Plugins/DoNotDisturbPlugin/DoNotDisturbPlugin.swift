import FoundationEssentials
import Glibc
import GrowConfig
import GrowCore
import GrowDBus
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// When a card silences the desktop.
enum DndPolicy: String, CaseIterable {
  /// During focus phases only (the default).
  case focus
  /// For the whole session, breaks included.
  case always
  /// Never by itself (`grow dnd on` still works).
  case never
}

/// Do-Not-Disturb: during focus (per card policy) and on request (`grow dnd`, D-Bus), through
/// the notification server's own switch. Never leaves the desktop silenced: the server's state
/// before Grow changed it is put back when focus ends, when the daemon stops, and, after a
/// crash or SIGKILL, at the next start (it is kept on disk while changed). A change made by
/// hand during focus is respected, not fought.
public final class DoNotDisturbPlugin: GrowPlugin, StopsAsynchronously {
  public static let id = "dnd"
  public static var summary: String {
    Message(
      "Do-Not-Disturb during focus through the notification server's own switch (dunst, "
        + "xfce4-notifyd, swaync, mako, GNOME, KDE); org.grow.Grow1.DoNotDisturb, 'grow dnd'"
    ).render()
  }
  public static let settings = [
    PluginSetting(
      "dnd", .choice(DndPolicy.allCases.map(\.rawValue)), default: DndPolicy.focus.rawValue,
      help: "focus: Do-Not-Disturb during focus; always: the whole session; never: only on request."
    ),
    PluginSetting(
      "card.NAME", .choice(DndPolicy.allCases.map(\.rawValue)), default: "",
      help: "The same for one card, NAME a card of the deck.", perCard: true),
  ]

  private enum Reason { case focus, request, byHand }

  private let context: PluginContext
  private let log: Logger
  private let timer: any TimerControl
  private let defaultPolicy: DndPolicy
  private let cardPolicies: [String: DndPolicy]
  private let restoreFile: RestoreFile
  private let servers: any DndServerLookup
  private var backend: (any DndBackend)?
  /// What the server said it is, for status: "" when none runs.
  private var server = ""
  private var detecting = false
  /// The backends whose state changes are already watched (once each, across server restarts).
  private var watchedBackends: Set<String> = []
  private var enabled = false
  private var reason: Reason?
  private var until: Date?
  private var untilTimer: (any Alarm)?
  /// What Grow changed on the server and must put back; nil when it changed nothing.
  private var record: RestoreRecord?
  /// A restore on its way to the server (read, then write). A focus that starts meanwhile
  /// takes it back, rather than reading Grow's own silence as the person's.
  private var restoring: RestoreRecord?
  /// While a take-back's write is on its way, the server's reports are Grow's own doing.
  private var takingBack = false
  /// Counts restores, so the answers of one that was taken back or superseded are ignored.
  private var restoreAttempt = 0
  /// What the server last said its switch is (read, written or announced); nil when it did
  /// not answer the last call, or no server runs. `grow dnd status` shows this.
  private var serverState: Bool?
  /// A call the server did not answer, to be made again (`notAnswered`).
  private var retry: (action: () -> Void, timer: any Alarm)?
  private var retryDelay = DoNotDisturbPlugin.firstRetryDelay
  /// Warned that the server does not answer; cleared when it answers.
  private var warnedNoAnswer = false
  /// Stopped: nothing is announced any more (the interface is gone), and the answers still on
  /// their way do nothing but finish `stop`'s put-back. A reload has started the next instance
  /// by then, which reads the server and the record on disk itself: a late switch-on from this
  /// one would look like the person's silence to it, and nobody would put it back.
  private var stopped = false
  /// Retries start soon and back off, but stay frequent enough that a server that answers
  /// again is put right within a few seconds (each call waits up to `callTimeout` itself).
  static let firstRetryDelay: TimeInterval = 0.25
  static let longestRetryDelay: TimeInterval = 1.5
  static let callTimeout: Int32 = 3000
  /// While the daemon stops: the host waits for both calls (PluginHost.stopGrace).
  static let stopCallTimeout: Int32 = 1000
  /// How long `Enable`, `Disable` and `Toggle` wait for the server to confirm the switch
  /// before answering anyway (`ServerState` then says what it says).
  static let switchConfirmWait: TimeInterval = 1
  /// Those calls, waiting for the server's confirmation, each with its answer.
  private var switchCallers: [(reply: PendingReply, values: [BusValue], wait: any Alarm)] = []

  public convenience init(context: PluginContext) throws {
    guard let bus = context.sessionBus else {
      throw PluginError.unavailable(Message("no session bus").render())
    }
    try self.init(context: context, servers: BusDndServerLookup(bus: bus, context: context))
  }

  /// With any way of finding the server: the session bus, or a scripted one in tests.
  init(context: PluginContext, servers: any DndServerLookup) throws {
    self.context = context
    self.servers = servers
    log = context.log
    timer = context.timer
    do {
      (defaultPolicy, cardPolicies) = try Self.readPolicies(
        context.config, deck: context.timer.deck)
    } catch {
      throw PluginError.misconfigured(error.description)
    }
    restoreFile = RestoreFile(environment: context.environment)
    record = restoreFile.load()
    exportInterface()
    context.subscribe(PhaseStarted.self) { [weak self] event in self?.phaseStarted(event.phase) }
    context.subscribe(PhaseEnded.self) { [weak self] event in self?.phaseEnded(event.phase) }
    context.subscribe(SessionStopped.self) { [weak self] _ in self?.sessionStopped() }
    servers.onPresenceChanged { [weak self] present in self?.serverChanged(present: present) }
    detectServer()
    // The loop may get stuck in another plugin's handler; then this puts the server back from
    // the record on disk (see EmergencyExitActions).
    let address = try? BusConnection.sessionBusAddress()
    context.onEmergencyExit { [restoreFile] in
      Self.emergencyRestore(from: restoreFile, busAddress: address)
    }
  }

  /// Off the loop, with the daemon about to exit: switches the server back as the record on
  /// disk says, without reading it first. The record exists only while Grow's change stands
  /// as far as Grow knows (a change by hand removes it), and a read would double the time a
  /// stopped server can hold the exit up. A server that answers late still applies the write.
  /// mako is the exception: its modes are a list, read first (at most 0.5 s) so that the
  /// person's other modes stay.
  nonisolated static func emergencyRestore(from file: RestoreFile, busAddress: String?) {
    guard let record = file.load(), let busAddress,
      let message = emergencyWrite(
        backend: record.backend, enabled: record.previous, busAddress: busAddress)
    else { return }
    if (try? BusConnection.callOnce(message, address: busAddress, timeout: 1000)) != nil {
      file.remove()
    }
  }

  /// `[plugin.dnd]`: `dnd = focus|always|never` for every card, `card.NAME = …` for one.
  ///
  /// The policy lives here rather than in `[card.NAME]` so the timer's config schema does not
  /// have to know a plugin that may not even be loaded; unknown card names are still reported
  /// with file and line.
  static func readPolicies(_ section: ConfigSection, deck: CardDeck) throws(ConfigError)
    -> (DndPolicy, [String: DndPolicy])
  {
    try section.check(against: settings, cards: deck.names)
    func policy(_ entry: ConfigEntry) throws(ConfigError) -> DndPolicy {
      guard let policy = DndPolicy(rawValue: entry.value.lowercased()) else {
        throw ConfigError([
          ConfigProblem(
            path: section.path, line: entry.line,
            issue: .invalidValue(
              key: entry.key, value: entry.value, section: section.name,
              reason: "use focus, always or never"))
        ])
      }
      return policy
    }
    let defaultPolicy = try section["dnd"].map(policy) ?? .focus
    var cards: [String: DndPolicy] = [:]
    for entry in section.entries where entry.key.hasPrefix("card.") {
      cards[String(entry.key.dropFirst(5))] = try policy(entry)
    }
    return (defaultPolicy, cards)
  }

  /// Puts the server back with one short try (the loop keeps turning meanwhile; the host
  /// waits). A server that does not answer in time keeps the record on disk for the next start.
  public func stop(then completion: @escaping () -> Void) {
    untilTimer?.cancel()
    cancelRetry()
    stopped = true
    // A restore on its way ignores its answers from now on (only the put-back below counts).
    restoreAttempt += 1
    context.growObject?.remove(interface: GrowBusAPI.doNotDisturbInterface)
    answerSwitchCallers(confirmed: true)
    guard let pending = record ?? restoring, let backend, backend.name == pending.backend else {
      return completion()
    }
    record = nil
    restoring = nil
    restoreAttempt += 1
    let always = { true }
    putBack(pending, with: backend, timeout: Self.stopCallTimeout, while: always) {
      [log, restoreFile] outcome in
      if case .noAnswer(let why) = outcome {
        log.warning("\(why); \(restoreFile.path) keeps it for the next start")
      }
      completion()
    }
  }

  // MARK: Policy

  private func policy(for card: String) -> DndPolicy { cardPolicies[card] ?? defaultPolicy }

  private func phaseStarted(_ phase: Phase) {
    switch (phase.kind, policy(for: phase.card)) {
    case (.focus, .focus), (_, .always):
      if reason != .request { switchOn(.focus) }
    case (_, .focus):
      if reason == .focus { switchOff() }
    case (_, .never):
      break
    }
  }

  private func phaseEnded(_ phase: Phase) {
    if phase.kind == .focus, policy(for: phase.card) == .focus, reason == .focus { switchOff() }
  }

  private func sessionStopped() {
    if reason == .focus { switchOff() }
  }

  // MARK: Switching

  private func switchOn(_ why: Reason, for seconds: TimeInterval = 0) {
    untilTimer?.cancel()
    untilTimer = nil
    until = seconds > 0 ? context.loop.now.addingTimeInterval(seconds) : nil
    if let until {
      untilTimer = context.loop.at(until) { [weak self] in
        if self?.reason == .request { self?.switchOff() }
      }
    }
    let wasEnabled = enabled
    enabled = true
    reason = why
    announce()
    guard !wasEnabled || record == nil, let backend else { return }
    if let restoring, restoring.backend == backend.name {
      takeBack(restoring, with: backend)
      return
    }
    silence(with: backend)
  }

  /// Reads the server's switch and, unless the person already silenced it, switches it on,
  /// keeping what to put back. A server that does not answer is asked again (`notAnswered`):
  /// only a value it actually gave says what the person had.
  private func silence(with backend: any DndBackend) {
    backend.read(timeout: Self.callTimeout) { [weak self] current in
      guard let self, !stopped, self.enabled, self.record == nil, self.backend === backend else {
        return
      }
      guard let current else {
        return notAnswered("cannot read \(backend.name)'s Do-Not-Disturb to switch it on") {
          [weak self] in
          guard let self, self.enabled, self.record == nil, self.backend === backend else {
            return
          }
          self.silence(with: backend)
        }
      }
      answered(current)
      // Already silenced by the person: nothing of theirs to put back later.
      if current { return }
      let record = RestoreRecord(backend: backend.name, previous: current, set: true)
      self.record = record
      do {
        try restoreFile.save(record)
      } catch {
        log.warning("cannot keep \(restoreFile.path) (\(error)); after a crash DND stays as is")
      }
      switchOnAgain(record, with: backend)
    }
  }

  /// Writes `record.set`; until the server confirms, the record stays and the write is made
  /// again (a write that timed out may still arrive: a later read tells).
  private func switchOnAgain(_ record: RestoreRecord, with backend: any DndBackend) {
    backend.write(record.set, timeout: Self.callTimeout) { [weak self] done in
      guard let self, !stopped, self.record == record, self.backend === backend else { return }
      guard done else {
        return notAnswered("\(backend.name) did not confirm turning Do-Not-Disturb on") {
          [weak self] in
          guard let self, self.enabled, self.record == record else { return }
          self.silenceAgain(record, with: backend)
        }
      }
      answered(record.set)
    }
  }

  private func switchOff() {
    untilTimer?.cancel()
    untilTimer = nil
    until = nil
    enabled = false
    reason = nil
    announce()
    guard let record else { return }
    // The server is away (restarting, say): keep the record, and put the server back when it
    // returns; where it keeps its state (xfconf, GSettings) it would otherwise stay silenced.
    guard let backend else { return }
    self.record = nil
    guard backend.name == record.backend else { return }
    restore(record, with: backend)
  }

  /// Puts the server back as it was, unless the person has changed it since; asks again until
  /// the server answers. The record stays (in `restoring` and on disk) until the server has
  /// confirmed, so a stop or exit meanwhile still puts it back.
  private func restore(_ record: RestoreRecord, with backend: any DndBackend) {
    restoring = record
    restoreAttempt += 1
    let attempt = restoreAttempt
    let isStillWanted = { [weak self] in
      self?.restoreAttempt == attempt && self?.restoring == record
    }
    putBack(record, with: backend, timeout: Self.callTimeout, while: isStillWanted) {
      [weak self] outcome in
      guard let self, isStillWanted() else { return }
      guard case .noAnswer(let why) = outcome else {
        restoring = nil
        return
      }
      notAnswered(why) { [weak self] in
        guard let self, self.restoreAttempt == attempt, self.restoring == record,
          let backend = self.backend, backend.name == record.backend
        else { return }
        self.restore(record, with: backend)
      }
    }
  }

  private enum PutBack {
    case done
    /// The server's state is no longer what Grow set: the person changed it; theirs now.
    case changedByHand
    case noAnswer(String)
  }

  /// One read, and one write if the server still has what Grow set. The record file goes once
  /// the server has confirmed either way. Nothing more happens once `isStillWanted` is false
  /// (a focus took the record back, see takeBack): the record and the file are the focus's.
  private func putBack(
    _ record: RestoreRecord, with backend: any DndBackend, timeout: Int32,
    while isStillWanted: @escaping () -> Bool, _ done: @escaping (PutBack) -> Void
  ) {
    backend.read(timeout: timeout) { [weak self, restoreFile] current in
      guard isStillWanted() else { return }
      guard let current else {
        self?.serverState = nil
        self?.announce()
        return done(.noAnswer("cannot read \(backend.name)'s Do-Not-Disturb to put it back"))
      }
      self?.answered(current)
      guard current == record.set else {
        restoreFile.remove()
        return done(.changedByHand)
      }
      backend.write(record.previous, timeout: timeout) { [weak self] written in
        guard isStillWanted() else { return }
        guard written else {
          self?.serverState = nil
          self?.announce()
          return done(.noAnswer("\(backend.name) did not confirm putting Do-Not-Disturb back"))
        }
        self?.answered(record.previous)
        restoreFile.remove()
        done(.done)
      }
    }
  }

  // MARK: A server that does not answer

  /// The server answered with its state: remember it for status, and take it as a sign of
  /// life for a call waiting to be made again.
  private func answered(_ isOn: Bool) {
    serverState = isOn
    retryDelay = Self.firstRetryDelay
    warnedNoAnswer = false
    announce()
  }

  /// Makes `action` again after a delay that grows to `longestRetryDelay`; warns once per
  /// stretch of silence.
  private func notAnswered(_ why: String, retrying action: @escaping () -> Void) {
    guard !stopped else { return }
    if !warnedNoAnswer {
      warnedNoAnswer = true
      log.warning("\(why); asking again until it answers")
    }
    serverState = nil
    announce()
    retry?.timer.cancel()
    let delay = retryDelay
    retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
    let timer = context.loop.after(seconds: delay) { [weak self] in self?.retryNow() }
    retry = (action, timer)
  }

  /// The server showed it is alive (a signal, a new owner of its name): make the waiting call
  /// now rather than at the end of the back-off.
  private func retryNow() {
    guard let pending = retry else { return }
    cancelRetry()
    pending.action()
  }

  private func cancelRetry() {
    retry?.timer.cancel()
    retry = nil
  }

  /// A focus starts while Grow is still putting the server back (right after the focus before
  /// it ended, or just after a restart): keep the record instead, and make sure the server
  /// stays silenced, since the restore's write may already be out.
  private func takeBack(_ pending: RestoreRecord, with backend: any DndBackend) {
    restoring = nil
    record = pending
    do {
      try restoreFile.save(pending)
    } catch {
      log.warning("cannot keep \(restoreFile.path) (\(error)); after a crash DND stays as is")
    }
    takingBack = true
    cancelRetry()
    restoreAttempt += 1
    backend.write(pending.set, timeout: Self.callTimeout) { [weak self] done in
      guard let self, !stopped else { return }
      takingBack = false
      if done { answered(pending.set) } else { silenceAgainLater(pending, with: backend) }
    }
  }

  /// The server changed its state; if it was not Grow, follow the person.
  private func serverReported(_ isOn: Bool) {
    guard !stopped else { return }
    serverState = isOn
    announce()
    retryNow()
    guard isOn != enabled else { return }
    // Grow's own writes: a restore on its way, or a take-back (see takeBack).
    if takingBack || restoring?.previous == isOn { return }
    if let record, isOn != record.set {
      log.info("Do-Not-Disturb turned off by hand; Grow leaves it off")
      self.record = nil
      restoreFile.remove()
    } else if record != nil {
      return
    }
    untilTimer?.cancel()
    untilTimer = nil
    until = nil
    enabled = isOn
    reason = isOn ? .byHand : nil
    announce()
  }

  // MARK: The server

  private func detectServer() {
    guard !detecting else { return }
    detecting = true
    servers.find { [weak self] result in
      guard let self, !stopped else { return }
      switch result {
      case .success(let (name, found)):
        if let found {
          // Its switch first, so that status says what the server says from the start.
          found.read(timeout: Self.callTimeout) { [weak self] current in
            guard let self, !stopped else { return }
            self.detecting = false
            self.serverState = current
            self.use(found, of: name)
          }
          return
        }
        detecting = false
        server = name
        backend = nil
        log.warning(
          "notification server '\(server)' has no Do-Not-Disturb Grow can switch; Grow keeps "
            + "its own state and holds back only its own notifications")
      case .failure(let error):
        detecting = false
        server = ""
        backend = nil
        log.warning(
          "no notification server answers (\(error.reason)); Grow keeps its own Do-Not-Disturb "
            + "state until one starts")
      }
      announce()
    }
  }

  private func use(_ found: any DndBackend, of name: String) {
    server = name
    backend = found
    log.info("notification server: \(name); Do-Not-Disturb through \(found.name)")
    // Once per kind of server: a server that comes back keeps the same subscription.
    if watchedBackends.insert(found.name).inserted {
      found.watch { [weak self] isOn in self?.serverReported(isOn) }
    }
    adoptOrRestoreAfterStart(found)
    announce()
  }

  private func serverChanged(present: Bool) {
    guard !stopped else { return }
    // What was on its way to the old server is kept for the new one (adoptOrRestoreAfterStart).
    if let restoring {
      record = restoring
      self.restoring = nil
    }
    cancelRetry()
    if present {
      detectServer()
    } else {
      backend = nil
      server = ""
      serverState = nil
      announce()
    }
  }

  /// A record left by an earlier daemon (crash, SIGKILL), or one kept while the server was
  /// away: keep the server silenced if focus goes on, otherwise put it back.
  private func adoptOrRestoreAfterStart(_ backend: any DndBackend) {
    let status = timer.status
    let wanted = enabled || (status.state == .focus && policy(for: status.card) != .never)
    if let record {
      if wanted, record.backend == backend.name {
        enabled = true
        reason = reason ?? .focus
        silenceAgain(record, with: backend)
        return
      }
      self.record = nil
      if record.backend == backend.name {
        log.info("putting Do-Not-Disturb back as it was before Grow changed it")
        restore(record, with: backend)
      } else {
        restoreFile.remove()
      }
    }
    if enabled {
      // Asked for before the server was known.
      let why = reason ?? .focus
      enabled = false
      switchOn(why)
    } else if wanted {
      switchOn(.focus)
    }
  }

  /// A server that was restarted forgot that Grow silenced it (dunst keeps it in memory):
  /// silence the new one too while Grow's reason holds. One that kept it is left alone.
  private func silenceAgain(_ record: RestoreRecord, with backend: any DndBackend) {
    backend.read(timeout: Self.callTimeout) { [weak self] current in
      guard let self, !stopped, enabled, self.record == record, self.backend === backend else {
        return
      }
      guard let current else { return silenceAgainLater(record, with: backend) }
      answered(current)
      guard current == !record.set else { return }
      log.info(
        "\(backend.name) has no Do-Not-Disturb while Grow keeps it on; switching it on again")
      switchOnAgain(record, with: backend)
    }
  }

  private func silenceAgainLater(_ record: RestoreRecord, with backend: any DndBackend) {
    notAnswered("cannot read \(backend.name)'s Do-Not-Disturb to keep it on") { [weak self] in
      guard let self, self.enabled, self.record == record, self.backend === backend else {
        return
      }
      self.silenceAgain(record, with: backend)
    }
  }

  // MARK: D-Bus and events

  private var backendName: String { backend?.name ?? "none" }

  /// `ServerState`: what the server itself says, which may differ from `Enabled` (what Grow
  /// wants) while it does not answer.
  private var serverStateName: String {
    guard backend != nil else { return "none" }
    return serverState.map { $0 ? "on" : "off" } ?? "not answering"
  }

  /// What was last announced, so nothing is sent when nothing changed.
  private var announced:
    (enabled: Bool, backend: String, until: Date?, server: String, serverState: String)?

  private func announce() {
    guard !stopped else { return }
    answerSwitchCallers(confirmed: serverConfirms)
    let now = (enabled, backendName, until, server, serverStateName)
    if let announced, announced == now { return }
    // Only the properties that changed: a client must not take a repeated value for news.
    let changed = [
      ("Enabled", announced?.enabled != now.0), ("Backend", announced?.backend != now.1),
      ("Until", announced.map { $0.until != now.2 } ?? true),
      ("Server", announced?.server != now.3), ("ServerState", announced?.serverState != now.4),
    ].filter(\.1).map(\.0)
    let serverOnly = changed == ["ServerState"]
    announced = now
    context.growObject?.propertiesChanged(changed, on: GrowBusAPI.doNotDisturbInterface)
    // The server's own state alone is no news for other plugins (DoNotDisturbChanged).
    if serverOnly { return }
    context.publish(
      DoNotDisturbChanged(enabled: enabled, backend: backendName, silencesServer: backend != nil))
  }

  /// Whether the server says what Grow wants, or there is no server to ask.
  private var serverConfirms: Bool {
    backend == nil || serverState == enabled
  }

  /// Answers a switch once the server confirms it (`announce`), or after
  /// `switchConfirmWait`: `grow dnd` then shows what the server says, not what it said before.
  private func answerOnceConfirmed(_ reply: PendingReply, _ values: [BusValue] = []) {
    guard !serverConfirms else { return reply.send(values) }
    let wait = context.loop.after(seconds: Self.switchConfirmWait) { [weak self, weak reply] in
      guard let self, let reply else { return }
      self.switchCallers.removeAll { $0.reply === reply }
      reply.send(values)
    }
    switchCallers.append((reply, values, wait))
  }

  private func answerSwitchCallers(confirmed: Bool) {
    guard confirmed, !switchCallers.isEmpty else { return }
    let callers = switchCallers
    switchCallers.removeAll()
    for caller in callers {
      caller.wait.cancel()
      caller.reply.send(caller.values)
    }
  }

  private func exportInterface() {
    guard let object = context.growObject else { return }
    object.add(
      BusInterface(
        name: GrowBusAPI.doNotDisturbInterface,
        methods: [
          .init(
            "Enable", inputs: [.init("seconds", "u", doc: "How long; 0: until disabled.")],
            doc: "Silences notifications; answers once the notification server confirmed it, "
              + "or after a second without.",
            answer: { [weak self] call, reply in
              guard let self, case .uint32(let seconds)? = call.arguments.first else {
                return reply.send()
              }
              switchOn(.request, for: TimeInterval(seconds))
              answerOnceConfirmed(reply)
            }),
          .init(
            "Disable",
            doc: "Lets notifications through again; answers once the server confirmed it, or "
              + "after a second without.",
            answer: { [weak self] _, reply in
              guard let self else { return reply.send() }
              switchOff()
              answerOnceConfirmed(reply)
            }),
          .init(
            "Toggle", outputs: [.init("enabled", "b", doc: "Whether it is on now.")],
            doc: "Enables Do-Not-Disturb until disabled, or disables it.",
            answer: { [weak self] _, reply in
              guard let self else { return reply.send([.bool(false)]) }
              if enabled { switchOff() } else { switchOn(.request) }
              answerOnceConfirmed(reply, [.bool(enabled)])
            }),
        ],
        properties: [
          .init(
            "Enabled", "b",
            doc: "Whether Grow holds notifications now (by the timer's focus or a request); "
              + "settable.",
            get: { [weak self] in .bool(self?.enabled ?? false) },
            set: { [weak self] value in
              guard let self, let on = value.boolValue, on != enabled else { return }
              if on { switchOn(.request) } else { switchOff() }
            }),
          .init(
            "Backend", "s",
            doc: "Whose switch silences them: dunst, xfce, swaync, mako, kde, gnome; none."
          ) { [weak self] in .string(self?.backendName ?? "none") },
          .init(
            "Until", "x", doc: "When a timed Enable ends, µs since the epoch; 0: no end."
          ) { [weak self] in
            .int64(self?.until.map { Int64($0.timeIntervalSince1970 * 1_000_000) } ?? 0)
          },
          .init("Server", "s", doc: "The notification server's name; empty: none.") {
            [weak self] in .string(self?.server ?? "")
          },
          .init(
            "ServerState", "s",
            doc: "What the server says: on, off, not answering, or none."
          ) { [weak self] in .string(self?.serverStateName ?? "none") },
        ]))
  }
}

// `grow_plugin_ID`, not `grow_plugin`: the built-in plugins link into one test binary.
@_cdecl("grow_plugin_dnd")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(DoNotDisturbPlugin.self) }
