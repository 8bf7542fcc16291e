import Foundation
import GrowTestSupport
import Testing

/// The break screen on a real Wayland compositor: headless sway 1.7 with two outputs side by
/// side (the session's HEADLESS-1 and one made with `swaymsg create_output`), the daemon on
/// the session's bus. What shows is read back with grim; keys are typed with wtype and clicks
/// made with the virtual pointer; what they did is read from the daemon's status and history.
/// Set GROW_BREAK_SCREENSHOT=PATH to keep the first output's screen as a PNG.
@Suite(.serialized, .waylandSession)
struct BreakScreenSwayTests {
  static let background = BreakScreenDesktopTests.background
  static let clock = BreakScreenDesktopTests.clock
  static let button = BreakScreenDesktopTests.button
  static let width = 1024
  static let height = 600

  final class Desk {
    let session: WaylandSession
    let harness: DaemonHarness

    init() throws {
      session = try WaylandSession.required()
      try Self.secondOutput(session)
      harness = try DaemonHarness(startDaemon: false, environment: session.environment)
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
        """)
      try harness.start()
      let running = try harness.daemon?.waitUntil(timeout: 30) {
        try harness.plugins()["breakscreen"]?["state"] == "running"
      }
      guard running == true else {
        throw HarnessError("breakscreen not running: \(try harness.plugins())")
      }
    }

    /// HEADLESS-2 right of HEADLESS-1, the same size; made once per session.
    static func secondOutput(_ session: WaylandSession) throws {
      let outputs = try session.swaymsg("-r", "-t", "get_outputs")
      if !outputs.contains("HEADLESS-2") { try session.swaymsg("create_output") }
      // Both placed: sway lays a new output out where there is room, not necessarily here.
      try session.swaymsg("output HEADLESS-1 position 0 0")
      try session.swaymsg(
        "output HEADLESS-2 resolution \(width)x\(height) position \(width) 0 "
          + "bg #335577 solid_color")
      let layout = try session.swaymsg("-r", "-t", "get_outputs")
      guard layout.contains("\"x\": \(width)") else {
        throw HarnessError("HEADLESS-2 is not right of HEADLESS-1: \(layout)")
      }
    }

    /// Output `index` (0 left, 1 right) as the screen shows it.
    func shot(_ index: Int, png: String? = nil) throws -> Screenshot {
      try session.screenshot(
        x: index * BreakScreenSwayTests.width, y: 0, width: BreakScreenSwayTests.width,
        height: BreakScreenSwayTests.height, savingPNGTo: png)
    }

    func covered(_ index: Int) -> Bool {
      guard let shot = try? shot(index) else { return false }
      let pixels = BreakScreenSwayTests.width * BreakScreenSwayTests.height
      return shot.count(of: BreakScreenSwayTests.background) > pixels * 3 / 4
        && shot.count(of: BreakScreenSwayTests.clock) > 3000
    }

    /// Waits until both outputs are covered (or, `false`, neither is).
    func waitForCovered(_ wanted: Bool, timeout: TimeInterval = 30) throws {
      let deadline = Date().addingTimeInterval(timeout)
      while covered(0) != wanted || covered(1) != wanted {
        guard Date() < deadline else {
          // What the outputs showed, for a person to look at.
          let pngs = (0..<2).map {
            NSTemporaryDirectory() + "grow-break-sway-\(getpid())-\($0).png"
          }
          for (index, png) in pngs.enumerated() { _ = try? shot(index, png: png) }
          throw HarnessError(
            "outputs covered: \(covered(0)), \(covered(1)); wanted \(wanted) (screenshots: "
              + "\(pngs.joined(separator: ", "))); daemon log:\n" + (harness.daemon?.stderr ?? ""))
        }
        Thread.sleep(forTimeInterval: 0.1)
      }
    }

    /// Starts focus; its one second runs out and the break begins with its screen.
    func startBreak() throws {
      #expect(try harness.grow("start").status == 0)
      _ = try harness.waitForStatus { $0["state"] as? String == "short-break" }
      // Two outputs, or three after anOutputThatComesWhileItShowsIsCoveredToo.
      let shown = "monitor(s), frames in memory shared with the Wayland compositor"
      #expect(
        harness.daemon?.waitUntil(timeout: 30) {
          harness.daemon?.stderr.contains(shown) == true
        } == true, "\(harness.daemon?.stderr ?? "")")
      try waitForCovered(true)
    }

    /// Types `key` with wtype (a virtual keyboard of its own): it waits a moment first, as the
    /// screen takes the keyboard that appears on the seat when wtype starts.
    func key(_ key: String, shift: Bool = false) throws {
      let arguments =
        ["-s", "300"] + (shift ? ["-M", "shift", "-k", key, "-m", "shift"] : ["-k", key])
      let result = try Command.run("wtype", arguments, environment: session.environment)
      #expect(result.status == 0, "wtype: \(result)")
    }

    func outcomes() throws -> [String] {
      try harness.waitForHistory()
      let history = try harness.grow("history", "--json")
      let phases =
        try JSONSerialization.jsonObject(with: Data(history.stdout.utf8))
        as? [[String: Any]] ?? []
      return phases.map { "\($0["kind"] ?? "?") \($0["outcome"] ?? "?")" }
    }
  }

  @Test func bothOutputsShowTheTimeGoingDownAndTabEnterPostponesAndEscapeSkips() throws {
    let desk = try Desk()
    try desk.startBreak()
    let png = ProcessInfo.processInfo.environment["GROW_BREAK_SCREENSHOT"]
    for index in 0..<2 {
      let shot = try desk.shot(index, png: index == 0 ? png : nil)
      let buttons = try #require(
        shot.bounds(of: Self.button, tolerance: 4), "output \(index): no buttons")
      #expect(buttons.width > 200 && buttons.y > Self.height / 2, "two buttons below the clock")
    }
    // The time goes down: the clock's pixels change from one second to the next.
    let before = try desk.session.screenshot(x: 0, y: 80, width: Self.width, height: 200)
    #expect(
      try desk.harness.daemon?.waitUntil(timeout: 10) {
        try desk.session.screenshot(x: 0, y: 80, width: Self.width, height: 200) != before
      } == true)

    // Tab, Tab, Enter: Postpone. The screen goes and the break is ten seconds longer.
    try desk.key("Tab")
    try desk.key("Tab")
    try desk.key("Return")
    try desk.waitForCovered(false)
    let postponed = try desk.harness.waitForStatus { ($0["duration"] as? Double ?? 0) > 600 }
    #expect(postponed["duration"] as? Double == 610)
    // It comes back by itself; Escape skips the break, and nothing is left on either output.
    try desk.waitForCovered(true)
    try desk.key("Escape")
    try desk.waitForCovered(false)
    _ = try desk.harness.waitForStatus { $0["state"] as? String != "short-break" }
    #expect(try desk.outcomes() == ["focus completed", "short-break skipped"])
    for index in 0..<2 {
      #expect(try desk.shot(index).count(of: Self.clock) == 0, "output \(index) is clear")
    }
  }

  @Test func skipClickedOnTheSecondOutputEndsTheBreakAsSkipped() throws {
    let desk = try Desk()
    // The pointer is on the seat before the screen shows, as a mouse would be.
    let pointer = try VirtualPointer(
      desk.session, layoutWidth: 2 * Self.width, layoutHeight: Self.height)
    try desk.startBreak()
    let right = try desk.shot(1)
    // Skip is the left of the two buttons.
    let buttons = try #require(right.bounds(of: Self.button, tolerance: 4))
    let skip = try #require(
      right.bounds(of: Self.button, columns: buttons.x..<(buttons.x + 40), tolerance: 4))
    try pointer.move(x: Self.width + skip.x + 20, y: skip.y + skip.height / 2)
    try pointer.click()
    try desk.waitForCovered(false)
    _ = try desk.harness.waitForStatus { $0["state"] as? String != "short-break" }
    #expect(try desk.outcomes() == ["focus completed", "short-break skipped"])
  }

  /// A fullscreen window with the focus (a talk, a call) postpones the screen, read from
  /// wlroots' toplevel list; once it is gone the screen comes when the postpone is over.
  @Test func aFullscreenWindowPostponesTheScreen() throws {
    let desk = try Desk()
    let talk = try desk.session.openNativeWindow(appID: "grow-talk", title: "A talk")
    defer { _ = talk.kill() }
    try desk.session.swaymsg("[app_id=grow-talk] fullscreen enable")
    #expect(try desk.harness.grow("start").status == 0)
    let postponed = try desk.harness.waitForStatus { ($0["duration"] as? Double ?? 0) > 600 }
    #expect(postponed["state"] as? String == "short-break")
    #expect(desk.harness.daemon?.stderr.contains("a fullscreen window is active") == true)
    #expect(!desk.covered(0) && !desk.covered(1), "nothing covers the talk")
    _ = talk.kill()
    try desk.waitForCovered(true)
    try desk.key("Escape")
    try desk.waitForCovered(false)
  }

  /// An output that comes while the screen shows is covered too. (It stays for the suite's
  /// later tests: sway 1.7 keeps a headless output active through `output NAME disable`, so
  /// an output going is not tested here.)
  @Test func anOutputThatComesWhileItShowsIsCoveredToo() throws {
    let desk = try Desk()
    try desk.startBreak()
    try desk.session.swaymsg("create_output")
    let third = try #require(
      try desk.session.swaymsg("-r", "-t", "get_outputs").components(separatedBy: "\"name\": \"")
        .dropFirst().map { String($0.prefix { $0 != "\"" }) }
        .first { !["HEADLESS-1", "HEADLESS-2"].contains($0) })
    try desk.session.swaymsg(
      "output \(third) resolution \(Self.width)x\(Self.height) position \(2 * Self.width) 0")
    let thirdCovered = {
      (try? desk.session.screenshot(x: 2 * Self.width, y: 0, width: Self.width, height: Self.height))
        .map { $0.count(of: Self.clock) > 3000 } == true
    }
    #expect(desk.harness.daemon?.waitUntil(timeout: 30, thirdCovered) == true, "the new output")
    #expect(desk.covered(0) && desk.covered(1), "the others stay covered")
    try desk.key("Escape")
    try desk.waitForCovered(false)
    #expect(!thirdCovered(), "and it is clear after the break")
  }

  /// A compositor stopped with SIGSTOP reads nothing and answers nothing: the daemon goes on
  /// answering, says the compositor does not answer, and carries on once it runs again.
  @Test func aStoppedCompositorLeavesTheDaemonAnswering() throws {
    let desk = try Desk()
    try desk.startBreak()
    kill(desk.session.compositorPID, SIGSTOP)
    defer { kill(desk.session.compositorPID, SIGCONT) }
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
    #expect(
      try desk.harness.daemon?.waitUntil(timeout: 10) {
        try desk.harness.plugins()["breakscreen"]?["state"] == "unavailable"
      } == true, "the compositor's silence shows in grow plugins")
    kill(desk.session.compositorPID, SIGCONT)
    #expect(
      try desk.harness.daemon?.waitUntil(timeout: 10) {
        try desk.harness.plugins()["breakscreen"]?["state"] == "running"
      } == true)
    try desk.key("Escape")
    try desk.waitForCovered(false)
    _ = try desk.harness.waitForStatus { $0["state"] as? String != "short-break" }
  }
}
