import Foundation

/// The broken plugins of Tests/Fixtures (throws on init, throws in a handler, another API
/// version, hangs in a handler), built against the GrowKit of the build under test, the build
/// `Binaries.grow` belongs to, by scripts/build-test-fixtures: `make test` builds them before
/// the suite and names the directory in `GROW_TEST_FIXTURES`, so no swift build runs inside
/// swift test; a plain `swift test` builds them here, once per test process.
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
  private static let built: Result<String, HarnessError> = locate()

  private static func locate() -> Result<String, HarnessError> {
    if let prebuilt = ProcessInfo.processInfo.environment["GROW_TEST_FIXTURES"], !prebuilt.isEmpty {
      return .success(prebuilt)
    }
    let buildDirectory = (Binaries.grow as NSString).deletingLastPathComponent
    let script = RepoPaths.root.appendingPathComponent("scripts/build-test-fixtures").path
    do {
      let result = try Command.run(script, [buildDirectory], timeout: 600)
      guard result.status == 0 else {
        return .failure(
          HarnessError("building Tests/Fixtures failed:\n\(result.stdout)\n\(result.stderr)"))
      }
      return .success(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    } catch {
      return .failure(HarnessError("building Tests/Fixtures failed: \(error)"))
    }
  }
}
