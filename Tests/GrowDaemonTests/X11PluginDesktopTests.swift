import Foundation
import GrowHistory
import GrowTestSupport
import Testing

/// The x11 plugin against a real X server (Xvfb) and real window managers: each test has its
/// own display, daemon and session bus, and watches the events an external plugin receives.
@Suite struct X11PluginDesktopTests {
  /// A display, a daemon on it, and the JSON lines every event produced.
  final class Desktop {
    let display: PrivateDisplay
    let harness: DaemonHarness
    let eventsPath: String

    init(
      _ config: String, windowManager: PrivateDisplay.WindowManager = .openbox,
      restartable: Bool = false
    ) throws {
      display = try PrivateDisplay(windowManager: windowManager, restartable: restartable)
      harness = try DaemonHarness(startDaemon: false, environment: display.environment)
      let home = harness.bus.environment["HOME", default: ""]
      eventsPath = home + "/events.jsonl"
      let recorder = home + "/record-events.sh"
      try writeExecutable("#!/bin/sh\nexec cat >> \(eventsPath)\n", to: recorder)
      try harness.writeConfig(config + "\n[plugin.events]\nexec = \(recorder)\n")
    }

    func start() throws {
      try harness.start()
      let running = try harness.daemon?.waitUntil(timeout: 10) {
        try harness.plugins()["x11"]?["state"] == "running"
      }
      guard running == true else { throw HarnessError("x11 not running: \(try harness.plugins())") }
    }

    /// The events of `type` received so far, decoded.
    func events(_ type: String) -> [[String: Any]] {
      let text = (try? String(contentsOfFile: eventsPath, encoding: .utf8)) ?? ""
      return text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
      }.filter { $0["type"] as? String == type }
    }

    /// Waits until an event of `type` arrived; returns the last one and when it was seen.
    func waitFor(_ type: String, timeout: TimeInterval = 30) throws -> [String: Any] {
      let deadline = Date().addingTimeInterval(timeout)
      while Date() < deadline {
        if let last = events(type).last { return last }
        Thread.sleep(forTimeInterval: 0.02)
      }
      throw HarnessError("no \(type) event within \(timeout)s")
    }

    var historyPath: String {
      harness.bus.environment["XDG_DATA_HOME", default: ""] + "/grow/history.sqlite"
    }
  }

  static let distracting = """
    [timer]
    distractions = Game, Browser:/youtube|reddit/
    allow = Browser:/grow docs/

    [plugin.x11]
    grace = 1s
    """

  @Test func aDistractionIsFlaggedAfterTheGracePeriodAndEndsWithItsTime() throws {
    let desktop = try Desktop(Self.distracting)
    let editor = try desktop.display.openWindow(class: "Editor", title: "notes.md")
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.display.activate(editor)
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)

    let switched = Date()
    try desktop.display.activate(game)
    Thread.sleep(forTimeInterval: 0.6)
    #expect(desktop.events("distraction-started").isEmpty, "flagged before the grace period")
    // The grace period's exact length is checked on a manual clock in
    // Tests/X11PluginTests (aDistractionIsFlaggedExactlyWhenTheGraceEnds).
    let started = try desktop.waitFor("distraction-started")
    #expect(started["app"] as? String == "Game")
    #expect(started["title"] as? String == "Level 3")
    #expect(started["card"] as? String == "work")

    Thread.sleep(forTimeInterval: 1.5)
    try desktop.display.activate(editor)
    let ended = try desktop.waitFor("distraction-ended")
    // Bounded by what was seen, not by a tolerance a loaded machine can exceed: the daemon
    // saw the game before it flagged it and the editor after the 1.5 s that followed, and it
    // cannot count more than from the switch to the end it reported.
    let atMost = Date().timeIntervalSince(switched)
    let duration = try #require(ended["duration"] as? Double)
    #expect(duration >= 1.5 && duration <= atMost, "counted \(duration)s, at most \(atMost)s")

    #expect(try desktop.harness.grow("stop").status == 0)
    try desktop.harness.waitForHistory()
    let store = try HistoryStore(path: desktop.historyPath, create: false)
    let recorded = try store.distractions()
    #expect(recorded.map(\.appClass) == ["Game"])
    #expect(abs((recorded.first?.seconds ?? 0) - duration) < 1, "the history keeps that time")
    #expect(recorded.first?.title == nil, "titles are kept only with record-titles = true")
  }

  @Test func statusBarsShowTheDistractionWhileItLasts() throws {
    let desktop = try Desktop(Self.distracting)
    let editor = try desktop.display.openWindow(class: "Editor", title: "notes.md")
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.display.activate(editor)
    try desktop.start()
    let follower = try BackgroundProcess(
      Binaries.grow,
      ["status", "--follow", "--format", "plain", "--template", "{icon} {state} {distraction}"],
      environment: desktop.harness.environment)
    defer { follower.kill() }
    #expect(try desktop.harness.grow("start").status == 0)
    try desktop.display.activate(game)
    _ = try desktop.waitFor("distraction-started")
    #expect(follower.waitUntil(timeout: 10) { follower.stdout.contains("⚠ distracted Game\n") })
    try desktop.display.activate(editor)
    _ = try desktop.waitFor("distraction-ended")
    #expect(
      follower.waitUntil(timeout: 10) {
        follower.stdout.hasSuffix("● focus \n") || follower.stdout.hasSuffix("● focus\n")
      }, "\(follower.stdout)")
  }

  /// The bars that ask once (i3blocks on an interval, waybar's `exec`) and status.txt show
  /// the same distraction as the never-ending feed.
  @Test func oneShotLinesAndStatusTextShowTheDistractionToo() throws {
    let desktop = try Desktop(
      Self.distracting
        + "\n[plugins]\nenable = x11, events, statusbar\n\n[plugin.statusbar]\n"
        + "template = {icon} {state} {distraction}\n")
    let editor = try desktop.display.openWindow(class: "Editor", title: "notes.md")
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.display.activate(editor)
    try desktop.start()
    let statusText =
      desktop.harness.bus.environment["XDG_RUNTIME_DIR", default: ""] + "/grow/status.txt"
    let fileSays = { try? String(contentsOfFile: statusText, encoding: .utf8) }
    #expect(try desktop.harness.grow("start").status == 0)
    #expect(desktop.harness.daemon?.waitUntil(timeout: 30) { fileSays() == "● focus\n" } == true)
    try desktop.display.activate(game)
    _ = try desktop.waitFor("distraction-started")
    let once = try desktop.harness.grow(
      "status", "--format", "plain", "--template", "{icon} {state} {distraction}")
    #expect(once.stdout == "⚠ distracted Game\n")
    let i3blocks = try desktop.harness.grow("status", "--format", "i3blocks")
    #expect(i3blocks.stdout.hasPrefix("⚠ "), "\(i3blocks.stdout)")
    #expect(
      desktop.harness.daemon?.waitUntil(timeout: 30) { fileSays() == "⚠ distracted Game\n" }
        == true,
      "\(fileSays() ?? "no file")")
    try desktop.display.activate(editor)
    _ = try desktop.waitFor("distraction-ended")
    #expect(desktop.harness.daemon?.waitUntil(timeout: 30) { fileSays() == "● focus\n" } == true)
  }

  // An allowed title and a break: Tests/X11PluginTests, on a manual clock.

  @Test func idleDuringFocusPausesAndInputResumesWithTheAwayTimeRecorded() throws {
    let desktop = try Desktop("[plugin.x11]\nidle-pause = 2s\n")
    try desktop.start()
    let lastInput = Date()
    try desktop.display.xdotool("mousemove", "10", "10")
    #expect(try desktop.harness.grow("start").status == 0)
    let paused = try desktop.harness.waitForStatus { $0["paused"] as? Bool == true }
    #expect(paused["state"] as? String == "focus")
    let awayPaused = try desktop.waitFor("away-paused")
    #expect((awayPaused["away_seconds"] as? Double ?? 0) >= 2)

    Thread.sleep(forTimeInterval: 1)
    try desktop.display.xdotool("mousemove", "200", "200")
    _ = try desktop.harness.waitForStatus { $0["paused"] as? Bool == false }
    let resumed = try desktop.waitFor("away-resumed")
    let away = try #require(resumed["away_seconds"] as? Double)
    // From the last input to the return: at least the 2 s threshold and the 1 s slept, at most
    // the time from that input to the event (not a tolerance a loaded machine can exceed).
    let atMost = Date().timeIntervalSince(lastInput)
    #expect(away >= 3 && away <= atMost, "away \(away)s, at most \(atMost)s")

    #expect(try desktop.harness.grow("stop").status == 0)
    try desktop.harness.waitForHistory()
    let store = try HistoryStore(path: desktop.historyPath, create: false)
    let phase = try #require(try store.phases().last)
    #expect(abs(phase.awaySeconds - away) < 0.5, "\(desktop.events("away-resumed"))")
    #expect(phase.pauseCount == 1)
  }

  /// A dbusmock MPRIS player on the desktop's bus, with `PlaybackStatus` set to `status`.
  func startPlayer(_ desktop: Desktop, status: String) throws -> BackgroundProcess {
    let player = try BackgroundProcess(
      "/usr/bin/python3",
      [
        "-m", "dbusmock", "--session", "org.mpris.MediaPlayer2.testplayer",
        "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player",
      ],
      environment: desktop.harness.environment)
    try NotificationServers.waitForName(
      "org.mpris.MediaPlayer2.testplayer", desktop.harness, process: player)
    try setPlaybackStatus(desktop, status, method: "org.freedesktop.DBus.Mock.AddProperty")
    return player
  }

  func setPlaybackStatus(
    _ desktop: Desktop, _ status: String,
    method: String = "org.freedesktop.DBus.Properties.Set"
  ) throws {
    let result = try desktop.harness.run(
      "gdbus",
      [
        "call", "--session", "-d", "org.mpris.MediaPlayer2.testplayer", "-o",
        "/org/mpris/MediaPlayer2", "-m", method, "org.mpris.MediaPlayer2.Player",
        "PlaybackStatus", "<'\(status)'>",
      ])
    guard result.status == 0 else { throw HarnessError("\(method) PlaybackStatus: \(result)") }
  }

  @Test func aPlayingVideoKeepsFocusRunningUntilItStops() throws {
    let desktop = try Desktop("[plugin.x11]\nidle-pause = 1s\n")
    let player = try startPlayer(desktop, status: "Playing")
    defer { player.kill() }
    try desktop.start()
    try desktop.display.xdotool("mousemove", "10", "10")
    #expect(try desktop.harness.grow("start").status == 0)
    _ = try desktop.waitFor("user-idle")
    let idleSeen = Date()
    // Three thresholds: the check ran and was repeated at least once.
    Thread.sleep(forTimeInterval: 3)
    #expect(desktop.events("away-paused").isEmpty)
    #expect(try desktop.harness.status()["paused"] as? Bool == false)
    let log = desktop.harness.daemonLog
    let why = "idle for 1s but org.mpris.MediaPlayer2.testplayer is playing: not pausing"
    #expect(log.components(separatedBy: why).count == 2, "logged once: \(log)")

    let idleBeforeTheStop = Date().timeIntervalSince(idleSeen)
    try setPlaybackStatus(desktop, "Paused")
    // The next check pauses (a generous deadline: how soon is `make bench`'s x11 section).
    let awayPaused = try desktop.waitFor("away-paused", timeout: 30)
    // Away counts from the last check, not from the start of the film: less than the idle
    // time before the film stopped, which the start of the film would count and more.
    let away = try #require(awayPaused["away_seconds"] as? Double)
    #expect(away >= 1 && away < idleBeforeTheStop, "away \(away)s, film \(idleBeforeTheStop)s")
    _ = try desktop.harness.waitForStatus { $0["paused"] as? Bool == true }
    try desktop.display.xdotool("mousemove", "200", "200")
    _ = try desktop.waitFor("away-resumed")
  }

  @Test func withoutRespectingInhibitorsAPlayingVideoStillPauses() throws {
    let desktop = try Desktop("[plugin.x11]\nidle-pause = 1s\nidle-respects-inhibitors = false\n")
    let player = try startPlayer(desktop, status: "Playing")
    defer { player.kill() }
    try desktop.start()
    try desktop.display.xdotool("mousemove", "10", "10")
    #expect(try desktop.harness.grow("start").status == 0)
    _ = try desktop.waitFor("away-paused")
    _ = try desktop.harness.waitForStatus { $0["paused"] as? Bool == true }
    #expect(!desktop.harness.daemonLog.contains("not pausing"))
  }

  @Test(.enabled(if: NotificationServers.haveDisplay, "dunst needs an X display"))
  func theNotifyPluginNudgesOnADistractionAndWelcomesBackAfterAway() throws {
    // Without dnd: a paused dunst would hold the notifications back until focus ends.
    let desktop = try Desktop(
      Self.distracting + "\nidle-pause = 2s\n\n[plugins]\nenable = x11, notify, events\n")
    let dunst = try NotificationServers.dunst(desktop.harness)
    defer { dunst.kill() }
    let editor = try desktop.display.openWindow(class: "Editor", title: "notes.md")
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.display.activate(editor)
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    // Input now, so the 1s grace runs out well before the 2s idle pause.
    try desktop.display.xdotool("mousemove", "100", "100")
    try desktop.display.activate(game)
    _ = try desktop.waitFor("distraction-started")
    try desktop.display.activate(editor)
    _ = try desktop.waitFor("away-paused")
    try desktop.display.xdotool("mousemove", "300", "300")
    _ = try desktop.waitFor("away-resumed")
    let bodies = try desktop.harness.dunstHistory().map {
      ($0["summary"] ?? "") + ": " + ($0["body"] ?? "")
    }
    #expect(bodies.contains("Distraction: Game took your attention during focus on 'work'."))
    #expect(bodies.contains { $0.hasPrefix("Welcome back: You were away ") })
  }

  @Test func strictModeMinimisesTheWindowUnderOpenbox() throws {
    let desktop = try Desktop(Self.distracting + "\n[card.work]\nblock = minimize\n")
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    try desktop.display.activate(game)
    _ = try desktop.waitFor("distraction-started")
    let minimised = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      try desktop.display.xprop("-id", game, "WM_STATE").contains("Iconic")
    }
    #expect(minimised == true)
    #expect(try desktop.display.xprop("-id", game, "_NET_WM_STATE").contains("HIDDEN"))
  }

  /// `block = close` under openbox: `_NET_CLOSE_WINDOW`, which openbox passes on as
  /// WM_DELETE_WINDOW; xterm takes it and exits: the window is gone.
  @Test func blockCloseClosesTheWindowUnderOpenbox() throws {
    let desktop = try Desktop(Self.distracting + "\n[card.work]\nblock = close\n")
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    try desktop.display.activate(game)
    _ = try desktop.waitFor("distraction-started")
    let gone = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      !desktop.display.windowExists(game)
    }
    #expect(gone == true, "\(desktop.harness.daemonLog)")
  }

  /// i3 ignores iconify requests, so under i3 the plugin finds i3's IPC socket through the
  /// root window (`I3_SOCKET_PATH`; the daemon is given no I3SOCK here) and says so.
  @Test func underI3ThePluginSaysItMinimisesThroughTheIPC() throws {
    let desktop = try Desktop(Self.distracting, windowManager: .i3)
    try desktop.start()
    let human = try desktop.harness.grow("plugins")
    #expect(
      human.stdout.contains(
        "    note: i3 publishes _NET_ACTIVE_WINDOW; XSync idle alarms; XScreenSaver; "
          + "block = minimize moves windows to i3's scratchpad (IPC)"), "\(human.stdout)")
  }

  /// `block = minimize` under i3: the window goes to i3's scratchpad (out of sight, as
  /// `i3-msg -t get_tree` shows), where iconify did nothing before.
  @Test func blockMinimizeMovesTheWindowToI3sScratchpad() throws {
    let desktop = try Desktop(
      Self.distracting + "\n[card.work]\nblock = minimize\n", windowManager: .i3)
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    try desktop.display.activate(game)
    _ = try desktop.waitFor("distraction-started")
    let hidden = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      try desktop.display.isInI3Scratchpad(game)
    }
    #expect(
      hidden == true, "\((try? desktop.display.i3Tree()) ?? [:])\n\(desktop.harness.daemonLog)")
    #expect(desktop.harness.daemonLog.contains("minimised Game (block = minimize)"))
  }

  /// `block = close` under i3: `[id=…] kill` over the IPC; xterm takes WM_DELETE_WINDOW and
  /// exits.
  @Test func blockCloseClosesTheWindowUnderI3() throws {
    let desktop = try Desktop(
      Self.distracting + "\n[card.work]\nblock = close\n", windowManager: .i3)
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    try desktop.display.activate(game)
    _ = try desktop.waitFor("distraction-started")
    let gone = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      !desktop.display.windowExists(game)
    }
    #expect(gone == true, "\(desktop.harness.daemonLog)")
    #expect(desktop.harness.daemonLog.contains("closed Game (block = close)"))
  }

  /// dwm takes no `_NET_CLOSE_WINDOW`: `block = close` asks the window's program itself with
  /// WM_DELETE_WINDOW, as a window manager's close button does, and xterm exits.
  @Test func blockCloseClosesTheWindowUnderDwmWithoutEWMHClose() throws {
    let desktop = try Desktop(
      Self.distracting + "\n[card.work]\nblock = close\n", windowManager: .dwm)
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    _ = try desktop.waitFor("distraction-started")
    let gone = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      !desktop.display.windowExists(game)
    }
    #expect(gone == true, "\(desktop.harness.daemonLog)")
    #expect(desktop.harness.daemonLog.contains("asked Game to close (WM_DELETE_WINDOW"))
  }

  /// dwm has no minimised state and ignores iconify: the window stays in sight, and
  /// `grow plugins` and the log say that block = minimize only flags windows there.
  @Test func aWindowManagerThatIgnoresMinimiseIsNamedInGrowPlugins() throws {
    let desktop = try Desktop(
      Self.distracting + "\n[card.work]\nblock = minimize\n", windowManager: .dwm)
    // dwm focuses the window it maps; it activates nothing on request.
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    _ = try desktop.waitFor("distraction-started")
    let note = "dwm ignored the minimise request for Game: block = minimize only flags windows here"
    let noted = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      try desktop.harness.grow("plugins").stdout.contains(note)
    }
    #expect(noted == true, "\((try? desktop.harness.grow("plugins"))?.stdout ?? "")")
    #expect(desktop.harness.daemonLog.contains("dwm ignored the minimise request for Game"))
    #expect(desktop.display.windowExists(game))
    #expect(try !desktop.display.xprop("-id", game, "WM_STATE").contains("Iconic"))
  }

  @Test func thePluginSurvivesADestroyedWindowAndReconnectsWhenTheServerIsBack() throws {
    let desktop = try Desktop(Self.distracting, restartable: true)
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    let editor = try desktop.display.openWindow(class: "Editor", title: "notes.md")
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    let endsAt = try desktop.harness.status()["ends_at"] as? String
    try desktop.display.activate(game)
    // Destroy the active window while the plugin reads it.
    try desktop.display.xdotool("windowkill", game)
    try desktop.display.activate(editor)
    let seenEditor = desktop.harness.daemon?.waitUntil(timeout: 30) {
      desktop.events("active-window-changed").contains { $0["class"] as? String == "Editor" }
    }
    #expect(seenEditor == true)
    #expect(try desktop.harness.plugins()["x11"]?["state"] == "running")

    desktop.display.killServer()
    let gone = try desktop.harness.daemon?.waitUntil(timeout: 10) {
      try desktop.harness.plugins()["x11"]?["state"] == "unavailable"
    }
    #expect(gone == true)
    #expect(
      try desktop.harness.plugins()["x11"]?["error"]
        == "the X server on \(desktop.display.display) went away; "
        + "the monitor reconnects when it is back")
    #expect(try desktop.harness.grow("status").status == 0)
    #expect(desktop.harness.daemon?.isRunning == true)

    // A server on the same display again: the plugin finds it by itself and flags again.
    try desktop.display.restartServer()
    let back = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      try desktop.harness.plugins()["x11"]?["state"] == "running"
    }
    #expect(back == true)
    #expect(
      desktop.harness.daemonLog.contains(
        "grow[x11] info: the X server on \(desktop.display.display) is back; watching it again"))
    let flagged = desktop.events("distraction-started").count
    let newGame = try desktop.display.openWindow(class: "Game", title: "Level 4")
    try desktop.display.activate(newGame)
    #expect(
      desktop.harness.daemon?.waitUntil(timeout: 10) {
        desktop.events("distraction-started").count > flagged
      } == true)
    #expect(desktop.events("distraction-started").last?["title"] as? String == "Level 4")
    // What `grow plugins` says of the session follows the window manager that started later.
    #expect(
      try desktop.harness.plugins()["x11"]?["note"]
        == "Openbox publishes _NET_ACTIVE_WINDOW; XSync idle alarms; XScreenSaver")
    let status = try desktop.harness.status()
    #expect(status["state"] as? String == "focus")
    #expect(status["ends_at"] as? String == endsAt, "the timer kept its deadline")
  }

  // MARK: Trust under stress

  /// GetStatus over D-Bus, timed; throws when no answer comes within `timeout`.
  func timedGetStatus(_ client: RawBusClient) throws -> TimeInterval {
    let start = Date()
    let outcome = try client.call(
      path: "/org/grow/Grow1", interface: "org.grow.Grow1.Timer", member: "GetStatus",
      destination: "org.grow.Grow1")
    guard outcome == .returned else { throw HarnessError("GetStatus: \(outcome)") }
    return Date().timeIntervalSince(start)
  }

  func percentile(_ values: [TimeInterval], _ fraction: Double) -> TimeInterval {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .infinity }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
  }

  /// The daemon's CPU time so far (user and system), from /proc/PID/stat.
  func cpuSeconds(_ desktop: Desktop) throws -> Double {
    let pid = try #require(desktop.harness.daemon?.pid)
    let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...]
      .split(separator: " ")
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    return (Double(fields[11]) ?? 0) / ticks + (Double(fields[12]) ?? 0) / ticks
  }

  /// Waits until the plugin published the active window with `title`.
  func waitForTitle(_ desktop: Desktop, _ title: String, timeout: TimeInterval = 30) -> Bool {
    desktop.harness.daemon?.waitUntil(timeout: timeout) {
      desktop.events("active-window-changed").last?["title"] as? String == title
    } == true
  }

  /// A client retitles the active window as fast as the server takes it for 12 s (the report:
  /// GetStatus answered after 46 s, 33 → 215 MB; later 40-50 % of a core spent on the title
  /// events). The daemon answers all along, its memory stays flat, it spends a small part of
  /// a core on the flood, and the last title is the one it ends up with.
  @Test func aTitleFloodNeitherStallsNorSwellsTheDaemon() throws {
    let desktop = try Desktop(Self.distracting)
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.display.activate(game)
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    #expect(waitForTitle(desktop, "Level 3"))
    let client = try RawBusClient(address: desktop.harness.bus.address, timeout: 10)
    let before = try desktop.harness.daemonMemoryMiB()

    let flood = try TitleFlood(display: desktop.display.display, window: game)
    var latencies: [TimeInterval] = []
    let start = Date()
    let cpuBefore = try cpuSeconds(desktop)
    while Date().timeIntervalSince(start) < 12 {
      latencies.append(try timedGetStatus(client))
      Thread.sleep(forTimeInterval: 0.05)
    }
    // CPU time over wall time: a busy machine can only make this smaller.
    let cpuShare = (try cpuSeconds(desktop) - cpuBefore) / Date().timeIntervalSince(start)
    let during = try desktop.harness.daemonMemoryMiB()
    #expect(flood.stop())
    let titles = flood.count
    print(
      "title flood: \(titles) titles in 12 s; GetStatus p50 \(percentile(latencies, 0.5) * 1000) ms, "
        + "p99 \(percentile(latencies, 0.99) * 1000) ms, max \((latencies.max() ?? 0) * 1000) ms "
        + "(\(latencies.count) calls); RSS \(before) → \(during) MiB; "
        + "\(Int(cpuShare * 100)) % of a core")
    let seen = desktop.events("active-window-changed").filter {
      ($0["title"] as? String ?? "").hasPrefix("flood ")
    }.count
    print("title flood: the plugin published \(seen) of the titles")
    // How many titles a loaded machine's flooder manages varies; thousands are a flood.
    #expect(titles > 2_000, "the flood did not flood")
    // Every GetStatus was answered within the client's 10 s (an unanswered one throws): the
    // old daemon answered after 46 s. How fast is the figure printed above and `make bench`'s
    // x11 section, not a bound.
    #expect(during - before < 25, "RSS \(before) → \(during) MiB")
    #expect(cpuShare < 0.2, "the daemon spent \(Int(cpuShare * 100)) % of a core on the flood")
    // Coalesced, not dropped: the last title is seen.
    #expect(waitForTitle(desktop, "flood \(titles - 1)"))
    #expect(try desktop.harness.plugins()["x11"]?["state"] == "running")
  }

  /// The X server stops (SIGSTOP) while a title changes: the daemon goes on answering, `grow
  /// plugins` says the X server is not answering, and once the server continues the
  /// plugin is back by itself and follows the window again.
  @Test func aStoppedXServerLeavesTheDaemonAnsweringAndThePluginRecovers() throws {
    let desktop = try Desktop(Self.distracting)
    let game = try desktop.display.openWindow(class: "Game", title: "Level 3")
    try desktop.display.activate(game)
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)
    let endsAt = try desktop.harness.status()["ends_at"] as? String
    let client = try RawBusClient(address: desktop.harness.bus.address, timeout: 10)
    let flood = try TitleFlood(display: desktop.display.display, window: game)
    Thread.sleep(forTimeInterval: 0.5)

    desktop.display.stopServer()
    let stopped = Date()
    var latencies: [TimeInterval] = []
    var unavailableAfter: TimeInterval?
    var error = ""
    while unavailableAfter == nil, Date().timeIntervalSince(stopped) < 30 {
      latencies.append(try timedGetStatus(client))
      let x11 = try desktop.harness.plugins()["x11"]
      if x11?["state"] == "unavailable" {
        unavailableAfter = Date().timeIntervalSince(stopped)
        error = x11?["error"] ?? ""
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
    // Still stopped: the timer and the bus go on.
    Thread.sleep(forTimeInterval: 1)
    latencies.append(try timedGetStatus(client))
    let status = try desktop.harness.status()
    #expect(status["state"] as? String == "focus")
    #expect(status["ends_at"] as? String == endsAt)

    desktop.display.continueServer()
    let continued = Date()
    let back = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      try desktop.harness.plugins()["x11"]?["state"] == "running"
    }
    let recovery = Date().timeIntervalSince(continued)
    #expect(flood.stop())
    print(
      "stopped X server: unavailable after \(unavailableAfter ?? -1) s, back \(recovery) s after "
        + "SIGCONT; GetStatus max \((latencies.max() ?? 0) * 1000) ms while stopped")
    // Events with generous deadlines, not speeds (the figures printed above): `grow plugins`
    // says so within 30 s, and every GetStatus was answered within the client's 10 s (an
    // unanswered one throws).
    #expect(unavailableAfter != nil, "still not unavailable after 30 s")
    #expect(error.hasPrefix("X server not answering"), "\(error)")
    #expect(back == true)
    #expect(waitForTitle(desktop, "flood \(flood.count - 1)"))
  }

  // MARK: Hostile title patterns

  /// `GetStatus` over D-Bus with gdbus, timed; gdbus gives up after 20 s (status non-zero): a
  /// freeze fails, a slow machine does not.
  static func timedGetStatus(_ desktop: Desktop) throws -> (status: Int32, seconds: Double) {
    let started = Date()
    let call = try desktop.harness.run(
      "gdbus",
      [
        "call", "--session", "--timeout", "20", "--dest", "org.grow.Grow1", "--object-path",
        "/org/grow/Grow1", "--method", "org.grow.Grow1.Timer.GetStatus",
      ], timeout: 60)
    return (call.status, Date().timeIntervalSince(started))
  }

  /// `(a+)+$` and an xterm titled 24 a's and a '!' held the daemon at 100 % CPU with no D-Bus
  /// answer for over 4 minutes. Now the daemon answers at once, the window is rightly not a
  /// distraction (its title does not end in a's), and one whose title does is flagged: the
  /// pattern was matched, not switched off.
  @Test func aBacktrackingTitlePatternNeitherHoldsTheDaemonNorIsSwitchedOff() throws {
    let desktop = try Desktop("[timer]\ndistractions = xterm:/(a+)+$/\n\n[plugin.x11]\ngrace = 1s")
    let editor = try desktop.display.openWindow(class: "Editor", title: "notes.md")
    let hostile = try desktop.display.openWindow(
      class: "Hostile", title: String(repeating: "a", count: 24) + "!")
    let matching = try desktop.display.openWindow(
      class: "Matching", title: String(repeating: "a", count: 24))
    try desktop.display.activate(editor)
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)

    try desktop.display.activate(hostile)
    let seen = try desktop.harness.daemon?.waitUntil(timeout: 10) {
      desktop.events("active-window-changed").contains { $0["class"] as? String == "Hostile" }
    }
    #expect(seen == true)
    let answer = try Self.timedGetStatus(desktop)
    #expect(answer.status == 0, "GetStatus unanswered for 20 s")
    print("GetStatus with the hostile title active: \(answer.seconds) s")
    Thread.sleep(forTimeInterval: 1.5)
    #expect(desktop.events("distraction-started").isEmpty, "24 a's and '!' do not end in a's")

    try desktop.display.activate(matching)
    let started = try desktop.waitFor("distraction-started")
    #expect(started["app"] as? String == "Matching")
    #expect(!desktop.harness.daemonLog.contains("switched off"))
    #expect(try desktop.harness.plugins()["x11"]?["note"]?.contains("is off") == false)
  }

  /// The second line of defence: a pattern that needs more than its budget on a title (here
  /// hundreds of states alive at once on a 512-character title) is switched off, and the log
  /// and `grow plugins` say so with file, line and pattern; the daemon stays responsive.
  @Test func aPatternOverItsBudgetIsSwitchedOffAndNamedWithFileAndLine() throws {
    let pattern = "xterm:/([a-z]|[0-9]){1,600}!/"
    let desktop = try Desktop("[timer]\ndistractions = \(pattern)\n")
    let editor = try desktop.display.openWindow(class: "Editor", title: "notes.md")
    let heavy = try desktop.display.openWindow(
      class: "Heavy", title: String(repeating: "a", count: 512))
    try desktop.display.activate(editor)
    try desktop.start()
    #expect(try desktop.harness.grow("start").status == 0)

    try desktop.display.activate(heavy)
    let path = desktop.harness.configPath
    let logged = desktop.harness.daemon?.waitUntil(timeout: 10) {
      desktop.harness.daemonLog.contains(
        "\(path):2: distractions pattern \(pattern) is switched off: it ")
    }
    #expect(logged == true, "\(desktop.harness.daemonLog)")
    #expect(
      try desktop.harness.plugins()["x11"]?["note"]?.hasSuffix(
        "; \(path):2: distractions pattern \(pattern) is off") == true)
    let answer = try Self.timedGetStatus(desktop)
    #expect(answer.status == 0, "GetStatus unanswered for 20 s")
    print("GetStatus after the pattern was switched off: \(answer.seconds) s")
  }
}
