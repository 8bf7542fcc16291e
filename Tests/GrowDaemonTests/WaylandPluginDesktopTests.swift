import Foundation
import Glibc
import GrowTestSupport
import Testing

/// The wayland plugin in a real headless sway 1.7 (GrowTestSupport's WaylandSession): the
/// daemon runs with the session's environment (WAYLAND_DISPLAY, SWAYSOCK and Xwayland's
/// DISPLAY), and the events an external plugin receives are what a person's other plugins see.
// Serialized: each test runs its own daemon in the suite's one compositor.
@Suite(.serialized, .waylandSession)
struct WaylandPluginDesktopTests {
  static let config = """
    [timer]
    distractions = grow-game, DistractXterm
    allow = grow-game:/grow docs/

    [plugin.wayland]
    grace = 1s
    idle-pause = 10m

    """

  final class Desktop {
    let session: WaylandSession
    let harness: DaemonHarness
    let eventsPath: String

    init(_ config: String = WaylandPluginDesktopTests.config, environment: [String: String] = [:])
      throws
    {
      session = try WaylandSession.required()
      harness = try DaemonHarness(
        startDaemon: false, environment: session.environment.merging(environment) { $1 })
      let home = harness.bus.environment["HOME", default: ""]
      eventsPath = home + "/events.jsonl"
      let recorder = home + "/record-events.sh"
      try writeExecutable("#!/bin/sh\nexec cat >> \(eventsPath)\n", to: recorder)
      try harness.writeConfig(config + "\n[plugin.events]\nexec = \(recorder)\n")
      try harness.start()
      let running = try harness.daemon?.waitUntil(timeout: 10) {
        try harness.plugins()["wayland"]?["state"] == "running"
      }
      guard running == true else {
        throw HarnessError("wayland not running: \(try harness.plugins())")
      }
    }

    func events(_ type: String) -> [[String: Any]] {
      let text = (try? String(contentsOfFile: eventsPath, encoding: .utf8)) ?? ""
      return text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
      }.filter { $0["type"] as? String == type }
    }

    func waitFor(
      _ type: String, timeout: TimeInterval = 30, _ matches: ([String: Any]) -> Bool = { _ in true }
    ) -> [String: Any]? {
      let deadline = Date().addingTimeInterval(timeout)
      while Date() < deadline {
        if let found = events(type).last(where: matches) { return found }
        Thread.sleep(forTimeInterval: 0.02)
      }
      return nil
    }

    /// What `grow plugins` prints once it holds `note` (waiting up to 30 s for it).
    func pluginsOnceTheyNote(_ note: String) throws -> String {
      let noted = try harness.daemon?.waitUntil(timeout: 30) {
        try harness.grow("plugins").stdout.contains(note)
      }
      #expect(noted == true, "grow plugins never said: \(note)")
      return try harness.grow("plugins").stdout
    }
  }

  /// Xwayland is there (DISPLAY is set) but no view of the session: the x11 plugin stands down
  /// and says why; the wayland plugin names the compositor and what it does there.
  @Test func underSwayTheWaylandPluginRunsAndTheX11OneSaysWhyItStandsDown() throws {
    let desktop = try Desktop()
    let plugins = try desktop.harness.plugins()
    #expect(plugins["x11"]?["state"] == "unavailable")
    #expect(
      plugins["x11"]?["error"]?.hasPrefix("this is a Wayland session (WAYLAND_DISPLAY=") == true,
      "\(plugins)")
    let note =
      "note: compositor: sway; active window from sway IPC; "
      + "block = minimize moves the window to the scratchpad; idle from org_kde_kwin_idle"
    // The idle protocol is known once the compositor listed its globals, a moment after start.
    let human = try desktop.pluginsOnceTheyNote(note)
    #expect(human.contains(note), "\(human)")
    #expect(human.contains("the wayland plugin watches it"), "\(human)")

    // grow doctor names the compositor and what works there.
    let doctor = try desktop.harness.grow("doctor").stdout
    let lines = doctor.split(separator: "\n").map(String.init)
    let socket = desktop.session.waylandSocket
    #expect(
      lines.contains(
        "✔ display: Wayland (WAYLAND_DISPLAY=\(socket), \(socket) answers); the wayland plugin "
          + "watches it (compositor and what works: plugin wayland below)"), "\(doctor)")
    #expect(
      lines.contains {
        $0.hasPrefix("✔ plugin wayland: running") && $0.hasSuffix(note.dropFirst(6))
      },
      "\(doctor)")
    #expect(
      lines.contains { $0.hasPrefix("✔ plugin x11: stands down: this is a Wayland session") },
      "\(doctor)")
  }

  /// Native (foot, app_id) and Xwayland (xterm, WM_CLASS) windows both come through sway's
  /// IPC; a distracting one is flagged after the grace period; closing the last window says
  /// nothing has focus.
  @Test func nativeAndXwaylandWindowsAreFollowedAndADistractionIsFlagged() throws {
    let desktop = try Desktop()
    let session = desktop.session
    #expect(try desktop.harness.grow("start").status == 0)
    let game = try session.openNativeWindow(appID: "grow-game", title: "Level 3")
    let native = desktop.waitFor("active-window-changed") { $0["class"] as? String == "grow-game" }
    #expect(native?["title"] as? String == "Level 3", "\(desktop.events("active-window-changed"))")
    #expect(native?["instance"] as? String == "")
    #expect((native?["pid"] as? Int ?? 0) > 0)
    let started = desktop.waitFor("distraction-started")
    #expect(started?["app"] as? String == "grow-game")

    let xterm = try session.openXwaylandWindow(class: "DistractXterm", title: "Time sink")
    let x = desktop.waitFor("active-window-changed") { $0["class"] as? String == "DistractXterm" }
    #expect(x?["title"] as? String == "Time sink")
    #expect(desktop.waitFor("distraction-ended") != nil, "left the game: that distraction ends")

    game.kill()
    xterm.kill()
    let nothing = desktop.waitFor("active-window-changed") {
      $0["class"] as? String == "" && $0["title"] as? String == ""
    }
    #expect(nothing != nil, "\(desktop.events("active-window-changed"))")
  }

  /// `block = minimize` on sway: the flagged window goes to the scratchpad.
  @Test func blockMinimizeMovesTheWindowToTheScratchpad() throws {
    let desktop = try Desktop(Self.config + "[card.work]\nblock = minimize\n")
    let session = desktop.session
    #expect(try desktop.harness.grow("start").status == 0)
    let game = try session.openNativeWindow(appID: "grow-game", title: "Level 3")
    defer { game.kill() }
    #expect(desktop.waitFor("distraction-started") != nil)
    // sway keeps scratchpad windows as floating nodes of its hidden `__i3_scratch` workspace.
    func inScratchpad() throws -> Bool {
      func workspaces(_ node: [String: Any]) -> [[String: Any]] {
        let children = node["nodes"] as? [[String: Any]] ?? []
        return (node["type"] as? String == "workspace" ? [node] : []) + children.flatMap(workspaces)
      }
      let scratch = workspaces(try session.tree()).first { $0["name"] as? String == "__i3_scratch" }
      return (scratch?["floating_nodes"] as? [[String: Any]] ?? []).contains {
        $0["app_id"] as? String == "grow-game"
      }
    }
    let hidden = try desktop.harness.daemon?.waitUntil(timeout: 30) { try inScratchpad() }
    #expect(hidden == true, "\((try? session.tree()) ?? [:])")
  }

  /// `block = close` on sway: `[con_id=…] kill` over the IPC closes the flagged window, native
  /// (foot takes xdg_toplevel.close and exits) as well as Xwayland (xterm, WM_DELETE_WINDOW).
  @Test func blockCloseClosesTheWindowOnSway() throws {
    let desktop = try Desktop(Self.config + "[card.work]\nblock = close\n")
    let session = desktop.session
    #expect(try desktop.harness.grow("start").status == 0)
    let game = try session.openNativeWindow(appID: "grow-game", title: "Level 3")
    defer { game.kill() }
    #expect(desktop.waitFor("distraction-started") != nil)
    func open(_ matches: ([String: Any]) -> Bool) throws -> Bool {
      try session.windows().contains(where: matches)
    }
    let gone = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      try !open { $0["app_id"] as? String == "grow-game" }
    }
    #expect(gone == true, "\((try? session.windows()) ?? [])\n\(desktop.harness.daemonLog)")

    let xterm = try session.openXwaylandWindow(class: "DistractXterm", title: "Time sink")
    defer { xterm.kill() }
    let xGone = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      try !open {
        ($0["window_properties"] as? [String: Any])?["class"] as? String == "DistractXterm"
      }
    }
    #expect(xGone == true, "\((try? session.windows()) ?? [])\n\(desktop.harness.daemonLog)")
  }

  /// Without the IPC, `block = close` asks through wlroots' toplevel list
  /// (`zwlr_foreign_toplevel_handle_v1.close`), as on river, labwc or Wayfire.
  @Test func blockCloseThroughTheToplevelList() throws {
    let desktop = try Desktop(
      Self.config + "[card.work]\nblock = close\n",
      environment: ["SWAYSOCK": "", "XDG_CURRENT_DESKTOP": "river"])
    let session = desktop.session
    #expect(try desktop.harness.grow("start").status == 0)
    let game = try session.openNativeWindow(appID: "grow-game", title: "Level 3")
    defer { game.kill() }
    #expect(desktop.waitFor("distraction-started") != nil)
    let gone = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      try !session.windows().contains { $0["app_id"] as? String == "grow-game" }
    }
    #expect(gone == true, "\((try? session.windows()) ?? [])\n\(desktop.harness.daemonLog)")
  }

  /// Nobody at the headless seat: sway's org_kde_kwin_idle says idle after `idle-pause`, focus
  /// pauses; input (`swaymsg seat - cursor move`, compositor-side) says resumed, focus goes on.
  @Test func awayOnSwayPausesFocusAndInputResumesIt() throws {
    let desktop = try Desktop(
      Self.config.replacingOccurrences(of: "idle-pause = 10m", with: "idle-pause = 2s")
        + "idle-respects-inhibitors = false\n")
    #expect(try desktop.harness.grow("start").status == 0)
    let paused = desktop.waitFor("away-paused")
    #expect(
      (paused?["away_seconds"] as? Double).map { $0 >= 2 } == true, "\(String(describing: paused))")
    #expect(try desktop.harness.status()["paused"] as? Bool == true)
    try desktop.session.swaymsg("seat", "-", "cursor", "move", "3", "3")
    #expect(desktop.waitFor("user-active") != nil)
    #expect(desktop.waitFor("away-resumed") != nil)
    #expect(try desktop.harness.status()["paused"] as? Bool == false)
  }

  /// A stopped sway (`kill -STOP`) answers nothing: the daemon answers `grow` all the same
  /// (status, pause, resume, each within the CLI's own call timeout; how fast is printed, not
  /// bounded), and once sway goes on the plugin follows windows again.
  /// (A question left unanswered by a stopped compositor is in I3WindowSourceTests.)
  @Test func aStoppedSwayHoldsNothingUp() throws {
    let desktop = try Desktop(Self.config + "[card.work]\nblock = minimize\n")
    let session = desktop.session
    #expect(try desktop.harness.grow("start").status == 0)
    kill(session.compositorPID, SIGSTOP)
    var continued = false
    defer { if !continued { kill(session.compositorPID, SIGCONT) } }
    let started = Date()
    #expect(try desktop.harness.grow("status").status == 0)
    #expect(try desktop.harness.grow("pause").status == 0)
    #expect(try desktop.harness.grow("resume").status == 0)
    print("status, pause, resume with sway stopped: \(Date().timeIntervalSince(started)) s")
    kill(session.compositorPID, SIGCONT)
    continued = true
    let game = try session.openNativeWindow(appID: "grow-game", title: "Level 3")
    defer { game.kill() }
    #expect(desktop.waitFor("distraction-started") != nil)
    #expect(try desktop.harness.plugins()["wayland"]?["state"] == "running")
  }

  /// Without sway's IPC (river, labwc, Wayfire), the focused window comes from wlroots'
  /// toplevel list on the Wayland connection; sway 1.7 offers it too. sway has no minimised
  /// state: `block = minimize` flags the window and the log says it was not minimised.
  @Test func withoutTheIPCTheToplevelListNamesTheFocusedWindow() throws {
    let desktop = try Desktop(
      Self.config + "[card.work]\nblock = minimize\n",
      environment: ["SWAYSOCK": "", "XDG_CURRENT_DESKTOP": "river"])
    let session = desktop.session
    let note =
      "compositor: river; active window from zwlr_foreign_toplevel_manager_v1; "
      + "block = minimize asks the compositor to minimise the window; idle from org_kde_kwin_idle"
    let plugins = try desktop.pluginsOnceTheyNote(note)
    #expect(plugins.contains(note), "\(plugins)")
    #expect(try desktop.harness.grow("start").status == 0)
    let editor = try session.openNativeWindow(appID: "grow-editor", title: "notes")
    #expect(
      desktop.waitFor("active-window-changed") { $0["class"] as? String == "grow-editor" } != nil)
    let game = try session.openNativeWindow(appID: "grow-game", title: "Level 3")
    let focused = desktop.waitFor("active-window-changed") { $0["class"] as? String == "grow-game" }
    #expect(focused?["title"] as? String == "Level 3", "\(desktop.events("active-window-changed"))")
    #expect(desktop.waitFor("distraction-started")?["app"] as? String == "grow-game")
    let told = try desktop.harness.daemon?.waitUntil(timeout: 30) {
      desktop.harness.daemonLog.contains("did not minimise grow-game")
    }
    #expect(told == true, "\(desktop.harness.daemonLog)")
    _ = try desktop.pluginsOnceTheyNote(
      "the compositor ignored the minimise request for grow-game: "
        + "block = minimize only flags windows here")

    try session.swaymsg("[app_id=grow-editor] focus")
    #expect(desktop.waitFor("distraction-ended") != nil)
    game.kill()
    editor.kill()
    let nothing = desktop.waitFor("active-window-changed") { $0["class"] as? String == "" }
    #expect(nothing != nil, "\(desktop.events("active-window-changed"))")
  }
}

/// GNOME on Wayland, with a dbusmock stand-in for Mutter's idle monitor (GNOME Shell cannot run
/// here): the wayland plugin says it has no active window there, and pauses and resumes on
/// the monitor's WatchFired signals.
@Suite struct GnomeWaylandTests {
  static let service = "org.gnome.Mutter.IdleMonitor"
  static let path = "/org/gnome/Mutter/IdleMonitor/Core"

  @Test func awayComesFromMutterAndDoctorSaysThereIsNoActiveWindow() throws {
    let harness = try DaemonHarness(
      config: "[plugin.wayland]\nidle-pause = 2s\nidle-respects-inhibitors = false\n",
      startDaemon: false,
      environment: ["WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "GNOME"])
    let mutter = try BackgroundProcess(
      "/usr/bin/python3", ["-m", "dbusmock", "--session", Self.service, Self.path, Self.service],
      environment: harness.environment)
    defer { mutter.kill() }
    try NotificationServers.waitForName(Self.service, harness, process: mutter)
    for (method, inSignature, outSignature, code) in [
      ("AddIdleWatch", "t", "u", "ret = 1"), ("AddUserActiveWatch", "", "u", "ret = 2"),
      ("RemoveWatch", "u", "", ""),
    ] {
      let result = try harness.run(
        "gdbus",
        [
          "call", "--session", "-d", Self.service, "-o", Self.path, "-m",
          "org.freedesktop.DBus.Mock.AddMethod", Self.service, method, inSignature, outSignature,
          code,
        ])
      #expect(result.status == 0, "\(result)")
    }
    func fire(_ id: Int) throws {
      let result = try harness.run(
        "gdbus",
        [
          "call", "--session", "-d", Self.service, "-o", Self.path, "-m",
          "org.freedesktop.DBus.Mock.EmitSignal", Self.service, "WatchFired", "u",
          "[<uint32 \(id)>]",
        ])
      #expect(result.status == 0, "\(result)")
    }
    func calls() throws -> String {
      try harness.run(
        "gdbus",
        [
          "call", "--session", "-d", Self.service, "-o", Self.path, "-m",
          "org.freedesktop.DBus.Mock.GetCalls",
        ]
      ).stdout
    }
    try harness.start()
    let note =
      "compositor: GNOME Shell (Mutter); GNOME gives a plain client no active window: "
      + "distractions are not flagged; idle from org.gnome.Mutter.IdleMonitor"
    let ready = try harness.daemon?.waitUntil(timeout: 10) {
      try harness.grow("plugins").stdout.contains(note)
    }
    #expect(ready == true, "\((try? harness.grow("plugins").stdout) ?? "")")
    // The watch is for idle-pause, in milliseconds.
    let asked = try calls()
    #expect(asked.contains("'AddIdleWatch', [<uint64 2000>]"), "\(asked)")

    #expect(try harness.grow("start").status == 0)
    try fire(1)
    #expect(try harness.eventually { try harness.status()["paused"] as? Bool == true })
    #expect(try harness.eventually { try calls().contains("AddUserActiveWatch") })
    try fire(2)
    #expect(try harness.eventually { try harness.status()["paused"] as? Bool == false })

    let doctor = try harness.grow("doctor").stdout
    #expect(
      doctor.contains("! plugin wayland: running") && doctor.contains(note)
        && doctor.contains("nothing to fix in Grow"), "\(doctor)")
  }
}
