import Foundation
import GrowTestSupport
import Testing

/// The installed plugin SDK: a plugin package outside the source tree builds with
/// plain `swift build` against `make install`'s PREFIX alone, and keeps loading after GrowKit
/// is rebuilt from changed sources and reinstalled.
@Suite struct PluginSDKTests {
  /// The toolchain's swift, as the Makefile finds it.
  static let swift =
    FileManager.default.isExecutableFile(atPath: "/opt/swift/usr/bin/swift")
    ? "/opt/swift/usr/bin/swift" : "swift"

  /// A plugin package as an author writes it from docs/writing-plugins.md: nothing from the
  /// source tree, only the SDK under `prefix`.
  static func writePluginPackage(at directory: String, prefix: String) throws {
    let sources = directory + "/Sources/HelloPlugin"
    try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
    try """
    // swift-tools-version:6.0
    import PackageDescription

    let sdk = "\(prefix)/lib/grow"

    let package = Package(
      name: "hello",
      products: [.library(name: "grow-plugin-hello", type: .dynamic, targets: ["HelloPlugin"])],
      targets: [
        .target(
          name: "HelloPlugin",
          swiftSettings: [.unsafeFlags(["-I", sdk + "/swift"])],
          linkerSettings: [
            .unsafeFlags(["-L", sdk, "-lGrowKit", "-Xlinker", "-rpath", "-Xlinker", sdk])
          ])
      ]
    )

    """.write(toFile: directory + "/Package.swift", atomically: true, encoding: .utf8)
    // Reads fields of a GrowCore struct whose layout the changed build shifts.
    try """
    import GrowCore
    import GrowPluginKit

    public final class HelloPlugin: GrowPlugin {
      public static let id = "hello"
      public init(context: PluginContext) throws {
        context.subscribe(PhaseStarted.self) { event in
          let phase = event.phase
          context.setNote("saw \\(phase.kind.rawValue) on \\(phase.card) for \\(Int(phase.duration))s")
        }
      }
    }

    @_cdecl("grow_plugin")
    public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(HelloPlugin.self) }

    """.write(toFile: sources + "/HelloPlugin.swift", atomically: true, encoding: .utf8)
  }

  /// `make install` of the debug build into `prefix`. NO_BUILD: the debug build is there
  /// already (see MakeInstallTests).
  static func installDebugBuild(into prefix: String) throws {
    let install = try Command.run(
      "make",
      [
        "-C", RepoPaths.root.path, "PREFIX=\(prefix)", "CONFIGURATION=debug", "NO_BUILD=1",
        "install",
      ], timeout: 120)
    try #require(install.status == 0, "\(install.stderr)")
  }

  /// Starts the installed `grow daemon` on the harness's bus and waits until it answers; the
  /// caller stops it (`terminate`, then `kill`).
  static func startInstalledDaemon(prefix: String, harness: DaemonHarness) throws
    -> BackgroundProcess
  {
    let grow = prefix + "/bin/grow"
    let daemon = try BackgroundProcess(grow, ["daemon"], environment: harness.environment)
    #expect(
      daemon.waitUntil(timeout: 10) {
        (try? Command.run(grow, ["status"], environment: harness.environment).status) == 0
      }, "\(daemon.stderr)")
    return daemon
  }

  /// Starts the installed daemon with the plugin in `$XDG_DATA_HOME/grow/plugins`, starts a
  /// focus phase and returns what `grow plugins` says about the plugin.
  static func runInstalledDaemon(prefix: String, harness: DaemonHarness) throws -> [String: String]
  {
    let grow = prefix + "/bin/grow"
    let daemon = try startInstalledDaemon(prefix: prefix, harness: harness)
    defer {
      daemon.terminate()
      daemon.kill()
    }
    let start = try Command.run(grow, ["start"], environment: harness.environment)
    #expect(start.status == 0, "\(start.stderr)")
    var hello: [String: String] = [:]
    for _ in 0..<50 {
      let plugins = try Command.run(grow, ["plugins", "--json"], environment: harness.environment)
      let list =
        try JSONSerialization.jsonObject(with: Data(plugins.stdout.utf8)) as? [[String: Any]]
      hello =
        (list ?? []).first { $0["id"] as? String == "hello" }?.compactMapValues {
          $0 as? String
        } ?? [:]
      if hello["note"] != nil { break }
      usleep(100_000)
    }
    _ = try Command.run(grow, ["stop"], environment: harness.environment)
    return hello
  }

  @Test(.timeLimit(.minutes(10)))
  func aPluginBuiltAgainstTheInstalledSDKKeepsLoadingAfterGrowKitChanges() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    let work = harness.bus.directory.path
    let prefix = work + "/prefix"
    try Self.installDebugBuild(into: prefix)
    let pc = try String(contentsOfFile: prefix + "/lib/pkgconfig/grow-plugin.pc", encoding: .utf8)
    #expect(pc.contains("Cflags: -I${swiftdir}") && pc.contains("-lGrowKit"))

    let package = work + "/hello"
    try Self.writePluginPackage(at: package, prefix: prefix)
    let build = try Command.run(
      Self.swift, ["build", "--package-path", package], environment: harness.environment,
      timeout: 600)
    try #require(build.status == 0, "\(build.stdout)\n\(build.stderr)")
    let plugin = package + "/.build/debug/libgrow-plugin-hello.so"
    let installed = harness.pluginDirectory + "/libgrow-plugin-hello.so"
    try FileManager.default.createDirectory(
      atPath: harness.pluginDirectory, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: plugin, toPath: installed)

    let before = try Self.runInstalledDaemon(prefix: prefix, harness: harness)
    #expect(before["state"] == "running", "\(before)")
    let note = try #require(before["note"])
    #expect(note.hasPrefix("saw focus on ") && note.hasSuffix("s"), "\(note)")

    // GrowKit changed from the same plugin API version: a stored property in front of Phase's
    // fields (every offset after it moves) and a protocol requirement with a default.
    let kit = work + "/kit"
    try FileManager.default.copyItem(
      atPath: RepoPaths.root.appendingPathComponent("Sources/GrowKit").path, toPath: kit)
    try? FileManager.default.removeItem(atPath: kit + "/.build")
    try Self.edit(
      kit + "/GrowCore/Phase.swift", replacing: "  public var kind: PhaseKind\n",
      with: "  public var addedLater: String? = \"a field the plugin never saw\"\n"
        + "  public var kind: PhaseKind\n")
    try Self.edit(
      kit + "/GrowPluginKit/GrowPlugin.swift", replacing: "  func stop()\n}\n",
      with: "  func stop()\n  func addedLater() -> Int\n}\n")
    try Self.edit(
      kit + "/GrowPluginKit/GrowPlugin.swift", replacing: "  public func stop() {}\n",
      with: "  public func stop() {}\n  public func addedLater() -> Int { 0 }\n")
    let rebuild = try Command.run(
      Self.swift, ["build", "--package-path", kit], environment: harness.environment,
      timeout: 600)
    try #require(rebuild.status == 0, "\(rebuild.stdout)\n\(rebuild.stderr)")

    // Reinstall with the new libGrowKit.so and interfaces, everything else as built.
    let bin = work + "/bin"
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    let debug = URL(fileURLWithPath: Binaries.grow).deletingLastPathComponent().path
    let links =
      [
        "grow": debug + "/grow", "libGrowKit.so": kit + "/.build/debug/libGrowKit.so",
        "Modules": kit + "/.build/debug/Modules",
        "GrowPluginTesting.build": kit + "/.build/debug/GrowPluginTesting.build",
      ]
      .merging(
        // Every built-in, from the one list of them (Package.swift, via scripts/built-in-plugins).
        try Command.run(RepoPaths.scripts.appendingPathComponent("built-in-plugins").path, [])
          .stdout.split(separator: "\n").map {
            ("libgrow-plugin-\($0).so", debug + "/libgrow-plugin-\($0).so")
          }
      ) { $1 }
    for (name, target) in links {
      try FileManager.default.createSymbolicLink(
        atPath: bin + "/" + name, withDestinationPath: target)
    }
    let reinstall = try Command.run(
      RepoPaths.scripts.appendingPathComponent("install-grow").path, ["install", bin, prefix],
      timeout: 120)
    #expect(reinstall.status == 0, "\(reinstall.stderr)")
    let interface = try String(
      contentsOfFile: prefix + "/lib/grow/swift/GrowCore.swiftinterface", encoding: .utf8)
    #expect(interface.contains("addedLater"))

    let after = try Self.runInstalledDaemon(prefix: prefix, harness: harness)
    #expect(after["state"] == "running", "\(after)")
    #expect(after["note"] == note)
  }

  static func edit(_ path: String, replacing old: String, with new: String) throws {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains(old), "\(path) no longer has \(old)")
    try text.replacingOccurrences(of: old, with: new).write(
      toFile: path, atomically: true, encoding: .utf8)
  }
}
