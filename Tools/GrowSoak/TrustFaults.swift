import Foundation
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowHistory
import GrowPluginKit
import GrowTestSupport

/// The trust faults ("Trust, round two") besides the hostile compositors: reload storms, a
/// plugin that crashes in `init`, a damaged pending-phase journal, pipelined call bursts.
/// Each is one small injector; the soak's usual checks follow it (`grow status` agrees with
/// session.json, DND is right), and the history audit at the end counts what was lost.
extension Soak {
  /// The id the crashing fixture (Tests/Fixtures/CrashesOnInitPlugin) is installed as.
  static let crashingPluginID = "crashes-on-init"
  /// Cards in the config when call bursts are drawn: the deck ListCards answers with, as
  /// large as a config may have.
  static let burstCardCount = GrowConfig.maximumCards

  /// What the drawn kinds need before the daemon first starts.
  func prepareTrustFaults() throws {
    if options.uses(.pluginCrashesInInit) {
      try harness.installPlugin(
        library: "libgrowtest-crashes-on-init.so", as: Self.crashingPluginID)
    }
    // A daemon that stops reading must not hang the soak: such a client is skipped after 1 s.
    if options.uses(.swayPeer) { swayStandIn = try SwayStandIn(sendTimeout: 1) }
    if options.uses(.hyprlandPeer) { hyprlandStandIn = try HyprlandStandIn() }
  }

  // MARK: A reload storm

  /// 20 to 50 `grow reload` at once and as many SIGHUPs while another thread flips
  /// `[plugin.dnd] dnd` between focus, never and always (each flip restarts the dnd plugin),
  /// during focus; then the config is the soak's again and DND must be right within
  /// `dndRecoveryBound` seconds: at once, after `grow stop`, and after `grow start`.
  func stormReloads() throws {
    try keepPhasesComing()
    let count = Int.random(in: 20...50, using: &random)
    let storming = LockedBox(true)
    let configs = ["never", "always", "focus"].map {
      Self.config(plugin: pluginScriptPath, dnd: $0, cards: cardCount, sync: syncSection)
    }
    let path = harness.configPath
    let flipped = DispatchSemaphore(value: 0)
    let flipper = Thread {
      var flips = 0
      while storming.current {
        try? configs[flips % configs.count].write(toFile: path, atomically: true, encoding: .utf8)
        flips += 1
        Thread.sleep(forTimeInterval: 0.005)
      }
      flipped.signal()
    }
    flipper.start()
    // Stops the flipper and waits until it no longer writes (once).
    func calm() {
      let wasStorming = storming.withLock { storming in
        defer { storming = false }
        return storming
      }
      if wasStorming { _ = flipped.wait(timeout: .now() + 5) }
    }
    defer { calm() }
    var reloads: [BackgroundProcess] = []
    for _ in 0..<count {
      reloads.append(
        try BackgroundProcess(Binaries.grow, ["reload"], environment: harness.environment))
      if let pid = harness.daemon?.pid { kill(pid, SIGHUP) }
      Thread.sleep(forTimeInterval: random.seconds(0...0.02))
    }
    for reload in reloads where reload.waitForExit(timeout: 30) == nil {
      reload.kill()
      problem("a `grow reload` of the storm had no answer in 30 s")
    }
    calm()
    report.reloadStorms += 1
    report.reloadsSent += 2 * count
    try writeConfig()
    try command("reload")
    try measureDNDRecovery(since: Date(), after: "a reload storm")
    try command("stop")
    report.stopsAnswered += 1
    try measureDNDRecovery(since: Date(), after: "`grow stop` after a reload storm")
    if try harness.dunstIsPaused() == true {
      // Left on, maybe for good: put back by hand, so that the faults after this one are
      // judged on their own.
      let record = harness.environment["XDG_STATE_HOME", default: ""] + "/grow/dnd-restore.json"
      say(
        "  dunst left paused after the stop, "
          + (FileManager.default.fileExists(atPath: record)
            ? "dnd-restore.json kept" : "no dnd-restore.json") + "; the soak unpauses it")
      _ = try harness.run("dunstctl", ["set-paused", "false"])
    }
    try command("start")
    try measureDNDRecovery(since: Date(), after: "`grow start` after a reload storm")
  }

  // MARK: A plugin that crashes

  /// `grow reload` enables a plugin that faults (SIGSEGV) in `init(context:)`. The daemon may
  /// die of it once; restarted as after a kill -9, it must come back (DND and the session as
  /// they were) without loading the plugin again. The soak then takes the plugin out of the
  /// config, as a person would.
  func crashPluginInInit() throws {
    try keepPhasesComing()
    try writeConfig(extraPlugins: [Self.crashingPluginID])
    let reload = try BackgroundProcess(Binaries.grow, ["reload"], environment: harness.environment)
    if reload.waitForExit(timeout: 30) == nil { reload.kill() }
    let died = harness.daemon?.waitForExit(timeout: 2) != nil
    if died {
      report.crashingPluginDeaths += 1
      say("  the daemon died (status \(harness.daemon?.exitStatus ?? 0))")
      daemonLogs.append(harness.daemonLog)
      probe.daemonPID = nil
      do {
        try restart()
      } catch {
        daemonLogs.append(harness.daemonLog)
        report.crashedAgainAtStart += 1
        let crash = harness.daemonLog.split(separator: "\n").first { $0.contains("crashed") }
        problem(
          "the daemon died again at its next start, the crashing plugin enabled (status "
            + "\(harness.daemon?.exitStatus.map(String.init) ?? "?")): \(crash ?? "")")
        try writeConfig()
        try restart()
      }
    }
    try writeConfig()
    try command("reload")
  }

  // MARK: A damaged journal

  /// With nothing waiting in it, the pending-phase journal (pending-history.json) is
  /// replaced by garbage, a truncated journal or a symlink to another file; the daemon
  /// starts on it while another process holds the history's lock, phases end, and it is
  /// killed (-9) before the lock goes. Every phase must still reach the history (the audit).
  func damageJournal() throws {
    try keepPhasesComing()
    let journal = harness.pendingHistoryPath
    // The soak's damage must not be what loses a phase: kill the daemon while the journal
    // is empty (absent), or give up this time.
    var empty = false
    for _ in 0..<3 where !empty {
      guard (try? harness.waitForHistory(timeout: 5)) != nil else { continue }
      killDaemon()
      empty = !FileManager.default.fileExists(atPath: journal)
      if !empty { try restart() }
    }
    guard empty else {
      problem("the pending journal never emptied for the damaged-journal fault")
      return
    }
    let decoy = harness.environment["HOME", default: ""] + "/not-the-journal"
    let decoyText = "a file of the person's, not Grow's\n"
    try decoyText.write(toFile: decoy, atomically: true, encoding: .utf8)
    let damage = Int.random(in: 0..<3, using: &random)
    switch damage {
    case 0:
      let garbage = (0..<Int.random(in: 1...4096, using: &random)).map { _ in
        UInt8.random(in: 0...255, using: &random)
      }
      try Data(garbage).write(to: URL(fileURLWithPath: journal))
    case 1:
      // Cut short in the old whole-file format, or in the journal's lines.
      let truncated =
        random.chance(0.5)
        ? #"[{"card":"default","kind":"focus","outcome":"comp"#
        : #"{"grow_pending_journal":1}"# + "\n" + #"{"keep":{"confirmed":false,"distr"#
      try Data(truncated.utf8).write(to: URL(fileURLWithPath: journal))
    default:
      try FileManager.default.createSymbolicLink(atPath: journal, withDestinationPath: decoy)
    }
    say("  journal: \(["garbage", "truncated", "a symlink"][damage])")
    report.journalsDamaged += 1
    try withHistoryLocked {
      try restart()
      try dwell(random.seconds(1...4), commands: false)
      killDaemon()
    }
    try restart()
    if (try? String(contentsOfFile: decoy, encoding: .utf8)) != decoyText {
      problem("the daemon wrote through the journal's symlink into another file")
    }
    // The daemon moves the damage aside (never following a link) and starts a new journal.
    let state = PathText.directory(of: journal)
    let aside = ((try? FileManager.default.contentsOfDirectory(atPath: state)) ?? [])
      .filter { $0.hasPrefix(PathText.name(of: journal) + ".damaged-") }
    if aside.isEmpty {
      problem("the damaged journal was not moved aside (pending-history.json.damaged-*)")
    }
    if (try? FileManager.default.destinationOfSymbolicLink(atPath: journal)) != nil
      || (FileManager.default.fileExists(atPath: journal)
        && (try? PendingPhases(path: journal)) == nil)
    {
      problem("the daemon left a journal it cannot read in \(journal)")
      unlink(journal)
    }
    // The copies go, so that later faults (and grow doctor) are not charged for them.
    for copy in aside { unlink(state + "/" + copy) }
  }

  // MARK: Call bursts

  /// A second connection pipelines 100 to 400 calls: Timer.Toggle (pause, resume), Extend
  /// (one second) and DoNotDisturb.Toggle, an even number of each toggle, and 5 to 20
  /// ListCards of the config's `burstCardCount` cards. Every call must be answered. Then DND
  /// goes back to the card's (`grow dnd off`; the next focus turns it on) and the extended
  /// phase is skipped, so the audit sees no phase longer than the card's.
  func burstCalls() throws {
    try keepPhasesComing()
    let timer = GrowBusAPI.timerInterface
    let dnd = GrowBusAPI.doNotDisturbInterface
    func call(_ interface: String, _ member: String, seconds: UInt32? = nil)
      -> RawBusClient.MethodCall
    {
      var body = WireWriter()
      if let seconds { body.uint32(seconds) }
      return .init(
        path: GrowBusAPI.objectPath, interface: interface, member: member,
        destination: GrowBusAPI.busName, signature: seconds == nil ? "" : "u", body: body)
    }
    var calls: [RawBusClient.MethodCall] = []
    for _ in 0..<2 * Int.random(in: 25...100, using: &random) {
      calls.append(call(timer, "Toggle"))
      calls.append(
        random.chance(0.5) ? call(dnd, "Toggle") : call(timer, "Extend", seconds: 1))
    }
    let toggles = calls.filter { $0.member == "Toggle" && $0.interface == dnd }.count
    if toggles % 2 == 1 { calls.append(call(dnd, "Toggle")) }
    for _ in 0..<Int.random(in: 5...20, using: &random) { calls.append(call(timer, "ListCards")) }
    calls.shuffle(using: &random)
    let client = try RawBusClient(address: harness.bus.address, timeout: 60)
    let outcomes = try client.pipeline(calls)
    let unanswered = outcomes.filter { $0 == .disconnected }.count
    report.burstCalls += calls.count
    report.burstCallsUnanswered += unanswered
    say("  \(calls.count) calls pipelined, \(unanswered) unanswered")
    if unanswered > 0 { problem("\(unanswered) of \(calls.count) pipelined calls had no answer") }
    try command("dnd", "off")
    if try snapshot()?.phase?.isPaused == true { try command("resume") }
    try command("skip")
    report.skipsAnswered += 1
  }
}
