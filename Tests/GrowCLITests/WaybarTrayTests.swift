import Foundation
import GrowTestSupport
import Testing

/// The tray plugin in a real tray: waybar 0.9.17's `tray` module (its own
/// StatusNotifierWatcher and host, with libdbusmenu-gtk3 for the menu) in a headless sway.
/// The icon is read back with grim; through the virtual pointer a left click on it pauses,
/// and a right click opens Grow's menu. Set GROW_KEEP_SCREENSHOTS=DIR to keep the PNGs.
@Suite(.serialized, .waylandSession)
struct WaybarTrayTests {
  static let barHeight = 30
  /// The icon's colours (TrayPhase): grey idle, red focus, amber paused.
  static let idleColor = "#8b949e"
  static let focusColor = "#e5534b"
  static let pausedColor = "#d29922"

  private func startWaybar(_ session: WaylandSession) throws -> BackgroundProcess {
    let config: [String: Any] = [
      "layer": "top", "position": "top", "height": Self.barHeight,
      "modules-left": ["tray"], "tray": ["icon-size": 24, "spacing": 4],
    ]
    try session.writeUserConfig(
      "waybar/config",
      String(decoding: try JSONSerialization.data(withJSONObject: config), as: UTF8.self))
    try session.writeUserConfig(
      "waybar/style.css",
      "* { font-family: \"DejaVu Sans\"; font-size: 16px; }\n"
        + "window#waybar { background: #202020; }\n")
    let waybar = try session.start("waybar")
    try session.waitForBusName("org.kde.StatusNotifierWatcher", process: waybar, timeout: 30)
    return waybar
  }

  private func shot(_ session: WaylandSession, _ name: String, height: Int = barHeight) throws
    -> Screenshot
  {
    let keep = ProcessInfo.processInfo.environment["GROW_KEEP_SCREENSHOTS"]
    return try session.screenshot(
      width: 320, height: height, savingPNGTo: keep.map { "\($0)/\(name).png" })
  }

  @Test func theIconShowsTheStateAndItsMenuOpensOnARightClick() throws {
    let session = try WaylandSession.required()
    let waybar = try startWaybar(session)
    defer { waybar.terminate() }
    let harness = try DaemonHarness(
      config: "[timer]\nfocus = 25m\n\n[plugin.tray]\nenabled = true\n",
      environment: session.environment)
    #expect(
      try harness.eventually(timeout: 30) { try harness.plugins()["tray"]?["state"] == "running" })
    #expect(
      try harness.eventually(timeout: 15) {
        try shot(session, "tray-idle").count(of: Self.idleColor) > 10
      }, "waybar drew the idle icon: \(waybar.stderr.suffix(400))")

    #expect(try harness.grow("start").status == 0)
    #expect(
      try harness.eventually(timeout: 15) {
        try shot(session, "tray-focus").count(of: Self.focusColor) > 10
      })

    // The icon is the first item of the tray, at the bar's left edge.
    let pointer = try VirtualPointer(session)
    try pointer.move(x: 14, y: Self.barHeight / 2)
    // The wheel up over the icon adds a minute (waybar sends GDK's sign: -1 for up). waybar
    // notices a pointer that has just entered its surface a moment later, so the wheel turns
    // until it has (on a busy machine that can take a few notches).
    let remaining = try #require(try harness.status()["remaining"] as? Int)
    let added = { (try harness.status()["remaining"] as? Int ?? 0) > remaining + 30 }
    #expect(
      try harness.eventually(timeout: 30) {
        try pointer.scroll(up: true)
        return try harness.eventually(timeout: 1, added)
      }, "the wheel up added a minute")
    // A left click on the icon pauses.
    try pointer.click(.left)
    #expect(try harness.eventually { try harness.status()["paused"] as? Bool == true })
    #expect(
      try harness.eventually(timeout: 15) {
        try shot(session, "tray-paused").count(of: Self.pausedColor) > 10
      })

    // A right click opens the menu, GTK's: white, below the bar, where sway's background was.
    // Its entries are chosen through dbusmenu's Event (TrayPluginBusTests): the popup here
    // takes neither the virtual pointer's clicks nor a virtual keyboard's keys.
    // (The tooltip's white text, over the icon now, is a few hundred pixels.)
    #expect(try shot(session, "tray-before-menu", height: 240).count(of: "#ffffff") < 2000)
    try pointer.click(.right)
    #expect(
      try harness.eventually(timeout: 15) {
        try shot(session, "tray-menu", height: 240).count(of: "#ffffff") > 5000
      }, "the menu opened below the bar")
  }
}
