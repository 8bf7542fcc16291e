import Foundation
import GrowTestSupport
import Testing

/// The break screen on a real X server: Xvfb with two monitors side by side (RandR, as
/// `xrandr --setmonitor` makes them), openbox, the daemon on a private bus. What shows is read
/// back from screenshots; what the buttons and keys did, from the daemon's status and history.
@Suite struct BreakScreenDesktopTests {
  /// The screen's colours (BreakScreenFrame): background, the clock's white, the buttons (read
  /// with a small tolerance: the edges of lighter text pass within 12 of the buttons' blue).
  static let background = "#1c2b38"
  static let clock = "#f5f7f9"
  static let button = "#334f68"

  final class Desk {
    let display: PrivateDisplay
    let harness: DaemonHarness

    init(
      _ settings: String = "", windowManager: PrivateDisplay.WindowManager = .openbox
    ) throws {
      display = try PrivateDisplay(windowManager: windowManager, screenSize: "2048x768")
      try display.setMonitors(["1024x768+0+0", "1024x768+1024+0"])
      harness = try DaemonHarness(startDaemon: false, environment: display.environment)
      try harness.writeConfig(
        """
        [timer]
        focus = 1s
        short-break = 10m
        break-screen = all

        [plugins]
        enable = breakscreen

        [plugin.breakscreen]
        postpone-length = 10s
        \(settings)
        """)
      try harness.start()
      let running = try harness.daemon?.waitUntil(timeout: 30) {
        try harness.plugins()["breakscreen"]?["state"] == "running"
      }
      guard running == true else {
        throw HarnessError("breakscreen not running: \(try harness.plugins())")
      }
    }

    /// The break screen's windows (WM_CLASS Grow) on the display now.
    func covers() -> [String] {
      let found = try? Command.run(
        "xdotool", ["search", "--class", "^Grow$"], environment: display.environment, timeout: 10)
      return (found?.stdout ?? "").split(separator: "\n").map(String.init)
    }

    func waitForCovers(_ count: Int, timeout: TimeInterval = 30) throws {
      let deadline = Date().addingTimeInterval(timeout)
      while covers().count != count {
        guard Date() < deadline else {
          throw HarnessError(
            "\(covers().count) break windows, not \(count); daemon log:\n"
              + (harness.daemon?.stderr ?? ""))
        }
        Thread.sleep(forTimeInterval: 0.05)
      }
    }

    /// Monitor `index` (0 left, 1 right) as the screen shows it.
    func shot(_ index: Int, png: String? = nil) throws -> Screenshot {
      try display.screenshot(x: index * 1024, y: 0, width: 1024, height: 768, savingPNGTo: png)
    }

    /// Starts focus; its one second runs out and the break begins with its screen.
    func startBreak() throws {
      #expect(try harness.grow("start").status == 0)
      _ = try harness.waitForStatus { $0["state"] as? String == "short-break" }
      try waitForCovers(2)
      // Shown once both grabs are held, a moment after the windows are there.
      let shared = "break screen shown on 2 monitor(s), frames in memory shared with"
      #expect(
        harness.daemon?.waitUntil(timeout: 30) {
          harness.daemon?.stderr.contains(shared) == true
        } == true)
    }

    func key(_ name: String) throws { try display.xdotool("key", name) }

    /// The recorded phases, oldest first, as "KIND OUTCOME".
    func outcomes() throws -> [String] {
      try phases().map { "\($0["kind"] ?? "?") \($0["outcome"] ?? "?")" }
    }

    func phases() throws -> [[String: Any]] {
      try harness.waitForHistory()
      let history = try harness.grow("history", "--json")
      return try JSONSerialization.jsonObject(with: Data(history.stdout.utf8))
        as? [[String: Any]] ?? []
    }
  }

  @Test func everyMonitorShowsTheTimeAndTheButtonsAndTheKeysWork() throws {
    let desk = try Desk()
    try desk.startBreak()
    // Each monitor is covered: the background nearly everywhere, a large clock, two buttons.
    let png = ProcessInfo.processInfo.environment["GROW_BREAK_SCREENSHOT"]
    for index in 0..<2 {
      let shot = try desk.shot(index, png: index == 0 ? png : nil)
      #expect(shot.count(of: Self.background) > 1024 * 768 * 3 / 4, "monitor \(index) covered")
      #expect(shot.count(of: Self.clock) > 5000, "monitor \(index) shows the clock")
      let buttons = try #require(
        shot.bounds(of: Self.button, tolerance: 4), "monitor \(index): no buttons")
      #expect(buttons.width > 200 && buttons.y > 768 / 2, "two buttons below the clock")
    }
    // The time goes down: the clock's pixels change from one second to the next.
    let before = try desk.display.screenshot(x: 0, y: 100, width: 1024, height: 250)
    #expect(
      try desk.harness.daemon?.waitUntil(timeout: 10) {
        try desk.display.screenshot(x: 0, y: 100, width: 1024, height: 250) != before
      } == true)

    // Tab, Tab, Enter: Postpone. The screen goes and the break is ten seconds longer.
    try desk.key("Tab")
    try desk.key("Tab")
    try desk.key("Return")
    try desk.waitForCovers(0)
    let postponed = try desk.harness.waitForStatus { ($0["duration"] as? Double ?? 0) > 600 }
    #expect(postponed["duration"] as? Double == 610)
    #expect(postponed["state"] as? String == "short-break")
    // It comes back by itself when the postpone is over; Escape skips the break.
    try desk.waitForCovers(2)
    try desk.key("Escape")
    try desk.waitForCovers(0)
    _ = try desk.harness.waitForStatus { $0["state"] as? String != "short-break" }
    #expect(try desk.outcomes() == ["focus completed", "short-break skipped"])
    // The postpone is in the history too: the break was planned 10 s longer.
    #expect(try desk.phases().last?["planned_seconds"] as? Double == 610)
    // Nothing left on either monitor.
    for index in 0..<2 {
      #expect(try desk.shot(index).count(of: Self.clock) == 0, "monitor \(index) is clear")
    }
  }

  @Test(arguments: [PrivateDisplay.WindowManager.openbox, .i3])
  func skipClickedOnTheSecondMonitorEndsTheBreakAsSkipped(
    _ windowManager: PrivateDisplay.WindowManager
  ) throws {
    let desk = try Desk(windowManager: windowManager)
    try desk.startBreak()
    let right = try desk.shot(1)
    // Skip is the left of the two buttons.
    let buttons = try #require(right.bounds(of: Self.button, tolerance: 4))
    let skip = try #require(
      right.bounds(of: Self.button, columns: buttons.x..<(buttons.x + 40), tolerance: 4))
    try desk.display.xdotool(
      "mousemove", String(1024 + skip.x + 20), String(skip.y + skip.height / 2), "click", "1")
    try desk.waitForCovers(0)
    _ = try desk.harness.waitForStatus { $0["state"] as? String != "short-break" }
    #expect(try desk.outcomes() == ["focus completed", "short-break skipped"])
  }

  @Test func aFullscreenWindowPostponesTheScreen() throws {
    let desk = try Desk()
    let xterm = try BackgroundProcess(
      "xterm", ["-fullscreen", "-class", "Talk", "-e", "sleep", "600"],
      environment: desk.display.environment)
    defer { _ = xterm.kill() }
    let window = try desk.display.xdotool("search", "--sync", "--limit", "1", "--class", "Talk")
    try desk.display.activate(window.trimmingCharacters(in: .whitespacesAndNewlines))
    #expect(
      try desk.harness.daemon?.waitUntil(timeout: 10) {
        (try? desk.display.xprop(
          "-id", window.trimmingCharacters(in: .whitespacesAndNewlines), "_NET_WM_STATE"))?
          .contains("_NET_WM_STATE_FULLSCREEN") == true
      } == true)
    #expect(try desk.harness.grow("start").status == 0)
    let postponed = try desk.harness.waitForStatus { ($0["duration"] as? Double ?? 0) > 600 }
    #expect(postponed["state"] as? String == "short-break")
    #expect(desk.covers().isEmpty, "nothing covers the talk")
    // The talk ends: the screen comes when the postpone is over.
    _ = xterm.kill()
    try desk.waitForCovers(2)
  }

  @Test func aPlayingMediaPlayerPostponesTheScreen() throws {
    let desk = try Desk()
    // An MPRIS player on the daemon's bus, as a browser playing a film shows itself.
    let player = try BackgroundProcess(
      "/usr/bin/python3",
      [
        "-m", "dbusmock", "--session", "org.mpris.MediaPlayer2.film", "/org/mpris/MediaPlayer2",
        "org.mpris.MediaPlayer2.Player",
      ], environment: desk.harness.environment)
    defer { _ = player.kill() }
    let owned = try player.waitUntil(timeout: 30) {
      try desk.harness.run(
        "gdbus",
        [
          "call", "--session", "-d", "org.mpris.MediaPlayer2.film", "-o",
          "/org/mpris/MediaPlayer2", "-m", "org.freedesktop.DBus.Mock.AddProperty",
          "org.mpris.MediaPlayer2.Player", "PlaybackStatus", "<'Playing'>",
        ]
      ).status == 0
    }
    #expect(owned, "the stand-in player did not come up: \(player.stderr)")
    #expect(try desk.harness.grow("start").status == 0)
    let postponed = try desk.harness.waitForStatus { ($0["duration"] as? Double ?? 0) > 600 }
    #expect(postponed["state"] as? String == "short-break")
    #expect(desk.covers().isEmpty, "nothing covers the film")
    #expect(desk.harness.daemon?.stderr.contains("a media player is playing") == true)
    // The film ends (the player goes): the screen comes when the postpone is over.
    _ = player.kill()
    try desk.waitForCovers(2)
  }

  @Test func aMonitorThatGoesTakesItsCoverWithIt() throws {
    let desk = try Desk()
    try desk.startBreak()
    try desk.display.xrandr("--delmonitor", "grow-1")
    try desk.waitForCovers(1)
    #expect(try desk.shot(0).count(of: Self.clock) > 5000, "the left monitor is still covered")
    #expect(try desk.shot(1).count(of: Self.clock) == 0, "nothing where the right one was")
    try desk.key("Escape")
    try desk.waitForCovers(0)
  }

  /// A hung X server (SIGSTOP) reads nothing: a redraw must not be megabytes of pixels the
  /// daemon would block writing, so the clock's frames go through shared memory.
  @Test func aStoppedXServerLeavesTheDaemonAnswering() throws {
    let desk = try Desk()
    try desk.startBreak()
    desk.display.stopServer()
    defer { desk.display.continueServer() }
    // Five seconds of redraws the server does not read; the daemon answers all along.
    for _ in 0..<10 {
      Thread.sleep(forTimeInterval: 0.5)
      let status = try desk.harness.run(
        "busctl",
        [
          "--user", "--timeout=3", "call", "org.grow.Grow1", "/org/grow/Grow1",
          "org.grow.Grow1.Timer", "GetStatus",
        ])
      #expect(status.status == 0, "the daemon did not answer: \(status.stderr)")
    }
    desk.display.continueServer()
    try desk.key("Escape")
    try desk.waitForCovers(0)
    _ = try desk.harness.waitForStatus { $0["state"] as? String != "short-break" }
  }

  @Test func aKilledXServerLeavesTheDaemonAnswering() throws {
    let desk = try Desk()
    try desk.startBreak()
    desk.display.killServer()
    #expect(
      try desk.harness.daemon?.waitUntil(timeout: 30) {
        try desk.harness.plugins()["breakscreen"]?["state"] == "unavailable"
      } == true)
    let status = try desk.harness.status()
    #expect(status["state"] as? String == "short-break", "the break goes on")
    #expect(try desk.harness.grow("skip").status == 0)
  }
}
