import Foundation
import GrowTestSupport
import Testing

/// `grow doctor` in a healthy headless desktop and in a broken one.
@Suite struct DoctorTests {
  /// A built-in plugin's library, as the doctor names it when it checks it loads (no daemon).
  func pluginPath(_ id: String) -> String {
    let directory = URL(fileURLWithPath: Binaries.grow).resolvingSymlinksInPath()
      .deletingLastPathComponent().path
    return "\(directory)/libgrow-plugin-\(id).so"
  }

  /// Where a running built-in plugin runs from: the static daemon image that links it in when
  /// the build has one (DaemonImage; `make test` builds it), else its library.
  func runningPluginPath(_ id: String) -> String {
    let directory = URL(fileURLWithPath: Binaries.grow).resolvingSymlinksInPath()
      .deletingLastPathComponent().path
    let image = "\(directory)/grow-daemon"
    return FileManager.default.isExecutableFile(atPath: image) ? image : pluginPath(id)
  }

  static let display = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""

  @Test(.enabled(if: !display.isEmpty, "needs the X server of make test (Xvfb)"))
  func aHealthyDesktopPassesEveryCheck() throws {
    let pulse = try PulseAudioServer()
    let harness = try DaemonHarness(
      startDaemon: false,
      environment: pulse.environment.merging(["DISPLAY": Self.display]) { $1 })
    let pulseSocket = String(pulse.environment["PULSE_SERVER", default: ""].dropFirst(5))
    let dunst = try BackgroundProcess("dunst", [], environment: harness.environment)
    defer { dunst.terminate() }
    let owned = dunst.waitUntil(timeout: 10) {
      let reply = try? harness.run(
        "dbus-send",
        [
          "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
          "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications",
        ])
      return reply?.stdout.contains("boolean true") ?? false
    }
    #expect(owned, "dunst did not start: \(dunst.stderr)")
    try harness.start()
    let data = harness.environment["XDG_DATA_HOME", default: ""]
    let number = Self.display.dropFirst().prefix { $0.isNumber }
    let doctor = try harness.grow("doctor")
    #expect(doctor.status == 0)
    #expect(doctor.stderr == "")
    let lines = doctor.stdout.split(separator: "\n", omittingEmptySubsequences: false)
      .map(String.init)
    #expect(lines[0] == "✔ session bus: reachable")
    #expect(lines[1] == "✔ daemon: running (pid \(harness.daemon?.pid ?? 0))")
    // Debian 12's dunst.
    #expect(
      lines[2]
        == "✔ notifications: dunst 1.9.0 (2022-06-27) by knopwob, spec 1.2; capabilities: "
        + "actions, body, body-hyperlinks, icon-static, synchronous, private-synchronous, "
        + "x-canonical-private-synchronous, x-dunst-stack-tag, body-markup")
    // From the dnd plugin's Backend property once it exports one; from the server before.
    // dunst 1.9 has no pause level that lets Grow's own notifications through.
    let duringFocus =
      "; dunst 1.9.0 (2022-06-27) paused for focus would queue Grow's own notifications to "
      + "show them late, so during focus Grow sends it none: a distraction shows in the status "
      + "bar only"
    #expect(
      lines[3]
        == "✔ do not disturb: backend dunst (implied by the notification server)" + duringFocus
        || lines[3] == "✔ do not disturb: backend dunst (from the dnd plugin)" + duringFocus)
    #expect(
      lines[4]
        == "✔ display: DISPLAY=\(Self.display); the X server answers on /tmp/.X11-unix/X\(number)")
    #expect(lines[5] == "✔ sound: a sound server answers on \(pulseSocket); phase ends are heard")
    #expect(
      lines[6]
        == "✔ config: no file at \(harness.configPath); the defaults (cards: work)")
    #expect(lines[7] == "✔ data directory: \(data)/grow is writable")
    // The x11 plugin says what the X session offers it: the window manager of `make test`'s
    // desktop (openbox) publishes the active window, and Xvfb has SYNC and MIT-SCREEN-SAVER.
    let x11 = "; Openbox publishes _NET_ACTIVE_WINDOW; XSync idle alarms; XScreenSaver"
    // The wayland plugin stands down outside a Wayland session, as it should.
    let wayland =
      "✔ plugin wayland: stands down: not a Wayland session (WAYLAND_DISPLAY is not set); "
      + "the x11 plugin watches X sessions"
    let running: (String) -> String = { id in
      "✔ plugin \(id): running (built-in \(runningPluginPath(id)))" + (id == "x11" ? x11 : "")
    }
    let off: (String) -> String = { id in
      "✔ plugin \(id): off unless asked for; [plugin.\(id)] enabled = true turns it on"
    }
    // The browser plugin runs, waiting for a browser to connect.
    let browser =
      running("browser") + "; waiting for the browser extension (grow install --user --browser)"
    let expected: [String] =
      ["notify", "dnd", "x11"].map(running) + [wayland] + ["statusbar", "sound"].map(running)
      + [browser]
    #expect(
      Array(lines[8...]) == expected + ["breakscreen", "gnome-pomodoro", "tray"].map(off) + [""])

    let json = try harness.grow("doctor", "--json")
    let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect(report?["ok"] as? Bool == true)
    let checks = report?["checks"] as? [[String: Any]]
    #expect(checks?.count == 18)
    #expect(checks?.first?["check"] as? String == "session bus")
    #expect(checks?.first?["status"] as? String == "ok")
  }

  /// xfce4-notifyd's Do-Not-Disturb shows critical notifications: the doctor says Grow's own
  /// go that way during focus.
  @Test(.enabled(if: !display.isEmpty, "xfce4-notifyd needs the X server of make test"))
  func withXfce4NotifydGrowsOwnNotificationsPassAsCritical() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": Self.display])
    let servers = try NotificationServers.xfce(harness)
    let lines = try harness.grow("doctor").stdout.split(separator: "\n").map(String.init)
    #expect(
      lines[3]
        == "✔ do not disturb: backend xfce4-notifyd (implied by the notification server); "
        + "during focus Grow's own notifications go as critical, which its Do-Not-Disturb lets "
        + "through")
    _ = servers
  }

  /// The doctor names the backend as the dnd plugin does (`kde`, `gnome`): both read the
  /// one table in GrowPluginKit (`DoNotDisturbBackend`); the doctor's own copy said `plasma`.
  @Test(arguments: [("Plasma", "kde"), ("gnome-shell", "gnome")])
  func theDoctorNamesTheBackendAsTheDndPluginDoes(server: String, backend: String) throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    let mock = try NotificationServers.mock(harness, name: server, vendor: "test")
    let lines = try harness.grow("doctor").stdout.split(separator: "\n").map(String.init)
    #expect(
      lines[3]
        == "✔ do not disturb: backend \(backend) (implied by the notification server); "
        + "during focus Grow's own notifications go as critical, which its Do-Not-Disturb lets "
        + "through")
    _ = mock
  }

  @Test func aBrokenDesktopGetsAFixForEveryProblemAndExitsOne() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    let data = harness.environment["XDG_DATA_HOME", default: ""]
    let runtime = harness.environment["XDG_RUNTIME_DIR", default: ""]
    let doctor = try harness.grow("doctor")
    #expect(doctor.status == 1)
    #expect(doctor.stderr == "")
    #expect(
      doctor.stdout == """
        ✔ session bus: reachable
        ! daemon: not running, and nothing starts it; fix: run 'grow install --user' so it \
        starts by itself, or start it with 'grow daemon &'
        ✘ notifications: no notification server on the session bus; fix: start one (dunst, \
        mako, swaync, xfce4-notifyd) from your session startup
        ! do not disturb: no backend: there is no notification server to silence; fix: see \
        notifications
        ✘ display: DISPLAY is not set; idle detection and the active window need X; fix: run \
        grow in your X session; for a daemon started by systemd or D-Bus, run \
        'dbus-update-activation-environment --systemd DISPLAY XAUTHORITY' at login
        ! sound: no sound server answers on \(runtime)/pulse/native; phase ends are silent; \
        fix: start PulseAudio or PipeWire's pulse server (systemctl --user start \
        pipewire-pulse), or turn the sound plugin off: [plugin.sound] enabled = false
        ✔ config: no file at \(harness.configPath); the defaults (cards: work)
        ✔ data directory: \(data)/grow will be created (\(data) is writable)
        ✔ plugin notify: loads (built-in \(pluginPath("notify")))
        ✔ plugin dnd: loads (built-in \(pluginPath("dnd")))
        ✔ plugin x11: loads (built-in \(pluginPath("x11")))
        ✔ plugin wayland: loads (built-in \(pluginPath("wayland")))
        ✔ plugin statusbar: loads (built-in \(pluginPath("statusbar")))
        ✔ plugin sound: loads (built-in \(pluginPath("sound")))
        ✔ plugin browser: loads (built-in \(pluginPath("browser")))
        ✔ plugin breakscreen: off unless asked for; [plugin.breakscreen] enabled = true turns \
        it on
        ✔ plugin gnome-pomodoro: off unless asked for; [plugin.gnome-pomodoro] enabled = true \
        turns it on
        ✔ plugin tray: off unless asked for; [plugin.tray] enabled = true turns it on

        """)
    let json = try harness.grow("doctor", "--json")
    #expect(json.status == 1)
    let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect(report?["ok"] as? Bool == false)
    let display = (report?["checks"] as? [[String: Any]])?.first {
      $0["check"] as? String == "display"
    }
    #expect(display?["status"] as? String == "failed")
    #expect((display?["fix"] as? String)?.hasPrefix("run grow in your X session") == true)
  }

  @Test func noSessionBusAndABrokenConfigAreFailuresWithFixes() throws {
    let harness = try DaemonHarness(
      config: "[plugins]\nenable = notfy\n", startDaemon: false,
      environment: ["DISPLAY": "", "DBUS_SESSION_BUS_ADDRESS": ""])
    let doctor = try harness.grow("doctor")
    #expect(doctor.status == 1)
    let lines = doctor.stdout.split(separator: "\n").map(String.init)
    #expect(
      lines[0]
        == "✘ session bus: no session bus: DBUS_SESSION_BUS_ADDRESS is not set and there is no "
        + "$XDG_RUNTIME_DIR/bus; fix: run grow inside your desktop session (or under "
        + "dbus-run-session)")
    #expect(lines[1] == "✘ daemon: cannot be reached without a session bus; fix: see session bus")
    #expect(
      lines[5]
        == "✘ config: \(harness.configPath): [plugins] enable: unknown plugin 'notfy'; did you "
        + "mean 'notify'? (known: breakscreen, browser, dnd, gnome-pomodoro, notify, sound, statusbar, tray, wayland, x11); fix: edit \(harness.configPath); "
        + "'grow config check' lists every problem")
    #expect(lines.contains { $0.hasPrefix("✘ plugin notfy: unknown plugin 'notfy'") })
  }

  @Test func aDisplayWithNoServerIsAFailure() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ":4242"])
    let lines = try harness.grow("doctor").stdout.split(separator: "\n").map(String.init)
    #expect(
      lines[4]
        == "✘ display: DISPLAY=:4242, but no X server listens on /tmp/.X11-unix/X4242; fix: "
        + "start the X server, or set DISPLAY to the one your session uses")
  }
}
