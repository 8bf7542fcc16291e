import Foundation
import Glibc
import GrowTestSupport
import Testing

/// The dnd plugin, watched through the notification servers themselves: dunst and
/// xfce4-notifyd are real (they need DISPLAY, which `make test` provides); GNOME and KDE are
/// dbusmock stand-ins, and their tests say so.
// Serialized: each test runs its own dunst and daemon; in parallel they load a 2-core machine.
@Suite(.serialized, .enabled(if: NotificationServers.haveDisplay, "dunst needs an X display"))
struct DoNotDisturbPluginDesktopTests {
  static let cycle = """
    [timer]
    focus = 3s
    short-break = 30s
    auto-start-breaks = true
    """
  static let longFocus = "[timer]\nfocus = 10m\n"

  private func dunstHarness(_ config: String) throws -> (DaemonHarness, BackgroundProcess) {
    let harness = try DaemonHarness(config: config, startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "dunst" })
    return (harness, dunst)
  }

  /// Where the dnd plugin keeps what it must put back after a crash.
  private func restoreRecord(_ harness: DaemonHarness) -> String {
    harness.bus.environment["XDG_STATE_HOME", default: ""] + "/grow/dnd-restore.json"
  }

  @Test func dunstIsPausedExactlyDuringFocus() throws {
    let (harness, dunst) = try dunstHarness(Self.cycle)
    #expect(try harness.dunstIsPaused() == false)
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    #expect(try harness.status()["state"] as? String == "focus")
    #expect(try harness.eventually { try harness.status()["state"] as? String == "short-break" })
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(try harness.dndStatus()["enabled"] as? Bool == false)
    _ = dunst
  }

  @Test func sigtermDuringFocusUnpausesDunst() throws {
    let (harness, dunst) = try dunstHarness(Self.longFocus)
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    #expect(harness.daemon?.terminate(timeout: 10) == 0)
    #expect(try harness.dunstIsPaused() == false)
    _ = dunst
  }

  @Test func afterKillNineDNDFollowsTheRestoredSession() throws {
    let (harness, dunst) = try dunstHarness(Self.longFocus)
    let record = restoreRecord(harness)
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    #expect(try harness.eventually { FileManager.default.fileExists(atPath: record) })
    let mode = try FileManager.default.attributesOfItem(atPath: record)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    harness.daemon?.kill()
    #expect(try harness.dunstIsPaused() == true, "a killed daemon cannot restore by itself")
    // The restarted daemon takes the focus phase up again, so DND stays on while it goes on;
    // when it ends, the person's own earlier state (not paused) comes back.
    try harness.start()
    #expect(try harness.status()["state"] as? String == "focus")
    #expect(try harness.dunstIsPaused() == true)
    #expect(try harness.grow("stop").status == 0)
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(try harness.eventually { !FileManager.default.fileExists(atPath: record) })
    _ = dunst
  }

  @Test func aRestartedDunstIsPausedAgainWhileFocusGoesOn() throws {
    var (harness, dunst) = try dunstHarness(Self.longFocus)
    let record = restoreRecord(harness)
    try harness.grow("start")
    let endsAt = try harness.status()["ends_at"] as? String
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })

    dunst.kill()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "none" })
    dunst = try NotificationServers.dunst(harness)
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "dunst" })
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    #expect(try harness.dndStatus()["enabled"] as? Bool == true)
    let status = try harness.status()
    #expect(status["state"] as? String == "focus")
    #expect(status["ends_at"] as? String == endsAt, "the timer kept its deadline")

    // Focus ends: the new dunst is put back as the person had it, and nothing is left to undo.
    try harness.grow("stop")
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(try harness.eventually { !FileManager.default.fileExists(atPath: record) })
    _ = dunst
  }

  @Test func afterALostBusTheNextDaemonStillKnowsWhatToPutBack() throws {
    var (harness, dunst) = try dunstHarness(Self.longFocus)
    let record = restoreRecord(harness)
    try harness.grow("start")
    let endsAt = try harness.status()["ends_at"] as? String
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    let daemon = try #require(harness.daemon)
    harness.bus.crash()
    #expect(daemon.waitForExit(timeout: 10) == 1)
    #expect(FileManager.default.fileExists(atPath: record), "the server could not be asked")
    #expect(daemon.stderr.contains("grow[dnd] warning: cannot read dunst's Do-Not-Disturb"))

    dunst.kill()
    try harness.restartBus()
    dunst = try NotificationServers.dunst(harness)
    try harness.start()
    #expect(try harness.status()["state"] as? String == "focus")
    #expect(try harness.status()["ends_at"] as? String == endsAt)
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    try harness.grow("stop")
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(try harness.eventually { !FileManager.default.fileExists(atPath: record) })
    _ = dunst
  }

  /// A stop puts dunst back with a read and a write; a start right behind it must not read
  /// Grow's own silence as the person's and then watch that restore unpause dunst for the whole
  /// focus (found by the soak). Stop and Start go out back to back on one connection, so the
  /// daemon handles the start while the restore is on its way.
  @Test func aFocusStartedRightAfterAStopKeepsDunstPaused() throws {
    let (harness, dunst) = try dunstHarness(Self.longFocus)
    let stopThenStart = """
      import dbus, dbus.lowlevel
      bus = dbus.SessionBus()
      name, path, timer = 'org.grow.Grow1', '/org/grow/Grow1', 'org.grow.Grow1.Timer'
      bus.send_message(dbus.lowlevel.MethodCallMessage(name, path, timer, 'Stop'))
      bus.call_blocking(name, path, timer, 'Start', 's', [''])
      """
    for _ in 0..<3 {
      try harness.grow("start")
      #expect(try harness.eventually { try harness.dunstIsPaused() == true })
      #expect(try harness.run("/usr/bin/python3", ["-c", stopThenStart]).status == 0)
      Thread.sleep(forTimeInterval: 0.3)
      #expect(try harness.dunstIsPaused() == true)
      #expect(try harness.dndStatus()["enabled"] as? Bool == true)
      try harness.grow("stop")
      #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    }
    _ = dunst
  }

  /// dunst stopped (SIGSTOP) when focus ends cannot be read or written; the
  /// restore record stays and the restore is asked again until dunst answers, and then within
  /// 5 s dunst is as the person had it. `grow dnd status` says what dunst says meanwhile.
  @Test func dunstStoppedWhenFocusEndsIsPutBackOnceItAnswersAgain() throws {
    // dnd alone: the notify plugin's own handling of a stopped server is not what this is about.
    let (harness, dunst) = try dunstHarness(
      "[timer]\nfocus = 3s\nshort-break = 30s\nauto-start-breaks = true\n\n"
        + "[plugins]\nenable = dnd\n")
    let record = restoreRecord(harness)
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    kill(dunst.pid, SIGSTOP)
    defer { kill(dunst.pid, SIGCONT) }
    #expect(try harness.eventually { try harness.status()["state"] as? String == "short-break" })
    #expect(
      try harness.eventually {
        try harness.dndStatus()["server_state"] as? String == "not answering"
      })
    #expect(
      try harness.grow("dnd", "status").stdout.hasPrefix(
        "Do-Not-Disturb: unknown: dunst does not answer; Grow wants it off and keeps asking"))
    Thread.sleep(forTimeInterval: 1)
    #expect(FileManager.default.fileExists(atPath: record), "kept until dunst confirms")
    kill(dunst.pid, SIGCONT)
    let continued = Date()
    #expect(try harness.eventually(timeout: 30) { try harness.dunstIsPaused() == false })
    print("dunst continued -> unpaused: \(Date().timeIntervalSince(continued)) s")
    #expect(try harness.eventually { !FileManager.default.fileExists(atPath: record) })
    #expect(try harness.eventually { try harness.dndStatus()["server_state"] as? String == "off" })
    #expect(
      try harness.grow("dnd", "status").stdout == "Do-Not-Disturb: off\nbackend: dunst (dunst)\n")
    // Later focus is silenced and put back as usual.
    try harness.grow("stop")
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    try harness.grow("stop")
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(try harness.dndStatus()["server_state"] as? String == "off")
  }

  /// Only a value dunst actually gave says what the person had: a read that times out when
  /// focus starts is asked again, not taken as "off" (which would unpause the person's own
  /// pause when focus ends).
  @Test func aPausedDunstThatDoesNotAnswerWhenFocusStartsStaysPausedAfterIt() throws {
    let (harness, dunst) = try dunstHarness(Self.longFocus + "\n[plugins]\nenable = dnd\n")
    try harness.run("dunstctl", ["set-paused", "true"])
    #expect(try harness.eventually { try harness.dndStatus()["server_state"] as? String == "on" })
    kill(dunst.pid, SIGSTOP)
    defer { kill(dunst.pid, SIGCONT) }
    try harness.grow("start")
    // The read times out after 3 s. dunst answers again before a write sent then would time
    // out, so a write made on a guess would land.
    Thread.sleep(forTimeInterval: 3.5)
    #expect(try harness.dndStatus()["server_state"] as? String == "not answering")
    kill(dunst.pid, SIGCONT)
    let continued = Date()
    #expect(
      try harness.eventually(timeout: 30) {
        try harness.dndStatus()["server_state"] as? String == "on"
      })
    print("dunst continued -> state read again: \(Date().timeIntervalSince(continued)) s")
    try harness.grow("stop")
    Thread.sleep(forTimeInterval: 1)
    #expect(try harness.dunstIsPaused() == true, "the person's pause, not Grow's")
    #expect(!FileManager.default.fileExists(atPath: restoreRecord(harness)))
  }

  /// A stop while dunst does not answer waits a bounded time, then leaves the record for the
  /// next start, which puts dunst back.
  @Test func sigtermWhileDunstIsStoppedLeavesTheRecordForTheNextStart() throws {
    let (harness, dunst) = try dunstHarness(Self.longFocus)
    let record = restoreRecord(harness)
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    kill(dunst.pid, SIGSTOP)
    defer { kill(dunst.pid, SIGCONT) }
    let sent = Date()
    #expect(harness.daemon?.terminate(timeout: 30) == 0)
    print("SIGTERM -> exit with dunst stopped: \(Date().timeIntervalSince(sent)) s")
    #expect(FileManager.default.fileExists(atPath: record))
    kill(dunst.pid, SIGCONT)
    try harness.start()
    #expect(try harness.eventually(timeout: 30) { try harness.dunstIsPaused() == false })
    #expect(try harness.eventually { !FileManager.default.fileExists(atPath: record) })
  }

  /// A Swift plugin whose handler never returns. The watchdog names it, and
  /// SIGTERM, whose normal path runs on the stuck loop, still unpauses dunst and exits with
  /// status 1. (The 3 s it promises is an invariant of `make soak`'s plugin-hang rounds, which
  /// print the seconds, as these tests do: a loaded machine only gets a generous deadline.)
  @Test func aPluginStuckInAHandlerStillLetsSIGTERMPutDunstBack() throws {
    let harness = try DaemonHarness(config: Self.longFocus, startDaemon: false)
    try harness.installPlugin(library: "libgrowtest-hangs-in-handler.so", as: "hangs-in-handler")
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    let record = restoreRecord(harness)
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "dunst" })
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    // Sent without waiting for an answer: the daemon will never give one.
    try harness.run(
      "dbus-send",
      [
        "--session", "--type=method_call", "--dest=org.grow.Grow1", "/org/grow/Grow1",
        "org.grow.Grow1.Timer.Pause",
      ])
    let daemon = try #require(harness.daemon)
    #expect(
      daemon.waitUntil(timeout: 10) {
        daemon.stderr.contains(
          "plugin 'hangs-in-handler' has been stuck in its 'phase-paused' handler for 3s")
      })
    let sent = Date()
    #expect(daemon.terminate(timeout: 30) == 1, "\(daemon.stderr)")
    print("SIGTERM -> exit with a hung plugin: \(Date().timeIntervalSince(sent)) s")
    #expect(try harness.dunstIsPaused() == false)
    #expect(!FileManager.default.fileExists(atPath: record))
    #expect(
      daemon.stderr.contains(
        "asked to exit while the event loop is stuck in plugin 'hangs-in-handler', whose "
          + "'phase-paused' handler has not returned for"))
    _ = dunst
  }

  /// The same, with SIGTERM before the watchdog has said anything: the loop does not take the
  /// request up, which is enough.
  @Test func sigtermRightAfterAHandlerHangsStillPutsDunstBack() throws {
    let harness = try DaemonHarness(config: Self.longFocus, startDaemon: false)
    try harness.installPlugin(library: "libgrowtest-hangs-in-handler.so", as: "hangs-in-handler")
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "dunst" })
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    let daemon = try #require(harness.daemon)
    // A status call that never gets its answer says the loop is in the handler.
    let pause = try BackgroundProcess(
      "busctl",
      [
        "--user", "call", "org.grow.Grow1", "/org/grow/Grow1", "org.grow.Grow1.Timer",
        "Pause",
      ], environment: harness.environment)
    Thread.sleep(forTimeInterval: 0.5)
    let sent = Date()
    #expect(daemon.terminate(timeout: 30) != nil, "\(daemon.stderr)")
    print("SIGTERM 0.5 s into a hung handler -> exit: \(Date().timeIntervalSince(sent)) s")
    #expect(try harness.dunstIsPaused() == false)
    _ = (dunst, pause)
  }

  /// A plugin whose `stop()` never returns, on the loop, as SIGTERM stops every plugin: the
  /// whole shutdown keeps the 3 s promise (one deadline for all plugins, not one each), and
  /// dunst is unpaused all the same.
  @Test func aPluginHangingInStopStillLetsSIGTERMExitWithinThePromise() throws {
    let harness = try DaemonHarness(
      config: Self.longFocus + "\n[plugin.hangs-in-handler]\nhang-on = stop\n",
      startDaemon: false)
    try harness.installPlugin(library: "libgrowtest-hangs-in-handler.so", as: "hangs-in-handler")
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "dunst" })
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    let daemon = try #require(harness.daemon)
    let sent = Date()
    #expect(daemon.terminate(timeout: 30) != nil, "\(daemon.stderr)")
    print("SIGTERM -> exit with a plugin hanging in stop(): \(Date().timeIntervalSince(sent)) s")
    #expect(daemon.waitForExit(timeout: 30) != nil)
    #expect(try harness.dunstIsPaused() == false)
    _ = dunst
  }

  /// `grow plugin install` of a library that faults in `init(context:)`, during focus: the
  /// daemon dies in the install's reload with dunst paused. The next start (systemd, D-Bus
  /// activation) does not load that plugin again: it runs, resumes the focus with dunst still
  /// paused, and `grow plugins` and `grow doctor` say why the plugin is out; `grow stop` puts
  /// dunst back. `grow plugins enable` lets it in again.
  @Test func aPluginThatCrashesInInitIsQuarantinedAndTheNextStartRuns() throws {
    let (harness, dunst) = try dunstHarness("[timer]\nfocus = 10m\n\n[plugins]\nenable = dnd\n")
    let work = harness.bus.directory.path
    try FileManager.default.copyItem(
      atPath: try FixturePlugins.library("libgrowtest-crashes-on-init.so"),
      toPath: work + "/libgrow-plugin-crashes-on-init.so")
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    let daemon = try #require(harness.daemon)
    _ = try harness.grow("plugin", "install", work + "/libgrow-plugin-crashes-on-init.so")
    #expect(daemon.waitForExit(timeout: 30) != nil, "the daemon died in the install's reload")

    try harness.start()
    let plugins = try harness.plugins()
    #expect(plugins["crashes-on-init"]?["state"] == "failed", "\(plugins)")
    let listed = try harness.grow("plugins")
    #expect(
      listed.stdout.contains("the daemon died while starting it"), "\(listed.stdout)")
    #expect(listed.stdout.contains("'grow plugins enable crashes-on-init'"))
    #expect(try harness.grow("doctor").stdout.contains("quarantined: the daemon died"))
    #expect(try harness.status()["state"] as? String == "focus")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    try harness.grow("stop")
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })

    let enabled = try harness.grow("plugins", "enable", "crashes-on-init")
    #expect(enabled.stdout.contains("released plugin 'crashes-on-init' from quarantine"))
    #expect(try harness.grow("plugins", "enable", "crashes-on-init").status == 1)
    _ = dunst
  }

  @Test func unpausingByHandDuringFocusIsRespected() throws {
    let (harness, dunst) = try dunstHarness(Self.longFocus)
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    try harness.run("dunstctl", ["set-paused", "false"])
    #expect(try harness.eventually { try harness.dndStatus()["enabled"] as? Bool == false })
    Thread.sleep(forTimeInterval: 0.5)
    #expect(try harness.dunstIsPaused() == false, "Grow does not fight the person")
    #expect(harness.daemonLog.contains("grow[dnd] info: Do-Not-Disturb turned off by hand"))
    try harness.grow("stop")
    #expect(try harness.dunstIsPaused() == false)
    _ = dunst
  }

  @Test func aServerPausedBeforeFocusStaysPausedAfterIt() throws {
    let (harness, dunst) = try dunstHarness(Self.longFocus)
    try harness.run("dunstctl", ["set-paused", "true"])
    #expect(try harness.eventually { try harness.dndStatus()["enabled"] as? Bool == true })
    try harness.grow("start")
    Thread.sleep(forTimeInterval: 0.3)
    try harness.grow("stop")
    Thread.sleep(forTimeInterval: 0.5)
    #expect(try harness.dunstIsPaused() == true)
    _ = dunst
  }

  @Test func growDndDrivesDunstAndTheDBusInterface() throws {
    let (harness, dunst) = try dunstHarness(Self.longFocus)
    #expect(
      try harness.grow("dnd", "status").stdout == "Do-Not-Disturb: off\nbackend: dunst (dunst)\n")
    #expect(try harness.grow("dnd", "on", "--for", "30m").status == 0)
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    let status = try harness.dndStatus()
    #expect(status["enabled"] as? Bool == true)
    #expect(status["until"] is String)
    #expect(try harness.grow("dnd", "off").status == 0)
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(try harness.grow("dnd", "toggle").stdout.hasPrefix("Do-Not-Disturb: on\n"))
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    let busctl = [
      "--user", "call", "org.grow.Grow1", "/org/grow/Grow1",
      "org.grow.Grow1.DoNotDisturb",
    ]
    #expect(try harness.run("busctl", busctl + ["Disable"]).status == 0)
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(try harness.run("busctl", busctl + ["Enable", "u", "0"]).status == 0)
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    let property = [
      "--user", "get-property", "org.grow.Grow1", "/org/grow/Grow1",
      "org.grow.Grow1.DoNotDisturb",
    ]
    #expect(try harness.run("busctl", property + ["Enabled"]).stdout == "b true\n")
    #expect(try harness.run("busctl", property + ["Backend"]).stdout == "s \"dunst\"\n")
    #expect(try harness.run("busctl", property + ["Until"]).stdout == "x 0\n")
    #expect(
      try harness.run(
        "busctl",
        [
          "--user", "set-property", "org.grow.Grow1", "/org/grow/Grow1",
          "org.grow.Grow1.DoNotDisturb", "Enabled", "b", "false",
        ]
      ).status == 0)
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(
      try harness.grow("dnd", "on", "--for", "soon").stderr
        .contains("--for:"))
    _ = dunst
  }

  @Test func aCardWithPolicyNeverLeavesDunstAlone() throws {
    let (harness, dunst) = try dunstHarness(
      Self.longFocus + "\n[card.chat]\nfocus = 10m\n\n[plugin.dnd]\ncard.chat = never\n")
    try harness.grow("start", "chat")
    Thread.sleep(forTimeInterval: 0.5)
    #expect(try harness.dunstIsPaused() == false)
    _ = dunst
  }

  @Test func withoutAServerGrowKeepsItsOwnState() throws {
    let harness = try DaemonHarness(config: Self.longFocus)
    #expect(
      try harness.eventually {
        try harness.grow("dnd", "status").stdout.contains("backend: none: no notification server")
      })
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dndStatus()["enabled"] as? Bool == true })
    #expect(try harness.status()["state"] as? String == "focus")
  }

  @Test func xfce4NotifydIsSilencedThroughXfconf() throws {
    let harness = try DaemonHarness(config: Self.longFocus, startDaemon: false)
    let servers = try NotificationServers.xfce(harness)
    try harness.start()
    #expect(
      try harness.eventually {
        try harness.dndStatus()["backend"] as? String == "xfce4-notifyd"
      })
    let query = ["-c", "xfce4-notifyd", "-p", "/do-not-disturb"]
    try harness.grow("start")
    #expect(try harness.eventually { try harness.run("xfconf-query", query).stdout == "true\n" })
    try harness.grow("stop")
    #expect(try harness.eventually { try harness.run("xfconf-query", query).stdout == "false\n" })
    _ = servers
  }

  /// xfce4-notifyd's switch lives in xfconfd, which outlives the notification server: focus
  /// that ends while the server is away must still switch it off when the server is back.
  @Test func focusEndingWhileXfce4NotifydIsAwayIsRestoredWhenItReturns() throws {
    let harness = try DaemonHarness(config: Self.longFocus, startDaemon: false)
    var servers = try NotificationServers.xfce(harness)
    try harness.start()
    #expect(
      try harness.eventually {
        try harness.dndStatus()["backend"] as? String == "xfce4-notifyd"
      })
    let query = ["-c", "xfce4-notifyd", "-p", "/do-not-disturb"]
    try harness.grow("start")
    let endsAt = try harness.status()["ends_at"] as? String
    #expect(try harness.eventually { try harness.run("xfconf-query", query).stdout == "true\n" })
    servers[0].kill()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "none" })
    #expect(try harness.status()["ends_at"] as? String == endsAt)
    try harness.grow("stop")
    servers[0] = try NotificationServers.xfceNotifyd(harness)
    #expect(try harness.eventually { try harness.run("xfconf-query", query).stdout == "false\n" })
    _ = servers
  }

  @Test func kdePlasmaMockedWithDbusmockIsInhibitedAndReleased() throws {
    let harness = try DaemonHarness(config: Self.longFocus, startDaemon: false)
    let mock = try NotificationServers.mock(
      harness, name: "Plasma", vendor: "KDE",
      extraMethods: [
        ("Inhibit", "ssa{sv}", "u", "ret = 42"), ("UnInhibit", "u", "", ""),
      ])
    try harness.start()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "kde" })
    try harness.grow("start")
    #expect(
      try harness.eventually {
        try NotificationServers.mockCalls(harness).contains(
          "'Inhibit', [<'grow'>, <'Focus session'>")
      })
    try harness.grow("stop")
    #expect(
      try harness.eventually {
        try NotificationServers.mockCalls(harness).contains("'UnInhibit', [<uint32 42>]")
      })
    _ = mock
  }

  @Test func gnomeShellMockedWithDbusmockTurnsOffBanners() throws {
    let harness = try DaemonHarness(config: Self.longFocus, startDaemon: false)
    // A keyfile GSettings backend stands in for dconf, so the test can read what was written.
    harness.environment["GSETTINGS_BACKEND"] = "keyfile"
    let mock = try NotificationServers.mock(harness, name: "gnome-shell", vendor: "GNOME")
    try harness.start()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "gnome" })
    let key = ["get", "org.gnome.desktop.notifications", "show-banners"]
    try harness.grow("start")
    #expect(try harness.eventually { try harness.run("gsettings", key).stdout == "false\n" })
    try harness.grow("stop")
    #expect(try harness.eventually { try harness.run("gsettings", key).stdout == "true\n" })
    _ = mock
  }
}
