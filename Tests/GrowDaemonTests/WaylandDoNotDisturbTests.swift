import Foundation
import Glibc
import GrowTestSupport
import Testing

/// The dnd plugin against the two Wayland notification servers, run for real in a headless
/// sway (GrowTestSupport's WaylandSession): mako 1.7 (its `do-not-disturb` mode) and
/// SwayNotificationCenter 0.7 (GetDnd/SetDnd, Subscribe). The same restore guarantees as for
/// dunst (DoNotDisturbPluginDesktopTests): exactly during focus, a change by hand respected,
/// a stopped server put back once it answers, SIGTERM with a stopped server leaving the record.
// Serialized: each test runs its own server and daemon in the suite's one compositor.
@Suite(.serialized, .waylandSession)
struct WaylandDoNotDisturbTests {
  enum Server: String, CustomStringConvertible, CaseIterable {
    case mako
    case swaync
    var description: String { rawValue }
  }

  static let cycle = """
    [timer]
    focus = 3s
    short-break = 30s
    auto-start-breaks = true

    [plugins]
    enable = dnd

    """
  static let longFocus = "[timer]\nfocus = 10m\n\n[plugins]\nenable = dnd\n"

  /// The server, then a daemon that has found it.
  private func start(_ server: Server, config: String) throws -> (DaemonHarness, BackgroundProcess)
  {
    let session = try WaylandSession.required()
    let process =
      switch server {
      case .mako: try NotificationServers.mako(session)
      case .swaync: try NotificationServers.swaync(session)
      }
    let harness = try DaemonHarness(
      config: config, startDaemon: false, environment: session.environment)
    try harness.start()
    #expect(
      try harness.eventually { try harness.dndStatus()["backend"] as? String == server.rawValue })
    return (harness, process)
  }

  /// What the server itself says of its DND (nil: it did not answer within 2 s).
  private func serverDnd(_ server: Server, _ harness: DaemonHarness) throws -> Bool? {
    switch server {
    case .mako:
      guard let modes = try makoModes(harness) else { return nil }
      return modes.contains("do-not-disturb")
    case .swaync:
      let result = try gdbus(
        harness, "org.erikreider.swaync.cc", "/org/erikreider/swaync/cc",
        "org.erikreider.swaync.cc.GetDnd")
      return result.map { $0.contains("true") }
    }
  }

  private func makoModes(_ harness: DaemonHarness) throws -> [String]? {
    guard
      let reply = try gdbus(
        harness, "org.freedesktop.Notifications", "/fr/emersion/Mako",
        "fr.emersion.Mako.ListModes")
    else { return nil }
    return reply.matches(of: /'([^']*)'/).map { String($0.output.1) }
  }

  private func gdbus(
    _ harness: DaemonHarness, _ destination: String, _ path: String, _ method: String,
    _ arguments: String...
  ) throws -> String? {
    let result = try harness.run(
      "gdbus",
      ["call", "--session", "--timeout", "2", "-d", destination, "-o", path, "-m", method]
        + arguments)
    return result.status == 0 ? result.stdout : nil
  }

  private func restoreRecord(_ harness: DaemonHarness) -> String {
    harness.bus.environment["XDG_STATE_HOME", default: ""] + "/grow/dnd-restore.json"
  }

  /// Polls every 10 ms; how long `condition` took to hold, nil if not within `timeout`.
  private func timeUntil(timeout: TimeInterval = 30, _ condition: () throws -> Bool) rethrows
    -> TimeInterval?
  {
    let start = Date()
    while Date().timeIntervalSince(start) < timeout {
      if try condition() { return Date().timeIntervalSince(start) }
      Thread.sleep(forTimeInterval: 0.01)
    }
    return nil
  }

  @Test(arguments: Server.allCases)
  func serverIsSilencedExactlyDuringFocus(_ server: Server) throws {
    let (harness, process) = try start(server, config: Self.cycle)
    defer { process.terminate() }
    #expect(try serverDnd(server, harness) == false)
    try harness.grow("start")
    let on = try timeUntil { try serverDnd(server, harness) == true }
    #expect(on != nil)
    #expect(try harness.status()["state"] as? String == "focus")
    #expect(try harness.eventually { try harness.status()["state"] as? String == "short-break" })
    let off = try timeUntil { try serverDnd(server, harness) == false }
    #expect(off != nil)
    #expect(try harness.dndStatus()["enabled"] as? Bool == false)
    #expect(!FileManager.default.fileExists(atPath: restoreRecord(harness)))
    // Figures for docs/wayland.md (poll every 10 ms, each read a gdbus call of ~15 ms).
    print(
      "\(server): grow start -> DND on: \(on.map { String(format: "%.3f", $0) } ?? "never") s; "
        + "break seen -> DND off: \(off.map { String(format: "%.3f", $0) } ?? "never") s")
  }

  /// mako's modes are a list the person may use for more than DND: Grow adds and removes only
  /// its own, keeping theirs and their order.
  @Test func makosOtherModesAreKept() throws {
    let (harness, mako) = try start(.mako, config: Self.longFocus)
    defer { mako.terminate() }
    #expect(
      try gdbus(
        harness, "org.freedesktop.Notifications", "/fr/emersion/Mako",
        "fr.emersion.Mako.SetModes", "['default', 'away']") != nil)
    try harness.grow("start")
    #expect(
      try harness.eventually { try makoModes(harness) == ["default", "away", "do-not-disturb"] })
    try harness.grow("stop")
    #expect(try harness.eventually { try makoModes(harness) == ["default", "away"] })
  }

  /// swaync says when its DND changes (Subscribe): switched off by hand in the control centre
  /// during focus, Grow follows at once and leaves it off when focus ends.
  @Test func swayncSwitchedOffByHandDuringFocusIsRespected() throws {
    let session = try WaylandSession.required()
    let (harness, swaync) = try start(.swaync, config: Self.longFocus)
    defer { swaync.terminate() }
    try harness.grow("start")
    #expect(try harness.eventually { try serverDnd(.swaync, harness) == true })
    // swaync-client as the person runs it: one option per call (0.7.3).
    #expect(try session.run("swaync-client", ["-df"]).status == 0)
    #expect(
      try harness.eventually(timeout: 30) { try harness.dndStatus()["enabled"] as? Bool == false })
    #expect(
      try harness.eventually { !FileManager.default.fileExists(atPath: restoreRecord(harness)) })
    try harness.grow("stop")
    Thread.sleep(forTimeInterval: 0.5)
    #expect(try serverDnd(.swaync, harness) == false)
  }

  /// A server stopped (SIGSTOP) when focus ends answers nothing: the record stays, the restore
  /// is asked again, and once the server runs again it is put back within a few seconds.
  @Test(arguments: Server.allCases)
  func serverStoppedWhenFocusEndsIsPutBackOnceItAnswers(_ server: Server) throws {
    let (harness, process) = try start(server, config: Self.cycle)
    defer { process.terminate() }
    let record = restoreRecord(harness)
    try harness.grow("start")
    #expect(try harness.eventually { try serverDnd(server, harness) == true })
    kill(process.pid, SIGSTOP)
    defer { kill(process.pid, SIGCONT) }
    #expect(try harness.eventually { try harness.status()["state"] as? String == "short-break" })
    #expect(
      try harness.eventually {
        try harness.dndStatus()["server_state"] as? String == "not answering"
      })
    Thread.sleep(forTimeInterval: 1)
    #expect(FileManager.default.fileExists(atPath: record), "kept until \(server) confirms")
    kill(process.pid, SIGCONT)
    let back = try timeUntil(timeout: 30) { try serverDnd(server, harness) == false }
    #expect(back != nil)
    print("\(server) continued -> DND off: \(back.map { String(format: "%.3f", $0) } ?? "never") s")
    #expect(try harness.eventually { !FileManager.default.fileExists(atPath: record) })
    #expect(try harness.eventually { try harness.dndStatus()["server_state"] as? String == "off" })
  }

  /// SIGTERM while the server does not answer: the daemon exits in bounded time and leaves the
  /// record; the next start puts the server back.
  @Test(arguments: Server.allCases)
  func sigtermWhileServerIsStoppedLeavesTheRecordForTheNextStart(_ server: Server) throws {
    let (harness, process) = try start(server, config: Self.longFocus)
    defer { process.terminate() }
    let record = restoreRecord(harness)
    try harness.grow("start")
    #expect(try harness.eventually { try serverDnd(server, harness) == true })
    kill(process.pid, SIGSTOP)
    defer { kill(process.pid, SIGCONT) }
    let sent = Date()
    #expect(harness.daemon?.terminate(timeout: 30) == 0)
    print(
      "\(server) stopped: SIGTERM -> exit \(String(format: "%.3f", Date().timeIntervalSince(sent))) s"
    )
    #expect(FileManager.default.fileExists(atPath: record))
    kill(process.pid, SIGCONT)
    #expect(try serverDnd(server, harness) == true, "nobody put it back yet")
    try harness.start()
    #expect(try harness.eventually(timeout: 30) { try serverDnd(server, harness) == false })
    #expect(try harness.eventually { !FileManager.default.fileExists(atPath: record) })
  }

  /// A Swift plugin whose handler never returns: SIGTERM's normal path runs on the stuck loop,
  /// so the emergency exit puts the server back from the record on disk, mako's modes read
  /// first (its other modes stay), and the daemon exits (within 3 s on a quiet machine: the
  /// seconds are printed; `make soak` holds the promise).
  @Test(arguments: Server.allCases)
  func aPluginStuckInAHandlerStillLetsSIGTERMPutTheServerBack(_ server: Server) throws {
    let session = try WaylandSession.required()
    let process =
      switch server {
      case .mako: try NotificationServers.mako(session)
      case .swaync: try NotificationServers.swaync(session)
      }
    defer { process.terminate() }
    let harness = try DaemonHarness(
      config: Self.longFocus.replacingOccurrences(
        of: "enable = dnd", with: "enable = dnd, hangs-in-handler"),
      startDaemon: false, environment: session.environment)
    try harness.installPlugin(library: "libgrowtest-hangs-in-handler.so", as: "hangs-in-handler")
    try harness.start()
    #expect(
      try harness.eventually { try harness.dndStatus()["backend"] as? String == server.rawValue })
    if server == .mako {
      _ = try gdbus(
        harness, "org.freedesktop.Notifications", "/fr/emersion/Mako",
        "fr.emersion.Mako.SetModes", "['default', 'away']")
    }
    try harness.grow("start")
    #expect(try harness.eventually { try serverDnd(server, harness) == true })
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
        daemon.stderr.contains("plugin 'hangs-in-handler' has been stuck in its 'phase-paused'")
      })
    let sent = Date()
    #expect(daemon.terminate(timeout: 30) == 1, "\(daemon.stderr)")
    print(
      "\(server): SIGTERM -> exit with a hung plugin: "
        + String(format: "%.3f", Date().timeIntervalSince(sent)) + " s")
    #expect(try serverDnd(server, harness) == false)
    if server == .mako { #expect(try makoModes(harness) == ["default", "away"]) }
    #expect(!FileManager.default.fileExists(atPath: restoreRecord(harness)))
  }

  // MARK: Grow's own notifications during focus (on Wayland servers)

  /// Focus with the warning due halfway, the notify and dnd plugins on.
  static let warnedFocus = """
    [timer]
    focus = 4s
    auto-start-breaks = false

    [plugins]
    enable = notify, dnd

    [plugin.notify]
    timeout = never
    warn-before = 2s

    """

  /// A focus whose warning comes 2 s in, with time left to see it on screen on a loaded machine.
  static let warnedLongFocus = """
    [timer]
    focus = 30s

    [plugins]
    enable = notify, dnd

    [plugin.notify]
    timeout = never
    warn-before = 28s

    """

  /// Where both servers put their popups: the output's top right.
  private func popups(_ session: WaylandSession) throws -> Screenshot {
    try session.screenshot(x: session.width / 2, y: 0, width: session.width / 2, height: 120)
  }

  /// swaync 0.7.3's DND hides popups but still shows critical ones (seen on screen; its
  /// notiDaemon.vala says so too), so during focus Grow's warning goes as critical and pops up
  /// at once: a popup is drawn in swaync's #303030 while DND is on.
  @Test func duringFocusSwayncShowsTheWarningAsCritical() throws {
    let session = try WaylandSession.required()
    let (harness, swaync) = try start(.swaync, config: Self.warnedLongFocus)
    defer { swaync.terminate() }
    #expect(try popups(session).count(of: "#303030", tolerance: 0) == 0)
    try harness.grow("start")
    #expect(try harness.eventually { try serverDnd(.swaync, harness) == true })
    #expect(
      try harness.eventually(timeout: 15) {
        try popups(session).count(of: "#303030", tolerance: 0) > 1000
      }, "the warning pops up during focus")
    #expect(try harness.status()["state"] as? String == "focus")
    #expect(try serverDnd(.swaync, harness) == true, "through DND, which stays on")
  }

  /// mako's do-not-disturb mode (`invisible=1`) hides critical ones too and keeps them for
  /// when the mode goes: Grow's warning would surface at the break, out of date. So during
  /// focus mako is sent nothing, and only "Focus done" shows, at the break.
  @Test func duringFocusMakoIsSentNothingToKeep() throws {
    let session = try WaylandSession.required()
    let (harness, mako) = try start(.mako, config: Self.warnedFocus)
    defer { mako.terminate() }
    func summaries() throws -> [String] {
      let listed =
        try gdbus(
          harness, "org.freedesktop.Notifications", "/fr/emersion/Mako",
          "fr.emersion.Mako.ListNotifications") ?? ""
      return listed.matches(of: /'summary': <'([^']*)'>/).map { String($0.output.1) }
    }
    try harness.grow("start")
    #expect(try harness.eventually { try serverDnd(.mako, harness) == true })
    var keptDuringFocus: [String] = []
    // Only what mako held while focus still ran after the read: "Focus done", sent the moment
    // focus ends while the mode is being removed, was not kept during focus.
    while true {
      let held = try summaries()
      guard try harness.status()["state"] as? String == "focus" else { break }
      keptDuringFocus += held
      Thread.sleep(forTimeInterval: 0.1)
    }
    #expect(keptDuringFocus.isEmpty, "nothing of Grow's waited in mako during focus")
    #expect(try harness.eventually { try serverDnd(.mako, harness) == false })
    #expect(try harness.eventually { try summaries() == ["Focus done"] })
    // And mako draws it (its default background, #285577).
    #expect(
      try harness.eventually { try popups(session).count(of: "#285577", tolerance: 0) > 1000 })
  }

  /// mako with a section that shows critical ones in its do-not-disturb mode: Grow's warning
  /// goes as critical during focus and mako draws it at once (its #285577), the mode still on.
  @Test func duringFocusMakoThatShowsCriticalOnesGetsTheWarningAsCritical() throws {
    let session = try WaylandSession.required()
    let mako = try NotificationServers.mako(
      session,
      config: NotificationServers.makoConfig
        + "\n[mode=do-not-disturb urgency=critical]\ninvisible=0\n")
    defer { mako.terminate() }
    // The daemon reads mako's config where mako does: the session user's config directory.
    let userConfig = session.userEnvironment["XDG_CONFIG_HOME", default: ""]
    try session.writeUserConfig("grow/config.ini", Self.warnedLongFocus)
    defer { try? FileManager.default.removeItem(atPath: userConfig + "/grow/config.ini") }
    let harness = try DaemonHarness(
      startDaemon: false,
      environment: session.environment.merging(["XDG_CONFIG_HOME": userConfig]) { $1 })
    try harness.start()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "mako" })
    try harness.grow("start")
    #expect(try harness.eventually { try serverDnd(.mako, harness) == true })
    #expect(
      try harness.eventually(timeout: 15) {
        try popups(session).count(of: "#285577", tolerance: 0) > 1000
      }, "the warning shows during focus")
    #expect(try harness.status()["state"] as? String == "focus")
    #expect(try serverDnd(.mako, harness) == true, "through the mode, which stays on")
  }

  // MARK: grow doctor and mako's config

  /// The doctor's do-not-disturb line, run with the mako user's config directory.
  private func doctorLine(makoConfig: String) throws -> String {
    let session = try WaylandSession.required()
    let mako = try NotificationServers.mako(session, config: makoConfig)
    defer { mako.terminate() }
    let harness = try DaemonHarness(
      startDaemon: false,
      environment: session.environment.merging(
        ["XDG_CONFIG_HOME": session.userEnvironment["XDG_CONFIG_HOME", default: ""]]) { $1 })
    let doctor = try harness.grow("doctor").stdout
    return doctor.split(separator: "\n").first { $0.contains("do not disturb:") }.map(String.init)
      ?? doctor
  }

  @Test func theDoctorAcceptsAMakoConfigWithTheMode() throws {
    #expect(
      try doctorLine(makoConfig: NotificationServers.makoConfig)
        == "✔ do not disturb: backend mako (implied by the notification server); mako paused "
        + "for focus would queue Grow's own notifications to show them late, so during focus "
        + "Grow sends it none: a distraction shows in the status bar only")
  }

  @Test func theDoctorSaysWhenMakosModeShowsCriticalOnes() throws {
    let session = try WaylandSession.required()
    let file = session.userEnvironment["XDG_CONFIG_HOME", default: ""] + "/mako/config"
    #expect(
      try doctorLine(
        makoConfig: NotificationServers.makoConfig
          + "[mode=do-not-disturb urgency=critical]\ninvisible=0\n")
        == "✔ do not disturb: backend mako (implied by the notification server); during focus "
        + "Grow's own notifications go as critical, which \(file) shows in mako's "
        + "do-not-disturb mode")
  }

  /// Without `invisible=1` for the mode, switching it hides nothing: the doctor says what to add.
  @Test func theDoctorSaysWhatAMakoConfigLacks() throws {
    let session = try WaylandSession.required()
    let file = session.userEnvironment["XDG_CONFIG_HOME", default: ""] + "/mako/config"
    #expect(
      try doctorLine(makoConfig: "default-timeout=0\n[mode=do-not-disturb]\nborder-size=4\n")
        == "! do not disturb: backend mako, but \(file) gives its do-not-disturb mode no "
        + "'invisible=1', so that mode hides nothing and notifications still show while you "
        + "focus; fix: add the two lines '[mode=do-not-disturb]' and 'invisible=1' to \(file), "
        + "then run 'makoctl reload'")
  }
}
