import Foundation
import GrowTestSupport
import Testing

/// The session survives a daemon killed with SIGKILL; a clean stop leaves nothing behind.
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
}
