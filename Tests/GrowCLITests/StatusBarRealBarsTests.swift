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
    #expect(i3blocks.waitUntil(timeout: 30) { fullText().last == "○ idle" })
    #expect(try harness.grow("start").status == 0)
    #expect(i3blocks.waitUntil(timeout: 30) { fullText().last == "● focus" })
    #expect(try harness.grow("pause").status == 0)
    #expect(i3blocks.waitUntil(timeout: 30) { fullText().last == "‖ paused" })
    #expect(try harness.grow("stop").status == 0)
    #expect(i3blocks.waitUntil(timeout: 30) { fullText().last == "○ idle" })
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
    #expect(i3blocks.waitUntil(timeout: 30) { i3blocks.stdout.contains(#""full_text":"idle""#) })
    i3blocks.writeToStdin("[\n" + #"{"name":"grow","button":1,"x":5,"y":5,"modifiers":[]}"# + "\n")
    #expect(i3blocks.waitUntil(timeout: 30) { i3blocks.stdout.contains(#""full_text":"focus""#) })
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
    #expect(polybar.waitUntil(timeout: 30) { redraws() > before }, "\(polybar.stderr)")

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

  // MARK: What a person sees, with only the fonts of a stock desktop

  /// i3bar, drawn on its own Xvfb with only fonts-dejavu-core: every state in its colour, and
  /// every character of every state's line in DejaVu Sans Mono (pango draws a box for one
  /// that no font has, and says nothing). Screenshots stay in the printed directory.
  @Test(.enabled(if: installed("i3") && installed("i3bar") && installed("import")))
  func i3barShowsEveryStateInItsOwnColourWithStockFonts() throws {
    let fonts = try StockFonts()
    let harness = try DaemonHarness(startDaemon: false)
    let display = try PrivateDisplay(
      windowManager: .i3,
      i3Config: """
        bar {
          status_command exec '\(Binaries.grow)' status --follow --format i3bar
          position top
          font pango:monospace 12
          colors {
            background #222222
          }
        }

        """, windowManagerEnvironment: harness.environment.merging(fonts.environment) { $1 })
    try walkThroughStates(harness, fonts: fonts, bar: "i3bar") { state, color, png in
      try display.screenshot(width: 1024, height: 24, savingPNGTo: png).count(of: color)
    }
  }

  /// polybar, on its own Xvfb with only fonts-dejavu-core: it logs every character its fonts
  /// lack ("Dropping unmatched character"), and each state has its own `%{F…}` colour.
  @Test(.enabled(if: installed("polybar") && installed("import")))
  func polybarShowsEveryStateInItsOwnColourWithStockFonts() throws {
    let fonts = try StockFonts()
    let harness = try DaemonHarness(startDaemon: false)
    let display = try PrivateDisplay()
    let config = harness.bus.directory.appendingPathComponent("polybar.ini")
    try """
    [bar/grow]
    width = 300
    height = 28
    offset-x = 0
    offset-y = 0
    override-redirect = true
    background = #222222
    foreground = #dddddd
    font-0 = monospace:size=12;2
    modules-left = grow

    [module/grow]
    type = custom/script
    exec = exec '\(Binaries.grow)' status --follow --format polybar
    tail = true

    """.write(to: config, atomically: true, encoding: .utf8)
    let polybar = try BackgroundProcess(
      "polybar", ["-c", config.path, "-l", "info", "grow"],
      environment: harness.environment.merging(fonts.environment) { $1 }
        .merging(display.environment) { $1 })
    defer { polybar.kill() }
    try walkThroughStates(harness, fonts: fonts, bar: "polybar") { state, color, png in
      try display.screenshot(width: 300, height: 28, savingPNGTo: png).count(of: color)
    }
    #expect(polybar.stderr.contains("file=\(fonts.fontsDirectory)"), "\(polybar.stderr)")
    #expect(!polybar.stderr.contains("Dropping unmatched character"), "\(polybar.stderr)")
  }

  /// `[plugin.notify] warn-before` during focus, where Do-Not-Disturb keeps the notification
  /// away: i3bar and polybar turn the focus colour to the ending-soon one when that much is
  /// left, i3blocks' interval block gives that colour too.
  static let endingSoonConfig = "[timer]\nfocus = 30s\n\n[plugin.notify]\nwarn-before = 25s\n"

  @Test(.enabled(if: installed("i3") && installed("i3bar") && installed("import")))
  func i3barShowsFocusEndingSoonInItsOwnColour() throws {
    let harness = try DaemonHarness(config: Self.endingSoonConfig, startDaemon: false)
    // i3 gets a config home of its own; the bar's grow reads the person's config.ini.
    let configHome = harness.environment["XDG_CONFIG_HOME", default: ""]
    let display = try PrivateDisplay(
      windowManager: .i3,
      i3Config: """
        bar {
          status_command exec env XDG_CONFIG_HOME='\(configHome)' '\(Binaries.grow)' \
        status --follow --format i3bar
          position top
          font pango:monospace 12
        }

        """, windowManagerEnvironment: harness.environment)
    try harness.start()
    #expect(try harness.grow("start").status == 0)
    try expectColour("#ff4fd8", bar: "i3bar") {
      try display.screenshot(width: 1024, height: 24, savingPNGTo: $0)
    }
  }

  @Test(.enabled(if: installed("polybar") && installed("import")))
  func polybarShowsFocusEndingSoonInItsOwnColour() throws {
    let harness = try DaemonHarness(config: Self.endingSoonConfig)
    let display = try PrivateDisplay()
    let config = harness.bus.directory.appendingPathComponent("polybar.ini")
    try """
    [bar/grow]
    width = 300
    height = 28
    override-redirect = true
    background = #222222
    font-0 = monospace:size=12;2
    modules-left = grow

    [module/grow]
    type = custom/script
    exec = exec '\(Binaries.grow)' status --follow --format polybar
    tail = true

    """.write(to: config, atomically: true, encoding: .utf8)
    let polybar = try BackgroundProcess(
      "polybar", ["-c", config.path, "grow"],
      environment: harness.environment.merging(display.environment) { $1 })
    defer { polybar.kill() }
    #expect(try harness.grow("start").status == 0)
    try expectColour("#ff4fd8", bar: "polybar") {
      try display.screenshot(width: 300, height: 28, savingPNGTo: $0)
    }
  }

  @Test(.enabled(if: installed("i3blocks")))
  func i3blocksShowsFocusEndingSoonInItsOwnColour() throws {
    let harness = try DaemonHarness(config: Self.endingSoonConfig)
    let config = harness.bus.directory.appendingPathComponent("i3blocks.conf")
    try """
    [grow]
    command=exec '\(Binaries.grow)' status --format i3blocks
    interval=1

    """.write(to: config, atomically: true, encoding: .utf8)
    let i3blocks = try BackgroundProcess(
      "i3blocks", ["-c", config.path], environment: harness.environment)
    defer { i3blocks.kill() }
    #expect(try harness.grow("start").status == 0)
    #expect(
      i3blocks.waitUntil(timeout: 30) { i3blocks.stdout.contains(##""color":"#ff4fd8""##) },
      "\(i3blocks.stdout)")
  }

  /// Waits (generously) until the bar shows `color` on 20 pixels or more.
  private func expectColour(
    _ color: String, bar: String, screenshot: (String) throws -> Screenshot
  ) throws {
    let png = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-\(bar)-ending-soon.png").path
    var seen = 0
    let deadline = Date().addingTimeInterval(40)
    while seen < 20, Date() < deadline {
      seen = try screenshot(png).count(of: color)
      if seen < 20 { Thread.sleep(forTimeInterval: 0.2) }
    }
    #expect(seen >= 20, "\(bar) never showed \(color): see \(png)")
  }

  /// Takes the daemon through every state a bar shows. In each, `pixels` counts the pixels of
  /// the state's colour on a screenshot saved as PNG; the line's characters must all be in
  /// DejaVu Sans Mono.
  private func walkThroughStates(
    _ harness: DaemonHarness, fonts: StockFonts, bar: String,
    pixels: (_ state: String, _ color: String, _ png: String) throws -> Int
  ) throws {
    let shots = FileManager.default.temporaryDirectory.appendingPathComponent("grow-\(bar)-shots")
    try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
    print("\(bar) screenshots: \(shots.path)")
    func look(_ state: String, _ color: String) throws {
      let line = try harness.grow("status", "--format", "plain").stdout
      #expect(try fonts.missing(in: line, family: "DejaVu Sans Mono") == [], "\(state): \(line)")
      let png = shots.appendingPathComponent("\(state).png").path
      var seen = 0
      let deadline = Date().addingTimeInterval(10)
      // Until the bar has redrawn: the colour appears once the new line is on screen.
      while seen < 20, Date() < deadline {
        seen = try pixels(state, color, png)
        if seen < 20 { Thread.sleep(forTimeInterval: 0.2) }
      }
      #expect(seen >= 20, "\(bar) never showed \(state) in \(color): see \(png)")
    }
    try look("off", "#666666")
    try harness.start()
    try look("idle", "#999999")
    #expect(try harness.grow("start").status == 0)
    try look("focus", "#ff6e6e")
    #expect(try harness.grow("pause").status == 0)
    try look("paused", "#e6c84b")
    #expect(try harness.grow("skip").status == 0)
    try look("short-break", "#69d26e")
    // The default card waits for the person before the next focus.
    #expect(try harness.grow("skip").status == 0)
    try look("waiting", "#6ec8e6")
    #expect(try harness.grow("stop").status == 0)
    try look("idle-again", "#999999")
  }
}

func installed(_ program: String) -> Bool {
  (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") }
}

func hasDisplay() -> Bool { !(ProcessInfo.processInfo.environment["DISPLAY"] ?? "").isEmpty }
