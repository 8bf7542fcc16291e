import Foundation
import GrowTestSupport
import Testing

/// The tray plugin on the bus, against a stand-in StatusNotifierWatcher
/// (Tests/Fixtures/SNIWatcher, a double: the real watchers live inside waybar, xfce4-panel and
/// Plasma) and gdbus as the host: registration, a watcher that comes late or restarts, the
/// menu's layout, a click, LayoutUpdated, and the item's properties.
@Suite(.serialized) struct TrayPluginBusTests {
  static let config = """
    [plugin.tray]
    enabled = true
    """

  static let watcherScript = RepoPaths.root
    .appendingPathComponent("Tests/Fixtures/SNIWatcher/fake-sni-watcher.py").path

  func startWatcher(_ harness: DaemonHarness) throws -> BackgroundProcess {
    let watcher = try BackgroundProcess(
      "/usr/bin/python3", [Self.watcherScript], environment: harness.environment)
    #expect(
      watcher.waitUntil(timeout: 30) { watcher.stdout.contains("ready") }, "\(watcher.stderr)")
    return watcher
  }

  func gdbus(_ harness: DaemonHarness, _ arguments: [String]) throws -> String {
    let result = try harness.run(
      "gdbus", ["call", "--session", "--dest", "org.grow.Grow1"] + arguments)
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout
  }

  @Test func withoutATrayThePluginSaysSoAndRegistersWhenOneComes() throws {
    let harness = try DaemonHarness(config: Self.config)
    #expect(
      try harness.eventually { try harness.plugins()["tray"]?["state"] == "unavailable" })
    #expect(
      try harness.plugins()["tray"]?["error"] == "no StatusNotifierWatcher (is a tray running?)")

    let watcher = try startWatcher(harness)
    #expect(watcher.waitUntil(timeout: 30) { watcher.stdout.contains("registered :") })
    #expect(try harness.eventually { try harness.plugins()["tray"]?["state"] == "running" })

    // A watcher that restarts (the panel crashed) gets the item again.
    _ = watcher.kill()
    let again = try startWatcher(harness)
    #expect(again.waitUntil(timeout: 30) { again.stdout.contains("registered :") })
    _ = again.terminate()
  }

  @Test func theMenuDrivesTheTimerAndItsLayoutFollows() throws {
    let harness = try DaemonHarness(config: Self.config)
    let watcher = try startWatcher(harness)
    defer { _ = watcher.terminate() }
    #expect(watcher.waitUntil(timeout: 30) { watcher.stdout.contains("registered :") })
    let monitor = try BackgroundProcess(
      "stdbuf",
      ["-oL", "dbus-monitor", "--session", "interface='com.canonical.dbusmenu'"],
      environment: harness.environment)
    defer { _ = monitor.terminate() }

    let idle = try gdbus(
      harness,
      [
        "--object-path", "/MenuBar", "--method", "com.canonical.dbusmenu.GetLayout",
        "0", "10", "[]",
      ])
    #expect(idle.contains("'label': <'Start'>"))
    #expect(idle.contains("'label': <'work'>"))
    #expect(idle.contains("'toggle-type': <'checkmark'>"))
    #expect(
      try gdbus(
        harness,
        ["--object-path", "/MenuBar", "--method", "com.canonical.dbusmenu.AboutToShow", "0"]
      )
      .contains("false"))

    // A click on "work" under Start.
    _ = try gdbus(
      harness,
      [
        "--object-path", "/MenuBar", "--method", "com.canonical.dbusmenu.Event", "100", "clicked",
        "<0>", "0",
      ])
    #expect(try harness.eventually { try harness.status()["state"] as? String == "focus" })
    #expect(try harness.eventually { monitor.stdout.contains("member=LayoutUpdated") })
    let running = try gdbus(
      harness,
      [
        "--object-path", "/MenuBar", "--method", "com.canonical.dbusmenu.GetLayout",
        "0", "10", "[]",
      ])
    #expect(running.contains("'label': <'Pause'>"))
    #expect(!running.contains("'label': <'Start'>"))

    // The wheel up adds a minute: -1 "vertical", as waybar and xfce4-panel send it (GDK's
    // sign; TrayModelTests has Plasma's and LXQt's).
    let endsAt = try #require(try harness.statusOverBus().endsAt)
    _ = try gdbus(
      harness,
      [
        "--object-path", "/StatusNotifierItem", "--method", "org.kde.StatusNotifierItem.Scroll",
        "--", "-1", "vertical",
      ])
    #expect(
      try harness.eventually {
        (try harness.statusOverBus().endsAt?.timeIntervalSince(endsAt) ?? 0) > 59
      })

    // And the wheel down takes it off again.
    _ = try gdbus(
      harness,
      [
        "--object-path", "/StatusNotifierItem", "--method", "org.kde.StatusNotifierItem.Scroll",
        "1", "vertical",
      ])
    #expect(
      try harness.eventually {
        abs(try harness.statusOverBus().endsAt?.timeIntervalSince(endsAt) ?? 99) < 1
      })

    // Left click on the icon pauses.
    _ = try gdbus(
      harness,
      [
        "--object-path", "/StatusNotifierItem", "--method", "org.kde.StatusNotifierItem.Activate",
        "0", "0",
      ])
    #expect(try harness.eventually { try harness.status()["paused"] as? Bool == true })

    let tooltip = try gdbus(
      harness,
      [
        "--object-path", "/StatusNotifierItem", "--method", "org.freedesktop.DBus.Properties.Get",
        "org.kde.StatusNotifierItem", "ToolTip",
      ])
    #expect(tooltip.contains("focus on 'work'"), "\(tooltip)")
    #expect(tooltip.contains("Paused, 25m left"), "\(tooltip)")
    let pixmap = try gdbus(
      harness,
      [
        "--object-path", "/StatusNotifierItem", "--method", "org.freedesktop.DBus.Properties.Get",
        "org.kde.StatusNotifierItem", "IconPixmap",
      ])
    // Five sizes, 16 to 48 pixels square.
    #expect(pixmap.contains("(16, 16, ["))
    #expect(pixmap.contains("(48, 48, ["), "\(pixmap.suffix(200))")
  }

  /// A tray plugin turned off takes its item and menu off the daemon's connection: the tray
  /// gets an error for them, not a menu that no longer drives anything.
  @Test func turnedOffTheItemLeavesTheBus() throws {
    let harness = try DaemonHarness(config: Self.config)
    let watcher = try startWatcher(harness)
    defer { _ = watcher.terminate() }
    #expect(watcher.waitUntil(timeout: 30) { watcher.stdout.contains("registered :") })
    let getStatus = [
      "call", "--session", "--dest", "org.grow.Grow1", "--object-path", "/StatusNotifierItem",
      "--method", "org.freedesktop.DBus.Properties.Get", "org.kde.StatusNotifierItem", "Status",
    ]
    #expect(try harness.run("gdbus", getStatus).status == 0)

    try harness.writeConfig("[plugin.tray]\nenabled = false\n")
    #expect(try harness.grow("reload").status == 0)
    #expect(try harness.eventually { try harness.plugins()["tray"]?["state"] == "disabled" })
    let after = try harness.run("gdbus", getStatus)
    #expect(after.status != 0)
    #expect(
      after.stderr.contains("UnknownObject") || after.stderr.contains("UnknownMethod"),
      "\(after.stderr)")
    let menu = try harness.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.grow.Grow1", "--object-path", "/MenuBar", "--method",
        "com.canonical.dbusmenu.GetLayout", "0", "10", "[]",
      ])
    #expect(menu.status != 0, "\(menu.stdout)")
  }
}
