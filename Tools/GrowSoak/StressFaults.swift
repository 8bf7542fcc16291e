import Foundation
import GrowTestSupport

/// The stress faults ("Trust under stress"): peers that stop answering and resources that run
/// out, each lasting seconds and spanning phase ends, while `StatusProbe` times `GetStatus`.
/// The soak only watches session.json while one lasts (no `grow` commands, which a stuck
/// daemon would hold up); after each it checks DND and the usual consistency, and at the end
/// the history audit counts what was lost.
extension Soak {
  // MARK: Stopped peers

  /// Stops `pid` (dunst, or the X server: dunst and openbox stop with it) for `seconds`
  /// while phases run, then measures how long after it answers again DND is right.
  func stall(_ pid: Int32, for seconds: TimeInterval) throws {
    try keepPhasesComing()
    // A short stall starts just before a deadline, so it too spans a phase end.
    if seconds < 2.5, let deadline = try snapshot()?.phase?.deadline {
      let wait = deadline - Date().timeIntervalSince1970 - random.seconds(0.05...0.4)
      if wait > 0, wait < 3 { Thread.sleep(forTimeInterval: wait) }
    }
    say(String(format: "  stopping pid %d for %.1f s", pid, seconds))
    kill(pid, SIGSTOP)
    do {
      try dwell(seconds, commands: false)
    } catch {
      kill(pid, SIGCONT)
      throw error
    }
    kill(pid, SIGCONT)
    try measureDNDRecovery(since: Date(), after: "the server answered again")
  }

  /// Polls dunst's pause until it is what the phase in session.json wants (on during focus,
  /// off otherwise), counting from `answering`, the moment `after` says. A sample counts only
  /// when session.json did not change around it. Wrong for `dndRecoveryBound` + 5 s counts
  /// as never.
  func measureDNDRecovery(since answering: Date, after event: String) throws {
    let giveUp = answering.addingTimeInterval(report.dndRecoveryBound + 5)
    var last: Bool?
    while Date() < giveUp {
      let before = try observe()
      let paused = try harness.dunstIsPaused()
      let after = try observe()
      last = paused
      if before == after, let paused, paused == (after?.phase?.kind == .focus) {
        let seconds = Date().timeIntervalSince(answering)
        report.dndRecoverySeconds.append(seconds)
        if seconds > report.dndRecoveryBound {
          problem(String(format: "DND right only %.1f s after %@", seconds, event))
        }
        return
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
    report.dndNeverRight += 1
    let phase = try snapshot()?.phase.map { $0.key.description } ?? "idle"
    problem(
      "DND still wrong \(Int(report.dndRecoveryBound + 5)) s after \(event): "
        + "dunst paused \(last.map(String.init) ?? "?") during \(phase)")
  }

  /// A stall must span phase ends: a paused phase would not end, and idle has none.
  func keepPhasesComing() throws {
    let current = try observe()
    if current?.phase == nil {
      try command("start")
    } else if current?.phase?.isPaused == true {
      try command("resume")
    }
  }

  // MARK: A title flood

  /// Compiles the flooding client for this machine (with the C compiler Swift brings along
  /// when there is no `cc`).
  static func buildFloodTool(in directory: String) throws -> String {
    let source = RepoPaths.root.appendingPathComponent("Tests/Fixtures/TitleFlood/title-flood.c")
    let tool = directory + "/title-flood"
    var why = ""
    for compiler in ["cc", "clang"] {
      guard
        let result = try? Command.run(
          compiler, ["-O2", "-o", tool, source.path, "-lX11"], timeout: 60)
      else { continue }
      if result.status == 0 { return tool }
      why = result.stderr
    }
    throw HarnessError("cannot compile \(source.path) (cc or clang, with -lX11): \(why)")
  }

  /// Titles one flood sets at most: tens of thousands a second for one to four seconds.
  static let floodTitleCap = 100_000

  /// A client maps a window, which becomes the active one, and retitles it as fast as the X
  /// server takes it for one to four seconds during focus (up to `floodTitleCap` titles).
  func floodTitles() throws {
    guard let tool = floodTool else { return }
    try keepPhasesComing()
    // The fault begins with the flood: openbox maps the window, and may still be reading the
    // titles of the flood before (at some 5,000 a second), which is no time of the daemon's.
    probe.fault = nil
    defer { probe.fault = FaultKind.titleFlood.rawValue }
    let flood = try BackgroundProcess(
      tool, ["\(Self.floodTitleCap)"], environment: harness.environment, writableStdin: true)
    // The window is active once openbox maps it, after any titles of an earlier flood it is
    // still reading: on a busy machine (make test beside stress-ng) that took over 40 s.
    guard flood.waitUntil(timeout: 150, { flood.stdout.hasSuffix("\n") }),
      let window = flood.stdout.split(separator: "\n").first.map(String.init)
    else {
      flood.kill()
      return problem("the title flood's window never appeared: \(flood.stderr)")
    }
    do {
      try display.activate(window)
    } catch {
      flood.kill()
      return problem("the title flood's window never became active: \(error)")
    }
    probe.fault = FaultKind.titleFlood.rawValue
    flood.writeToStdin("go\n")
    try dwell(random.seconds(1...4), commands: false)
    if flood.terminate(timeout: 5) == nil { flood.kill() }
    let lines = flood.stdout.split(separator: "\n")
    let titles = lines.count > 1 ? Int(lines[1]) ?? 0 : 0
    report.titlesFlooded += titles
    say("  \(titles) titles")
  }

  // MARK: The history

  /// Another process (`sqlite3`) holds the history's write lock (`BEGIN IMMEDIATE`) for one
  /// to six seconds while phases end.
  func lockHistory() throws {
    try keepPhasesComing()
    try withHistoryLocked { try dwell(random.seconds(1...6), commands: false) }
  }

  /// Runs `body` while another process (`sqlite3`) holds the history's write lock.
  func withHistoryLocked(_ body: () throws -> Void) throws {
    let marker = harness.environment["HOME", default: ""] + "/history-locked"
    unlink(marker)
    let locker = try BackgroundProcess(
      "sqlite3", [historyPath], environment: harness.environment, writableStdin: true)
    // sqlite3 buffers its output into a file; a file made after BEGIN says it holds the lock.
    locker.writeToStdin(".bail on\n.timeout 5000\nBEGIN IMMEDIATE;\n.shell touch \(marker)\n")
    guard locker.waitUntil(timeout: 8, { FileManager.default.fileExists(atPath: marker) }) else {
      locker.kill()
      return problem("sqlite3 could not lock the history: \(locker.stderr)")
    }
    defer {
      locker.writeToStdin("COMMIT;\n.quit\n")
      if locker.waitForExit(timeout: 5) == nil { locker.kill() }
    }
    try body()
  }

  /// The data directory (the history's) is a 16 MiB tmpfs of its own, so it can be filled
  /// without filling the machine's disk. Needs root, as `make soak` has on our machines.
  func mountDataDirectory() throws {
    let directory = (historyPath as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true)
    let result = try Command.run(
      "mount", ["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", directory])
    guard result.status == 0 else {
      throw HarnessError(
        "cannot mount a tmpfs on the data directory for '\(FaultKind.dataDirectoryFull.rawValue)'"
          + " (needs root; leave that kind out with --kinds): \(result.stderr)")
    }
    dataMount = directory
    options.mounted?(directory)
  }

  func unmountDataDirectory() {
    guard let directory = dataMount else { return }
    history = nil
    if (try? Command.run("umount", [directory]))?.status != 0 {
      _ = try? Command.run("umount", ["--lazy", directory])
    }
    dataMount = nil
  }

  /// Fills the data directory to the last byte for one to five seconds while phases end,
  /// then frees it.
  func fillDataDirectory() throws {
    guard let directory = dataMount else { return }
    try keepPhasesComing()
    let filler = directory + "/soak-filler"
    // dd stops at ENOSPC, which is the point.
    _ = try Command.run("dd", ["if=/dev/zero", "of=\(filler)", "bs=16k"], timeout: 30)
    do {
      try dwell(random.seconds(1...5), commands: false)
    } catch {
      unlink(filler)
      throw error
    }
    unlink(filler)
  }

  /// Deletes the history's WAL and shared-memory index under the running daemon; half the
  /// time the daemon is then killed (after some phases may have ended into the deleted WAL),
  /// and its restart must find every phase.
  func deleteWAL() throws {
    // The soak's own reader lets go first, so only the daemon has the deleted files open.
    history = nil
    for suffix in ["-wal", "-shm"] { unlink(historyPath + suffix) }
    guard random.chance(0.5) else { return }
    try dwell(random.seconds(0...1.5))
    report.walDeletionsThenKilled += 1
    try killAndRestart()
  }

  // MARK: A plugin that hangs (separately)

  /// The config of the hang rounds: DND, and the fixture that hangs on the first pause.
  static let hangConfig = """
    [timer]
    focus = 10m
    short-break = 5m
    auto-start-breaks = true
    intention = \(intention)

    [plugins]
    enable = dnd, hangs-in-handler

    [plugin.hangs-in-handler]
    hang-on = phase-paused

    """

  /// The in-process hang, after the faults and the audit: a plugin's handler never
  /// returns (Tests/Fixtures/HangsInHandlerPlugin, on `grow pause` during focus with DND on).
  /// Then SIGTERM: the daemon must exit within `hangExitBound` seconds, and DND must be put
  /// back. Each round starts from no saved session and dunst not paused.
  func checkPluginHangs() throws {
    guard options.hangRounds > 0 else { return }
    try harness.installPlugin(library: "libgrowtest-hangs-in-handler.so", as: "hangs-in-handler")
    try harness.writeConfig(Self.hangConfig)
    probe.fault = SoakReport.hangLabel
    defer { probe.fault = nil }
    let state = harness.environment["XDG_STATE_HOME", default: ""] + "/grow/"
    for round in 1...options.hangRounds {
      say("plugin hang \(round)")
      report.hangRounds += 1
      for file in ["session.json", "dnd-restore.json"] { unlink(state + file) }
      _ = try harness.run("dunstctl", ["set-paused", "false"])
      try startDaemon()
      try command("start")
      if !(try harness.eventually(timeout: 5) { try harness.dunstIsPaused() == true }) {
        problem("plugin hang \(round): DND never came on for the focus")
      }
      let pause = try BackgroundProcess(Binaries.grow, ["pause"], environment: harness.environment)
      defer { pause.kill() }
      // The pause reaches the fixture's handler, which never returns.
      Thread.sleep(forTimeInterval: 1)
      guard let daemon = harness.daemon else { continue }
      let signalled = Date()
      let exited = daemon.terminate(timeout: report.hangExitBound)
      daemonLogs.append(harness.daemonLog)
      probe.daemonPID = nil
      if exited != nil {
        report.hangExitSeconds.append(Date().timeIntervalSince(signalled))
      } else {
        report.hangExitSeconds.append(nil)
        problem(
          "plugin hang \(round): the daemon had not exited \(Int(report.hangExitBound)) s after "
            + "SIGTERM; killed")
        daemon.kill()
      }
      if try harness.eventually(timeout: 5, { try harness.dunstIsPaused() == false }) {
        report.hangDNDPutBack += 1
      } else {
        problem("plugin hang \(round): DND left on after the daemon went")
      }
    }
  }
}
