import Foundation
import GrowTestSupport
import Testing

/// The tray plugin in XFCE's panel on X11: xfce4-panel 4.18 with only its systray plugin
/// (which runs in the panel's `wrapper-2.0` process as the StatusNotifierWatcher and host,
/// with libdbusmenu-gtk3 for the menu), its settings in xfconfd, on a private Xvfb with
/// openbox. The icon is read back with `import`; xdotool's left click on it pauses, the middle
/// button resumes, a right click opens Grow's menu, and the keyboard picks an entry there. Set
/// GROW_KEEP_SCREENSHOTS=DIR to keep the PNGs.
@Suite(.serialized) struct XfcePanelTrayTests {
  static let panelHeight = 30
  /// The icon's colours (TrayPhase): grey idle, red focus, amber paused.
  static let idleColor = "#8b949e"
  static let focusColor = "#e5534b"
  static let pausedColor = "#d29922"
  /// GTK's menu, white under the dark panel.
  static let menuColor = "#ffffff"

  /// One panel along the top, dark, with the systray plugin alone: with a channel of its own
  /// in xfconf, the panel starts without its first-run dialog (default config or empty panel).
  static let panelChannel = """
    <?xml version="1.0" encoding="UTF-8"?>
    <channel name="xfce4-panel" version="1.0">
      <property name="configver" type="int" value="2"/>
      <property name="panels" type="array">
        <value type="int" value="1"/>
        <property name="panel-1" type="empty">
          <property name="position" type="string" value="p=6;x=0;y=0"/>
          <property name="length" type="uint" value="100"/>
          <property name="position-locked" type="bool" value="true"/>
          <property name="size" type="uint" value="\(panelHeight)"/>
          <property name="icon-size" type="uint" value="24"/>
          <property name="background-style" type="uint" value="1"/>
          <property name="background-rgba" type="array">
            <value type="double" value="0.125"/>
            <value type="double" value="0.125"/>
            <value type="double" value="0.125"/>
            <value type="double" value="1"/>
          </property>
          <property name="plugin-ids" type="array">
            <value type="int" value="1"/>
          </property>
        </property>
      </property>
      <property name="plugins" type="empty">
        <property name="plugin-1" type="string" value="systray"/>
      </property>
    </channel>

    """

  /// xfconfd and xfce4-panel on the harness's bus and display, once the panel's systray owns
  /// the StatusNotifierWatcher name. Nothing is activated on the private bus, so xfconfd is
  /// started here.
  private func startPanel(_ harness: DaemonHarness) throws -> [BackgroundProcess] {
    let channels =
      harness.environment["XDG_CONFIG_HOME", default: ""]
      + "/xfce4/xfconf/xfce-perchannel-xml"
    try FileManager.default.createDirectory(
      atPath: channels, withIntermediateDirectories: true)
    try Self.panelChannel.write(
      toFile: channels + "/xfce4-panel.xml", atomically: true, encoding: .utf8)
    // No accessibility bus here: GTK would warn about it in every process.
    let environment = harness.environment.merging(["NO_AT_BRIDGE": "1"]) { $1 }
    let xfconf = try BackgroundProcess(xfconfd, [], environment: environment)
    try NotificationServers.waitForName("org.xfce.Xfconf", harness, process: xfconf)
    let panel = try BackgroundProcess(
      "xfce4-panel", ["--sm-client-disable"], environment: environment)
    try NotificationServers.waitForName(
      "org.kde.StatusNotifierWatcher", harness, process: panel, timeout: 60)
    return [panel, xfconf]
  }

  private func shot(_ display: PrivateDisplay, _ name: String, height: Int = panelHeight)
    throws -> Screenshot
  {
    let keep = ProcessInfo.processInfo.environment["GROW_KEEP_SCREENSHOTS"]
    return try display.screenshot(
      width: 240, height: height, savingPNGTo: keep.map { "\($0)/\(name).png" })
  }

  /// The items the panel's watcher holds (`service/path` each).
  private func registeredItems(_ harness: DaemonHarness) throws -> String {
    try harness.run(
      "dbus-send",
      [
        "--session", "--print-reply", "--dest=org.kde.StatusNotifierWatcher",
        "/StatusNotifierWatcher", "org.freedesktop.DBus.Properties.Get",
        "string:org.kde.StatusNotifierWatcher", "string:RegisteredStatusNotifierItems",
      ]
    ).stdout
  }

  /// The daemon's unique name on the bus, which it registers its item under.
  private func daemonBusName(_ harness: DaemonHarness) throws -> String {
    let reply = try harness.run(
      "dbus-send",
      [
        "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus.GetNameOwner", "string:org.grow.Grow1",
      ]
    ).stdout
    return reply.split(separator: "\"").dropFirst().first.map(String.init) ?? ""
  }

  /// The mapped windows of the panel's plugin process below the panel: popups (a menu).
  /// xdotool fails when it finds none, or when a window went between search and geometry.
  private func popupsBelowThePanel(_ display: PrivateDisplay) -> [String] {
    let found = try? display.xdotool("search", "--onlyvisible", "--name", "^wrapper-2.0$")
    return (found ?? "").split(separator: "\n").map(String.init).filter { window in
      guard let geometry = try? display.xdotool("getwindowgeometry", "--shell", window) else {
        return false
      }
      let fields = Dictionary(
        geometry.split(separator: "\n").compactMap { line -> (String, Int)? in
          let parts = line.split(separator: "=")
          guard parts.count == 2, let value = Int(parts[1]) else { return nil }
          return (String(parts[0]), value)
        }
      ) { $1 }
      return fields["Y", default: 0] >= Self.panelHeight && fields["WIDTH", default: 0] > 50
        && fields["HEIGHT", default: 0] > 50
    }
  }

  @Test(
    .enabled(
      if: xfcePanelInstalled() && installed("import") && installed("xdotool"),
      "xfce4-panel, xfconfd, import or xdotool missing: run scripts/install-deps"))
  func theIconShowsTheStateAndItsClicksAndMenuDriveTheTimer() throws {
    let display = try PrivateDisplay()
    let harness = try DaemonHarness(
      config: "[timer]\nfocus = 25m\n\n[plugin.tray]\nenabled = true\n", startDaemon: false,
      environment: display.environment)
    let panel = try startPanel(harness)
    defer { for process in panel { process.kill() } }
    try harness.start()
    // Without the tray plugin (or with a panel that took no item) nothing below can pass.
    try #require(
      try harness.eventually(timeout: 30) { try harness.plugins()["tray"]?["state"] == "running" })

    // The item is the panel's: its watcher holds the daemon's /StatusNotifierItem.
    let item = try daemonBusName(harness) + "/StatusNotifierItem"
    try #require(
      try harness.eventually(timeout: 30) { try registeredItems(harness).contains(item) })

    #expect(
      try harness.eventually(timeout: 30) {
        try shot(display, "xfce-idle").count(of: Self.idleColor) > 10
      }, "the panel drew the idle icon: \(panel[0].stderr.suffix(400))")
    #expect(try harness.grow("start").status == 0)
    #expect(
      try harness.eventually(timeout: 30) {
        try shot(display, "xfce-focus").count(of: Self.focusColor) > 10
      })

    // The icon is the first item of the tray, at the panel's left edge. A left click pauses
    // (Activate).
    try display.xdotool("mousemove", "12", "\(Self.panelHeight / 2)", "click", "1")
    #expect(try harness.eventually { try harness.status()["paused"] as? Bool == true })
    #expect(
      try harness.eventually(timeout: 30) {
        try shot(display, "xfce-paused").count(of: Self.pausedColor) > 10
      })
    // The middle button (SecondaryActivate) does the same: it resumes, and pauses again.
    try display.xdotool("click", "2")
    #expect(try harness.eventually { try harness.status()["paused"] as? Bool == false })
    try display.xdotool("click", "2")
    #expect(try harness.eventually { try harness.status()["paused"] as? Bool == true })

    // A right click opens the menu: a GTK popup of the plugin's process, below the panel,
    // white where the screen was black.
    #expect(popupsBelowThePanel(display).isEmpty)
    #expect(try shot(display, "xfce-before-menu", height: 200).count(of: Self.menuColor) < 1000)
    try display.xdotool("click", "3")
    #expect(
      harness.eventually(timeout: 30) { !popupsBelowThePanel(display).isEmpty },
      "no menu opened: \(panel[0].stderr.suffix(400))")
    #expect(
      try harness.eventually(timeout: 30) {
        try shot(display, "xfce-menu", height: 200).count(of: Self.menuColor) > 5000
      }, "the menu was drawn below the panel")

    // The menu takes the keyboard, as a person's: the second entry, Skip (after Resume),
    // ends the paused focus.
    try display.xdotool("key", "Down", "Down", "Return")
    #expect(
      try harness.waitForStatus { $0["state"] as? String == "short-break" }.isEmpty == false)
    #expect(harness.eventually { popupsBelowThePanel(display).isEmpty })
  }
}

let xfconfd = "/usr/lib/x86_64-linux-gnu/xfce4/xfconf/xfconfd"

/// xfce4-panel, and xfconfd, where it keeps its settings.
func xfcePanelInstalled() -> Bool {
  installed("xfce4-panel") && FileManager.default.isExecutableFile(atPath: xfconfd)
}
