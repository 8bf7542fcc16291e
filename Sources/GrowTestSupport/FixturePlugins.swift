import Foundation

/// The broken plugins of Tests/Fixtures (throws on init, throws in a handler, another API
/// version, hangs in a handler), built once per test process from their own package against
/// the GrowKit of the build under test, the build `Binaries.grow` belongs to (its `Modules`
/// and `libGrowKit.so`), into `BUILD/test-fixtures`.
public enum FixturePlugins {
  /// The path of the built fixture `name` (`libgrowtest-future-api.so`).
  public static func library(_ name: String) throws -> String {
    let directory = try built.get()
    let path = directory + "/" + name
    guard FileManager.default.fileExists(atPath: path) else {
      throw HarnessError("no fixture \(name) in \(directory) (see Tests/Fixtures/Package.swift)")
    }
    return path
  }

  /// Built on first use; every test after that (in parallel too) waits for the same build.
  private static let built: Result<String, HarnessError> = build()

  private static func build() -> Result<String, HarnessError> {
    let buildDirectory = (Binaries.grow as NSString).deletingLastPathComponent
    let scratch = buildDirectory + "/test-fixtures"
    let swift =
      FileManager.default.isExecutableFile(atPath: "/opt/swift/usr/bin/swift")
      ? "/opt/swift/usr/bin/swift" : "swift"
    let arguments = [
      "build", "--package-path", RepoPaths.root.appendingPathComponent("Tests/Fixtures").path,
      "--scratch-path", scratch,
      "-Xswiftc", "-I", "-Xswiftc", buildDirectory + "/Modules",
      "-Xswiftc", "-L", "-Xswiftc", buildDirectory, "-Xswiftc", "-lGrowKit",
    ]
    do {
      let result = try Command.run(swift, arguments, timeout: 600)
      guard result.status == 0 else {
        return .failure(
          HarnessError("building Tests/Fixtures failed:\n\(result.stdout)\n\(result.stderr)"))
      }
    } catch {
      return .failure(HarnessError("building Tests/Fixtures failed: \(error)"))
    }
    return .success(scratch + "/debug")
  }
}
