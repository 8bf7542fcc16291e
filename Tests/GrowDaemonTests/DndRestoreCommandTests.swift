import Foundation
import Glibc
import GrowTestSupport
import Testing

/// A daemon that ends while dunst does not answer (SIGTERM while dunst is
/// SIGSTOPped, or SIGKILL) leaves Do-Not-Disturb on. `grow dnd restore` puts it back from
/// outside the daemon's life (systemd runs it as ExecStopPost=), and every daemon start does
/// it before any plugin loads. Real dunst and the real daemon on a private bus.
@Suite(.serialized, .enabled(if: NotificationServers.haveDisplay, "dunst needs an X display"))
struct DndRestoreCommandTests {
  /// dnd alone: the notify plugin's handling of a stopped server is not what this is about.
  static let longFocus = "[timer]\nfocus = 10m\n\n[plugins]\nenable = dnd\n"

  private func dunstHarness(_ config: String = Self.longFocus) throws -> (
    DaemonHarness, BackgroundProcess
  ) {
    let harness = try DaemonHarness(config: config, startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "dunst" })
    return (harness, dunst)
  }

  private func recordPath(_ harness: DaemonHarness) -> String {
    harness.bus.environment["XDG_STATE_HOME", default: ""] + "/grow/dnd-restore.json"
  }

  private func json(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  /// Focus pauses dunst; dunst is stopped; the daemon ends (SIGTERM, or SIGKILL) and cannot
  /// put it back. Returns with dunst running again and still paused.
  private func leaveDunstPaused(_ harness: DaemonHarness, _ dunst: BackgroundProcess, sigkill: Bool)
    throws
  {
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    #expect(try harness.eventually { FileManager.default.fileExists(atPath: recordPath(harness)) })
    kill(dunst.pid, SIGSTOP)
    if sigkill {
      harness.daemon?.kill()
    } else {
      #expect(harness.daemon?.terminate(timeout: 10) == 0)
    }
    kill(dunst.pid, SIGCONT)
    #expect(try harness.dunstIsPaused() == true, "the daemon could not put dunst back")
    #expect(FileManager.default.fileExists(atPath: recordPath(harness)))
  }

  @Test(arguments: [false, true])
  func restoreUnpausesDunstADaemonLeftPausedAndTwiceIsHarmless(sigkill: Bool) throws {
    let (harness, dunst) = try dunstHarness()
    try leaveDunstPaused(harness, dunst, sigkill: sigkill)

    let first = try harness.grow("dnd", "restore")
    #expect(first.status == 0, "\(first)")
    #expect(first.stdout == "put dunst's Do-Not-Disturb back as it was before Grow changed it\n")
    #expect(try harness.dunstIsPaused() == false)
    #expect(!FileManager.default.fileExists(atPath: recordPath(harness)))

    let second = try harness.grow("dnd", "restore", "--json")
    #expect(second.status == 0, "\(second)")
    let answer = try json(second.stdout)
    #expect(answer["outcome"] as? String == "nothing-to-restore")
    #expect(answer["record_kept"] as? Bool == false)
    #expect(try harness.dunstIsPaused() == false)
  }

  @Test func withoutARecordItSaysThereIsNothingToRestore() throws {
    let harness = try DaemonHarness(config: Self.longFocus, startDaemon: false)
    let result = try harness.grow("dnd", "restore")
    #expect(result.status == 0)
    #expect(
      result.stdout
        == "nothing to restore: Grow left no Do-Not-Disturb on (no \(recordPath(harness)))\n")
  }

  /// A record no Grow can read (garbage) is no use to anyone: removed, with what to check.
  @Test func aDamagedRecordIsRemovedWithWhatToCheck() throws {
    let harness = try DaemonHarness(config: Self.longFocus, startDaemon: false)
    let record = recordPath(harness)
    try FileManager.default.createDirectory(
      atPath: (record as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try "{\"backend\":".write(toFile: record, atomically: true, encoding: .utf8)
    let result = try harness.grow("dnd", "restore")
    #expect(result.status == 1)
    #expect(
      result.stderr.contains("\(record): not a DND restore record; removed it"), "\(result)")
    #expect(result.stderr.contains("'dunstctl set-paused false'"), "\(result)")
    #expect(!FileManager.default.fileExists(atPath: record))
    #expect(try harness.grow("dnd", "restore").status == 0)
  }

  /// dunst still stopped: each call times out, the error says what to do, and the record stays
  /// for the next try, which then works.
  @Test func withDunstStillStoppedItTimesOutAndKeepsTheRecord() throws {
    let (harness, dunst) = try dunstHarness()
    try leaveDunstPaused(harness, dunst, sigkill: true)
    kill(dunst.pid, SIGSTOP)
    defer { kill(dunst.pid, SIGCONT) }

    let text = try harness.grow("dnd", "restore", "--timeout", "1s")
    #expect(text.status == 1, "\(text)")
    #expect(text.stdout == "")
    #expect(text.stderr.contains("dunst did not answer reading its Do-Not-Disturb"), "\(text)")
    #expect(text.stderr.contains("then run 'grow dnd restore' again"), "\(text)")
    #expect(FileManager.default.fileExists(atPath: recordPath(harness)))

    let asJSON = try harness.grow("dnd", "restore", "--json", "--timeout", "1s")
    #expect(asJSON.status == 1)
    let answer = try json(asJSON.stdout)
    #expect(answer["outcome"] as? String == "failed")
    #expect(answer["backend"] as? String == "dunst")
    #expect(answer["record_kept"] as? Bool == true)

    kill(dunst.pid, SIGCONT)
    #expect(try harness.grow("dnd", "restore").status == 0)
    #expect(try harness.dunstIsPaused() == false)
    #expect(!FileManager.default.fileExists(atPath: recordPath(harness)))
  }

  /// A running daemon keeps the record itself: the command leaves it alone and says how to end
  /// DND now.
  @Test func itLeavesARunningDaemonsRecordAlone() throws {
    let (harness, dunst) = try dunstHarness()
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    #expect(try harness.eventually { FileManager.default.fileExists(atPath: recordPath(harness)) })
    let result = try harness.grow("dnd", "restore")
    #expect(result.status == 1)
    #expect(result.stderr.contains("the grow daemon is running"), "\(result)")
    #expect(result.stderr.contains("'grow dnd off'"), "\(result)")
    #expect(try harness.dunstIsPaused() == true)
    #expect(FileManager.default.fileExists(atPath: recordPath(harness)))
    _ = dunst
  }

  /// The autostart case (no ExecStopPost=): the next daemon start honours the record before
  /// any plugin loads, even when the dnd plugin will not load at all.
  /// After SIGKILL the saved focus goes on, but without the dnd plugin nothing would keep it.
  @Test(arguments: [false, true])
  func theNextStartPutsDunstBackBeforeAnyPluginEvenWithoutTheDndPlugin(sigkill: Bool) throws {
    let (harness, dunst) = try dunstHarness()
    try leaveDunstPaused(harness, dunst, sigkill: sigkill)
    try harness.writeConfig("[timer]\nfocus = 10m\n\n[plugins]\nenable = notify\n")
    try harness.start()
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(try harness.eventually { !FileManager.default.fileExists(atPath: recordPath(harness)) })
    let log = harness.daemon?.stderr ?? ""
    let restored = log.range(of: "put dunst's Do-Not-Disturb back as it was before Grow changed it")
    let pluginRuns = log.range(of: "plugin 'notify' running")
    #expect(restored != nil, "\(log)")
    #expect(pluginRuns != nil, "\(log)")
    if let restored, let pluginRuns {
      #expect(restored.lowerBound < pluginRuns.lowerBound, "before any plugin loads: \(log)")
    }
  }

  /// GNOME keeps its switch in GSettings, which the CLI reaches through `gsettings` (it does
  /// not link GIO). No GNOME here: a stand-in `gsettings` on PATH answers as GNOME's would and
  /// notes what it was told; one that hangs is killed at the timeout and the record kept.
  @Test func gnomesBannersComeBackThroughGsettings() throws {
    let harness = try DaemonHarness(config: Self.longFocus, startDaemon: false)
    let bin = harness.bus.directory.appendingPathComponent("bin").path
    let calls = bin + "/calls"
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    let script = """
      #!/bin/sh
      echo "$@" >> \(calls)
      [ -n "$GSETTINGS_HANG" ] && exec sleep 30
      [ "$1" = get ] && echo false
      exit 0
      """
    try script.write(toFile: bin + "/gsettings", atomically: true, encoding: .utf8)
    chmod(bin + "/gsettings", 0o755)
    let record = recordPath(harness)
    try FileManager.default.createDirectory(
      atPath: (record as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let silenced = #"{"backend":"gnome","previous":false,"set":true}"#
    var environment = harness.environment
    environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")

    try silenced.write(toFile: record, atomically: true, encoding: .utf8)
    environment["GSETTINGS_HANG"] = "1"
    let hung = try Command.run(
      Binaries.grow, ["dnd", "restore", "--timeout", "1s"], environment: environment)
    #expect(hung.status == 1, "\(hung)")
    #expect(hung.stderr.contains("gsettings did not answer reading show-banners"), "\(hung)")
    #expect(FileManager.default.fileExists(atPath: record))

    environment["GSETTINGS_HANG"] = ""
    let result = try Command.run(Binaries.grow, ["dnd", "restore"], environment: environment)
    #expect(result.status == 0, "\(result)")
    #expect(result.stdout == "put gnome's Do-Not-Disturb back as it was before Grow changed it\n")
    #expect(
      try String(contentsOfFile: calls, encoding: .utf8)
        == "get org.gnome.desktop.notifications show-banners\n"
        + "get org.gnome.desktop.notifications show-banners\n"
        + "set org.gnome.desktop.notifications show-banners true\n")
    #expect(!FileManager.default.fileExists(atPath: record))
  }
}
