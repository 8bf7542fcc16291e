// swift-tools-version:6.0
// Grow: a focus timer for Linux desktops.
//
// Dependencies point one way: GrowCore ← GrowPluginKit ← plugins ← app.
// The shared modules (core, config, D-Bus, plugin API) are built once, as the dynamic
// library of the local package in Sources/GrowKit, so that plugins loaded at run time see the
// same types as the daemon.
import PackageDescription

let kit = Target.Dependency.product(name: "GrowKit", package: "GrowKit")

let package = Package(
  name: "Grow",
  products: [
    .executable(name: "grow", targets: ["grow"])
  ],
  dependencies: [
    .package(path: "Sources/GrowKit")
  ],
  targets: [
    // App: the daemon (event loop, D-Bus service) and the command line.
    .target(name: "GrowDaemon", dependencies: [kit]),
    .target(name: "GrowCLI", dependencies: [kit, "GrowDaemon"]),
    .executableTarget(name: "grow", dependencies: ["GrowCLI"]),

    // Test-only helpers: a private session bus, running commands and the daemon.
    .target(name: "GrowTestSupport", dependencies: [kit]),

    // Tests mirror Sources/ and Plugins/.
    .testTarget(name: "GrowCoreTests", dependencies: [kit]),
    .testTarget(name: "GrowTestSupportTests", dependencies: ["GrowTestSupport"]),
    .testTarget(name: "GrowDBusTests", dependencies: [kit, "GrowTestSupport"]),
    .testTarget(name: "GrowDaemonTests", dependencies: [kit, "GrowDaemon", "GrowTestSupport"]),
    .testTarget(name: "GrowCLITests", dependencies: ["GrowTestSupport"]),
    .testTarget(name: "GrowConfigTests", dependencies: [kit]),
    .testTarget(name: "GrowPluginKitTests", dependencies: [kit]),
  ]
)
