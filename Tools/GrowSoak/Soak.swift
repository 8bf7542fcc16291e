import Foundation
import GrowCore
import GrowHistory
import GrowTestSupport

/// How a soak run is shaped.
public struct SoakOptions: Sendable {
  /// Faults to inject.
  public var faults = 500
  public var seed = UInt64(Date().timeIntervalSince1970 * 1000)
  /// Seconds the whole run may take; fault injection stops early enough to finish inside it.
  public var timeLimit: TimeInterval = 600
  /// The kinds of fault to draw from.
  public var kinds = Set(FaultKind.standard)
  /// Kinds injected exactly this many times (within `faults`), spread evenly over the run and
  /// never drawn: a short run (make test's) exercises kinds too slow to draw often. They need
  /// not be in `kinds`.
  public var fixedCounts: [FaultKind: Int] = [:]

  /// Whether the run may inject `kind` (drawn or fixed), so its tools are set up.
  public func uses(_ kind: FaultKind) -> Bool { kinds.contains(kind) || fixedCounts[kind] ?? 0 > 0 }
  /// Rounds of the separate plugin-hang check after the faults; 0 for none.
  public var hangRounds = 3
  /// The daemon's resident set may not grow past this (MiB); 0 for no bound.
  public var rssLimitMiB = 256
  /// Nor its open descriptors past this many; 0 for no bound.
  public var descriptorLimit = 256
  /// The p99 GetStatus latency each fault kind must stay under (ms). `make soak` keeps 100;
  /// `make test`'s short run, on machines as busy as they come, checks only that the loop
  /// never freezes.
  public var latencyBoundMilliseconds = 100.0
  /// Progress lines (one per fault) go here; nil for none.
  public var progress: (@Sendable (String) -> Void)?
  /// Told the directory the soak mounted a tmpfs on, so that a process killed by signal can
  /// still unmount it (grow-soak does, on SIGTERM and SIGINT).
  public var mounted: (@Sendable (String) -> Void)?
  /// Where to copy the daemon logs and the history when the run fails; nil to keep nothing.
  public var keepFailuresIn: String? = FileManager.default.temporaryDirectory.path

  public init() {}
}

/// The fault-injection soak ("Nothing lost", docs/measurements.md): the real `grow daemon` with the
/// dnd plugin and crash-prone external plugins, on a private session bus with a real dunst, runs a
/// card of one- and two-second phases by itself while the soak pauses, skips, stops, kills the
/// daemon with SIGKILL (at random moments, at phase ends, in the middle of a command), crashes
/// plugins and dunst. After every recovery it checks that `grow status`, session.json and
/// dunst agree; at the end that the history holds every phase that ran exactly once
/// (`HistoryAudit`), passes `PRAGMA integrity_check`, and that DND is off.
///
/// The stress faults ("Trust under stress", StressFaults.swift) come on top: dunst and the X
/// server stopped, a title flood, the history locked, the data directory full, the WAL
/// deleted, and separately a plugin that hangs; `StatusProbe` times `GetStatus` meanwhile and
/// watches the daemon's memory. So the daemon also runs the notify and x11 plugins, on an X
/// server of the soak's own (stopping the desktop's would stop other tests' windows too).
///
/// The trust faults ("Trust, round two", TrustFaults.swift and HostilePeers.swift): hostile
/// sway and Hyprland peers (the daemon runs with the wayland plugin against stand-ins for as
/// long as one lasts), reload storms, a plugin that crashes in `init`, a damaged pending
/// journal, pipelined call bursts; the probe counts the daemon's descriptors too.
///
/// Runs synchronously on the calling thread (it sleeps between steps).
public final class Soak {
  public static let card = CardRules(
    lengths: [.focus: 2, .shortBreak: 1, .longBreak: 2], longBreakAfter: 3)
  public static let intention = "soak"
  static let pluginIDs = ["crashy-1", "crashy-2", "crashy-3", "crashy-4"]
  /// The longest the daemon stays dead: well under FocusTimer.lateStartTolerance, so phases
  /// that end meanwhile follow each other at their deadlines.
  static let longestDowntime = 1.2

  let options: SoakOptions
  var random: SoakRandom
  var report = SoakReport()
  let harness: DaemonHarness
  let display: PrivateDisplay
  var dunst: BackgroundProcess
  let probe: StatusProbe
  private let started = Date()
  let sessionPath: String
  private let pluginDirectory: String
  var history: HistoryStore?
  var daemonLogs: [String] = []
  /// The compiled title-flood client (Tests/Fixtures/TitleFlood), when that fault is drawn.
  var floodTool: String?
  /// The data directory while it is a small tmpfs of its own (for the full-disk fault).
  var dataMount: String?
  /// The daemon's environment on the soak's X desktop; hostile-peer faults add a compositor's.
  let desktopEnvironment: [String: String]
  /// The crash-prone external plugin's script.
  let pluginScriptPath: String
  /// `[card.NAME]` sections the config has (a large set for ListCards in call bursts).
  let cardCount: Int
  /// The stand-ins of the hostile-peer faults, when those are drawn.
  var swayStandIn: SwayStandIn?
  var hyprlandStandIn: HyprlandStandIn?
  /// The other machine and the two Syncthings of the sync faults, when those are drawn.
  var syncPeers: SyncPeers?

  /// Phases seen persisted as running, by key.
  private var seen: Set<PhaseKey> = []
  /// The last snapshot seen, and when it last changed (DND follows a change within moments).
  private var lastSnapshot: SessionSnapshot?
  private var lastChange = Date()
  private var pausedSince: Date?
  private var plugins: [String: PluginSlot] = [:]

  private struct PluginSlot {
    /// Crashes since this daemon started, for the restart backoff (1 s, 2 s, 4 s, 8 s; the
    /// fifth within two minutes makes the daemon give up, so the soak stops at four).
    var crashes: [Date] = []
    var pending: (since: Date, deadline: Date, oldPID: Int32)?
  }

  public init(options: SoakOptions) throws {
    self.options = options
    random = SoakRandom(seed: options.seed)
    report.seed = options.seed
    report.faultsRequested = options.faults
    report.rssLimitKiB = options.rssLimitMiB * 1024
    report.descriptorLimit = options.descriptorLimit
    report.latencyBoundMilliseconds = options.latencyBoundMilliseconds
    harness = try DaemonHarness(startDaemon: false)
    display = try PrivateDisplay()
    harness.environment["DISPLAY"] = display.display
    probe = StatusProbe(address: harness.bus.address)
    let home = harness.environment["HOME", default: ""]
    sessionPath = harness.environment["XDG_STATE_HOME", default: ""] + "/grow/session.json"
    pluginDirectory = home + "/soak-plugins"
    try FileManager.default.createDirectory(
      atPath: pluginDirectory, withIntermediateDirectories: true)
    pluginScriptPath = home + "/crashy-plugin"
    try writeExecutable(Self.pluginScript(directory: pluginDirectory), to: pluginScriptPath)
    cardCount = options.uses(.callBurst) ? Self.burstCardCount : 0
    desktopEnvironment = harness.environment
    dunst = try NotificationServers.dunst(harness)
    for id in Self.pluginIDs { plugins[id] = PluginSlot() }
    if options.uses(.titleFlood) { floodTool = try Self.buildFloodTool(in: home) }
    try prepareTrustFaults()
    try prepareSyncFaults()
    try writeConfig()
    // Last: deinit unmounts, and runs only for an object that was made whole.
    if options.uses(.dataDirectoryFull) { try mountDataDirectory() }
  }

  deinit { unmountDataDirectory() }

  /// The soak's config, with `extraPlugins` enabled too and `[plugin.dnd] dnd = dnd` (the
  /// default, focus, when nil), `cards` cards of its own beside the default one, and `sync`
  /// (a `[sync]` section) when the sync faults run.
  static func config(
    plugin: String, extraPlugins: [String] = [], dnd: String? = nil, cards: Int = 0,
    sync: String? = nil
  ) -> String {
    let enabled = ["notify", "dnd", "x11", "wayland"] + pluginIDs + extraPlugins
    var text = """
      [timer]
      focus = 2s
      short-break = 1s
      long-break = 2s
      long-break-after = 3
      auto-start-breaks = true
      auto-start-focus = true
      intention = \(intention)

      distractions = soakflood:/youtube/

      [plugins]
      enable = \(enabled.joined(separator: ", "))

      [plugin.x11]
      grace = 1s
      ; Nobody types during a soak: away detection would pause focus.
      idle-pause = 24h

      """
    for id in pluginIDs { text += "\n[plugin.\(id)]\nexec = \(plugin)\n" }
    if let dnd { text += "\n[plugin.dnd]\ndnd = \(dnd)\n" }
    // Cards the timer never runs: they only make the deck (ListCards) large.
    for card in 0..<cards { text += "\n[card.c\(card)]" }
    if let sync { text += "\n" + sync }
    return text + "\n"
  }

  func writeConfig(extraPlugins: [String] = [], dnd: String? = nil) throws {
    try harness.writeConfig(
      Self.config(
        plugin: pluginScriptPath, extraPlugins: extraPlugins, dnd: dnd, cards: cardCount,
        sync: syncSection))
  }

  /// An external plugin that says its pid, reads events, and exits in the middle of one when
  /// the soak leaves a `.crash` file for it.
  static func pluginScript(directory: String) -> String {
    """
    #!/bin/sh
    dir='\(directory)'
    echo $$ > "$dir/$GROW_PLUGIN_ID.pid.new" && mv "$dir/$GROW_PLUGIN_ID.pid.new" "$dir/$GROW_PLUGIN_ID.pid"
    while IFS= read -r line; do
      if [ -e "$dir/$GROW_PLUGIN_ID.crash" ]; then
        rm -f "$dir/$GROW_PLUGIN_ID.crash"
        exit 70
      fi
    done
    """
  }

  // MARK: Running

  /// Runs the soak and returns its report.
  public func run() -> SoakReport {
    probe.start()
    do {
      try startDaemon()
      try command("start")
      try waitForBackend()
      let reserve = min(60, options.timeLimit * 0.25)
      while report.faultsInjected < options.faults {
        guard elapsed < options.timeLimit - reserve else {
          report.stoppedAtTimeLimit = true
          break
        }
        try dwell(random.seconds(0.05...0.35))
        try inject(pickFault())
      }
      try finish()
      try checkPluginHangs()
    } catch {
      problem("the soak stopped: \(error)")
      try? finishAfterError()
    }
    report.probe = probe.stop()
    report.wallSeconds = elapsed
    report.result = report.passed ? "PASS" : "FAIL"
    if !report.passed { keepEvidence() }
    unmountDataDirectory()
    return report
  }

  private var elapsed: TimeInterval { Date().timeIntervalSince(started) }

  func say(_ line: String) {
    options.progress?(String(format: "[%6.1f] ", elapsed) + line)
  }

  func problem(_ text: String) {
    say("PROBLEM: " + text)
    if report.problems.count < 200 { report.problems.append(text) }
  }

  /// Where the `fixedCounts` kinds fall: fault number (0-based) to kind, evenly spaced.
  var fixedFaults: [Int: FaultKind] {
    let fixed = FaultKind.allCases.flatMap { kind in
      Array(repeating: kind, count: max(0, options.fixedCounts[kind] ?? 0))
    }
    guard !fixed.isEmpty else { return [:] }
    let slots = min(fixed.count, options.faults)
    return Dictionary(
      uniqueKeysWithValues: (0..<slots).map {
        (($0 + 1) * options.faults / (slots + 1), fixed[$0])
      })
  }

  private func pickFault() -> FaultKind {
    if let fixed = fixedFaults[report.faultsInjected] { return fixed }
    var kinds = FaultKind.allCases.filter {
      options.kinds.contains($0) && options.fixedCounts[$0] == nil
    }
    if eligiblePlugin() == nil, kinds.contains(where: { !$0.crashesPlugin }) {
      kinds.removeAll { $0.crashesPlugin }
    }
    let total = kinds.reduce(0) { $0 + $1.weight }
    guard total > 0 else { return .skip }
    var draw = Int.random(in: 0..<total, using: &random)
    for kind in kinds {
      draw -= kind.weight
      if draw < 0 { return kind }
    }
    return .skip
  }

  private func inject(_ kind: FaultKind) throws {
    report.faults[kind.rawValue, default: 0] += 1
    say("fault \(report.faultsInjected): \(kind.rawValue)")
    probe.fault = kind.rawValue
    probe.markWindow()
    defer {
      probe.fault = nil
      let window = probe.window()
      if window.slowestMilliseconds > options.latencyBoundMilliseconds {
        say(
          "  GetStatus: slowest \(Int(window.slowestMilliseconds)) ms, "
            + "\(window.timeouts) timed out; the slowest sent "
            + String(format: "%.1f s ago", Date().timeIntervalSince(window.sent)))
      }
    }
    switch kind {
    case .pauseResume:
      try togglePause()
    case .skip:
      try command("skip")
      report.skipsAnswered += 1
    case .stopStart:
      try command("stop")
      report.stopsAnswered += 1
      try dwell(random.seconds(0...0.3))
      try command("start")
    case .daemonKill:
      try killAndRestart()
    case .daemonKillAtPhaseEnd:
      if let deadline = try snapshot()?.phase?.deadline {
        let wait = deadline - Date().timeIntervalSince1970 + random.seconds(-0.004...0.012)
        if wait > 0, wait < 3 { Thread.sleep(forTimeInterval: wait) }
      }
      try killAndRestart()
    case .daemonKillMidCommand:
      try killMidCommand()
    case .pluginKill, .pluginExit:
      try crashPlugin(kill: kind == .pluginKill)
    case .dunstKill:
      dunst.kill()
      dunst = try NotificationServers.dunst(harness)
      report.dunstRestarts += 1
      lastChange = Date()
    case .dunstStall:
      try stall(dunst.pid, for: random.logUniformSeconds(1...30))
    case .xServerStall:
      try stall(display.serverPID, for: random.seconds(1...5))
    case .titleFlood:
      try floodTitles()
    case .historyLocked:
      try lockHistory()
    case .dataDirectoryFull:
      try fillDataDirectory()
    case .walDeleted:
      try deleteWAL()
    case .swayPeer:
      try attackFromSway()
    case .hyprlandPeer:
      try attackFromHyprland()
    case .reloadStorm:
      try stormReloads()
    case .pluginCrashesInInit:
      try crashPluginInInit()
    case .damagedJournal:
      try damageJournal()
    case .callBurst:
      try burstCalls()
    case .syncthingStopped:
      try stopSyncthing()
    case .journalTruncated:
      try truncatePeerJournal()
    }
    if kind.killsDaemon || kind == .dunstKill || kind.isStress || kind.isTrust || kind.isSync
      || random.chance(0.3)
    {
      try checkConsistency(kind.rawValue)
    }
  }

  // MARK: Commands

  /// Runs `grow ARGS`; a failure is a problem (the soak only asks what the state allows).
  /// Up to 30 s, past `grow reload`'s own 15 s wait for a daemon reading 42,000 cards.
  func command(_ arguments: String...) throws {
    let result = try Command.run(
      Binaries.grow, arguments, environment: harness.environment, timeout: 30)
    if result.status != 0 {
      problem("grow \(arguments.joined(separator: " ")) failed: \(result.stderr)")
    }
    try observe()
  }

  private func togglePause() throws {
    let paused = try snapshot()?.phase?.isPaused ?? false
    try command(paused ? "resume" : "pause")
  }

  // MARK: Observing

  func snapshot() throws -> SessionSnapshot? {
    for _ in 0..<20 {
      if let snapshot = try? SessionSnapshot.read(sessionPath) { return snapshot }
      if !FileManager.default.fileExists(atPath: sessionPath) { return nil }
      Thread.sleep(forTimeInterval: 0.01)
    }
    return try SessionSnapshot.read(sessionPath)
  }

  /// Notes the phase session.json has now.
  @discardableResult
  func observe() throws -> SessionSnapshot? {
    let current = try snapshot()
    if let phase = current?.phase { seen.insert(phase.key) }
    if current?.phase?.isPaused != true {
      pausedSince = nil
    } else if pausedSince == nil {
      pausedSince = Date()
    }
    if current != lastSnapshot {
      lastSnapshot = current
      lastChange = Date()
    }
    return current
  }

  /// Waits `seconds`, watching session.json and the plugins; a pause that has lasted two
  /// seconds is ended so that phases keep coming, unless `commands` is false (while a peer
  /// is stopped: the soak only watches then, so that a stuck `grow` cannot hold it up).
  func dwell(_ seconds: TimeInterval, commands: Bool = true) throws {
    let end = Date().addingTimeInterval(seconds)
    repeat {
      try observe()
      checkPendingPlugins()
      if commands, let since = pausedSince, Date().timeIntervalSince(since) > 2 {
        try command("resume")
      }
      Thread.sleep(forTimeInterval: 0.04)
    } while Date() < end
  }

  private func waitForBackend() throws {
    let ready = try harness.eventually(timeout: 15) {
      try harness.dndStatus()["backend"] as? String == "dunst"
    }
    if !ready { problem("the dnd plugin never found dunst: \(harness.daemonLog)") }
  }

  // MARK: Consistency

  /// `grow status` agrees with session.json, and dunst is paused exactly while a focus phase
  /// runs (paused or not). DND follows a change within moments (the plugin asks dunst
  /// asynchronously), so only samples taken when nothing has changed for `settle` seconds
  /// count, and samples during which session.json changed are dropped. The first settled
  /// sample that agrees passes; a disagreement must last `confirm` seconds of one unchanged
  /// state (a loaded machine can be slow), or until the check gives up, to count.
  func checkConsistency(_ context: String) throws {
    report.checks += 1
    try awaitAnswer(context)
    let settle = 0.5
    let confirm = 1.0
    let deadline = Date().addingTimeInterval(8)
    var disagreement: (state: SessionSnapshot?, since: Date, record: () -> Void)?
    while Date() < deadline {
      let before = try observe()
      guard let status = try? harness.status() else {
        try awaitAnswer(context)
        continue
      }
      let dunstPaused = try harness.dunstIsPaused()
      let after = try observe()
      guard before == after, Date().timeIntervalSince(lastChange) >= settle else {
        Thread.sleep(forTimeInterval: 0.05)
        continue
      }
      let focus = after?.phase?.kind == .focus
      let phase = after?.phase.map { $0.key.description } ?? "idle"
      let record: () -> Void
      if let mismatch = Self.statusMismatch(status, after) {
        record = { [self] in
          report.statusMismatches += 1
          problem("after \(context): \(mismatch)")
        }
      } else if focus != (dunstPaused == true) {
        let dndLog = harness.daemonLog.split(separator: "\n").filter { $0.contains("[dnd]") }
        record = { [self] in
          if focus { report.dndOffDuringFocus += 1 } else { report.dndOnOutsideFocus += 1 }
          problem(
            "after \(context): dunst paused \(dunstPaused.map(String.init) ?? "?") during "
              + "\(phase); the dnd plugin said: \(dndLog.suffix(4).joined(separator: " | "))")
        }
      } else {
        return
      }
      if let pending = disagreement, pending.state == after {
        if Date().timeIntervalSince(pending.since) >= confirm {
          record()
          return
        }
      } else {
        disagreement = (after, Date(), record)
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
    if let disagreement {
      disagreement.record()
    } else {
      problem("after \(context): the state never held still for \(settle)s in 8s")
    }
  }

  /// Waits until the daemon answers `grow status` again (a loop that was held up catches up)
  /// for up to two minutes; a wait of more than a second is a problem, one of two minutes
  /// ends the soak.
  func awaitAnswer(_ context: String) throws {
    let start = Date()
    while (try? harness.status()) == nil {
      guard Date().timeIntervalSince(start) < 120 else {
        throw HarnessError("the daemon has not answered `grow status` for 120 s after \(context)")
      }
      Thread.sleep(forTimeInterval: 0.2)
    }
    let waited = Date().timeIntervalSince(start)
    if waited > 1 {
      problem(
        String(format: "after %@: the daemon answered again only %.1f s later", context, waited))
    }
  }

  static func statusMismatch(_ status: [String: Any], _ saved: SessionSnapshot?) -> String? {
    let state = status["state"] as? String ?? "?"
    guard let phase = saved?.phase else {
      // A phase waiting for `grow resume` is saved as `next`, without a phase.
      let expected = saved?.next == nil ? "idle" : "waiting"
      return state == expected
        ? nil : "grow status says \(state), session.json has no phase (expected \(expected))"
    }
    let paused = status["paused"] as? Bool ?? false
    let startedAt = (status["started_at"] as? String).flatMap {
      ISO8601DateFormatter().date(from: $0)
    }
    let offBy = startedAt.map { abs($0.timeIntervalSince1970 - phase.startedAt) } ?? .infinity
    guard state == phase.kind.rawValue, paused == phase.isPaused, offBy < 1.001 else {
      return "grow status says \(state)\(paused ? " (paused)" : "") started "
        + "\(status["started_at"] ?? "?"), session.json \(phase.key)"
        + (phase.isPaused ? " (paused)" : "")
    }
    return nil
  }

  // MARK: The daemon

  func startDaemon() throws {
    do {
      try harness.start()
    } catch {
      // The killed daemon's name may not be released yet.
      Thread.sleep(forTimeInterval: 0.3)
      try harness.start()
    }
    probe.daemonPID = harness.daemon?.pid
    lastChange = Date()
    for id in Self.pluginIDs { plugins[id]?.crashes = [] }
  }

  func killDaemon() {
    daemonLogs.append(harness.daemonLog)
    probe.daemonPID = nil
    harness.daemon?.kill()
  }

  func killAndRestart() throws {
    killDaemon()
    try restart()
  }

  /// Kills the daemon while `grow skip|stop|pause|resume` is on its way; whether the command
  /// happened shows in the saved session and the history.
  private func killMidCommand() throws {
    let paused = try snapshot()?.phase?.isPaused ?? false
    let name =
      ["skip", "stop", paused ? "resume" : "pause"].randomElement(using: &random) ?? "skip"
    let client = try BackgroundProcess(Binaries.grow, [name], environment: harness.environment)
    Thread.sleep(forTimeInterval: random.seconds(0...0.03))
    killDaemon()
    let answered = client.waitForExit(timeout: 10) == 0
    if answered {
      if name == "skip" { report.skipsAnswered += 1 }
      if name == "stop" { report.stopsAnswered += 1 }
    } else {
      report.commandsUnanswered += 1
    }
    try restart()
  }

  /// Starts the daemon again after a random downtime and checks that it took the session up
  /// where the saved session, the history and real time say.
  func restart() throws {
    for id in Self.pluginIDs { unlink(pluginDirectory + "/\(id).crash") }
    let saved = try snapshot()
    Thread.sleep(forTimeInterval: random.seconds(0...Self.longestDowntime))
    let recorded = try recordedEnd(of: saved?.phase)
    try startDaemon()
    report.daemonRestarts += 1
    // The restored daemon may still be catching up through phases that ended while it was
    // down; each must be on the predicted chain, and it must reach the present within moments.
    let chain =
      saved.map {
        Self.card.chain(
          from: $0, recordedEnd: recorded, until: Date().timeIntervalSince1970 + 3)
      } ?? []
    var restored = try observe()
    var wrong: String?
    let catchUp = Date().addingTimeInterval(3)
    while true {
      let now = Date().timeIntervalSince1970
      if let phase = restored?.phase {
        guard let predicted = chain.first(where: { $0.key == phase.key }),
          predicted.paused == phase.isPaused
        else {
          wrong = "\(phase.key)\(phase.isPaused ? " (paused)" : "") is not on the chain"
          break
        }
        if (predicted.end ?? .infinity) >= now - 0.05 { break }
        wrong = "\(phase.key) ended at \(predicted.end ?? 0) but is still running"
      } else {
        wrong = chain.isEmpty ? nil : "no session"
        break
      }
      guard Date() < catchUp else { break }
      Thread.sleep(forTimeInterval: 0.02)
      restored = try observe()
      wrong = nil
    }
    if let wrong {
      let now = Date().timeIntervalSince1970
      let current = chain.filter { $0.start <= now + 0.05 && ($0.end ?? .infinity) >= now - 0.5 }
      problem(
        "the restarted daemon went wrong: \(wrong); saved: "
          + (saved?.phase.map { "\($0.key)" } ?? "none")
          + (recorded.map { " (recorded \($0.outcome) at \($0.endedAt))" } ?? "")
          + ", expected now: \(current.map(\.key.description))")
    } else {
      report.daemonRestartsRight += 1
    }
    if restored == nil { try command("start") }
  }

  /// The end of `phase` that a restarted daemon finds, when there is one: a phase kept in the
  /// pending journal first, as the daemon looks (HistoryRecorder.recordedEnd), then the
  /// history. A kill -9 in the middle of a command can leave a skip journaled and not yet in
  /// the database; the history alone then predicted the focus going on while the daemon
  /// rightly started the break at the skip.
  private func recordedEnd(of phase: PhaseSnapshot?) throws -> (outcome: String, endedAt: Double)? {
    guard let phase else { return nil }
    let journal = try? PendingPhases(path: PendingPhases.path(besideSession: sessionPath))
    if let kept = journal?.pending(PhaseRecord.Key(kind: phase.kind, startedAt: phase.startedAt)) {
      return (kept.phase.outcome.rawValue, kept.phase.endedAt.timeIntervalSince1970)
    }
    let store = try history ?? HistoryStore(path: historyPath, create: false)
    history = store
    let row = try store.phases().last { HistoryAudit.key($0) == phase.key }
    return row.map { ($0.outcome.rawValue, $0.endedAt.timeIntervalSince1970) }
  }

  var historyPath: String {
    HistoryStore.defaultPath(environment: harness.environment)
  }

  // MARK: Plugins

  func eligiblePlugin() -> String? {
    let now = Date()
    return Self.pluginIDs.filter { id in
      guard let slot = plugins[id], slot.pending == nil, pluginPID(id) != nil else { return false }
      return slot.crashes.filter { now.timeIntervalSince($0) < 125 }.count < 4
    }.randomElement(using: &random)
  }

  /// The plugin's pid from its pid file, if that process is alive and is the plugin.
  func pluginPID(_ id: String) -> Int32? {
    guard let text = try? String(contentsOfFile: pluginDirectory + "/\(id).pid", encoding: .utf8),
      let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
      // Its environment, not its command line: the daemon runs the script from the descriptor
      // it checked, so the shell sees /dev/fd/N (ChildProcess.spawn).
      let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
      environment.split(separator: 0).contains(where: {
        let variable = String(decoding: $0, as: UTF8.self)
        return variable.hasPrefix("GROW_PLUGIN_PROGRAM=") && variable.hasSuffix("/crashy-plugin")
      })
    else { return nil }
    return pid
  }

  private func crashPlugin(kill: Bool) throws {
    guard let id = eligiblePlugin(), let pid = pluginPID(id) else { return }
    let now = Date()
    plugins[id]?.crashes.append(now)
    let backoff = pow(2, Double((plugins[id]?.crashes.count ?? 1) - 1))
    if kill {
      Foundation.kill(pid, SIGKILL)
    } else {
      // It exits at its next event; phases change every second or two.
      _ = FileManager.default.createFile(atPath: pluginDirectory + "/\(id).crash", contents: nil)
    }
    report.pluginCrashes += 1
    plugins[id]?.pending = (now, now.addingTimeInterval(backoff + (kill ? 4 : 8)), pid)
  }

  /// A crashed plugin counts as restarted once a new process of it says its pid.
  func checkPendingPlugins() {
    for id in Self.pluginIDs {
      guard let pending = plugins[id]?.pending else { continue }
      if let pid = pluginPID(id), pid != pending.oldPID {
        report.pluginRestarts += 1
        plugins[id]?.pending = nil
      } else if Date() > pending.deadline {
        problem(
          "plugin \(id) was not restarted \(Int(pending.deadline.timeIntervalSince(pending.since)))s after its crash"
        )
        plugins[id]?.pending = nil
      }
    }
  }

  // MARK: Finishing

  private func finish() throws {
    let waitUntil = Date().addingTimeInterval(20)
    while plugins.values.contains(where: { $0.pending != nil }), Date() < waitUntil {
      try dwell(0.2)
    }
    try checkConsistency("the last fault")
    let listed = try harness.plugins()
    for id in Self.pluginIDs where listed[id]?["state"] != "running" {
      problem(
        "plugin \(id) is \(listed[id]?["state"] ?? "missing") at the end: \(listed[id] ?? [:])")
    }
    try checkTodayCount()
    // The soak's reader lets go before the daemon stops: the last connection to close moves
    // the WAL into the database, and a reader left open would keep the daemon from it.
    history = nil
    try command("stop")
    report.stopsAnswered += 1
    try checkConsistency("the final stop")
    daemonLogs.append(harness.daemonLog)
    probe.daemonPID = nil
    if harness.daemon?.terminate(timeout: 10) != 0 {
      problem("the daemon did not exit cleanly on SIGTERM")
    }
    syncPeers?.stop()
    try auditHistory()
  }

  /// Pauses so nothing ends, then compares `CompletedToday` with the history twice: at once
  /// with the history as `grow history` shows it (the database and the phases the daemon
  /// keeps for it), then with the database file alone once the daemon has written every
  /// phase it counted, which it must do within `writtenBound` seconds. (The daemon counts a
  /// phase when it ends and writes it off its loop moments later; after a lock or a full disk
  /// it used to wait out a backoff of up to 4 s first.)
  private func checkTodayCount() throws {
    if try snapshot()?.phase?.isPaused == false { try command("pause") }
    let status = try harness.status()
    let shown = status["completed_today"] as? Int ?? -1
    let today = LocalDay(Date(), in: .system)
    let pendingPath = PendingPhases.path(besideSession: sessionPath)
    let shownByCLI = try HistoryStore(path: historyPath, create: false, pendingPath: pendingPath)
      .phases(days: today...today).filter(\.isCompletedFocus).count
    report.todayCountRight = shown == shownByCLI
    if shown != shownByCLI {
      problem(
        "grow status says \(shown) completed today, grow history (with the phases kept for "
          + "it) has \(shownByCLI)")
    }
    let waitUntil = Date().addingTimeInterval(Self.writtenBound)
    var unwritten = try Self.unwrittenPhases(pendingPath)
    while unwritten > 0, Date() < waitUntil {
      Thread.sleep(forTimeInterval: 0.05)
      unwritten = try Self.unwrittenPhases(pendingPath)
    }
    let store = try history ?? HistoryStore(path: historyPath, create: false)
    history = store
    let completed = try store.phases(days: today...today).filter(\.isCompletedFocus).count
    if shown != completed {
      report.todayCountRight = false
      problem(
        "grow status says \(shown) completed today, the history file has \(completed)"
          + (unwritten > 0
            ? " (\(unwritten) phase(s) still not written after \(Int(Self.writtenBound)) s)"
            : ""))
    }
  }

  /// How long the daemon may take, once the last fault is over, to have every phase it
  /// counted in the history file (HistoryWriter tries a lock again within moments, anything
  /// else within 1 s).
  static let writtenBound: TimeInterval = 2

  /// The phases the daemon keeps for the history and has not written yet.
  static func unwrittenPhases(_ path: String) throws -> Int {
    try PendingPhases(path: path).phases.filter { !$0.confirmed }.count
  }

  private func finishAfterError() throws {
    _ = try? harness.grow("stop")
    daemonLogs.append(harness.daemonLog)
    harness.daemon?.terminate(timeout: 10)
    try auditHistory()
  }

  private func auditHistory() throws {
    if try harness.dunstIsPaused() != false { report.dndLeftOn = 1 }
    let state = harness.environment["XDG_STATE_HOME", default: ""] + "/grow/"
    for file in ["session.json", "dnd-restore.json"]
    where FileManager.default.fileExists(atPath: state + file) {
      report.leftoverFiles.append(file)
    }
    history = nil
    let store = try HistoryStore(path: historyPath, create: false)
    report.integrityCheck = try store.integrityCheck()
    let audit = HistoryAudit(
      rows: try store.phases(), seen: seen, rules: Self.card, intention: Self.intention)
    report.audit = audit
    report.peerPhasesWritten = syncPeers?.phasesGrown ?? 0
    // Each answered skip and stop is one row; a command cut off by kill -9 may be one more.
    let slack = report.commandsUnanswered
    let skipped = audit.outcomes["skipped"] ?? 0
    let stopped = audit.outcomes["stopped"] ?? 0
    report.rowsMatchCommands =
      (report.skipsAnswered...report.skipsAnswered + slack).contains(skipped)
      && (report.stopsAnswered...report.stopsAnswered + slack).contains(stopped)
      && audit.outcomes["abandoned", default: 0] == 0
    if !report.rowsMatchCommands {
      problem(
        "\(skipped) skipped and \(stopped) stopped rows for \(report.skipsAnswered) skips and "
          + "\(report.stopsAnswered) stops answered (\(slack) commands cut off)")
    }
  }

  /// Copies the daemon logs and the history somewhere that outlives the private bus.
  private func keepEvidence() {
    guard let parent = options.keepFailuresIn else { return }
    let directory = parent + "/grow-soak-\(options.seed)"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for (index, log) in daemonLogs.enumerated() {
      try? log.write(toFile: directory + "/daemon-\(index).log", atomically: true, encoding: .utf8)
    }
    let data = (historyPath as NSString).deletingLastPathComponent
    for name in ["history.sqlite", "history.sqlite-wal"] {
      try? FileManager.default.copyItem(atPath: data + "/" + name, toPath: directory + "/" + name)
    }
    report.problems.append("evidence kept in \(directory)")
  }
}
