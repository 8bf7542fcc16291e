import Foundation
import GrowCore
import GrowDaemon
import GrowHistory
import GrowTestSupport
import Testing

/// The session survives a daemon killed with SIGKILL or left without its session bus; a clean
/// stop leaves nothing behind.
@Suite struct SessionStoreTests {
  func sessionFile(_ harness: DaemonHarness) -> String {
    harness.environment["XDG_STATE_HOME", default: ""] + "/grow/session.json"
  }

  @Test func afterKillNineTheRestartedDaemonGoesOnWithTheSameDeadline() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start", "--intention", "essay").status == 0)
    let before = try harness.status()
    let file = sessionFile(harness)
    let attributes = try FileManager.default.attributesOfItem(atPath: file)
    #expect(attributes[.posixPermissions] as? Int == 0o600)

    #expect(harness.daemon?.kill() == 128 + SIGKILL)
    try harness.start()
    let after = try harness.status()
    #expect(after["state"] as? String == "focus")
    #expect(after["card"] as? String == "work")
    #expect(after["intention"] as? String == "essay")
    #expect(after["ends_at"] as? String == before["ends_at"] as? String)
    #expect(harness.daemon?.stderr.contains("resumed the session saved in \(file)") == true)
  }

  @Test func aPhaseThatEndedWhileTheDaemonWasDeadIsRecordedAndTheBreakFollows() throws {
    let harness = try DaemonHarness(config: "[timer]\nfocus = 1s\nshort-break = 10m\n")
    #expect(try harness.grow("start").status == 0)
    #expect(harness.daemon?.kill() == 128 + SIGKILL)
    Thread.sleep(forTimeInterval: 1.5)
    try harness.start()
    let status = try harness.status()
    #expect(status["state"] as? String == "short-break")
    #expect(status["completed_today"] as? Int == 1)
  }

  /// The phase session.json has now, read as the daemon reads it.
  func savedPhase(_ harness: DaemonHarness) throws -> Phase? {
    let data = try Data(contentsOf: URL(fileURLWithPath: sessionFile(harness)))
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .secondsSince1970
    return try decoder.decode(FocusTimer.SavedSession.self, from: data).runningPhase
  }

  /// The session file and the plugin folder come from the one XDG lookup (XDGDirectories):
  /// a trailing slash or an empty HOME once gave `//` paths or none.
  @Test func theSessionAndPluginPathsFollowTheOneXDGLookup() {
    #expect(
      SessionStore.defaultPath(environment: ["XDG_STATE_HOME": "/s/", "HOME": "/home/u"])
        == "/s/grow/session.json")
    #expect(
      PluginDirectories.standard(environment: ["XDG_DATA_HOME": "/d/", "HOME": "/home/u"]).user
        == ["/d/grow/plugins"])
  }

  func history(_ harness: DaemonHarness) throws -> HistoryStore {
    try HistoryStore(path: HistoryStore.defaultPath(environment: harness.environment))
  }

  // A daemon killed after recording how a phase ended, but before saving the session that
  // followed, leaves the phase in session.json. Each test writes that row itself, as the
  // killed daemon did in its last moment; the restarted daemon must go on from the recorded
  // end. (The soak found it recording such a phase twice and counting it twice.)

  @Test func aFocusRecordedAsCompletedJustBeforeTheKillIsRecordedAndCountedOnce() throws {
    let harness = try DaemonHarness(config: "[timer]\nfocus = 1s\nshort-break = 10m\n")
    #expect(try harness.grow("start").status == 0)
    let phase = try #require(try savedPhase(harness))
    #expect(harness.daemon?.kill() == 128 + SIGKILL)
    let store = try history(harness)
    let deadline = phase.startedAt.addingTimeInterval(phase.duration)
    try store.record(
      PhaseRecord(
        card: phase.card, kind: .focus, plannedSeconds: 1, actualSeconds: 1,
        startedAt: phase.startedAt, endedAt: deadline, outcome: .completed))
    Thread.sleep(until: deadline.addingTimeInterval(0.2))
    try harness.start()
    let status = try harness.status()
    #expect(status["state"] as? String == "short-break")
    #expect(status["completed_today"] as? Int == 1)
    #expect(try store.phases().map(\.kind) == [.focus])
  }

  /// Starts a 10-minute focus, kills the daemon, then writes the history row a daemon killed
  /// just after recording the focus as `outcome` (after `seconds`) would have left, and starts
  /// the daemon again.
  func restartAfterARecordedFocus(_ outcome: HistoryOutcome, after seconds: Double) throws
    -> (DaemonHarness, HistoryStore)
  {
    let harness = try DaemonHarness(config: "[timer]\nfocus = 10m\nshort-break = 10m\n")
    #expect(try harness.grow("start").status == 0)
    let phase = try #require(try savedPhase(harness))
    #expect(harness.daemon?.kill() == 128 + SIGKILL)
    let store = try history(harness)
    try store.record(
      PhaseRecord(
        card: phase.card, kind: .focus, plannedSeconds: 600, actualSeconds: seconds,
        startedAt: phase.startedAt, endedAt: phase.startedAt.addingTimeInterval(seconds),
        outcome: outcome))
    try harness.start()
    return (harness, store)
  }

  @Test func aFocusRecordedAsSkippedJustBeforeTheKillStaysSkipped() throws {
    let (harness, store) = try restartAfterARecordedFocus(.skipped, after: 0.5)
    #expect(try harness.status()["state"] as? String == "short-break")
    #expect(try harness.grow("stop").status == 0)
    try harness.waitForHistory()
    #expect(try store.phases().map(\.outcome) == [.skipped, .stopped])
  }

  @Test func aFocusRecordedAsStoppedJustBeforeTheKillIsNotResumed() throws {
    let (harness, store) = try restartAfterARecordedFocus(.stopped, after: 1)
    #expect(try harness.status()["state"] as? String == "idle")
    #expect(!FileManager.default.fileExists(atPath: sessionFile(harness)))
    #expect(harness.daemonLog.contains("the saved session had already ended"))
    #expect(try store.phases().count == 1)
  }

  /// The intention comes with the phase's start, which the restarted daemon never saw.
  @Test func aFocusTakenUpAfterKillNineIsRecordedWithItsIntention() throws {
    let harness = try DaemonHarness(config: "[timer]\nfocus = 1s\nshort-break = 10m\n")
    #expect(try harness.grow("start", "--intention", "essay").status == 0)
    #expect(harness.daemon?.kill() == 128 + SIGKILL)
    try harness.start()
    _ = try harness.waitForStatus { $0["state"] as? String == "short-break" }
    try harness.waitForHistory()
    let recorded = try history(harness).phases()
    #expect(recorded.map(\.intention) == ["essay"])
  }

  @Test func aCleanStopEndsTheSessionAndLeavesNoFile() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start").status == 0)
    #expect(FileManager.default.fileExists(atPath: sessionFile(harness)))
    #expect(harness.daemon?.terminate() == 0)
    #expect(!FileManager.default.fileExists(atPath: sessionFile(harness)))
    try harness.start()
    #expect(try harness.status()["state"] as? String == "idle")
  }

  @Test func aDamagedSessionFileIsReportedAndIgnored() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let file = sessionFile(harness)
    try FileManager.default.createDirectory(
      atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try "not json".write(toFile: file, atomically: true, encoding: .utf8)
    try harness.start()
    #expect(try harness.status()["state"] as? String == "idle")
    #expect(
      harness.daemon?.stderr.contains("the saved session in \(file) cannot be read") == true)
  }

  @Test func aLostSessionBusEndsTheDaemonButNotTheSession() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start", "--intention", "essay").status == 0)
    let before = try harness.status()
    let daemon = try #require(harness.daemon)
    let file = sessionFile(harness)

    harness.bus.crash()
    #expect(daemon.waitForExit(timeout: 5) == 1)
    #expect(
      daemon.stderr.contains(
        "lost the session bus; exiting with status 1. The running session stays saved in "
          + "\(file) and resumes when grow daemon starts again"), "\(daemon.stderr)")
    let saved =
      try JSONSerialization.jsonObject(
        with: try Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
    let phase = saved?["phase"] as? [String: Any]
    #expect(phase?["kind"] as? String == "focus")

    // A new bus (a new login, say) and a new daemon for the same person: the focus goes on.
    try harness.restartBus()
    try harness.start()
    let after = try harness.status()
    #expect(after["state"] as? String == "focus")
    #expect(after["intention"] as? String == "essay")
    #expect(after["ends_at"] as? String == before["ends_at"] as? String)
    #expect(harness.daemon?.stderr.contains("resumed the session saved in \(file)") == true)
    let history = harness.environment["XDG_DATA_HOME", default: ""] + "/grow/history.sqlite"
    #expect(try HistoryStore(path: history, create: false).phases().isEmpty, "nothing cut short")
  }

  /// Leaving after a lost bus still stops every plugin: one that ignores SIGTERM is waited for
  /// and then killed, and a SIGTERM meanwhile (GLib's bus connection raises one) changes
  /// nothing.
  @Test func afterALostBusEveryPluginIsStoppedBeforeTheDaemonLeaves() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let stubborn = harness.environment["HOME", default: ""] + "/stubborn.sh"
    try writeExecutable("#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 1; done\n", to: stubborn)
    try harness.writeConfig("[plugin.stubborn]\nexec = \(stubborn)\n")
    try harness.start()
    #expect(try harness.grow("start").status == 0)
    let endsAt = try harness.status()["ends_at"] as? String
    let daemon = try #require(harness.daemon)
    harness.bus.crash()
    #expect(daemon.waitUntil(timeout: 30) { daemon.stderr.contains("lost the session bus") })
    kill(daemon.pid, SIGTERM)
    #expect(daemon.waitForExit(timeout: 10) == 1)
    #expect(
      daemon.stderr.contains("grow[stubborn] warning: did not exit 2.0s after SIGTERM; killing it"),
      "left before its plugins had stopped: \(daemon.stderr)")
    #expect(!daemon.stderr.contains("shutting down"))
    // Without it from now on: the harness ends its daemon with SIGKILL, which would orphan it.
    try harness.writeConfig("")
    try harness.restartBus()
    try harness.start()
    #expect(try harness.status()["ends_at"] as? String == endsAt)
  }
}
