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

/// A built-in plugin: the target `name` in Plugins/NAME, the library `libgrow-plugin-ID.so`
/// (found next to `grow` and loaded at run time only when the config enables it, see
/// PluginHost) and the test target NAMETests on the plugin test kit.
struct BuiltInPlugin {
  let id: String
  let name: String
  var dependencies: [Target.Dependency] = []
  var testDependencies: [Target.Dependency] = []
}

func builtIn(
  _ id: String, _ name: String, dependencies: [Target.Dependency] = [],
  testDependencies: [Target.Dependency] = []
) -> BuiltInPlugin {
  BuiltInPlugin(
    id: id, name: name, dependencies: dependencies, testDependencies: testDependencies)
}

/// The built-in plugins, in the order `grow plugins` lists them: the one list to extend when
/// adding one (the Makefile and scripts/install-grow read the ids from these lines with
/// scripts/built-in-plugins; `builtInPluginIDs` in GrowPluginKit, which the daemon and the CLI
/// use, must name the same ids: BuiltInPluginsTests says so if not). Each exports its entry
/// point as `grow_plugin_ID`, so the plugins' test targets link into one test binary without
/// clashing symbols.
let builtInPlugins = [
  builtIn("notify", "NotifyPlugin"),
  builtIn("dnd", "DoNotDisturbPlugin", dependencies: ["CGioLoader"]),
  builtIn("x11", "X11Plugin", dependencies: ["CX11"]),
  // Wayland sessions: the compositors' window sources (sway/i3 IPC, Hyprland) and idle
  // protocols feeding the kit's DistractionWatch, as the x11 plugin does under X. Its tests
  // run the sources against real i3 (Xvfb) and a Hyprland stand-in.
  builtIn(
    "wayland", "WaylandPlugin", dependencies: ["CWaylandProtocols"],
    testDependencies: ["GrowTestSupport"]),
  builtIn("statusbar", "StatusBarPlugin"),
  builtIn("sound", "SoundPlugin", dependencies: ["CCanberraLoader"]),
  builtIn("tray", "TrayPlugin"),
  // GNOME Pomodoro's D-Bus API (org.gnome.Pomodoro) on the daemon's bus connection, for the
  // scripts and bar modules written for it; tested against the real one in GrowDaemonTests.
  builtIn("gnome-pomodoro", "GnomePomodoroPlugin"),
  // Websites: what Grow's browser extension (browser/) reports through `grow browser-host`,
  // judged with the cards' site: patterns; tested against Chromium in GrowCLITests.
  builtIn("browser", "BrowserPlugin"),
  // At a break, Grow's own screen over every monitor (XCB, RandR, cairo and pango on X11; the
  // wlr layer shell and wl_shm on Wayland); its tests run it on Xvfb with two monitors and on
  // headless sway with two outputs.
  builtIn(
    "breakscreen", "BreakScreenPlugin", dependencies: ["CBreakScreen", "CWaylandProtocols"],
    testDependencies: ["GrowTestSupport"]),
]

// The daemon image (docs/how-it-is-built.md, "Two daemon images"): with
// GROW_DAEMON_IMAGE=static (scripts/build-daemon-image, in a scratch path of its own) GrowKit
// is linked in instead of being a shared library, and `grow-daemon` is one executable holding
// the daemon, the built-in plugins below (registered by their entry points, not dlopen'd) and
// the Swift runtime (-static-stdlib, no PIE). It can load no plugin library: `grow daemon`
// runs it only when no enabled plugin is one (DaemonImage).
let staticDaemonImage = Context.environment["GROW_DAEMON_IMAGE"] == "static"
/// The front links fully static, except under a sanitizer (scripts/sanitize sets
/// GROW_SANITIZER), whose runtimes cannot be linked into a static executable.
let frontLinkage =
  Context.environment["GROW_SANITIZER"] == nil ? "-static-executable" : "-static-stdlib"
/// The built-in plugins linked into the static image: all but the break screen, whose C
/// libraries (cairo, pango, GLib) would be mapped at every start. DaemonImage.linkedIn in
/// GrowDaemon names the same ids (DaemonImageTests checks).
let linkedIntoDaemonImage = [
  "notify", "dnd", "x11", "wayland", "statusbar", "sound", "tray", "gnome-pomodoro", "browser",
]
let daemonImage: [Target] =
  staticDaemonImage
  ? [
    .executableTarget(
      name: "grow-daemon",
      dependencies: ["GrowDaemon"]
        + builtInPlugins.filter { linkedIntoDaemonImage.contains($0.id) }.map {
          .target(name: $0.name)
        },
      linkerSettings: [
        .unsafeFlags([
          "-static-stdlib", "-Xlinker", "-no-pie",
          // static-stdlib-args.lnk exports every symbol (for libraries that would link against
          // this runtime; none do), which keeps each one from --gc-sections.
          "-Xlinker", "--no-export-dynamic",
        ]),
        // FoundationEssentials's archive needs these after it; its autolink entries do not name them.
        .linkedLibrary("_FoundationCollections"), .linkedLibrary("_FoundationCShims"),
      ])
  ] : []

let package = Package(
  name: "Grow",
  products: [
    .executable(name: "grow", targets: ["grow"]),
    .executable(name: "grow-cli", targets: ["grow-cli"]),
  ]
    + (staticDaemonImage ? [.executable(name: "grow-daemon", targets: ["grow-daemon"])] : [])
    + builtInPlugins.map {
      Product.library(name: "grow-plugin-" + $0.id, type: .dynamic, targets: [$0.name])
    },
  dependencies: [
    .package(path: "Sources/GrowKit")
  ],
  targets: [
    // The system SQLite, behind GrowHistory's Swift names; nothing else imports it.
    .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    // GIO, for the dnd plugin's GNOME backend (GSettings), opened with dlopen when that
    // backend runs: the plugin does not link GLib, so other desktops never map it. The notify
    // plugin speaks the notification protocol over the daemon's own bus connection instead.
    .target(name: "CGioLoader", linkerSettings: [.linkedLibrary("dl")]),
    // libcanberra, for the sound plugin's event sounds (Plugins/SoundPlugin/Canberra.swift),
    // opened with dlopen at the first sound: the plugin does not link it, so a daemon that
    // plays none does not map it, and the static daemon image can hold the plugin.
    .target(name: "CCanberraLoader", linkerSettings: [.linkedLibrary("dl")]),
    // The phase history (SQLite), its statistics, the garden and the SVG report.
    .target(name: "GrowHistory", dependencies: [kit, "CSQLite"]),
    // One history over several machines: the journals of a synced folder (docs/sync.md).
    .target(name: "GrowSync", dependencies: [kit, "GrowHistory"]),
    // XCB with the SYNC (idle alarm) extension, behind the x11 plugin's Swift wrapper
    // (Plugins/X11Plugin/X11Display.swift) and the tests' title flood (GrowTestSupport).
    .systemLibrary(
      name: "CX11", pkgConfig: "xcb xcb-sync",
      providers: [.apt(["libxcb1-dev", "libxcb-sync-dev"])]),

    // XCB with RandR, cairo and pango, behind the breakscreen plugin's Swift wrappers
    // (Plugins/BreakScreenPlugin/BreakScreenDisplay.swift, BreakScreenPainter.swift).
    .systemLibrary(
      name: "CBreakScreen", pkgConfig: "xcb xcb-randr xcb-shm cairo pangocairo",
      providers: [
        .apt([
          "libxcb1-dev", "libxcb-randr0-dev", "libxcb-shm0-dev", "libcairo2-dev", "libpango1.0-dev",
        ])
      ]),

    // libwayland-client with the C glue of the idle protocols (ext-idle-notify-v1,
    // org_kde_kwin_idle) and wlroots' foreign toplevel list, generated by scripts/gen-wayland-protocols and committed: SwiftPM
    // runs no wayland-scanner before compiling C, and the tables describe only the protocols.
    // Behind the wayland plugin's WaylandDisplay and the breakscreen plugin's BreakScreenWayland.
    .target(
      name: "CWaylandProtocols", exclude: ["protocols"],
      linkerSettings: [.linkedLibrary("wayland-client")]),

    // App: the daemon (event loop, D-Bus service) and the command line.
    .target(name: "GrowDaemon", dependencies: [kit, "GrowHistory", "GrowSync"]),
    .target(name: "GrowCLI", dependencies: [kit, "GrowDaemon", "GrowHistory", "GrowSync"]),
    // The whole command line, installed as PREFIX/lib/grow/grow-cli (InstallLayout) beside
    // libGrowKit.so and the Swift runtime, which the RUNPATH finds there ($ORIGIN) without
    // LD_LIBRARY_PATH; the `grow` front execs it for every command but `grow status`.
    .executableTarget(
      name: "grow-cli", dependencies: ["GrowCLI"],
      linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN"])]),
    // The `grow` front, installed as PREFIX/bin/grow: `grow status` (and `--json`) in a small
    // fully static executable (the Swift stdlib, libdbus-1.a and glibc linked in, GrowBasics
    // for what it prints: no GrowKit, no Foundation), every other command by `execv` of
    // grow-cli, argv unchanged, so plugins still load against one runtime and one GrowKit.
    // Static rather than dynamic: no loader work and no shared objects to map make `grow
    // status` 0.2 × busctl's CPU time at 5 MB (docs/measurements.md, "The lean layout").
    // The linker warns that glibc's NSS (getpwuid, getaddrinfo) needs the shared libraries of
    // the same glibc at run time: the front only calls them with no HOME, or for a TCP bus.
    .systemLibrary(name: "CFrontDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
    .target(name: "CFrontStatic"),
    .executableTarget(
      name: "grow",
      dependencies: [
        "CFrontDBus", "CFrontStatic", .product(name: "GrowBasics", package: "GrowKit"),
      ],
      linkerSettings: [.unsafeFlags([frontLinkage])]),

    // Tools, in Tools/: never part of the product (`make build` and `make install` build only
    // `grow` and the plugins), built by `swift build --build-tests` for their tests.
    // Benchmarks (make bench): prints figures, asserts nothing.
    .executableTarget(
      name: "grow-bench",
      dependencies: [kit, "GrowDaemon", "GrowHistory", "GrowSync", "GrowTestSupport"],
      path: "Tools/grow-bench"),
    // The fault-injection soak (make soak; a short run in make test): kills, crashes, checks.
    .target(
      name: "GrowSoak", dependencies: [kit, "GrowHistory", "GrowSync", "GrowTestSupport"],
      path: "Tools/GrowSoak"),
    .executableTarget(name: "grow-soak", dependencies: ["GrowSoak"], path: "Tools/grow-soak"),
    // The parsers' promises under hostile input, and their driver: libFuzzer for `make fuzz`
    // (built with -DGROW_LIBFUZZER), a replay of saved inputs otherwise.
    .target(name: "GrowFuzz", dependencies: [kit, testKit, "GrowDaemon"], path: "Tools/GrowFuzz"),
    .executableTarget(name: "grow-fuzz", dependencies: ["GrowFuzz"], path: "Tools/grow-fuzz"),
    // The SDK's API listing (api/GrowKit.api.txt) from the built module interfaces: `make api`
    // writes it, GrowPluginKitTests compares the build with it.
    .target(name: "GrowAPI", path: "Tools/GrowAPI"),
    .executableTarget(name: "grow-api", dependencies: ["GrowAPI"], path: "Tools/grow-api"),

    // Test-only helpers: a private session bus, running commands and the daemon, and the
    // broken plugins of Tests/Fixtures (a package of their own, built on first use against
    // this build's GrowKit: FixturePlugins).
    .target(name: "GrowTestSupport", dependencies: [kit, "CX11"]),

    // Tests mirror Sources/ and Plugins/.
    .testTarget(name: "GrowCoreTests", dependencies: [kit, testKit]),
    .testTarget(name: "GrowMessagesTests", dependencies: [kit, "GrowTestSupport"]),
    .testTarget(name: "GrowTestSupportTests", dependencies: ["GrowTestSupport"]),
    .testTarget(name: "GrowLoopTests", dependencies: [kit, testKit]),
    .testTarget(name: "GrowDBusTests", dependencies: [kit, "GrowTestSupport"]),
    .testTarget(
      name: "GrowDaemonTests",
      dependencies: [kit, testKit, "GrowDaemon", "GrowHistory", "GrowTestSupport"]),
    .testTarget(name: "GrowCLITests", dependencies: ["GrowTestSupport", "GrowHistory", "GrowCLI"]),
    .testTarget(name: "GrowConfigTests", dependencies: [kit]),
    .testTarget(
      name: "GrowHistoryTests", dependencies: [kit, testKit, "GrowHistory", "GrowTestSupport"]),
    .testTarget(name: "ExamplesTests", dependencies: ["GrowTestSupport"]),
    .testTarget(
      name: "GrowSoakTests", dependencies: [kit, "GrowSoak", "GrowHistory", "GrowTestSupport"]),
    .testTarget(name: "GrowPluginKitTests", dependencies: [kit, testKit, "GrowAPI"]),
    .testTarget(name: "GrowFuzzTests", dependencies: [kit, "GrowFuzz"]),
    .testTarget(
      name: "GrowSyncTests", dependencies: [kit, "GrowHistory", "GrowSync", "GrowTestSupport"]),
  ]
    + daemonImage
    // Built-in plugins, in Plugins/ (run-time plugins, not SwiftPM package plugins).
    + builtInPlugins.map {
      Target.target(
        name: $0.name, dependencies: [kit] + $0.dependencies, path: "Plugins/" + $0.name)
    }
    // Each plugin's logic on the test kit's manual loop, in milliseconds, against a scripted
    // stand-in for its C or D-Bus side; end to end (Xvfb, sway, real servers) in
    // GrowDaemonTests.
    + builtInPlugins.map {
      Target.testTarget(
        name: $0.name + "Tests",
        dependencies: [kit, testKit, .target(name: $0.name)] + $0.testDependencies)
    }
)
