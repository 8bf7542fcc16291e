// swift-tools-version:6.0
// A Grow plugin in its own package, as a third-party author would write one.
//
//   swift build -c release
//   install -m 755 .build/release/libgrow-plugin-hello.so ~/.local/share/grow/plugins/
//
// The library must be called libgrow-plugin-ID.so, where ID is the plugin's `id`.
import PackageDescription

let package = Package(
  name: "hello-plugin",
  products: [
    .library(name: "grow-plugin-hello", type: .dynamic, targets: ["HelloPlugin"])
  ],
  dependencies: [
    // Inside Grow's source tree. Outside it, build against the installed SDK instead
    // (PREFIX/lib/grow/swift; docs/writing-plugins.md shows the Package.swift).
    .package(path: "../../Sources/GrowKit")
  ],
  targets: [
    .target(name: "HelloPlugin", dependencies: [.product(name: "GrowKit", package: "GrowKit")])
  ]
)
