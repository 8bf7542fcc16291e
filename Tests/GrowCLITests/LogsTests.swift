import Foundation
import GrowTestSupport
import Testing

/// Where the daemon's log goes, `grow logs`, and what an exiting plugin program said last.
@Suite struct LogsTests {
  /// The daemon as D-Bus activation or an autostart entry runs it: standard error leads
  /// nowhere.
  func startWithStderrNowhere(_ harness: DaemonHarness) throws -> BackgroundProcess {
    let daemon = try BackgroundProcess(
      "/bin/sh", ["-c", "exec \"$0\" daemon 2>/dev/null", Binaries.grow],
      environment: harness.environment)
    let up = try daemon.waitUntil(timeout: 10) { try harness.grow("status").status == 0 }
    #expect(up, "the daemon did not come up")
    return daemon
  }

  func logPath(_ harness: DaemonHarness) -> String {
    harness.environment["XDG_STATE_HOME", default: ""] + "/grow/grow.log"
  }

  @Test func aDaemonWhoseStandardErrorGoesNowhereWritesItsLogFile() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    let daemon = try startWithStderrNowhere(harness)
    defer { daemon.terminate() }

    let logs = try harness.grow("logs")
    #expect(logs.status == 0, "\(logs.stderr)")
    let lines = logs.stdout.split(separator: "\n")
    let ready = lines.first { $0.contains("grow[daemon] info: ready on org.grow.Grow1") }
    #expect(ready != nil, "\(logs.stdout)")
    // Stamped with the local date and time, as journalctl shows them.
    #expect(ready?.wholeMatch(of: /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d grow\[daemon\] .*/) != nil)
    // --plugin picks one speaker's lines out of everyone's.
    let own = try harness.grow("logs", "--plugin", "daemon")
    #expect(own.stdout.contains("ready on org.grow.Grow1"))
    #expect(own.stdout.split(separator: "\n").allSatisfy { $0.contains(" grow[daemon] ") })
    #expect(lines.contains { !$0.contains(" grow[daemon] ") }, "the plugins speak too")

    var info = stat()
    #expect(stat(logPath(harness), &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600, "owner-only")
  }

  @Test func followingShowsNewLinesAsTheyAreWritten() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    let daemon = try startWithStderrNowhere(harness)
    defer { daemon.terminate() }
    let follower = try BackgroundProcess(
      Binaries.grow, ["logs", "-f", "--plugin", "daemon"], environment: harness.environment)
    defer { follower.terminate() }
    #expect(follower.waitUntil(timeout: 30) { follower.stdout.contains("ready on") })
    // A reload writes a line about the plugin.
    #expect(try harness.grow("plugins", "reload", "statusbar").status == 0)
    #expect(
      follower.waitUntil(timeout: 30) { follower.stdout.contains("plugin 'statusbar' running") },
      "\(follower.stdout)")
  }

  @Test func underSystemdTheJournalHasTheLogAndNoFileIsWritten() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    // systemd names the stream it connected to standard error in JOURNAL_STREAM.
    let stream = harness.bus.directory.appendingPathComponent("journal-stand-in").path
    #expect(FileManager.default.createFile(atPath: stream, contents: nil))
    var info = stat()
    #expect(stat(stream, &info) == 0)
    var environment = harness.environment
    environment["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
    let daemon = try BackgroundProcess(
      "/bin/sh", ["-c", "exec \"$0\" daemon 2>>\"$1\"", Binaries.grow, stream],
      environment: environment)
    defer { daemon.terminate() }
    #expect(try daemon.waitUntil(timeout: 10) { try harness.grow("status").status == 0 })
    let journal = try String(contentsOfFile: stream, encoding: .utf8)
    #expect(journal.contains("grow[daemon] info: ready on org.grow.Grow1"))
    #expect(!FileManager.default.fileExists(atPath: logPath(harness)))
  }

  @Test func withoutALogTheCommandSaysWhereItWouldBe() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let logs = try harness.grow("logs")
    #expect(logs.status == 1)
    #expect(logs.stderr.contains("no log yet: \(logPath(harness)) does not exist"))
    #expect(try harness.grow("logs", "--lines", "many").status == 2)
  }

  @Test func aPluginProgramThatExitsShowsItsLastWords() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    let home = harness.environment["HOME", default: ""]
    let script = home + "/needs-token"
    try writeExecutable(
      "#!/bin/sh\necho starting >&2\necho \"no token in $HOME/.token; create it\" >&2\nexit 4\n",
      to: script)
    try harness.writeConfig("[plugin.needs-token]\nexec = \(script)\n")
    try harness.start()
    var plugin: [String: String] = [:]
    let restarting = try harness.daemon?.waitUntil(timeout: 10) {
      plugin = try harness.plugins()["needs-token"] ?? [:]
      return plugin["state"] == "restarting" && plugin["last_output"] != nil
    }
    #expect(restarting == true, "\(plugin)")
    #expect(plugin["error"]?.hasPrefix("exited with status 4; restarting in") == true)
    #expect(plugin["last_output"] == "starting\nno token in \(home)/.token; create it")

    let list = try harness.grow("plugins")
    #expect(
      list.stdout.contains(
        "    its last output (stderr):\n      starting\n      no token in \(home)/.token; "
          + "create it\n"), "\(list.stdout)")
    let doctor = try harness.grow("doctor")
    let line = doctor.stdout.split(separator: "\n").first { $0.contains("plugin needs-token") }
    #expect(line?.contains("its last output: no token in \(home)/.token; create it") == true)
    #expect(
      line?.contains(
        "fix: fix what '\(script)' reports ('no token in \(home)/.token; create it'), then "
          + "'grow plugins reload needs-token'; 'grow logs --plugin needs-token' shows all it "
          + "wrote") == true, "\(line ?? "")")
  }
}
