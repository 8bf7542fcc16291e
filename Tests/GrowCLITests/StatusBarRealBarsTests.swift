import Foundation
import GrowTestSupport
import Testing

/// The real i3blocks and polybar running `grow status --follow`, against a real daemon.
///
/// i3blocks needs no X server: it writes the i3bar protocol to its stdout, so the test runs it
/// as a child and reads what it would hand to i3bar. polybar needs X (`make test` provides
/// Xvfb) and has no way to report its text; the test checks instead that it started the
/// follower, redrew on each change, and ran the click commands our action tags carry.
@Suite(.serialized) struct StatusBarRealBarsTests {
  @Test(.enabled(if: installed("i3blocks")))
  func i3blocksPersistBlockShowsEveryChange() throws {
    let harness = try DaemonHarness()
    let config = harness.bus.directory.appendingPathComponent("i3blocks.conf")
    try """
    [grow]
    command=exec '\(Binaries.grow)' status --follow --format i3blocks --template '{icon} {state}'
    interval=persist

    """.write(to: config, atomically: true, encoding: .utf8)
    let i3blocks = try BackgroundProcess(
      "i3blocks", ["-c", config.path], environment: harness.environment)
    let fullText = { () -> [String] in
      lines(i3blocks).compactMap { line in
        line.range(of: #""full_text":"[^"]+","name":"grow""#, options: .regularExpression)
          .map { String(line[$0].dropFirst(13).dropLast(15)) }
      }
    }
    #expect(i3blocks.waitUntil(timeout: 5) { fullText().last == "○ idle" })
    #expect(try harness.grow("start").status == 0)
    #expect(i3blocks.waitUntil(timeout: 5) { fullText().last == "● focus" })
    #expect(try harness.grow("pause").status == 0)
    #expect(i3blocks.waitUntil(timeout: 5) { fullText().last == "‖ paused" })
    #expect(try harness.grow("stop").status == 0)
    #expect(i3blocks.waitUntil(timeout: 5) { fullText().last == "○ idle" })
    #expect(fullText() == ["○ idle", "● focus", "‖ paused", "○ idle"])
    #expect(lines(i3blocks).first == #"{"version":1,"click_events":true}"#)
    // i3blocks 1.4 reports "pipe closed" for a line split over two writes or an empty line.
    #expect(!i3blocks.stderr.contains("ERROR"), "\(i3blocks.stderr)")
  }

  @Test(.enabled(if: installed("i3blocks")))
  func i3blocksIntervalBlockPassesClicksAsBlockButton() throws {
    let harness = try DaemonHarness()
    let config = harness.bus.directory.appendingPathComponent("i3blocks.conf")
    try """
    [grow]
    command=exec '\(Binaries.grow)' status --format i3blocks --template '{state}'
    interval=60

    """.write(to: config, atomically: true, encoding: .utf8)
    let i3blocks = try BackgroundProcess(
      "i3blocks", ["-c", config.path], environment: harness.environment, writableStdin: true)
    #expect(i3blocks.waitUntil(timeout: 5) { i3blocks.stdout.contains(#""full_text":"idle""#) })
    i3blocks.writeToStdin("[\n" + #"{"name":"grow","button":1,"x":5,"y":5,"modifiers":[]}"# + "\n")
    #expect(i3blocks.waitUntil(timeout: 5) { i3blocks.stdout.contains(#""full_text":"focus""#) })
    #expect(try harness.status()["state"] as? String == "focus")
    #expect(i3blocks.stdout.contains(##""color":"#ff6e6e""##))
  }

  @Test(.enabled(if: installed("polybar") && hasDisplay()))
  func polybarRunsTheFollowerAndItsClickTagsDriveTheTimer() throws {
    let harness = try DaemonHarness()
    let config = harness.bus.directory.appendingPathComponent("polybar.ini")
    try """
    [bar/grow]
    width = 300
    height = 24
    offset-x = 0
    offset-y = 0
    override-redirect = true
    font-0 = fixed:size=10
    modules-left = grow

    [module/grow]
    type = custom/script
    exec = exec '\(Binaries.grow)' status --follow --format polybar --template '{state} {state}'
    tail = true

    """.write(to: config, atomically: true, encoding: .utf8)
    let polybar = try BackgroundProcess(
      "polybar", ["-c", config.path, "-l", "info", "grow"], environment: harness.environment)
    let redraws = { polybar.stderr.components(separatedBy: "module/grow: Rebuilding cache").count }
    #expect(polybar.waitUntil(timeout: 10) { redraws() >= 2 }, "\(polybar.stderr)")
    #expect(polybar.stderr.contains("status --follow --format polybar"))
    let before = redraws()
    #expect(try harness.grow("start").status == 0)
    #expect(polybar.waitUntil(timeout: 5) { redraws() > before }, "\(polybar.stderr)")

    // A real click on the module: polybar runs the command of our %{A1:…:} tag.
    let window =
      try harness.run("xdotool", ["search", "--sync", "--class", "polybar"])
      .stdout.split(separator: "\n").first.map(String.init) ?? ""
    #expect(!window.isEmpty)
    try harness.run("xdotool", ["mousemove", "--window", window, "8", "12", "click", "1"])
    #expect(
      try harness.waitForStatus { $0["paused"] as? Bool == true }["state"] as? String == "focus")
    try harness.run("xdotool", ["mousemove", "--window", window, "8", "12", "click", "3"])
    #expect(try harness.waitForStatus { $0["state"] as? String == "short-break" }.isEmpty == false)
    #expect(polybar.stderr.contains("toggle"), "\(polybar.stderr)")
  }
}

func installed(_ program: String) -> Bool {
  (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") }
}

func hasDisplay() -> Bool { !(ProcessInfo.processInfo.environment["DISPLAY"] ?? "").isEmpty }
