import Dispatch
import Foundation
import GrowConfig
import GrowCore
import GrowDBus
import GrowPluginKit

/// When a card silences the desktop.
enum DndPolicy: String, CaseIterable {
  /// During focus phases only (the default).
  case focus
  /// For the whole session, breaks included.
  case always
  /// Never by itself (`grow dnd on` still works).
  case never
}

/// Published whenever Grow's Do-Not-Disturb changes, as `dnd-changed`. Other plugins read it
/// by name (the notify plugin holds its notifications back when the server was not silenced).
struct DoNotDisturbChanged: JSONLineEvent {
  static let eventName = "dnd-changed"
  let enabled: Bool
  let backend: String
  /// True when the notification server itself is silenced, false when only Grow is.
  let silencesServer: Bool

  func jsonFields() -> [String: JSONValue] {
    [
      "enabled": .bool(enabled), "backend": .string(backend),
      "silences_server": .bool(silencesServer),
    ]
  }
}

/// Do-Not-Disturb: during focus (per card policy) and on request (`grow dnd`, D-Bus), through
/// the notification server's own switch. Never leaves the desktop silenced: the server's state
/// before Grow changed it is put back when focus ends, when the daemon stops, and, after a
/// crash or SIGKILL, at the next start (it is kept on disk while changed). A change made by
/// hand during focus is respected, not fought.
public final class DoNotDisturbPlugin: GrowPlugin {
  public static let id = "dnd"
  public static let summary =
    "Do-Not-Disturb during focus through the notification server's own switch (dunst, "
    + "xfce4-notifyd, swaync, mako, GNOME, KDE); org.grow.Grow1.DoNotDisturb, 'grow dnd'"

  static let interfaceName = "org.grow.Grow1.DoNotDisturb"
  private static let serverName = "org.freedesktop.Notifications"

  private enum Reason { case focus, request, byHand }

  private let context: PluginContext
  private let log: Logger
  private let timer: any TimerControl
  private let defaultPolicy: DndPolicy
  private let cardPolicies: [String: DndPolicy]
  private let restoreFile: RestoreFile
  private var backend: (any DndBackend)?
  /// What the server said it is, for status: "" when none runs.
  private var server = ""
  private var detecting = false
  /// The backends whose state changes are already watched (once each, across server restarts).
  private var watchedBackends: Set<String> = []
  private var enabled = false
  private var reason: Reason?
  private var until: Date?
  private var untilTimer: (any DispatchSourceTimer)?
  /// What Grow changed on the server and must put back; nil when it changed nothing.
  private var record: RestoreRecord?
  /// A restore on its way to the server (read, then write). A focus that starts meanwhile
  /// takes it back, rather than reading Grow's own silence as the person's.
  private var restoring: RestoreRecord?
  /// While a take-back's write is on its way, the server's reports are Grow's own doing.
  private var takingBack = false

  public init(context: PluginContext) throws {
    self.context = context
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
    guard let bus = context.sessionBus else { throw PluginError.unavailable("no session bus") }
    exportInterface()
    context.subscribe(PhaseStarted.self) { [weak self] event in self?.phaseStarted(event.phase) }
    context.subscribe(PhaseEnded.self) { [weak self] event in self?.phaseEnded(event.phase) }
    context.subscribe(SessionStopped.self) { [weak self] _ in self?.sessionStopped() }
    let rule =
      "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
      + "member='NameOwnerChanged',arg0='\(Self.serverName)'"
    _ = try? bus.onSignal(match: rule) { [weak self] message in
      guard message.arguments.count == 3, let owner = message.arguments[2].stringValue else {
        return
      }
      self?.serverChanged(present: !owner.isEmpty)
    }
    detectServer()
  }

  /// `[plugin.dnd]`: `dnd = focus|always|never` for every card, `card.NAME = …` for one.
  ///
  /// The policy lives here rather than in `[card.NAME]` so the timer's config schema does not
  /// have to know a plugin that may not even be loaded; unknown card names are still reported
  /// with file and line.
  static func readPolicies(_ section: ConfigSection, deck: CardDeck) throws(ConfigError)
    -> (DndPolicy, [String: DndPolicy])
  {
    try section.checkKeys(["dnd"] + deck.names.map { "card." + $0 })
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

  public func stop() {
    untilTimer?.cancel()
    context.growObject?.remove(interface: Self.interfaceName)
    guard let record, let backend, backend.name == record.backend else { return }
    // The loop will not turn again: talk to the server with blocking calls.
    restore(record, with: backend, blocking: true)
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
    until = seconds > 0 ? Date().addingTimeInterval(seconds) : nil
    if seconds > 0 {
      let source = DispatchSource.makeTimerSource(queue: .main)
      source.schedule(wallDeadline: .now() + seconds)
      source.setEventHandler { [weak self] in
        MainActor.assumeIsolated { if self?.reason == .request { self?.switchOff() } }
      }
      source.resume()
      untilTimer = source
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
    backend.read(blocking: false) { [weak self] current in
      guard let self, self.enabled, self.record == nil else { return }
      // Already silenced by the person: nothing of theirs to put back later.
      if current == true { return }
      let record = RestoreRecord(backend: backend.name, previous: current ?? false, set: true)
      self.record = record
      do {
        try restoreFile.save(record)
      } catch {
        log.warning("cannot keep \(restoreFile.path) (\(error)); after a crash DND stays as is")
      }
      backend.write(true, blocking: false) { [weak self] done in
        guard let self, !done else { return }
        log.warning("\(backend.name) refused to turn Do-Not-Disturb on")
        self.record = nil
        restoreFile.remove()
      }
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
    restore(record, with: backend, blocking: false)
  }

  /// Puts the server back as it was, unless the person has changed it since.
  private func restore(_ record: RestoreRecord, with backend: any DndBackend, blocking: Bool) {
    // Blocking only in stop(): nothing can take that one back.
    if !blocking { restoring = record }
    let isStillWanted = { [weak self] in blocking || self?.restoring == record }
    backend.read(blocking: blocking) { [weak self, restoreFile, log] current in
      guard isStillWanted() else { return }
      guard let current else {
        // Not "changed by hand": the server (or the whole bus) is gone. Keep the record.
        self?.restoring = nil
        log.warning(
          "cannot read \(backend.name)'s Do-Not-Disturb to put it back; will retry at start")
        return
      }
      guard current == record.set else {
        // Changed by hand: theirs now; leave it.
        self?.restoring = nil
        restoreFile.remove()
        return
      }
      backend.write(record.previous, blocking: blocking) { done in
        // Taken back meanwhile: the record is the focus's again, and so is the file.
        guard isStillWanted() else { return }
        self?.restoring = nil
        if done {
          restoreFile.remove()
        } else {
          log.warning("\(backend.name) refused to restore Do-Not-Disturb; will retry at start")
        }
      }
    }
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
    backend.write(pending.set, blocking: false) { [weak self] done in
      self?.takingBack = false
      if !done { self?.log.warning("\(backend.name) refused to turn Do-Not-Disturb on") }
    }
  }

  /// The server changed its state; if it was not Grow, follow the person.
  private func serverReported(_ isOn: Bool) {
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
    guard let bus = context.sessionBus, !detecting,
      let call = try? BusMessage.methodCall(
        destination: Self.serverName, path: "/org/freedesktop/Notifications",
        interface: Self.serverName, member: "GetServerInformation")
    else { return }
    detecting = true
    bus.call(call, timeout: 3000) { [weak self] result in
      guard let self else { return }
      detecting = false
      switch result {
      case .success(let reply):
        server = reply.arguments.first?.stringValue ?? "?"
        backend = makeBackend(serverName: server, bus: bus)
        if let backend {
          log.info("notification server: \(server); Do-Not-Disturb through \(backend.name)")
          // Once per kind of server: a server that comes back keeps the same subscription.
          if watchedBackends.insert(backend.name).inserted {
            backend.watch { [weak self] isOn in self?.serverReported(isOn) }
          }
          adoptOrRestoreAfterStart(backend)
        } else {
          log.warning(
            "notification server '\(server)' has no Do-Not-Disturb Grow can switch; Grow keeps "
              + "its own state and holds back only its own notifications")
        }
      case .failure(let error):
        server = ""
        backend = nil
        log.warning(
          "no notification server answers (\(error.name)); Grow keeps its own Do-Not-Disturb "
            + "state until one starts")
      }
      announce()
    }
  }

  private func serverChanged(present: Bool) {
    if present {
      detectServer()
    } else {
      backend = nil
      server = ""
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
        restore(record, with: backend, blocking: false)
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
    backend.read(blocking: false) { [weak self] current in
      guard let self, enabled, self.record == record, current == !record.set else { return }
      log.info("\(backend.name) came back without Do-Not-Disturb; switching it on again")
      backend.write(record.set, blocking: false) { [weak self] done in
        if !done { self?.log.warning("\(backend.name) refused to turn Do-Not-Disturb on") }
      }
    }
  }

  // MARK: D-Bus and events

  private var backendName: String { backend?.name ?? "none" }

  /// What was last announced, so nothing is sent when nothing changed.
  private var announced: (enabled: Bool, backend: String, until: Date?, server: String)?

  private func announce() {
    let now = (enabled, backendName, until, server)
    if let announced, announced == now { return }
    // Only the properties that changed: a client must not take a repeated value for news.
    let changed = [
      ("Enabled", announced?.enabled != now.0), ("Backend", announced?.backend != now.1),
      ("Until", announced.map { $0.until != now.2 } ?? true),
      ("Server", announced?.server != now.3),
    ].filter(\.1).map(\.0)
    announced = now
    context.growObject?.propertiesChanged(changed, on: Self.interfaceName)
    context.publish(
      DoNotDisturbChanged(enabled: enabled, backend: backendName, silencesServer: backend != nil))
  }

  private func exportInterface() {
    guard let object = context.growObject else { return }
    object.add(
      BusInterface(
        name: Self.interfaceName,
        methods: [
          .init("Enable", inputs: [.init("seconds", "u")]) { [weak self] arguments, _ in
            guard case .uint32(let seconds)? = arguments.first else { return [] }
            self?.switchOn(.request, for: TimeInterval(seconds))
            return []
          },
          .init("Disable") { [weak self] _, _ in
            self?.switchOff()
            return []
          },
          .init("Toggle", outputs: [.init("enabled", "b")]) { [weak self] _, _ in
            guard let self else { return [.bool(false)] }
            if enabled { switchOff() } else { switchOn(.request) }
            return [.bool(enabled)]
          },
        ],
        properties: [
          .init(
            "Enabled", "b", get: { [weak self] in .bool(self?.enabled ?? false) },
            set: { [weak self] value in
              guard let self, let on = value.boolValue, on != enabled else { return }
              if on { switchOn(.request) } else { switchOff() }
            }),
          .init("Backend", "s") { [weak self] in .string(self?.backendName ?? "none") },
          .init("Until", "x") { [weak self] in
            .int64(self?.until.map { Int64($0.timeIntervalSince1970 * 1_000_000) } ?? 0)
          },
          .init("Server", "s") { [weak self] in .string(self?.server ?? "") },
        ]))
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(DoNotDisturbPlugin.self) }
