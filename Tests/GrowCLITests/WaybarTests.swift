import Foundation
import GrowTestSupport
import Testing

/// waybar 0.9.17 running the module of examples/statusbar/waybar-config.jsonc (its feed
/// `grow status --follow --format waybar` and its click actions) in a headless sway, with the
/// example's CSS: what it draws is read back with grim, and it is clicked and scrolled through a
/// virtual pointer (GrowTestSupport's VirtualPointer; the headless seat has no pointer of its
/// own). Set GROW_KEEP_SCREENSHOTS=DIR to keep the bar's PNGs.
@Suite(.serialized, .waylandSession)
struct WaybarTests {
  /// The example's colours (examples/statusbar/waybar-style.css).
  static let focusColor = "#ff6e6e"
  static let breakColor = "#69d26e"
  static let idleColor = "#999999"
  /// The bar: 30 px high along the top; the module alone on its left.
  static let barHeight = 30
  static let moduleWidth = 240

  /// Starts waybar as the session's user with the example module, `grow` being this build
  /// (put where that user can run it: the checkout may be out of its reach).
  private func startWaybar(_ session: WaylandSession) throws -> BackgroundProcess {
    let examples = RepoPaths.root.appendingPathComponent("examples/statusbar")
    let example = try String(
      contentsOf: examples.appendingPathComponent("waybar-config.jsonc"), encoding: .utf8)
    // JSONC with whole-line comments only.
    let json = example.split(separator: "\n")
      .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
    guard
      let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
      let example = parsed["custom/grow"] as? [String: Any]
    else { throw HarnessError("unreadable example waybar config:\n\(json)") }
    let grow = "'\(try session.install(Binaries.grow))'"
    let module = example.mapValues { value -> Any in
      guard let command = value as? String else { return value }
      return command.replacingOccurrences(of: "exec grow ", with: "exec \(grow) ")
        .replacingOccurrences(of: #"^grow "#, with: "\(grow) ", options: .regularExpression)
    }
    let config: [String: Any] = [
      "layer": "top", "position": "top", "height": Self.barHeight,
      "modules-left": ["custom/grow"], "custom/grow": module,
    ]
    try session.writeUserConfig(
      "waybar/config",
      String(decoding: try JSONSerialization.data(withJSONObject: config), as: UTF8.self))
    let style = try String(
      contentsOf: examples.appendingPathComponent("waybar-style.css"), encoding: .utf8)
    try session.writeUserConfig(
      "waybar/style.css",
      "* { font-family: \"DejaVu Sans\"; font-size: 16px; }\n"
        + "window#waybar { background: #202020; }\n" + style)
    let waybar = try session.start("waybar")
    let drawn = try waybar.waitUntil(timeout: 15, interval: 0.1) {
      try bar(session).count(of: Self.idleColor) > 20
    }
    guard drawn else { throw HarnessError("waybar drew no module: \(waybar.stderr)") }
    // waybar and its module's `grow status --follow` run from the session's own files.
    #expect(session.processesSeeing(RepoPaths.root.path) == [])
    return waybar
  }

  private func bar(_ session: WaylandSession, savingAs name: String? = nil) throws -> Screenshot {
    let keep = ProcessInfo.processInfo.environment["GROW_KEEP_SCREENSHOTS"]
    return try session.screenshot(
      width: Self.moduleWidth, height: Self.barHeight,
      savingPNGTo: keep.flatMap { dir in name.map { "\(dir)/\($0).png" } })
  }

  private func daemon(_ session: WaylandSession, config: String) throws -> DaemonHarness {
    try DaemonHarness(config: config, environment: session.environment)
  }

  /// The module shows each state in its colour, redraws every second the text shows, and turns
  /// to the break's colour when focus ends: each change measured against the phase's deadline.
  @Test func waybarDrawsEverySecondAndThePhaseChange() throws {
    let session = try WaylandSession.required()
    let harness = try daemon(
      session, config: "[timer]\nfocus = 8s\nshort-break = 30s\nauto-start-breaks = true\n")
    let waybar = try startWaybar(session)
    defer { waybar.terminate() }
    _ = try bar(session, savingAs: "waybar-idle")
    try harness.grow("start")
    let endsAt = try #require(try harness.statusOverBus().endsAt)
    #expect(
      try harness.eventually(timeout: 30) { try bar(session).count(of: Self.focusColor) > 20 })
    _ = try bar(session, savingAs: "waybar-focus")
    // Every change of the drawn module until the break's colour shows.
    var last = try bar(session)
    var changes: [Date] = []
    var breakSeen: Date?
    // Generous: only a bar that never shows the break runs out of it; how late it came is
    // the figure printed below, not a bound (a loaded machine says nothing about waybar).
    while breakSeen == nil, Date() < endsAt.addingTimeInterval(30) {
      let now = try bar(session)
      let seen = Date()
      if now != last {
        if now.count(of: Self.breakColor) > 20 { breakSeen = seen } else { changes.append(seen) }
        last = now
      }
    }
    _ = try bar(session, savingAs: "waybar-break")
    // The text counts down in whole seconds, so it changes at the deadline minus whole seconds:
    // how late each change was drawn after that moment.
    let late = changes.map { change in
      let offset = change.timeIntervalSince(endsAt)
      return offset - offset.rounded(.down)
    }.sorted()
    #expect(changes.count >= 3, "a redraw every displayed second: \(late)")
    let phaseLate = try #require(breakSeen, "the break shows once focus ends")
      .timeIntervalSince(endsAt)
    print(
      "waybar: \(changes.count) redraws in focus, late by median "
        + String(format: "%.3f", late.isEmpty ? -1 : late[late.count / 2]) + " s, max "
        + String(format: "%.3f", late.last ?? -1) + " s; the break drawn "
        + String(format: "%.3f", phaseLate) + " s after focus ended")
  }

  /// `[plugin.notify] warn-before`: focus turns the example's ending-soon colour when that
  /// much is left (the follower wakes for it), where no notification shows during focus.
  @Test func focusEndingSoonShowsInItsOwnColour() throws {
    let session = try WaylandSession.required()
    let config = "[timer]\nfocus = 30s\n\n[plugin.notify]\nwarn-before = 25s\n"
    let harness = try daemon(session, config: config)
    // The bar's grow reads the session user's config.ini, as the person's does.
    try session.writeUserConfig("grow/config.ini", config)
    let waybar = try startWaybar(session)
    defer { waybar.terminate() }
    try harness.grow("start")
    #expect(
      try harness.eventually(timeout: 30) {
        try bar(session, savingAs: "waybar-ending-soon").count(of: "#ff4fd8") > 20
      })
  }

  /// The example's actions, clicked for real: left toggles, scroll up extends by a minute, right
  /// skips, middle stops; the module redraws after each.
  @Test func clicksAndScrollOnTheModuleDriveGrow() throws {
    let session = try WaylandSession.required()
    let harness = try daemon(session, config: "[timer]\nfocus = 25m\nshort-break = 5m\n")
    let waybar = try startWaybar(session)
    defer { waybar.terminate() }
    let pointer = try VirtualPointer(session)
    try pointer.move(x: 20, y: Self.barHeight / 2)
    // waybar notices a pointer that has just entered its surface a moment later.
    Thread.sleep(forTimeInterval: 0.3)

    try pointer.click(.left)
    #expect(try harness.eventually { try harness.status()["state"] as? String == "focus" })
    #expect(
      try harness.eventually(timeout: 3) { try bar(session).count(of: Self.focusColor) > 20 })
    let endsAt = try #require(try harness.statusOverBus().endsAt)

    try pointer.scroll(up: true)
    #expect(
      try harness.eventually {
        (try harness.statusOverBus().endsAt?.timeIntervalSince(endsAt) ?? 0) > 59
      }, "scrolling up extends the focus by a minute")

    try pointer.click(.right)
    #expect(try harness.eventually { try harness.status()["state"] as? String == "short-break" })
    #expect(
      try harness.eventually(timeout: 3) { try bar(session).count(of: Self.breakColor) > 20 })

    try pointer.click(.middle)
    #expect(try harness.eventually { try harness.status()["state"] as? String == "idle" })
    #expect(
      try harness.eventually(timeout: 3) { try bar(session).count(of: Self.idleColor) > 20 })
  }
}
