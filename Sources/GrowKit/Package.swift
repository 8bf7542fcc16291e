// swift-tools-version:6.0
// GrowKit: the modules that the daemon and every plugin share, built as ONE dynamic
// library. Plugins are loaded at run time with dlopen; Swift type identity (protocol
// conformances, `as?` casts, event types) only works when these modules exist once in the
// process, so they live in their own package whose `.dynamic` product both the `grow`
// executable and each plugin link (Tests/GrowDaemonTests/PluginHostTests.swift loads them so).
import PackageDescription

// Library evolution: plugins are built against the installed SDK (PREFIX/lib/grow/swift: the
// .swiftinterface files of these modules) and keep loading after GrowKit is rebuilt with added
// fields, cases and methods (docs/writing-plugins.md, "The ABI promise"). Always on, so the
// debug build the tests install is the same kind of library as a release install. The module
// GrowConfig has a type GrowConfig, so the interface must alias module names to stay
// parseable.
let resilient: [SwiftSetting] =
  Context.environment["GROW_DAEMON_IMAGE"] == "static"
  ? []
  : [
    .unsafeFlags([
      "-enable-library-evolution", "-emit-module-interface",
      "-Xfrontend", "-alias-module-names-in-module-interface",
    ])
  ]

// The static daemon image (GROW_DAEMON_IMAGE=static, see the root Package.swift): the same
// modules linked into the executable, without library evolution (no plugin is built against
// that image).
let staticDaemonImage = Context.environment["GROW_DAEMON_IMAGE"] == "static"

let package = Package(
  name: "GrowKit",
  products: [
    .library(
      name: "GrowKit", type: staticDaemonImage ? nil : .dynamic,
      targets: [
        "GrowBasics", "GrowCore", "GrowMessages", "GrowConfig", "GrowLoop", "GrowDBus",
        "GrowPluginKit",
      ]),
    // The same GrowBasics linked statically into the `grow` front (Sources/grow), which links
    // nothing else of the kit: see GrowBasics.
    .library(name: "GrowBasics", type: .static, targets: ["GrowBasics"]),
    // The plugin test kit: a manual event loop, a recording timer, an event recorder, log
    // capture and a settings builder, for a plugin's own fast tests.
    .library(name: "GrowPluginTesting", targets: ["GrowPluginTesting"]),
  ],
  targets: [
    // C libraries, each behind a thin Swift wrapper.
    .systemLibrary(
      name: "CInih", path: "CInih", pkgConfig: "inih", providers: [.apt(["libinih-dev"])]),
    .systemLibrary(
      name: "CDBus", path: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
    // epoll and pidfd_open, which Swift's Glibc module leaves out.
    .systemLibrary(name: "CLinux", path: "CLinux"),
    // glibc's gettext, which Swift's Glibc module leaves out; behind GrowMessages.
    .systemLibrary(name: "CGettext", path: "CGettext"),

    // What `grow status` prints and what Grow says (`Message`), without Foundation: in
    // libGrowKit.so (GrowMessages re-exports it) and, statically, in the `grow` front, so each
    // process holds one copy. Not part of the promised API: GrowCore and GrowPluginKit import it
    // `internal`, and its interface is not installed.
    .target(
      name: "GrowBasics", dependencies: ["CGettext"], path: "GrowBasics",
      swiftSettings: resilient),
    // Core: the timer, its events and the typed bus. Foundation only, no C libraries.
    .target(
      name: "GrowCore", dependencies: ["GrowBasics"], path: "GrowCore", swiftSettings: resilient),
    // What Grow says to people: each message whole, with named placeholders and plural forms,
    // looked up in the "grow" gettext domain (English when no catalogue is installed). The
    // words of the SDK's typed refusals, states and config problems are made here, for the
    // edges: the daemon's replies, the command line, the notifications. Not part of the
    // promised API: the SDK modules import it `internal`, and its interface is not installed.
    .target(
      name: "GrowMessages", dependencies: ["GrowCore", "GrowBasics", "CGettext"],
      path: "GrowMessages",
      swiftSettings: resilient),
    // config.ini, read with libinih.
    .target(
      name: "GrowConfig", dependencies: ["GrowCore", "GrowMessages", "CInih"], path: "GrowConfig",
      swiftSettings: resilient),
    // The event loop as a service (`EventLoop`): descriptor readiness (one epoll, one
    // DispatchSource), alarms and clocks. GrowCore for `TimeSource`, which it extends.
    .target(
      name: "GrowLoop", dependencies: ["CLinux", "GrowCore"], path: "GrowLoop",
      swiftSettings: resilient),
    // libdbus on the daemon's event loop.
    // GrowCore for its text helpers (shortened names in error messages).
    .target(
      name: "GrowDBus", dependencies: ["CDBus", "GrowCore", "GrowLoop"], path: "GrowDBus",
      swiftSettings: resilient),
    // What a plugin author sees.
    .target(
      name: "GrowPluginKit",
      dependencies: [
        "GrowBasics", "GrowCore", "GrowMessages", "GrowConfig", "GrowLoop", "GrowDBus",
      ],
      path: "GrowPluginKit", swiftSettings: resilient),
    // Installed with the SDK (its interface beside GrowKit's) so that a plugin's own tests
    // can use it: built with library evolution too.
    .target(
      name: "GrowPluginTesting",
      dependencies: ["GrowCore", "GrowConfig", "GrowLoop", "GrowPluginKit"],
      path: "GrowPluginTesting", swiftSettings: resilient),
  ]
)
