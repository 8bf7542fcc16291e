import Foundation
import GrowPluginKit
import GrowTestSupport
import Testing

/// Loading plugins at run time, and keeping the daemon alive when they fail.
@Suite struct PluginHostTests {
  /// The daemon with plugin libraries (`grow` itself, not the static image, which has the
  /// built-ins linked in: DaemonImageTests).
  @Test func theBuiltInsLoadFromTheirOwnLibraries() throws {
    let harness = try DaemonHarness(
      environment: ["DISPLAY": ":99", "WAYLAND_DISPLAY": "", "GROW_DAEMON_IMAGE": "dynamic"])
    let plugins = try harness.plugins()
    #expect(
      Set(plugins.keys) == [
        "notify", "dnd", "x11", "wayland", "statusbar", "sound", "tray", "gnome-pomodoro",
        "browser", "breakscreen",
      ])
    for (id, plugin) in plugins {
      #expect(plugin["source"] == "built-in")
      #expect(plugin["location"]?.hasSuffix("/libgrow-plugin-\(id).so") == true)
      // There is no X server on :99 and no Wayland display: loaded, then unavailable with the
      // reason.
      #expect(
        plugin["state"]
          == (["x11", "wayland"].contains(id)
            ? "unavailable"
            : ["tray", "gnome-pomodoro", "breakscreen"].contains(id)
              ? "disabled" : "running"),
        "\(id): \(plugin)")
    }
    #expect(
      plugins["x11"]?["error"]
        == "cannot open the X display ':99'; is the X server running and may this user use it?")
    let maps = try harness.daemonMemoryMap()
    for id in ["notify", "dnd", "x11", "statusbar"] {
      #expect(maps.contains("libgrow-plugin-\(id).so"))
    }
  }

  /// What `grow plugin install` puts in the plugin directory: a program named
  /// `grow-plugin-ID` runs as if `[plugin.ID] exec` named it; one with an extension is a
  /// project file, not a plugin; an `exec` line wins over a program found.
  @Test func programsNamedGrowPluginIDInThePluginDirectoryRunAsExternalPlugins() throws {
    let harness = try DaemonHarness(
      config: "[plugin.other]\nexec = /bin/cat\n", startDaemon: false,
      environment: ["DISPLAY": ""])
    let directory = harness.pluginDirectory
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for name in ["grow-plugin-found", "grow-plugin-source.py", "grow-plugin-other"] {
      try "#!/bin/sh\nexec cat >/dev/null\n".write(
        toFile: directory + "/" + name, atomically: true, encoding: .utf8)
      chmod(directory + "/" + name, 0o755)
    }
    try harness.start()
    let plugins = try harness.plugins()
    #expect(plugins["found"]?["source"] == "executable")
    #expect(plugins["found"]?["location"] == directory + "/grow-plugin-found")
    #expect(plugins["found"]?["state"] == "running", "\(plugins)")
    #expect(plugins["source"] == nil)
    #expect(plugins["other"]?["location"] == "/bin/cat")
  }

  @Test func aDisabledPluginIsNotEvenLoaded() throws {
    let harness = try DaemonHarness(
      config: """
        [plugins]
        enable = statusbar, x11

        [plugin.x11]
        enabled = false
        """, environment: ["GROW_DAEMON_IMAGE": "dynamic"])
    let plugins = try harness.plugins()
    #expect(plugins["statusbar"]?["state"] == "running")
    for id in ["notify", "dnd", "x11"] {
      #expect(plugins[id]?["state"] == "disabled", "\(id)")
    }
    let maps = try harness.daemonMemoryMap()
    #expect(maps.contains("libgrow-plugin-statusbar.so"))
    #expect(!maps.contains("libgrow-plugin-notify.so"))
    #expect(!maps.contains("libgrow-plugin-x11.so"))
  }

  @Test func anUnknownPluginIsReportedWithTheValidOnes() throws {
    let harness = try DaemonHarness(config: "[plugins]\nenable = notfy, statusbar\n")
    let plugins = try harness.plugins()
    #expect(plugins["notfy"]?["state"] == "failed")
    #expect(
      plugins["notfy"]?["error"]
        == "unknown plugin 'notfy'; did you mean 'notify'? (known: breakscreen, browser, dnd, gnome-pomodoro, notify, sound, statusbar, tray, wayland, x11)"
    )
    #expect(plugins["statusbar"]?["state"] == "running")
  }

  @Test func withoutADisplayTheX11PluginIsUnavailableAndTheRestRuns() throws {
    let harness = try DaemonHarness(environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
    let plugins = try harness.plugins()
    #expect(plugins["x11"]?["state"] == "unavailable")
    #expect(plugins["x11"]?["error"] == "DISPLAY is not set; the X11 monitor needs an X session")
    #expect(plugins["statusbar"]?["state"] == "running")
    let human = try harness.grow("plugins")
    #expect(
      human.stdout.split(separator: "\n").contains {
        $0.hasPrefix("x11 ") && $0.contains(" unavailable  built-in ")
      })
    #expect(human.stdout.contains("    why: DISPLAY is not set"))
  }

  @Test func aPluginWhoseSetUpThrowsIsDisabledAndTheDaemonRunsOn() throws {
    let harness = try DaemonHarness(startDaemon: false)
    try harness.installPlugin(library: "libgrowtest-throws-on-init.so", as: "throws-on-init")
    try harness.start()
    let plugins = try harness.plugins()
    #expect(plugins["throws-on-init"]?["source"] == "library")
    #expect(plugins["throws-on-init"]?["state"] == "failed")
    #expect(plugins["throws-on-init"]?["error"] == "fixture: refusing to start")
    #expect(plugins["statusbar"]?["state"] == "running")
    #expect(try harness.grow("start").status == 0)
  }

  @Test func aPluginWhoseHandlerThrowsIsDisabledAndTheTimerIsUnaffected() throws {
    let harness = try DaemonHarness(startDaemon: false)
    try harness.installPlugin(library: "libgrowtest-throws-in-handler.so", as: "throws-in-handler")
    try harness.start()
    #expect(try harness.plugins()["throws-in-handler"]?["state"] == "running")
    #expect(try harness.grow("start").status == 0)
    let plugin = try harness.plugins()["throws-in-handler"]
    #expect(plugin?["state"] == "failed")
    #expect(plugin?["error"] == "event handler threw: fixture: broken handler")
    #expect(try harness.status()["state"] as? String == "focus")
    #expect(try harness.grow("pause").status == 0)
  }

  @Test func aPluginBuiltForAnotherAPIVersionIsRefusedWithBothVersions() throws {
    let harness = try DaemonHarness(startDaemon: false)
    try harness.installPlugin(library: "libgrowtest-future-api.so", as: "future-api")
    try harness.start()
    let error = try harness.plugins()["future-api"]?["error"] ?? ""
    #expect(
      error.hasSuffix(
        "libgrow-plugin-future-api.so was built for Grow plugin API 99, but this grow provides "
          + "API \(GrowPluginAPI.version); rebuild the plugin against this version of GrowKit"))
  }

  @Test func librariesThatAreNotPluginsOrAreUnsafeAreRefused() throws {
    let harness = try DaemonHarness(startDaemon: false)
    try harness.installPlugin(library: "libGrowKit.so", as: "bogus")
    try harness.installPlugin(
      library: "libgrowtest-throws-on-init.so", as: "writable", mode: 0o777)
    try harness.installPlugin(library: "libgrowtest-throws-on-init.so", as: "renamed")
    try harness.start()
    let plugins = try harness.plugins()
    let directory = harness.pluginDirectory
    #expect(
      plugins["bogus"]?["error"]
        == "\(directory)/libgrow-plugin-bogus.so is not a Grow plugin: it has no 'grow_plugin' "
        + "entry point")
    #expect(
      plugins["writable"]?["error"]
        == "refusing to load \(directory)/libgrow-plugin-writable.so: it is writable by other "
        + "users; run 'chmod go-w \(directory)/libgrow-plugin-writable.so'")
    #expect(
      plugins["renamed"]?["error"]
        == "\(directory)/libgrow-plugin-renamed.so should hold plugin 'renamed' but holds "
        + "'throws-on-init'; rename the file to libgrow-plugin-throws-on-init.so")
    #expect(try harness.grow("status").status == 0)
  }

  /// A safe library file in a directory others may write to could be swapped for theirs
  /// before dlopen reads it: refused, naming the directory and the fix; the daemon runs on.
  /// Once fixed, the plugin loads on reload.
  @Test func aLibraryInADirectoryOthersMayWriteToIsRefusedWithTheFix() throws {
    let harness = try DaemonHarness(startDaemon: false)
    try harness.installPlugin(library: "libgrowtest-throws-in-handler.so", as: "throws-in-handler")
    let directory = harness.pluginDirectory
    #expect(chmod(directory, 0o777) == 0)
    try harness.writeConfig("[plugins]\nenable = throws-in-handler, statusbar\n")
    try harness.start()
    let plugins = try harness.plugins()
    #expect(
      plugins["throws-in-handler"]?["error"]
        == "refusing to load \(directory)/libgrow-plugin-throws-in-handler.so: the directory "
        + "\(directory) is writable by other users; run 'chmod go-w \(directory)'")
    #expect(plugins["statusbar"]?["state"] == "running")
    #expect(!(try harness.daemonMemoryMap().contains("libgrow-plugin-throws-in-handler.so")))

    #expect(chmod(directory, 0o755) == 0)
    #expect(try harness.grow("plugins", "reload", "throws-in-handler").status == 0)
    #expect(try harness.plugins()["throws-in-handler"]?["state"] == "running")
    #expect(try harness.daemonMemoryMap().contains("libgrow-plugin-throws-in-handler.so"))
  }

  @Test func statusbarKeepsTheStatusFileAndRemovesItOnExit() throws {
    let harness = try DaemonHarness(config: "[plugins]\nenable = statusbar\n")
    let file = harness.environment["XDG_RUNTIME_DIR", default: ""] + "/grow/status.json"
    #expect(try harness.grow("start").status == 0)
    let written = harness.daemon?.waitUntil(timeout: 30) {
      ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").contains("\"focus\"")
    }
    #expect(written == true)
    let attributes = try FileManager.default.attributesOfItem(atPath: file)
    #expect(attributes[.posixPermissions] as? Int == 0o600)
    #expect(harness.daemon?.terminate() == 0)
    #expect(!FileManager.default.fileExists(atPath: file))
  }

  /// A reload stops a plugin's instance and starts a new one, which subscribes to its
  /// signals again; the old instance's match rules and handlers go with it. Before, each
  /// reload of notify and dnd left three rules behind on the daemon's connection: 304 after a
  /// hundred, where the daemon starts with 4.
  @Test func aHundredReloadsLeaveTheDaemonsMatchRulesAsTheyWere() throws {
    let harness = try DaemonHarness(
      config: "[plugins]\nenable = notify, dnd\n", environment: ["DISPLAY": ""])
    let running = {
      let plugins = try harness.plugins()
      return plugins["notify"]?["state"] == "running" && plugins["dnd"]?["state"] == "running"
    }
    #expect(try harness.eventually(timeout: 20, running))
    let before = try harness.daemonMatchRules()
    let reload =
      "busctl --user call org.grow.Grow1 /org/grow/Grow1 org.grow.Grow1.Plugins Reload s"
    let reloads = try harness.run(
      "/bin/sh",
      ["-c", "for i in $(seq 100); do \(reload) notify && \(reload) dnd || exit 1; done"],
      timeout: 300)
    #expect(reloads.status == 0, "\(reloads.stderr)")
    #expect(try harness.eventually(timeout: 20, running))
    var after = before
    let flat = try harness.eventually(timeout: 20) {
      after = try harness.daemonMatchRules()
      return after == before
    }
    #expect(flat, "the daemon's match rules: \(before) before a hundred reloads, \(after) after")
    #expect(try harness.grow("status").status == 0)
  }

  /// `grow plugins reload ID` shows the plugin as the reload left it: the new instance starts
  /// once the old one has exited, and the daemon answers only then. This one takes a second to
  /// exit after SIGTERM. (Before, Reload was answered at once and the list printed right
  /// after it showed the plugin disabled.)
  @Test func reloadingAPluginAnswersOnceItsNewInstanceRuns() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    let script = harness.bus.environment["HOME", default: ""] + "/slow-to-exit.sh"
    try writeExecutable(
      "#!/bin/sh\ntrap 'sleep 1; exit 0' TERM\nwhile :; do sleep 0.1; done\n", to: script)
    try harness.writeConfig("[plugins]\nenable = slow\n\n[plugin.slow]\nexec = \(script)\n")
    try harness.start()
    #expect(
      try harness.eventually(timeout: 20) { try harness.plugins()["slow"]?["state"] == "running" })
    let reload = try harness.grow("plugins", "reload", "slow")
    #expect(reload.status == 0, "\(reload.stderr)")
    let line = reload.stdout.split(separator: "\n").first { $0.hasPrefix("slow ") }
    #expect(line?.contains(" running ") == true, "\(reload.stdout)")
  }

  @Test func reloadingNeedsAKnownEnabledPlugin() throws {
    let harness = try DaemonHarness(config: "[plugins]\nenable = statusbar\n")
    #expect(try harness.grow("plugins", "reload", "statusbar").status == 0)
    let unknown = try harness.grow("plugins", "reload", "statusbra")
    #expect(unknown.status == 1)
    #expect(unknown.stderr.contains("no plugin 'statusbra'; did you mean 'statusbar'?"))
    let disabled = try harness.grow("plugins", "reload", "notify")
    #expect(disabled.stderr.contains("plugin 'notify' is not enabled"))
  }
}
