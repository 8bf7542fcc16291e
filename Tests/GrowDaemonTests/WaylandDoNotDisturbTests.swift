import Foundation
import Glibc
import GrowTestSupport
import Testing

/// The dnd plugin against the two Wayland notification servers, run for real in a headless
/// sway (GrowTestSupport's WaylandSession): mako 1.7 (its `do-not-disturb` mode) and
/// SwayNotificationCenter 0.7 (GetDnd/SetDnd, Subscribe). The same restore guarantees as for
/// dunst (DoNotDisturbPluginTests): exactly during focus, a change by hand respected, a stopped
/// server put back once it answers, SIGTERM with a stopped server leaving the record.
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
  private func timeUntil(timeout: TimeInterval = 5, _ condition: () throws -> Bool) rethrows
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
    // Figures for the README (poll every 10 ms, each read a gdbus call of ~15 ms).
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
      try harness.eventually(timeout: 3) { try harness.dndStatus()["enabled"] as? Bool == false })
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
    let back = try timeUntil(timeout: 8) { try serverDnd(server, harness) == false }
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
    #expect(harness.daemon?.terminate(timeout: 5) == 0)
    print(
      "\(server) stopped: SIGTERM -> exit \(String(format: "%.3f", Date().timeIntervalSince(sent))) s"
    )
    #expect(FileManager.default.fileExists(atPath: record))
    kill(process.pid, SIGCONT)
    #expect(try serverDnd(server, harness) == true, "nobody put it back yet")
    try harness.start()
    #expect(try harness.eventually(timeout: 5) { try serverDnd(server, harness) == false })
    #expect(try harness.eventually { !FileManager.default.fileExists(atPath: record) })
  }
}
