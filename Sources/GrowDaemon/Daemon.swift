import Dispatch
import FoundationEssentials
import Glibc
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowDBus
import GrowHistory
@_spi(GrowHost) import GrowLoop
@_spi(GrowBuiltIn) @_spi(GrowHost) import GrowPluginKit
import GrowSync

/// Why the daemon could not start.
public enum DaemonError: Error, CustomStringConvertible {
  case noSessionBus(BusError)
  case alreadyRunning(pid: UInt32?)
  case cannotExport(BusError)

  public var description: String {
    switch self {
    case .noSessionBus(let error):
      "cannot reach the session bus: \(error.message)"
    case .alreadyRunning(let pid):
      "another grow daemon already owns \(GrowBusAPI.busName)"
        + (pid.map { " (pid \($0))" } ?? "")
        + "; use it with 'grow status', or stop it first"
    case .cannotExport(let error):
      "cannot export \(GrowBusAPI.objectPath): \(error.message)"
    }
  }
}

/// The running daemon: the timer, the event bus and the D-Bus service, all on one event loop
/// (the main queue). Nothing here runs on another thread.
@MainActor
public final class Daemon {
  /// The one loop everything runs on: the timer, the plugin host, external plugins, every
  /// plugin's context and the history's clock.
  public let loop: MainLoop
  public let events = EventBus()
  public let timer: FocusTimer
  public let log: Logger
  public let plugins: PluginHost
  private var config: GrowConfig {
    didSet { warnBefore = Self.warnBefore(in: config) }
  }
  /// `[plugin.notify] warn-before` of `config`, read once per config: GetStatus serves it.
  private var warnBefore: TimeInterval = 0
  private var connection: BusConnection?
  private var object: BusObject?
  private var service: TimerService?
  private var journey: JourneyService?
  private var history: HistoryRecorder?
  private let historyPath: String
  /// `[sync] folder`'s service; nil while sync is off.
  private var sync: SyncService?
  /// Where the running session is kept for a restart; nil for a daemon that keeps none (the
  /// demo).
  private let sessions: SessionStore?
  private var signalSources: [any DispatchSourceSignal] = []
  private var terminationSignals: TerminationSignals?
  /// Notices a plugin's event handler that does not return (see `TerminationSignals`).
  private let watchdog: HandlerWatchdog
  /// How long a handler may keep the loop before the watchdog reports it.
  nonisolated static let stuckHandlerLimit: Double = 3
  private var flushScheduled = false
  /// A flush of the session is on the disk now; another waits for it (`startFlush`).
  private var flushRunning = false
  private var flushWanted = false
  /// Notices suspends and wall-clock changes (see `watchTheClock`).
  private var clockWatch: ClockWatch?
  /// The system bus, for logind's PrepareForSleep; nil where there is none.
  private var systemBus: BusConnection?
  /// Reads the config file; `[plugin.ID]` sections are checked on the loop afterwards.
  public typealias ConfigReader = @Sendable () throws -> GrowConfig
  private let reloadConfig: ConfigReader?
  /// A reload is being read; another SIGHUP meanwhile only asks for one more after it.
  private var reloading = false
  private var reloadAgain = false
  /// Reloads asked for (SIGHUP or `Reload`), numbered; a `Reload` call is answered once the
  /// reload with its number (or a later one) is applied.
  private var reloadsRequested = 0
  private var reloadCallers: [(request: Int, reply: PendingReply)] = []
  /// In the static image (DaemonImage): replaces the process with the daemon that loads
  /// plugin libraries, for a reloaded config that enables one; returns only when it failed.
  public var handOver: (@MainActor () -> Void)?
  /// Set once the session bus is gone: from then on the daemon only leaves, keeping the session.
  private var busLost = false

  /// - Parameters:
  ///   - reloadConfig: reads the config again on SIGHUP or `grow reload`, on another thread;
  ///     the cards take effect and plugins are started, restarted or stopped as their settings
  ///     changed (`PluginHost.apply`). nil to ignore SIGHUP.
  ///   - pluginDirectories: where plugin libraries are looked for.
  ///   - historyPath: the history database.
  ///   - loop: the loop everything runs on; plugins get it too.
  public init(
    config: GrowConfig, log: Logger, reloadConfig: ConfigReader? = nil,
    pluginDirectories: PluginDirectories = .standard(),
    historyPath: String = HistoryStore.defaultPath(),
    sessionPath: String? = SessionStore.defaultPath(),
    quarantine: PluginQuarantine? = PluginQuarantine(), loop: MainLoop = .shared
  ) {
    self.loop = loop
    self.config = config
    warnBefore = Self.warnBefore(in: config)
    self.historyPath = historyPath
    self.sessions = sessionPath.map(SessionStore.init(path:))
    self.log = log
    self.reloadConfig = reloadConfig
    watchdog = HandlerWatchdog(
      limit: Self.stuckHandlerLimit,
      onStuck: { [log] running in
        log.error(
          "plugin '\(running.subscriber)' has been stuck in its '\(running.event)' handler for "
            + "\(DurationText.format(Self.stuckHandlerLimit)); the daemon cannot answer until it "
            + "returns (SIGTERM still puts the desktop back and exits)")
      },
      onReturned: { [log] running in
        log.warning(
          "plugin '\(running.subscriber)' returned from its '\(running.event)' handler after "
            + "\(DurationText.format(running.seconds.rounded()))")
      })
    events.watchdog = watchdog
    let timer = FocusTimer(deck: config.deck, bus: events, time: loop)
    timer.sleepLimit = config.sleepLimit
    self.timer = timer
    let events = self.events
    var makeContext: (String, ConfigSection) -> PluginContext = { _, _ in fatalError("unset") }
    plugins = PluginHost(
      directories: pluginDirectories, log: log, loop: loop, quarantine: quarantine
    ) { id, section in
      makeContext(id, section)
    }
    makeContext = { [weak self] id, section in
      PluginContext(
        id: id, config: section, log: log.named(id), events: events, timer: timer,
        sessionBus: self?.connection, growObject: self?.object, loop: loop)
    }
    plugins.unsubscribe = { [events] id in events.unsubscribeAll(of: id) }
    plugins.watchdog = watchdog
    let clockWatch = ClockWatch { [weak self] changes in self?.clockChanged(changes) }
    self.clockWatch = clockWatch
    loop.beforeAlarm = { [weak clockWatch] in clockWatch?.check() }
    events.onSubscriberFailure = { [log, plugins] subscriber, error in
      if plugins.record(subscriber) != nil {
        plugins.subscriberFailed(subscriber, error: error)
      } else {
        log.error("\(subscriber) failed and was unsubscribed: \(error)")
      }
    }
  }

  /// Connects to the session bus, claims `org.grow.Grow1` and serves the API. Returns once
  /// everything is in place; the main queue then does the rest.
  public func start() throws(DaemonError) {
    let connection: BusConnection
    do {
      connection = try BusConnection.session(on: loop)
    } catch {
      throw .noSessionBus(error)
    }
    // Export before claiming the name, so the first caller that sees the name finds the object.
    do {
      let object = try BusObject(path: GrowBusAPI.objectPath, on: connection)
      self.object = object
      history = openHistory()
      service = TimerService(
        timer: timer, bus: events, object: object,
        streak: { [weak self] in self?.history?.streak ?? .none },
        warnBefore: { [weak self] in self?.warnBefore ?? 0 })
      PluginService(host: plugins, object: object).install()
      installConfigInterface(on: object)
      object.add(Self.historyInterface { [weak self] in self?.history?.reread() })
      if let history {
        journey = JourneyService(
          timer: timer, history: history, object: object, events: events, time: loop)
        journey?.install()
      }
    } catch {
      throw .cannotExport(error)
    }
    let owned: Bool
    do {
      owned = try connection.requestName(GrowBusAPI.busName)
    } catch {
      throw .noSessionBus(error)
    }
    guard owned else {
      throw .alreadyRunning(pid: connection.processID(ofOwner: GrowBusAPI.busName))
    }
    connection.onDisconnect = { [weak self] in self?.lostTheBus() }
    self.connection = connection
    installSignalHandlers()
    watchTheClock()
    honourDoNotDisturbRecord()
    plugins.start(with: config)
    // After the plugins and the history, so they see what the restored session does.
    resumeSavedSession()
    applySync(config.syncFolder, name: config.syncName)
    log.info("ready on \(GrowBusAPI.busName) (pid \(getpid()))")
  }

  /// A DND restore record left by a daemon that could not put the server back (killed, crashed,
  /// or SIGTERMed while the server did not answer) is honoured before any plugin loads: a
  /// plugin that takes the daemon down at start would otherwise keep the desktop silenced
  /// start after start. Only a saved session that goes on keeps it, and only when the dnd
  /// plugin will load: its policy (focus, always, per card) then decides, adopting the record
  /// or putting the server back itself. Putting dunst back here and pausing it again a moment
  /// later would pour out the notifications it queued.
  private func honourDoNotDisturbRecord() {
    let restorer = DoNotDisturbRestorer(
      environment: ProcessInfo.processInfo.environment, timeout: Self.startRestoreTimeout)
    if case .none = restorer.file.read() { return }
    let sessionGoesOn = ((try? sessions?.load()) ?? nil) != nil
    if sessionGoesOn, plugins.wouldLoad(DoNotDisturbRestorer.pluginID, with: config) {
      log.info("a saved session goes on: the dnd plugin takes up \(restorer.file.path)")
      return
    }
    let outcome = restorer.run { try BusConnection.sessionBusAddress() }
    switch outcome {
    case .nothingToRestore: break
    case .restored(let backend):
      log.info("put \(backend)'s Do-Not-Disturb back as it was before Grow changed it")
    case .alreadyBack(let backend):
      log.info("\(backend)'s Do-Not-Disturb was already changed back; removed the record")
    case .releasedWithConnection: break
    case .damaged(let why): log.warning(why.english)
    case .failed(_, let reason): log.warning(reason.english)
    }
  }

  /// Each call of the start's restore waits at most this long: a stopped server delays the
  /// start by two of these at most, and the dnd plugin then keeps asking on the loop.
  static let startRestoreTimeout: Int32 = 1000

  /// Starts and runs until SIGTERM or SIGINT.
  public func run() throws(DaemonError) -> Never {
    // Grow's files are created owner-only with explicit modes; the mask also covers whatever
    // else creates a file in this process (a plugin, a library). The programs the daemon
    // starts get the user's own mask back.
    let userMask = umask(0o077)
    umask(userMask | 0o077)
    ChildProcess.umaskForChildren = userMask
    try start()
    MainLoop.shared.runOnMainThread()
  }

  /// Leaves cleanly: the running phase is recorded as cut short and the saved session removed
  /// (a stop ends the session); the bus name is released when the connection closes. Plugins
  /// that are still running are told to stop but not waited for; SIGTERM waits for them first.
  public func shutdown(status: Int32 = 0, historyWithin seconds: TimeInterval = 1) -> Never {
    // A SIGTERM while leaving after a lost bus must not end the session that leaving keeps.
    if busLost { leave(status: 1) }
    log.info("shutting down")
    history?.recordCutShort(timer.runningPhase)
    history?.finishWriting(within: seconds)
    try? sessions?.save(nil)
    leave(status: status)
  }

  private func leave(status: Int32) -> Never {
    plugins.stopAll()
    connection?.close()
    exit(status)
  }

  /// The session bus went away (dbus-daemon crashed or the session ended under us). Without it
  /// nobody can reach the timer, so the daemon exits with status 1; but the person did not
  /// stop anything: the session stays saved and out of the history, and the next daemon (a
  /// new login, systemd's restart, D-Bus activation) takes it up with the same deadline.
  /// Plugins still get to undo what they can.
  private func lostTheBus() {
    guard !busLost else { return }
    busLost = true
    save()
    let kept = sessions.map {
      ". The running session stays saved in \($0.path) and resumes when grow daemon starts again"
    }
    log.error("lost the session bus; exiting with status 1" + (kept ?? ""))
    plugins.stopAll { [weak self] in self?.leave(status: 1) }
  }

  /// Takes up the session a crashed daemon left, then keeps the file current.
  private func resumeSavedSession() {
    guard let sessions else {
      history?.startWriting()
      return
    }
    do {
      if let saved = try sessions.load() {
        history?.resume(saved.runningPhase, intention: saved.intention, task: saved.task)
        let result = timer.restore(saved) { [history] phase in history?.recordedEnd(of: phase) }
        switch result {
        case .resumed: log.info("resumed the session saved in \(sessions.path)")
        case .closedAsTooOld: log.info("the saved session ended over an hour ago; closed it")
        case .alreadyOver: log.info("the saved session had already ended; nothing to resume")
        case .notIdle: break
        }
      }
    } catch {
      log.warning(error.description)
    }
    history?.startWriting()
    save()
    events.subscribe(TimerChanged.self, as: "session-store") { [weak self] _ in
      self?.save(flush: false)
      self?.flushAfterThisTurn()
    }
  }

  /// Puts the saved session on disk once the event loop finishes what it is doing. Each change
  /// is saved at once (a daemon killed right after answering a call has it), but a burst of
  /// changes in one turn (a plugin sending hundreds of commands) costs one fsync, not hundreds.
  /// A burst of calls is answered over many turns (a few calls of each client a turn, see
  /// BusConnection), so one flush runs at a time and the changes made meanwhile get one more
  /// after it: on ext4 the loop's next write of the file waited for each fsync, and a flush per
  /// turn made a burst of 3,000 Extend take three times as long.
  private func flushAfterThisTurn() {
    flushWanted = true
    guard !flushScheduled, !flushRunning else { return }
    flushScheduled = true
    _ = loop.after(seconds: 0) { [weak self] in
      guard let self else { return }
      self.flushScheduled = false
      self.startFlush()
    }
  }

  private func startFlush() {
    guard flushWanted, !flushRunning, let path = sessions?.path else { return }
    flushWanted = false
    flushRunning = true
    let log = self.log
    Self.flushQueue.async { [weak self] in
      do throws(PrivateFileError) {
        try PrivateFiles.flush(path)
      } catch {
        log.error("cannot flush the session to disk: \(error)")
      }
      DispatchQueue.main.async {
        MainActor.assumeIsolated {
          self?.flushRunning = false
          self?.startFlush()
        }
      }
    }
  }

  private static let flushQueue = DispatchQueue(label: "grow.session.flush", qos: .utility)

  private func save(flush: Bool = true) {
    do {
      try sessions?.save(timer.savedSession, flush: flush)
    } catch {
      log.error("cannot save the session to \(sessions?.path ?? ""): \(error)")
    }
  }

  /// Opens the history, which keeps today's totals for the timer (from the file, the phases
  /// kept for it and each phase recorded since). The writing happens off the loop
  /// (HistoryWriter); its news comes back through `wake` onto the main queue. A phase that
  /// cannot be written now is kept beside the saved session and written later.
  private func openHistory() -> HistoryRecorder? {
    let log = self.log
    let recorder = HistoryRecorder(
      path: historyPath, pendingPath: sessions.map { PendingPhases.path(besideSession: $0.path) },
      events: events,
      dailyGoal: { [timer] in try? timer.deck.card(named: nil).dailyGoal }, time: loop,
      log: { level, message in log.log(level, message) })
    recorder.wake = { [weak self] in
      DispatchQueue.main.async { MainActor.assumeIsolated { self?.history?.deliverReports() } }
    }
    recorder.todayChanged = { [weak self] in self?.service?.announceToday() }
    timer.todayKeeper = recorder
    return recorder
  }

  /// Starts, moves or stops sync for `[sync] folder` (nil: off).
  private func applySync(_ folder: String?, name: String?) {
    sync?.stop()
    sync = nil
    guard let folder, let history else { return }
    let identity: MachineIdentity
    do {
      identity = try MachineIdentity.load(name: name ?? ThisMachine.name)
    } catch {
      return log.error("sync is off: \(error)")
    }
    let path = SyncFolder.expand(folder, environment: ProcessInfo.processInfo.environment)
    let service = SyncService(
      folder: SyncFolder(path: path, identity: identity), history: history, events: events,
      log: log)
    sync = service
    service.start()
  }

  /// `org.grow.Grow1.History`: `grow history` calls `Changed` after it deleted or edited
  /// phases, so the timer's today figures follow the file (read on the writer's queue).
  static func historyInterface(changed: @escaping () -> Void) -> BusInterface {
    BusInterface(
      name: GrowBusAPI.historyInterface,
      methods: [
        .init(
          "Changed",
          doc: "The history file was changed by another program (grow history delete or "
            + "edit): today's figures and the streak are read again, then announced."
        ) { _, _ in
          changed()
          return []
        }
      ],
      doc: "Grow's history of phases, kept in $XDG_DATA_HOME/grow/history.sqlite.")
  }

  /// Suspends and wall-clock changes: the kernel tells through the clock watch's timerfd, and
  /// logind (where there is a system bus) says when the machine goes to sleep and wakes.
  /// Either way the clocks themselves say how long the sleep was.
  private func watchTheClock() {
    do {
      try clockWatch?.start()
    } catch {
      log.warning(error.description)
    }
    let rule =
      "type='signal',sender='org.freedesktop.login1',path='/org/freedesktop/login1',"
      + "interface='org.freedesktop.login1.Manager',member='PrepareForSleep'"
    do {
      let systemBus = try BusConnection.system(on: loop)
      try systemBus.onSignal(match: rule) { [weak self] message in
        guard let self, case .bool(let goingToSleep)? = message.arguments.first else { return }
        self.log.info(goingToSleep ? "the system is going to sleep" : "the system woke up")
        self.clockWatch?.check()
      }
      systemBus.onDisconnect = { [weak self] in
        self?.log.warning("lost the system bus; suspends are still noticed through the clocks")
        self?.systemBus = nil
      }
      self.systemBus = systemBus
    } catch {
      log.info("no system bus (\(error.message)); suspends are noticed through the clocks alone")
    }
  }

  private func clockChanged(_ changes: ClockChanges) {
    if changes.wallClockSet != 0 {
      let direction = changes.wallClockSet > 0 ? "forward" : "back"
      log.info(
        "the wall clock was set \(direction) by "
          + "\(DurationText.format(abs(changes.wallClockSet).rounded())); "
          + "the running phase keeps the time it had left")
      timer.wallClockChanged(by: changes.wallClockSet)
    }
    if changes.slept > 0 {
      log.info("the system slept for \(DurationText.format(changes.slept.rounded()))")
      timer.systemSlept(for: changes.slept)
    }
  }

  private func installSignalHandlers() {
    // Off the loop, so that they still work when a plugin's handler never returns.
    terminationSignals = TerminationSignals(
      log: log, watchdog: watchdog, emergencyActions: plugins.emergencyActions
    ) { [weak self] in
      // Leaving already, after the bus went away: plugins are being stopped.
      guard let self, !self.busLost else { return }
      // Let every plugin undo what it changed (external ones get SIGTERM, then SIGKILL), all
      // within one deadline, so a plugin hanging in stop() still lets the exit keep
      // TerminationSignals.promise.
      self.plugins.stopAll(within: TerminationSignals.pluginStopLimit) {
        self.shutdown(historyWithin: TerminationSignals.historyLimit)
      }
    }
    signal(SIGHUP, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .main)
    source.setEventHandler { [weak self] in
      MainActor.assumeIsolated {
        guard self?.busLost == false else { return }
        self?.reload()
      }
    }
    source.resume()
    signalSources.append(source)
  }

  /// Reads the config on a thread of its own and applies it on the loop: reading and checking
  /// a file of up to 1 MiB takes longer than the loop may be held (D-Bus callers wait
  /// meanwhile). The thread runs at a lower priority (nice 10, for it alone): on a busy
  /// machine it would otherwise take the CPU the loop needs to answer. SIGHUPs that come while
  /// one is read make one more reload afterwards, not one each.
  /// Returns the number of this reload: `apply` reports it, or a later one.
  @discardableResult
  func reload() -> Int {
    guard let reloadConfig else { return reloadsRequested }
    reloadsRequested += 1
    guard !reloading else {
      reloadAgain = true
      return reloadsRequested
    }
    reloading = true
    let requested = reloadsRequested
    BackgroundThread.start(name: "grow-config-reload") {
      // On Linux the nice value belongs to the thread, and `0` names the calling one. Ten
      // below the daemon's own, not nice 10 outright: a daemon started at nice -10 otherwise
      // read a 42,000-card file at the level of every build beside it, for over 10 s.
      let which = __priority_which_t(PRIO_PROCESS.rawValue)
      errno = 0
      let own = getpriority(which, 0)
      setpriority(which, 0, min(19, (errno == 0 ? own : 0) + 10))
      let result = Result { try reloadConfig() }
      DispatchQueue.main.async {
        MainActor.assumeIsolated { [weak self] in self?.apply(result, upTo: requested) }
      }
    }
    return requested
  }

  private func apply(_ read: Result<GrowConfig, any Error>, upTo requested: Int) {
    reloading = false
    if handOver != nil, case .success(let newConfig) = read,
      case .dynamic(let reason) = DaemonImage.choose(config: newConfig, image: DaemonImage.fileName)
    {
      return handOverForLibraries(reason, upTo: requested)
    }
    // Plugin sections against what the plugins to start declare: on the loop, as opening a
    // library must be (mostly loaded already; a section holds a few keys).
    let result = read.flatMap { config -> Result<GrowConfig, any Error> in
      let problems =
        plugins.unknownSections(in: config)
        + config.pluginProblems(declared: { [plugins] id in
          MainActor.assumeIsolated { plugins.declaredSettings(of: id) }
        })
      return problems.isEmpty ? .success(config) : .failure(ConfigError(problems))
    }
    var report: [String] = []
    switch result {
    case .success(let newConfig):
      let oldNames = config.deck.names
      timer.replaceDeck(newConfig.deck)
      timer.sleepLimit = newConfig.sleepLimit
      let names = timer.deck.names
      if names != oldNames || config.deck != newConfig.deck {
        let more = names.count > 20 ? " and \(names.count - 20) more" : ""
        report.append("cards \(names.prefix(20).joined(separator: ", "))\(more)")
      }
      if config.sleepLimit != newConfig.sleepLimit {
        report.append("sleep-limit: \(DurationText.format(newConfig.sleepLimit))")
      }
      report += plugins.apply(newConfig)
      if newConfig.syncFolder != config.syncFolder || newConfig.syncName != config.syncName {
        applySync(newConfig.syncFolder, name: newConfig.syncName)
        report.append("sync folder: \(newConfig.syncFolder ?? "off")")
      }
      config = newConfig
      if report.isEmpty { report = ["nothing changed"] }
      log.info("config reloaded: " + report.joined(separator: "; "))
    case .failure(let error):
      report = ["config not reloaded, keeping the old one:", "\(error)"]
      log.error("config not reloaded, keeping the old one: \(error)")
    }
    // Reloads asked for meanwhile are read after this one, with higher numbers.
    let answered = reloadCallers.filter { $0.request <= requested }
    reloadCallers.removeAll { $0.request <= requested }
    if case .failure = result {
      let error = BusError(
        name: GrowBusAPI.ErrorName.invalidConfig, message: report.joined(separator: "\n"))
      for caller in answered { caller.reply.fail(error) }
    } else {
      // Once the restarted plugins are up again (each waits for its old instance to stop), so
      // what the caller asks them next finds them; but no later than one stop grace after the
      // config is applied: in a storm of reloads each one restarts them again, and a caller
      // waiting for the storm to end timed out (a reply is sent once, the later call is void).
      let answer = { [report] in
        for caller in answered {
          caller.reply.send([.array(element: "s", report.map(BusValue.string))])
        }
      }
      plugins.afterPendingStarts(answer)
      _ = loop.after(seconds: PluginHost.stopGrace + 1, answer)
    }
    if reloadAgain {
      reloadAgain = false
      reload()
    }
  }
}

extension Daemon {
  static func warnBefore(in config: GrowConfig) -> TimeInterval {
    (try? config.pluginSections["notify"]?.duration("warn-before", default: 0)) ?? 0
  }
}

extension Daemon {
  /// The static image cannot load a plugin library (a second GrowKit and Swift runtime): the
  /// reload is answered with `DaemonImage.handOverReport`, the session is saved as for a lost
  /// bus, the plugins stop, and the process becomes `grow daemon`, which takes the session up
  /// with the same deadline and loads the library. Costs what a daemon start costs; nothing is
  /// recorded as cut short.
  private func handOverForLibraries(_ reason: String, upTo requested: Int) {
    let line = DaemonImage.handOverReport + ": " + reason
    log.info("config reloaded: " + line)
    let answered = reloadCallers.filter { $0.request <= requested }
    reloadCallers.removeAll()
    for caller in answered { caller.reply.send([.array(element: "s", [.string(line)])]) }
    busLost = true  // from here on, leaving keeps the session, as after a lost bus
    save()
    history?.finishWriting(within: 1)
    plugins.stopAll { [weak self] in
      guard let self else { return }
      self.connection?.close()
      self.handOver?()
      self.leave(status: 1)
    }
  }

  /// `org.grow.Grow1.Config`: `grow reload`. The config is read off the loop; `Reload` is
  /// answered once it has been applied and the plugins it restarted are up, with what changed.
  private func installConfigInterface(on object: BusObject) {
    object.add(
      BusInterface(
        name: GrowBusAPI.configInterface,
        methods: [
          .init(
            "Reload", outputs: [.init("changes", "as")],
            doc: "Reads config.ini again, as SIGHUP does, and answers once the new config is "
              + "applied and the plugins it restarted have started: what changed, one line each. A file with problems changes nothing and "
              + "is answered with org.grow.Grow1.Error.InvalidConfig, which names them.",
            answer: { [weak self] _, reply in
              guard let self, self.reloadConfig != nil else {
                return reply.fail(
                  BusError(
                    name: GrowBusAPI.ErrorName.invalidState,
                    message: "this daemon has no config file"))
              }
              // Callers whose reply expired (a reload that never finished) are let go here.
              self.reloadCallers.removeAll { !$0.reply.isPending }
              self.reloadCallers.append((self.reload(), reply))
            })
        ]))
  }
}
