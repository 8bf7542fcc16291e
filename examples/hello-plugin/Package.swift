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
    // Point this at your Grow checkout (or an installed copy of Sources/GrowKit).
    .package(path: "../../Sources/GrowKit")
  ],
  targets: [
    .target(name: "HelloPlugin", dependencies: [.product(name: "GrowKit", package: "GrowKit")])
  ]
)
