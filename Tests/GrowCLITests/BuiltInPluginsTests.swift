import Foundation
@_spi(GrowHost) import GrowPluginKit
import GrowTestSupport
import Testing

/// The built-in plugins are listed once, in Package.swift; what the daemon and the CLI know of
/// them must agree with that list, and each library's entry point must be its own.
@Suite struct BuiltInPluginsTests {
  @Test func theDaemonKnowsExactlyThePluginsPackageSwiftBuilds() throws {
    let listed = try Command.run(
      RepoPaths.scripts.appendingPathComponent("built-in-plugins").path, [])
    #expect(listed.status == 0, "\(listed.stderr)")
    let ids = listed.stdout.split(separator: "\n").map(String.init)
    #expect(!ids.isEmpty)
    #expect(
      ids == builtInPluginIDs,
      """
      builtInPlugins in Package.swift lists \(ids), but builtInPluginIDs \
      (Sources/GrowKit/GrowPluginKit/GrowVersion.swift) is \(builtInPluginIDs): add the id there \
      too, in the same place
      """)
  }

  /// `grow_plugin_ID`, never the shared `grow_plugin`: the plugins' test targets link into one
  /// test binary, where two `grow_plugin` definitions would clash.
  @Test(arguments: builtInPluginIDs)
  func eachLibraryExportsItsOwnEntryPoint(id: String) throws {
    let directory = URL(fileURLWithPath: Binaries.grow).deletingLastPathComponent()
    let path = directory.appendingPathComponent("libgrow-plugin-\(id).so").path
    let symbols = try Command.run("readelf", ["--dyn-syms", "--wide", path])
    #expect(symbols.status == 0, "\(symbols.stderr)")
    let defined = symbols.stdout.split(separator: "\n")
      .filter { !$0.contains(" UND ") }
      .compactMap { $0.split(separator: " ").last.map(String.init) }
    // Characters a C name cannot hold become `_` (gnome-pomodoro: grow_plugin_gnome_pomodoro).
    let symbol = "grow_plugin_" + String(id.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    #expect(defined.contains(symbol))
    #expect(!defined.contains("grow_plugin"))
  }
}
