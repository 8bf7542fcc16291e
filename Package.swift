// swift-tools-version:6.0
// Grow: a focus timer for Linux desktops.
//
// Dependencies point one way: GrowCore ← GrowPluginKit ← plugins ← app.
// The shared modules (core, config, D-Bus, plugin API) are built once, as the dynamic
// library of the local package in Sources/GrowKit, so that plugins loaded at run time see the
// same types as the daemon.
import PackageDescription

let kit = Target.Dependency.product(name: "GrowKit", package: "GrowKit")
/// The plugin test kit (GrowPluginTesting): manual loop, recording timer, log capture.
let testKit = Target.Dependency.product(name: "GrowPluginTesting", package: "GrowKit")
/// See the plugins' test targets below.
let onePluginEntry: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "--allow-multiple-definition"])]

let package = Package(
  name: "Grow",
  products: [
    .executable(name: "grow", targets: ["grow"]),
    // Built-in plugins: each its own shared library, found next to `grow` and loaded at run
    // time only when the config enables it (see PluginHost). libgrow-plugin-ID.so.
    .library(name: "grow-plugin-notify", type: .dynamic, targets: ["NotifyPlugin"]),
    .library(name: "grow-plugin-dnd", type: .dynamic, targets: ["DoNotDisturbPlugin"]),
    .library(name: "grow-plugin-x11", type: .dynamic, targets: ["X11Plugin"]),
    .library(name: "grow-plugin-statusbar", type: .dynamic, targets: ["StatusBarPlugin"]),
  ],
  dependencies: [
    .package(path: "Sources/GrowKit")
  ],
  targets: [
    // The system SQLite, behind GrowHistory's Swift names; nothing else imports it.
    .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    // libnotify with the GLib/GIO under it, for the dnd plugin (GNOME's GSettings). The notify
    // plugin speaks the notification protocol over the daemon's own bus connection instead.
    .systemLibrary(name: "CNotify", pkgConfig: "libnotify", providers: [.apt(["libnotify-dev"])]),
    // The phase history (SQLite), its statistics, the garden and the SVG report.
    .target(name: "GrowHistory", dependencies: [kit, "CSQLite"]),
    // XCB with the SYNC (idle alarm) extension, behind the x11 plugin's Swift wrapper
    // (Plugins/X11Plugin/X11Display.swift) and the tests' title flood (GrowTestSupport).
    .systemLibrary(
      name: "CX11", pkgConfig: "xcb xcb-sync",
      providers: [.apt(["libxcb1-dev", "libxcb-sync-dev"])]),

    // App: the daemon (event loop, D-Bus service) and the command line.
    .target(name: "GrowDaemon", dependencies: [kit, "GrowHistory"]),
    .target(name: "GrowCLI", dependencies: [kit, "GrowDaemon", "GrowHistory"]),
    // Installed as PREFIX/bin/grow with libGrowKit.so (and the Swift runtime) in
    // PREFIX/lib/grow: the RUNPATH finds them there without LD_LIBRARY_PATH.
    .executableTarget(
      name: "grow", dependencies: ["GrowCLI"],
      linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../lib/grow"])]),

    // Built-in plugins, in Plugins/ (run-time plugins, not SwiftPM package plugins).
    .target(name: "NotifyPlugin", dependencies: [kit], path: "Plugins/NotifyPlugin"),
    .target(
      name: "DoNotDisturbPlugin", dependencies: [kit, "CNotify"], path: "Plugins/DoNotDisturbPlugin"
    ),
    .target(name: "X11Plugin", dependencies: [kit, "CX11"], path: "Plugins/X11Plugin"),
    .target(name: "StatusBarPlugin", dependencies: [kit], path: "Plugins/StatusBarPlugin"),

    // Tools, in Tools/: never part of the product (`make build` and `make install` build only
    // `grow` and the plugins), built by `swift build --build-tests` for their tests.
    // Benchmarks (make bench): prints figures, asserts nothing.
    .executableTarget(
      name: "grow-bench", dependencies: [kit, "GrowDaemon", "GrowHistory", "GrowTestSupport"],
      path: "Tools/grow-bench"),
    // The fault-injection soak (make soak; a short run in make test): kills, crashes, checks.
    .target(
      name: "GrowSoak", dependencies: [kit, "GrowHistory", "GrowTestSupport"],
      path: "Tools/GrowSoak"),
    .executableTarget(name: "grow-soak", dependencies: ["GrowSoak"], path: "Tools/grow-soak"),
    // The parsers' promises under hostile input, and their driver: libFuzzer for `make fuzz`
    // (built with -DGROW_LIBFUZZER), a replay of saved inputs otherwise.
    .target(name: "GrowFuzz", dependencies: [kit, "GrowDaemon"], path: "Tools/GrowFuzz"),
    .executableTarget(name: "grow-fuzz", dependencies: ["GrowFuzz"], path: "Tools/grow-fuzz"),

    // Test-only helpers: a private session bus, running commands and the daemon, and the
    // broken plugins of Tests/Fixtures (a package of their own, built on first use against
    // this build's GrowKit: FixturePlugins).
    .target(name: "GrowTestSupport", dependencies: [kit, "CX11"]),

    // Tests mirror Sources/ and Plugins/.
    .testTarget(name: "GrowCoreTests", dependencies: [kit]),
    .testTarget(name: "GrowTestSupportTests", dependencies: ["GrowTestSupport"]),
    .testTarget(name: "GrowLoopTests", dependencies: [kit, testKit]),
    .testTarget(name: "GrowDBusTests", dependencies: [kit, "GrowTestSupport"]),
    .testTarget(
      name: "GrowDaemonTests", dependencies: [kit, "GrowDaemon", "GrowHistory", "GrowTestSupport"]),
    .testTarget(name: "GrowCLITests", dependencies: ["GrowTestSupport", "GrowHistory"]),
    .testTarget(name: "GrowConfigTests", dependencies: [kit]),
    .testTarget(name: "GrowHistoryTests", dependencies: [kit, "GrowHistory", "GrowTestSupport"]),
    .testTarget(name: "ExamplesTests", dependencies: ["GrowTestSupport"]),
    .testTarget(
      name: "GrowSoakTests", dependencies: [kit, "GrowSoak", "GrowHistory", "GrowTestSupport"]),
    .testTarget(name: "GrowPluginKitTests", dependencies: [kit]),
    .testTarget(name: "GrowFuzzTests", dependencies: [kit, "GrowFuzz"]),
    // The notify plugin's wording and lifecycle against a recording server (fast); the real
    // servers are in GrowDaemonTests.
    // The other plugins' logic on the test kit's manual loop, in milliseconds: x11 against a
    // scripted X11Connection, dnd against a scripted DndBackend; end to end (Xvfb, real
    // servers) in GrowDaemonTests. SwiftPM links every test target into one binary, where the
    // plugins' `grow_plugin` entry points (one per plugin library, for dlsym) meet: the first
    // is kept; the tests make their plugins directly and never look it up.
    .testTarget(
      name: "NotifyPluginTests", dependencies: [kit, testKit, "NotifyPlugin"],
      linkerSettings: onePluginEntry),
    .testTarget(
      name: "X11PluginTests", dependencies: [kit, testKit, "X11Plugin"],
      linkerSettings: onePluginEntry),
    .testTarget(
      name: "DoNotDisturbPluginTests", dependencies: [kit, testKit, "DoNotDisturbPlugin"],
      linkerSettings: onePluginEntry),
    .testTarget(
      name: "StatusBarPluginTests", dependencies: [kit, testKit, "StatusBarPlugin"],
      linkerSettings: onePluginEntry),
  ]
)
