import Foundation
import GrowTestSupport
import Testing

/// `grow status --format/--template` run once, as bars with an interval and scripts use it.
@Suite struct StatusFeedTests {
  @Test func plainLinesShowEachStateWithItsOwnIconAndText() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("status", "--format", "plain").stdout == "○ idle\n")
    #expect(try harness.grow("start", "--focus", "10m").status == 0)
    let focus = try harness.grow("status", "--format", "plain").stdout
    // A second or two may pass on a busy machine between starting and asking.
    #expect(focus.hasPrefix("● ") && (595...600).contains(secondsLeft(focus)))
    #expect(try harness.grow("pause").status == 0)
    #expect(try harness.grow("status", "--template", "{icon} {state}").stdout == "‖ paused\n")
    #expect(try harness.grow("skip").status == 0)
    #expect(
      try harness.grow("status", "--template", "{icon} {state} {remaining_min} {cycle}").stdout
        == "☼ short break 5m 1/4\n")
    #expect(try harness.grow("skip").status == 0)
    // The next focus waits for the person.
    #expect(try harness.grow("status", "--format", "plain").stdout == "◌ focus waiting\n")
    #expect(try harness.grow("stop").status == 0)
    #expect(try harness.grow("status", "--template", "{state} {today}m").stdout == "idle 0m\n")
  }

  @Test func withoutADaemonABarLineSaysOffAndSucceeds() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let plain = try harness.grow("status", "--format", "plain")
    #expect(plain.status == 0)
    #expect(plain.stdout == "⊘ off\n")
    // The multi-line human status still tells people how to start the daemon.
    #expect(try harness.grow("status").status == 3)
  }

  @Test func unknownTemplateFieldsAreNamedWithTheValidOnes() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let result = try harness.grow("status", "--template", "{icon} {remaning}")
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "grow: grow status: unknown template field '{remaning}'; valid fields: {icon} "
        + "{state} {card} {remaining} {remaining_min} {progress} {cycle} {today} {goal} {dnd} "
        + "{distraction} {intention} (see 'grow help')\n")
    let format = try harness.grow("status", "--format", "lemon")
    #expect(format.status == 2)
    #expect(
      format.stderr
        == "grow: grow status: unknown format 'lemon'; formats: plain, i3blocks, polybar, "
        + "waybar, i3bar (see 'grow help')\n")
    #expect(try harness.grow("status", "--json", "--follow").status == 2)
  }

  @Test func iconsChooseASCIIOrNerdFontGlyphsAndABadSetIsNamed() throws {
    let harness = try DaemonHarness(
      config: "[plugins]\nenable = statusbar\n\n[plugin.statusbar]\nicons = ascii\n")
    let line = { (icons: String) in
      try harness.grow("status", "--icons", icons, "--template", "{icon} {state}").stdout
    }
    #expect(try line("ascii") == "- idle\n")
    #expect(try line("nerd") == "\u{F10C} idle\n")
    #expect(try harness.grow("start").status == 0)
    #expect(try line("ascii") == "* focus\n")
    #expect(try line("unicode") == "● focus\n")
    #expect(try line("nerd") == "\u{F017} focus\n")
    #expect(try harness.grow("pause").status == 0)
    #expect(try line("ascii") == "|| paused\n")
    let file = harness.bus.environment["XDG_RUNTIME_DIR", default: ""] + "/grow/status.txt"
    #expect(
      harness.daemon?.waitUntil(timeout: 30) {
        (try? String(contentsOfFile: file, encoding: .utf8))?.hasPrefix("|| ") == true
      } == true)
    let bad = try harness.grow("status", "--icons", "emoji")
    #expect(bad.status == 2)
    #expect(
      bad.stderr
        == "grow: grow status: unknown icon set 'emoji'; icon sets: ascii, unicode, nerd "
        + "(see 'grow help')\n")
  }

  @Test func waybarGetsEscapedMarkupStateClassesAndAPercentage() throws {
    let harness = try DaemonHarness()
    let intention = #"<b>"Tom" & 'Jerry'</b>"#
    #expect(try harness.grow("start", "--focus", "10m", "--intention", intention).status == 0)
    let running = try waybarObject(harness, "--template", "{intention}")
    #expect(
      running["text"] as? String == "&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;")
    #expect(running["class"] as? [String] == ["focus"])
    #expect(running["alt"] as? String == "focus")
    let percentage = try #require(running["percentage"] as? Int)
    #expect((0...1).contains(percentage))
    let tooltip = try #require(running["tooltip"] as? String)
    #expect(tooltip.hasPrefix("focus on &#39;work&#39; · cycle 1/4 · until "))
    #expect(!tooltip.contains("&\""))

    #expect(try harness.grow("pause").status == 0)
    #expect(try waybarObject(harness)["class"] as? [String] == ["paused", "focus"])
    #expect(try harness.grow("skip").status == 0)
    #expect(try waybarObject(harness)["class"] as? [String] == ["short-break", "break"])
    #expect(try harness.grow("stop").status == 0)
    let idle = try waybarObject(harness)
    #expect(idle["class"] as? [String] == ["idle"])
    #expect(idle["text"] as? String == "○ idle")
    #expect(idle["percentage"] as? Int == 0)
  }

  /// The tooltip said `today: 0m focus of 1m` after 48 s of focus (whole
  /// minutes, rounded down). It now says today's focus as `grow status` and `grow stats` do,
  /// with seconds below a minute.
  @Test func waybarsTooltipWordsTodayAsStatusDoes() throws {
    let harness = try DaemonHarness(
      config: "[timer]\nfocus = 2s\nauto-start-breaks = false\ndaily-goal = 1m\n")
    #expect(try harness.grow("start").status == 0)
    _ = try harness.waitForStatus(timeout: 30) { $0["state"] as? String == "waiting" }
    let tooltip = try #require(try waybarObject(harness)["tooltip"] as? String)
    let today = "1 completed, 2s focus (3% of the 1m goal)"
    #expect(tooltip.hasSuffix("\ntoday: \(today)"), "\(tooltip)")
    #expect(try harness.grow("status").stdout.contains("  today: \(today)\n"))
  }

  @Test func i3blocksIntervalModeActsOnBlockButtonFirst() throws {
    let harness = try DaemonHarness()
    let click = { (button: String) in
      try Command.run(
        Binaries.grow, ["status", "--format", "i3blocks", "--template", "{icon} {state}"],
        environment: harness.environment.merging(["BLOCK_BUTTON": button]) { $1 })
    }
    // Left click starts; full text, short text and colour, in one write.
    let started = try click("1")
    #expect(started.status == 0)
    #expect(started.stdout == "● focus\n● focus\n#ff6e6e\n")
    #expect(try click("3").stdout == "☼ short break\n☼ short break\n#69d26e\n")
    // Scroll up adds a minute to the break, scroll down takes two off.
    #expect(try click("4").status == 0)
    #expect(try harness.status()["duration"] as? Int == 360)
    #expect(try click("5").status == 0)
    #expect(try click("5").status == 0)
    #expect(try harness.status()["duration"] as? Int == 240)
    #expect(try click("2").stdout == "○ idle\n○ idle\n#999999\n")
    // Idle, scroll down changes nothing.
    #expect(try click("5").stdout == "○ idle\n○ idle\n#999999\n")
  }

  @Test func polybarLinesCarryActionTagsWithEscapedColons() throws {
    let harness = try DaemonHarness()
    let result = try harness.grow("status", "--format", "polybar", "--template", "{state}")
    let grow = Binaries.grow.replacingOccurrences(of: ":", with: "\\:")
    #expect(
      result.stdout
        == "%{A1:\(grow) toggle:}%{A2:\(grow) stop:}%{A3:\(grow) skip:}"
        + "%{A4:\(grow) extend 1m:}%{A5:\(grow) shorten 1m:}%{F#999999}idle%{F-}"
        + "%{A}%{A}%{A}%{A}%{A}\n")
  }

  @Test func statusBarPluginWritesTheJSONOfGrowStatusAndThePlainLine() throws {
    let harness = try DaemonHarness(config: "[plugins]\nenable = statusbar\n")
    #expect(try harness.grow("start", "--focus", "10m").status == 0)
    let directory = harness.bus.environment["XDG_RUNTIME_DIR", default: ""] + "/grow/"
    let written = harness.daemon?.waitUntil(timeout: 30) {
      let text = try? String(contentsOfFile: directory + "status.txt", encoding: .utf8)
      return text == "● 10m\n"
    }
    #expect(written == true)
    let file =
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: URL(fileURLWithPath: directory + "status.json"))) as? [String: Any]
    let cli = try harness.status()
    #expect(file.map { Set($0.keys) } == Set(cli.keys))
    #expect(file?["card"] as? String == "work")
    #expect(file?["state"] as? String == "focus")
    #expect(file?["ends_at"] as? String == cli["ends_at"] as? String)
    #expect(file?["long_break_after"] as? Int == 4)
  }

  /// status.txt follows the countdown as `grow status --follow` does, and says what the
  /// feed says in every state.
  @Test func statusTextCountsDownAndReadsLikeTheFeed() throws {
    let harness = try DaemonHarness(
      config: "[plugins]\nenable = statusbar\n\n[plugin.statusbar]\ntemplate = {icon} {remaining}\n"
    )
    let file = harness.bus.environment["XDG_RUNTIME_DIR", default: ""] + "/grow/status.txt"
    let fileSays = { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
    let feedSays = { try harness.grow("status", "--format", "plain").stdout }
    #expect(harness.daemon?.waitUntil(timeout: 30) { fileSays() == "○ idle\n" } == true)
    #expect(try feedSays() == fileSays(), "status.txt: \(fileSays())")

    #expect(try harness.grow("start", "--focus", "10m").status == 0)
    #expect(harness.daemon?.waitUntil(timeout: 30) { fileSays().hasPrefix("● ") } == true)
    let first = secondsLeft(fileSays())
    // Two seconds later the file has moved on with the clock, with no change to the timer.
    #expect(
      harness.daemon?.waitUntil(timeout: 30) { secondsLeft(fileSays()) <= first - 2 } == true,
      "status.txt stayed at \(fileSays())")
    #expect(abs(secondsLeft(try feedSays()) - secondsLeft(fileSays())) <= 1)

    #expect(try harness.grow("pause").status == 0)
    #expect(harness.daemon?.waitUntil(timeout: 30) { fileSays().hasPrefix("‖ ") } == true)
    let paused = fileSays()
    Thread.sleep(forTimeInterval: 1.5)
    #expect(fileSays() == paused, "status.txt moved while paused")
    #expect(try harness.grow("stop").status == 0)
    #expect(harness.daemon?.waitUntil(timeout: 30) { fileSays() == "○ idle\n" } == true)
  }

  private func waybarObject(_ harness: DaemonHarness, _ extra: String...) throws -> [String: Any] {
    let result = try Command.run(
      Binaries.grow, ["status", "--format", "waybar"] + extra, environment: harness.environment)
    #expect(result.stdout.hasSuffix("}\n"))
    #expect(result.stdout.filter { $0 == "\n" }.count == 1)
    return try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
  }
}
