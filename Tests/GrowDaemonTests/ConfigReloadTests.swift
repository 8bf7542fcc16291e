import Foundation
import GrowTestSupport
import Testing

/// A reload (`grow reload`, SIGHUP) applies every change of config.ini to a
/// running daemon: plugin settings, added plugins, removed ones.
@Suite struct ConfigReloadTests {
  /// A shell plugin that appends every event line to `log` and keeps its pid in `pidFile`.
  static func writeRecorder(in harness: DaemonHarness, name: String) throws
    -> (script: String, log: String, pidFile: String)
  {
    let home = harness.bus.environment["HOME", default: ""]
    let log = home + "/\(name).jsonl"
    let pidFile = home + "/\(name).pid"
    let script = home + "/\(name).sh"
    try writeExecutable("#!/bin/sh\necho $$ > \(pidFile)\nexec cat >> \(log)\n", to: script)
    return (script, log, pidFile)
  }

  static func isAlive(_ pidFile: String) -> Bool {
    guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
      let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    else { return false }
    return kill(pid, 0) == 0
  }

  /// The x11 plugin used the grace it started with until the daemon restarted. Now `grow
  /// reload` restarts it with the new one and says so.
  @Test func aChangedGraceReachesTheRunningX11Plugin() throws {
    let slow = "[timer]\ndistractions = Game\n\n[plugin.x11]\ngrace = 1h\n"
    let desktop = try X11PluginDesktopTests.Desktop(slow)
    let editor = try desktop.display.openWindow(class: "Editor", title: "notes.md")
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.display.activate(editor)
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    try desktop.display.activate(game)
    Thread.sleep(forTimeInterval: 1.5)
    #expect(desktop.events("distraction-started").isEmpty, "flagged before an hour's grace")
    try desktop.display.activate(editor)

    let home = desktop.harness.bus.environment["HOME", default: ""]
    try desktop.harness.writeConfig(
      slow.replacingOccurrences(of: "grace = 1h", with: "grace = 1s")
        + "\n[plugin.events]\nexec = \(home)/record-events.sh\n")
    let reload = try desktop.harness.grow("reload")
    #expect(reload.status == 0, "\(reload.stderr)")
    #expect(reload.stdout == "restarted plugin 'x11' with new settings: grace\n")
    let running = try desktop.harness.daemon?.waitUntil(timeout: 10) {
      try desktop.harness.plugins()["x11"]?["state"] == "running"
    }
    #expect(running == true)
    try desktop.display.activate(game)
    let started = try desktop.waitFor("distraction-started", timeout: 10)
    #expect(started["app"] as? String == "Game")
    // The session went on through the reload.
    #expect(try desktop.harness.status()["state"] as? String == "focus")
  }

  /// `[plugin.logger] exec = …` added to the file starts on SIGHUP and gets events; removed
  /// again, `grow reload` stops its process. Before, SIGHUP ignored it and `grow plugins
  /// reload logger` said "no plugin 'logger'".
  @Test func anAddedPluginStartsAndARemovedOneStops() throws {
    let base = "[timer]\nfocus = 25m\n\n[plugins]\nenable = statusbar, logger\n"
    let harness = try DaemonHarness(
      config: "[timer]\nfocus = 25m\n", startDaemon: false, environment: ["DISPLAY": ""])
    try harness.start()
    let recorder = try Self.writeRecorder(in: harness, name: "logger")
    try harness.writeConfig(
      "[timer]\nfocus = 25m\n\n[plugin.logger]\nexec = \(recorder.script)\n")
    let daemon = try #require(harness.daemon)
    kill(daemon.pid, SIGHUP)
    let started = try daemon.waitUntil(timeout: 10) {
      try harness.plugins()["logger"]?["state"] == "running" && Self.isAlive(recorder.pidFile)
    }
    let plugins = try harness.plugins()
    #expect(started, "\(plugins)")
    #expect(try harness.grow("start").status == 0)
    let got = try daemon.waitUntil(timeout: 10) {
      ((try? String(contentsOfFile: recorder.log, encoding: .utf8)) ?? "").contains("phase-started")
    }
    #expect(got, "the added plugin received no event")

    try harness.writeConfig(base.replacingOccurrences(of: ", logger", with: ""))
    let reload = try harness.grow("reload")
    #expect(reload.status == 0, "\(reload.stderr)")
    #expect(reload.stdout.contains("stopped plugin 'logger': it is no longer configured"))
    let gone = try daemon.waitUntil(timeout: 10) { !Self.isAlive(recorder.pidFile) }
    #expect(gone, "the removed plugin's process still runs")
    #expect(try harness.plugins()["logger"] == nil)
    #expect(try harness.status()["state"] as? String == "focus")
  }

  /// A reload of a file with problems says them all, exits 1, and keeps what runs.
  @Test func aBrokenFileIsReportedAndNothingChanges() throws {
    let harness = try DaemonHarness(
      config: "[timer]\nfocus = 25m\n\n[card.math]\nfocus = 50m\n", environment: ["DISPLAY": ""])
    try harness.writeConfig(
      "[timer]\ndefault-card = mth\n\n[card.math]\nfocus = 50m\n")
    let reload = try harness.grow("reload")
    #expect(reload.status == 1)
    let path = harness.configPath
    #expect(reload.stderr.contains("config not reloaded, keeping the old one:"))
    #expect(reload.stderr.contains("\(path):2: default-card = 'mth' in [timer]"))
    try harness.writeConfig(
      "[timer]\nfocus = 25m\n\n[card.math]\nfocus = 50m\n\n[plugin.statusbar]\nicon = ascii\n"
        + "template = {icon}\n\n[plugin.notify]\nurgency = loud\n")
    let again = try harness.grow("reload")
    #expect(again.status == 1)
    #expect(
      again.stderr.contains(
        "\(path):8: unknown key 'icon' in [plugin.statusbar]; did you mean 'icons'?"))
    #expect(again.stderr.contains("\(path):12: urgency = 'loud' in [plugin.notify]"))
    #expect(try harness.grow("start", "math").status == 0)
  }

  /// `org.grow.Grow1.Config.Reload` answers once the file has been read and applied, with
  /// what changed; a file with problems is answered with InvalidConfig and the problems, the
  /// words `grow reload` prints. (Before, it answered at once with a number to poll.)
  @Test func theReloadCallAnswersOnceTheFileIsApplied() throws {
    let cards = "\n[card.math]\nfocus = 50m\n"
    let harness = try DaemonHarness(
      config: "[timer]\nfocus = 25m\n" + cards, environment: ["DISPLAY": ""])
    let reload = [
      "call", "--session", "-d", "org.grow.Grow1", "-o", "/org/grow/Grow1", "-m",
      "org.grow.Grow1.Config.Reload",
    ]
    let same = try harness.run("gdbus", reload)
    #expect(same.stdout == "(['nothing changed'],)\n", "\(same)")
    try harness.writeConfig("[timer]\ndefault-card = mth\n" + cards)
    let broken = try harness.run("gdbus", reload)
    #expect(broken.status != 0)
    #expect(
      broken.stderr.contains(
        "GDBus.Error:org.grow.Grow1.Error.InvalidConfig: config not reloaded, keeping the old one:"
      ), "\(broken)")
    #expect(broken.stderr.contains("\(harness.configPath):2: default-card = 'mth' in [timer]"))
    let cli = try harness.grow("reload")
    #expect(cli.status == 1)
    #expect(cli.stderr.contains("config not reloaded, keeping the old one:\n"))
  }

  /// Restarting the dnd plugin with new settings during focus keeps the server silenced, and
  /// it is put back when the session ends: the old instance put it back and removed its
  /// record before the new one started and silenced it again. A plugin whose section did not
  /// change is not restarted at all.
  @Test(.enabled(if: NotificationServers.haveDisplay, "dunst needs an X display"))
  func dndRestartedDuringFocusKeepsTheServerSilenced() throws {
    let config = "[timer]\nfocus = 10m\n\n[plugins]\nenable = dnd, statusbar\n\n[plugin.dnd]\n"
    let harness = try DaemonHarness(config: config + "dnd = focus\n", startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    defer { _ = dunst }
    try harness.start()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "dunst" })
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })

    try harness.writeConfig(config + "dnd = always\n")
    let reload = try harness.grow("reload")
    #expect(reload.status == 0, "\(reload.stderr)")
    #expect(reload.stdout == "restarted plugin 'dnd' with new settings: dnd\n")
    #expect(
      try harness.eventually {
        try harness.dndStatus()["enabled"] as? Bool == true && harness.dunstIsPaused() == true
      })
    #expect(try harness.status()["state"] as? String == "focus")
    let again = try harness.grow("reload")
    #expect(again.stdout == "nothing changed\n")
    try harness.grow("stop")
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
  }

  /// A reload storm while `[plugin.dnd]` flips during focus: reloads from `grow reload` and
  /// SIGHUP, parallel, each restarting or stopping and starting the dnd plugin. Whatever the
  /// interleaving, afterwards dunst is paused with its restore record on disk (so even a crash
  /// would put it back), and `grow stop` puts it back: a new dnd instance never starts while
  /// the old one is still putting the server back.
  @Test(.enabled(if: NotificationServers.haveDisplay, "dunst needs an X display"))
  func aReloadStormDuringFocusNeverLosesWhatDndMustPutBack() throws {
    let config = "[timer]\nfocus = 10m\n\n[plugins]\nenable = dnd, statusbar\n\n[plugin.dnd]\n"
    let flips = ["dnd = focus\n", "dnd = always\n", "enabled = false\n"]
    let harness = try DaemonHarness(config: config + flips[0], startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    defer { _ = dunst }
    try harness.start()
    let daemon = try #require(harness.daemon)
    let record = harness.bus.environment["XDG_STATE_HOME", default: ""] + "/grow/dnd-restore.json"
    // The daemon's dnd lines say which instance did what when this fails (rarely, under load).
    let dndLog = {
      daemon.stderr.split(separator: "\n").filter { $0.contains("dnd") || $0.contains("Do-Not") }
        .suffix(80).joined(separator: "\n")
    }
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "dunst" })
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    for round in 0..<8 {
      var reloads: [BackgroundProcess] = []
      for step in 0..<30 {
        try harness.writeConfig(config + flips[(round + step) % flips.count])
        reloads.append(
          try BackgroundProcess(Binaries.grow, ["reload"], environment: harness.environment))
        kill(daemon.pid, SIGHUP)
      }
      try harness.writeConfig(config + flips[round % 2])
      for reload in reloads { _ = reload.waitForExit(timeout: 60) }
      #expect(try harness.grow("reload").status == 0)
      #expect(
        try harness.eventually(timeout: 30) {
          try harness.dunstIsPaused() == true && FileManager.default.fileExists(atPath: record)
            && harness.dndStatus()["enabled"] as? Bool == true
        },
        "round \(round): dunst paused with its restore record; the daemon's dnd log:\n\(dndLog())")
    }
    try harness.grow("stop")
    #expect(
      try harness.eventually(timeout: 30) { try harness.dunstIsPaused() == false },
      "grow stop puts dunst back; the daemon's dnd log:\n\(dndLog())")
    // The record goes once dunst has confirmed, a moment after dunstctl already sees it.
    #expect(
      try harness.eventually(timeout: 30) { !FileManager.default.fileExists(atPath: record) },
      "grow stop removes the restore record; the daemon's dnd log:\n\(dndLog())")
  }
}
