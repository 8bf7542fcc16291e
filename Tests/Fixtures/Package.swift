// swift-tools-version:6.0
// Plugins that fail on purpose, for the plugin host's tests and the soak: a package of their
// own, so they are no products of Grow's package and building Grow never builds them.
// GrowTestSupport's FixturePlugins builds it on first use against the GrowKit of the build
// under test (that build's Modules and libGrowKit.so, given on the command line), the way a
// plugin builds against an installed SDK. The library names (libgrowtest-*.so) are not plugin
// file names, so no daemon finds them by itself; tests copy them into a private plugin
// directory under a plugin's name.
import PackageDescription

let package = Package(
  name: "GrowTestFixtures",
  products: [
    .library(name: "growtest-throws-on-init", type: .dynamic, targets: ["ThrowsOnInitPlugin"]),
    .library(
      name: "growtest-throws-in-handler", type: .dynamic, targets: ["ThrowsInHandlerPlugin"]),
    .library(name: "growtest-future-api", type: .dynamic, targets: ["FutureAPIPlugin"]),
    .library(
      name: "growtest-hangs-in-handler", type: .dynamic, targets: ["HangsInHandlerPlugin"]),
    .library(
      name: "growtest-crashes-on-init", type: .dynamic, targets: ["CrashesOnInitPlugin"]),
    .library(
      name: "growtest-crashes-on-load", type: .dynamic, targets: ["CrashesOnLoadPlugin"]),
  ],
  targets: [
    .target(name: "ThrowsOnInitPlugin", path: "ThrowsOnInitPlugin"),
    .target(name: "ThrowsInHandlerPlugin", path: "ThrowsInHandlerPlugin"),
    .target(name: "FutureAPIPlugin", path: "FutureAPIPlugin"),
    .target(name: "HangsInHandlerPlugin", path: "HangsInHandlerPlugin"),
    .target(name: "CrashesOnInitPlugin", path: "CrashesOnInitPlugin"),
    .target(name: "CrashesOnLoadPlugin", path: "CrashesOnLoadPlugin"),
  ]
)
