import Foundation
import GrowDaemon
@_spi(GrowHost) import GrowPluginKit
import GrowTestSupport
import Testing

/// The static daemon image (`grow-daemon` beside `grow`, DaemonImage): `grow daemon` runs it
/// when every enabled plugin is linked into it or is a program, and the daemon with plugin
/// libraries otherwise; the built-in plugins behave the same in both. `make test` builds the
/// image (scripts/build-daemon-image) before the suite.
@Suite(.serialized) struct DaemonImageTests {
  static var image: String {
    URL(fileURLWithPath: Binaries.grow).deletingLastPathComponent()
      .appendingPathComponent(DaemonImage.fileName).path
  }

  /// The executable the daemon's process runs (the pid `grow daemon` was started as).
  static func executable(of harness: DaemonHarness) throws -> String {
    guard let pid = harness.daemon?.pid else { throw HarnessError("no daemon") }
    return try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
  }

  static func realPath(_ path: String) -> String {
    URL(fileURLWithPath: path).resolvingSymlinksInPath().path
  }

  /// One Swift runtime and one GrowKit, both inside the image: it names neither shared
  /// library, nor the C libraries only some plugins need (opened with dlopen when they run).
  @Test func theImageHoldsTheRuntimeAndTheKit() throws {
    #expect(FileManager.default.isExecutableFile(atPath: Self.image), "\(Self.image) is not built")
    let loaded = try Command.run("ldd", [Self.image])
    #expect(loaded.status == 0, "\(loaded.stderr)")
    for library in [
      "libswiftCore", "libGrowKit", "libFoundationEssentials", "libdispatch", "libcanberra",
      "libglib-2.0", "libgio-2.0", "libcairo",
    ] {
      #expect(!loaded.stdout.contains(library), "grow-daemon loads \(library):\n\(loaded.stdout)")
    }
  }

  @Test func linksInTheBuiltInPluginsTheDaemonSaysItDoes() throws {
    // Every id DaemonImage lists is a built-in plugin, and the break screen (cairo, pango,
    // GLib) stays a library.
    for id in DaemonImage.linkedIn {
      #expect(builtInPluginIDs.contains(id), "\(id) is no built-in plugin")
    }
    #expect(!DaemonImage.linkedIn.contains("breakscreen"))
  }

  @Test func growDaemonRunsTheImageWithItsBuiltInPlugins() throws {
    let harness = try DaemonHarness(config: "[plugins]\nenable = notify, dnd, x11, statusbar\n")
    #expect(Self.realPath(try Self.executable(of: harness)) == Self.realPath(Self.image))
    let plugins = try harness.plugins()
    for id in ["notify", "dnd", "x11", "statusbar"] {
      #expect(plugins[id]?["state"] == "running", "\(id): \(plugins[id] ?? [:])")
      #expect(plugins[id]?["source"] == "built-in")
      #expect(
        Self.realPath(plugins[id]?["location"] ?? "") == Self.realPath(Self.image),
        "\(id) does not say it is linked in: \(plugins[id] ?? [:])")
    }
    #expect(plugins["sound"]?["state"] == "disabled")
    #expect(harness.daemon?.stderr.contains("running the static daemon image") == true)
    #expect(try harness.grow("start").status == 0)
    #expect(try harness.status()["state"] as? String == "focus")
  }

  /// Enabling and disabling in the config, `grow reload`, and a plugin that cannot run (no X
  /// display) beside the others, as with plugin libraries.
  @Test func pluginsAreEnabledDisabledAndReloadedInTheImage() throws {
    let harness = try DaemonHarness(
      config: "[plugin.statusbar]\nenabled = false\n[plugin.sound]\nenabled = false\n",
      environment: ["DISPLAY": ""])
    #expect(Self.realPath(try Self.executable(of: harness)) == Self.realPath(Self.image))
    var plugins = try harness.plugins()
    #expect(plugins["statusbar"]?["state"] == "disabled")
    #expect(plugins["x11"]?["state"] == "unavailable")
    #expect(plugins["notify"]?["state"] == "running")
    try harness.writeConfig("[plugin.sound]\nenabled = false\n")
    let reload = try harness.grow("reload")
    #expect(reload.status == 0, "\(reload)")
    #expect(reload.stdout.contains("started plugin 'statusbar'"), "\(reload.stdout)")
    plugins = try harness.plugins()
    #expect(plugins["statusbar"]?["state"] == "running")
    let restarted = try harness.grow("plugins", "reload", "notify")
    #expect(restarted.status == 0, "\(restarted)")
    #expect(try harness.plugins()["notify"]?["state"] == "running")
  }

  /// A plugin library is built against libGrowKit.so and the shared runtime: the image cannot
  /// load it, so `grow daemon` runs itself and says why.
  @Test func aPluginLibraryRunsTheDaemonWithPluginLibraries() throws {
    let harness = try DaemonHarness(startDaemon: false)
    try harness.installPlugin(library: "libgrowtest-throws-in-handler.so", as: "throws-in-handler")
    try harness.start()
    #expect(
      Self.realPath(try Self.executable(of: harness)) == Self.realPath(Binaries.locate("grow-cli")))
    #expect(
      harness.daemon?.stderr.contains(
        "plugin 'throws-in-handler' is a library built against libGrowKit.so") == true)
    #expect(try harness.plugins()["throws-in-handler"]?["state"] == "running")
  }

  /// A plugin library installed while the image runs: `grow reload` hands over, in the same
  /// process, to the daemon that loads it; the running focus goes on with its deadline, and
  /// nothing is recorded as cut short.
  @Test func aLibraryInstalledWhileTheImageRunsIsLoadedByAHandOver() throws {
    let harness = try DaemonHarness()
    #expect(Self.realPath(try Self.executable(of: harness)) == Self.realPath(Self.image))
    #expect(try harness.grow("start").status == 0)
    let before = try harness.status()
    try harness.installPlugin(library: "libgrowtest-throws-in-handler.so", as: "throws-in-handler")
    let reload = try harness.grow("reload")
    #expect(reload.status == 0, "\(reload)")
    #expect(
      reload.stdout.hasPrefix(
        DaemonImage.handOverReport + ": plugin 'throws-in-handler' is a library"),
      "\(reload.stdout)")
    #expect(
      Self.realPath(try Self.executable(of: harness)) == Self.realPath(Binaries.locate("grow-cli")))
    #expect(try harness.plugins()["throws-in-handler"]?["state"] == "running")
    let after = try harness.status()
    #expect(after["state"] as? String == "focus", "\(after)")
    #expect(after["ends_at"] as? String == before["ends_at"] as? String, "\(before) \(after)")
    let history = try harness.grow("history", "--json")
    #expect(!history.stdout.contains("\"stopped\""), "\(history.stdout)")
  }

  @Test func growDaemonImageDynamicAsksForTheDaemonWithPluginLibraries() throws {
    let harness = try DaemonHarness(environment: ["GROW_DAEMON_IMAGE": "dynamic"])
    #expect(
      Self.realPath(try Self.executable(of: harness)) == Self.realPath(Binaries.locate("grow-cli")))
    #expect(try harness.plugins()["notify"]?["state"] == "running")
  }
}
