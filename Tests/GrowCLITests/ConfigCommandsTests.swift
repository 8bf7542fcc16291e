import Foundation
import GrowTestSupport
import Testing

/// `grow config check`, and the daemon reading config.ini.
@Suite struct ConfigCommandsTests {
  static let mathConfig = """
    [timer]
    focus = 25m

    [card.math]
    focus = 50m
    short-break = 10m
    daily-goal = 2h
    intention = Chapter 3 exercises
    """

  /// Every problem on a line of its own, each with `grow: ` in front (only the first
  /// had it).
  @Test func checkReportsEveryProblemWithFileLineAndKey() throws {
    let harness = try DaemonHarness(
      config: "[timer]\nfocus = 25m\n\n[card.math]\nfcous = 50m\nshort-break = 10x\n",
      startDaemon: false)
    let check = try harness.grow("config", "check")
    #expect(check.status == 1)
    let path = harness.configPath
    #expect(
      check.stderr == """
        grow: \(path):5: unknown key 'fcous' in [card.math]; did you mean 'focus'?
        grow: \(path):6: short-break = '10x' in [card.math]: '10x' is not a duration; \
        write it like 25m, 90s or 1h30m

        """)
  }

  @Test func checkOfAGoodFileNamesItsCards() throws {
    let harness = try DaemonHarness(config: Self.mathConfig, startDaemon: false)
    let check = try harness.grow("config", "check", harness.configPath)
    #expect(check.status == 0)
    #expect(check.stdout == "\(harness.configPath): ok (cards: work, math; default: work)\n")
  }

  /// A pattern that backtracking engines take exponential time over is simply ok: Grow
  /// matches titles in time proportional to the title, so `grow config check` has nothing to
  /// say about it (it used to print a paragraph of advice about other engines).
  @Test func checkSaysOkToAPatternOnlyABacktrackingEngineWouldStallOn() throws {
    let harness = try DaemonHarness(
      config: "[timer]\nfocus = 25m\ndistractions = steam, xterm:/(a+)+$/\nallow = /(a|aa)*b/\n",
      startDaemon: false)
    let check = try harness.grow("config", "check")
    #expect(check.status == 0)
    #expect(check.stdout == "\(harness.configPath): ok (cards: work; default: work)\n")
  }

  /// Plugin sections are checked against what each plugin declares, and a
  /// default card that names no card is an error; every problem at once, with file and line.
  /// A program's own keys (exec) are not checked. Before, all of this said ok.
  @Test func checkReportsPluginSettingsAndAnUnknownDefaultCard() throws {
    let harness = try DaemonHarness(
      config: """
        [timer]
        default-card = mth

        [card.math]
        focus = 50m

        [plugin.x11]
        grac = 10s

        [plugin.notify]
        warn-before = soon
        urgency = loud

        [plugin.dnd]
        card.mth = never

        [plugin.logger]
        exec = /bin/cat
        its-own-key = 1
        """,
      startDaemon: false)
    let check = try harness.grow("config", "check")
    #expect(check.status == 1)
    let path = harness.configPath
    #expect(
      check.stderr == """
        grow: \(path):2: default-card = 'mth' in [timer]: there is no [card.mth]; did you mean \
        'math'? (cards: math; a name of its own makes a card from [timer] alone)
        grow: \(path):8: unknown key 'grac' in [plugin.x11]; did you mean 'grace'?
        grow: \(path):11: warn-before = 'soon' in [plugin.notify]: 'soon' is not a duration; write it \
        like 25m, 90s or 1h30m
        grow: \(path):12: urgency = 'loud' in [plugin.notify]: 'loud' is not one of low, normal, \
        critical; did you mean 'low'?
        grow: \(path):15: unknown key 'card.mth' in [plugin.dnd]; did you mean 'card.math'?

        """)
    // The daemon refuses the same file with the same words.
    let daemon = try harness.grow("daemon")
    #expect(daemon.status == 1)
    #expect(daemon.stderr.contains("\(path):8: unknown key 'grac' in [plugin.x11]"))
  }

  /// grow.ini(5) documents each plugin's keys from the plugin's own declarations.
  @Test func theConfigManPageListsEveryPluginsKeys() throws {
    let page = try Command.run(Binaries.grow, ["manpage", "5"]).stdout
    for heading in ["[plugin.notify]", "[plugin.dnd]", "[plugin.x11]", "[plugin.statusbar]"] {
      #expect(page.contains(".SH \(heading)"), "no section \(heading)")
    }
    #expect(page.contains("\\fBgrace\\fR = \\fIduration\\fR (default: 10s)"))
    #expect(page.contains("\\fBurgency\\fR = \\fIlow | normal | critical\\fR"))
  }

  @Test func checkNamesUnknownPluginsWithTheKnownOnes() throws {
    let harness = try DaemonHarness(config: "[plugins]\nenable = notfy, dnd\n", startDaemon: false)
    let check = try harness.grow("config", "check")
    #expect(check.status == 1)
    #expect(
      check.stderr
        == "grow: \(harness.configPath): [plugins] enable: unknown plugin 'notfy'; did you mean "
        + "'notify'? (known: breakscreen, browser, dnd, gnome-pomodoro, notify, sound, statusbar, tray, wayland, "
        + "x11)\n")
  }

  /// `[plugin.notfy]`: an error with a did-you-mean in `grow config check`, `grow reload`
  /// (which keeps the old config) and at the daemon's start; fine once a plugin `notfy` is
  /// installed.
  @Test func aMisspeltPluginSectionIsAnErrorUnlessThatPluginIsInstalled() throws {
    let harness = try DaemonHarness(config: "[timer]\nfocus = 25m\n", environment: ["DISPLAY": ""])
    try harness.writeConfig("[timer]\nfocus = 25m\n\n[plugin.notfy]\nenabled = true\n")
    let problem =
      "\(harness.configPath):4: no plugin 'notfy' for [plugin.notfy]; did you mean "
      + "[plugin.notify]? (plugins found: breakscreen, browser, dnd, gnome-pomodoro, notify, sound, statusbar, "
      + "tray, wayland, x11; a program plugin's section needs exec = ...)"
    let check = try harness.grow("config", "check")
    #expect(check.status == 1)
    #expect(check.stderr == "grow: \(problem)\n")
    let reload = try harness.grow("reload")
    #expect(reload.status == 1)
    #expect(reload.stderr.contains(problem), "\(reload.stderr)")
    harness.daemon?.terminate()

    let fresh = try DaemonHarness(
      config: "[timer]\nfocus = 25m\n\n[plugin.notfy]\nenabled = true\n", startDaemon: false)
    let daemon = try fresh.grow("daemon")
    #expect(daemon.status == 1)
    #expect(daemon.stderr.contains(fresh.configPath + ":4: no plugin 'notfy'"), "\(daemon.stderr)")

    try FileManager.default.createDirectory(
      atPath: fresh.pluginDirectory, withIntermediateDirectories: true)
    let program = fresh.pluginDirectory + "/grow-plugin-notfy"
    #expect(FileManager.default.createFile(atPath: program, contents: Data("#!/bin/sh\n".utf8)))
    chmod(program, 0o755)
    let installed = try fresh.grow("config", "check")
    #expect(installed.status == 0, "\(installed.stderr)")
  }

  /// Where `warn-before` will show: on the bars, since Do-Not-Disturb holds notifications
  /// during focus. Said by `grow config check` and `grow doctor`.
  @Test func checkAndDoctorSayWhereWarnBeforeShows() throws {
    let harness = try DaemonHarness(
      config: "[plugin.notify]\nwarn-before = 1m\n", startDaemon: false)
    let note =
      "\(harness.configPath):2: warn-before = 1m shows on status bars ('grow status --format "
      + "i3bar|i3blocks|polybar|waybar': colour #ff4fd8, waybar class ending-soon); as a "
      + "notification only while Do-Not-Disturb is off, so not during focus"
    let check = try harness.grow("config", "check")
    #expect(check.status == 0)
    #expect(check.stdout.hasPrefix(note + "\n"), "\(check.stdout)")
    let doctor = try harness.grow("doctor")
    #expect(doctor.stdout.contains("✔ warn-before: " + note + "\n"), "\(doctor.stdout)")
  }

  @Test func checkOfAMissingExplicitFileFails() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let check = try harness.grow("config", "check", "/nonexistent/grow.ini")
    #expect(check.status == 1)
    #expect(check.stderr == "grow: /nonexistent/grow.ini: no such file\n")
  }

  @Test func aBrokenConfigKeepsTheDaemonFromStartingAndSaysWhy() throws {
    let harness = try DaemonHarness(config: "[timer]\nfocus = soon\n", startDaemon: false)
    let daemon = try harness.grow("daemon")
    #expect(daemon.status == 1)
    #expect(daemon.stderr.contains("config.ini:2: focus = 'soon' in [timer]"))
    #expect(try harness.grow("status").status == 3)
  }

  @Test func cardsComeFromTheConfigAndUnknownOnesGetASuggestion() throws {
    let harness = try DaemonHarness(config: Self.mathConfig)
    #expect(
      try harness.grow("cards").stdout
        == """
        * work: 25m focus, 5m break, 15m long break after 4
          math: 50m focus, 10m break, 15m long break after 4, goal 2h/day — Chapter 3 exercises

        """)
    let typo = try harness.grow("start", "mtah")
    #expect(typo.status == 1)
    #expect(typo.stderr == "grow: no card named 'mtah'; did you mean 'math'? (cards: work, math)\n")
    #expect(try harness.grow("start", "math").status == 0)
    let status = try harness.status()
    #expect(status["card"] as? String == "math")
    #expect(status["duration"] as? Int == 3000)
    #expect(status["daily_goal"] as? Int == 7200)
    #expect(status["intention"] as? String == "Chapter 3 exercises")
  }

  /// A FIFO given as the config would make `open` wait for a writer, forever: `grow config
  /// check` and `grow daemon --config` refuse it at once, saying what it is.
  @Test func aFIFOIsRefusedAtOnceByCheckAndByTheDaemon() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let fifo = harness.bus.directory.path + "/config.fifo"
    #expect(mkfifo(fifo, 0o600) == 0)
    let message =
      "\(fifo): this is a FIFO (named pipe), not a regular file; give the path of the config "
      + "file itself"
    let check = try harness.run(Binaries.grow, ["config", "check", fifo], timeout: 5)
    #expect(check.status == 1)
    #expect(check.stderr == "grow: \(message)\n")
    let daemon = try harness.run(Binaries.grow, ["daemon", "--config", fifo], timeout: 5)
    #expect(daemon.status == 1)
    #expect(
      daemon.stderr == "grow: the config has problems; nothing was started:\ngrow: \(message)\n")
  }

  /// 42,000 cards, under the 1 MiB cap: `grow config check` took 28 s and a SIGHUP froze the
  /// daemon for 35 s. Past `GrowConfig.maximumCards` the check now says where, and a SIGHUP
  /// keeps the cards the daemon had; during the reload every GetStatus over D-Bus answers
  /// within the client's 10 s (the file is read off the loop). Its linear cost is LoadTests'
  /// shape test, its seconds are in `make bench`.
  @Test func fortyTwoThousandCardsAreRefusedQuicklyAndWithoutAFreeze() throws {
    let harness = try DaemonHarness(config: Self.mathConfig)
    let daemon = try #require(harness.daemon)
    try harness.writeConfig(
      "[timer]\nfocus = 25m\n" + (0..<42_000).map { "[card.c\($0)]\nfocus = 1m\n" }.joined())
    let check = try harness.run(Binaries.grow, ["config", "check"], timeout: 120)
    #expect(check.status != 0)
    #expect(
      check.stderr.contains(
        "config.ini:2003: more than 1000 cards from here on; a config may have at most 1000: "
          + "remove or merge cards"))

    let client = try RawBusClient(address: harness.bus.address, timeout: 10)
    let getStatus = {
      try client.call(
        path: "/org/grow/Grow1", interface: "org.grow.Grow1.Timer", member: "GetStatus",
        destination: "org.grow.Grow1")
    }
    kill(daemon.pid, SIGHUP)
    let deadline = Date().addingTimeInterval(60)
    while !daemon.stderr.contains("config not reloaded"), Date() < deadline {
      #expect(try getStatus() == .returned)
    }
    #expect(daemon.stderr.contains("more than 1000 cards from here on"))
    #expect(try harness.grow("cards").stdout.contains("math: "))
  }

  @Test func sighupReloadsTheCardsAndABrokenReloadKeepsTheOldOnes() throws {
    let harness = try DaemonHarness(config: Self.mathConfig)
    let daemon = try #require(harness.daemon)
    try harness.writeConfig(Self.mathConfig + "\n[card.writing]\nfocus = 45m\n")
    kill(daemon.pid, SIGHUP)
    let reloaded = daemon.waitUntil(timeout: 30) { daemon.stderr.contains("config reloaded") }
    #expect(reloaded)
    #expect(try harness.grow("cards").stdout.contains("writing: 45m focus"))

    try harness.writeConfig("[timer]\nfocus = never\n")
    kill(daemon.pid, SIGHUP)
    let refused = daemon.waitUntil(timeout: 30) { daemon.stderr.contains("config not reloaded") }
    #expect(refused)
    #expect(try harness.grow("cards").stdout.contains("writing: 45m focus"))
  }
}
