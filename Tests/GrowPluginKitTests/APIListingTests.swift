import Foundation
import GrowAPI
import Testing

/// The SDK's promise to plugins is written down in api/GrowKit.api.txt; a build whose public
/// module interfaces say something else fails here, so every change to the promise is a
/// deliberate one, made by regenerating the file and committing it.
@Suite struct APIListingTests {
  /// The listing in the checkout: this file is `<root>/Tests/GrowPluginKitTests/…`.
  static let promisedListing = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("api/GrowKit.api.txt")

  /// The listing of the interfaces this build emitted: SwiftPM puts the test binary in the
  /// build directory (`.build/<triple>/debug/`), next to `Modules/`.
  static func builtListing() throws -> [String] {
    try APIListing.listing(interfacesIn: try builtModules())
  }

  static func builtModules() throws -> URL {
    let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    let binaries = [Bundle.main.executablePath, CommandLine.arguments.first].compactMap { $0 }
    for binary in binaries {
      var directory = URL(fileURLWithPath: binary, relativeTo: cwd).standardizedFileURL
        .resolvingSymlinksInPath().deletingLastPathComponent()
      // The test bundle may be a directory (…/X.xctest/Contents/MacOS/X) or a plain file.
      for _ in 0..<5 {
        let modules = directory.appendingPathComponent("Modules")
        if FileManager.default.fileExists(
          atPath: modules.appendingPathComponent("GrowCore.swiftinterface").path)
        {
          return modules
        }
        directory.deleteLastPathComponent()
      }
    }
    throw APIListingError.missingInterface("Modules/GrowCore.swiftinterface beside \(binaries)")
  }

  @Test func theBuiltInterfacesAreTheCheckedInListing() throws {
    let built = try Self.builtListing()
    let promised = try String(contentsOf: Self.promisedListing, encoding: .utf8)
      .split(separator: "\n").map(String.init)
    let difference = APIListing.difference(promised: promised, built: built)
    guard !difference.isEmpty else { return }
    Issue.record(
      """
      The SDK's public API is not what api/GrowKit.api.txt promises (- promised, no longer \
      built; + built, not promised):
      \(difference.joined(separator: "\n"))
      If the change is meant, run 'make api' and commit api/GrowKit.api.txt. Removing or \
      changing a line breaks plugins built against an installed SDK: raise \
      GrowPluginAPI.version then (docs/writing-plugins.md, "The ABI promise"). Host-only \
      helpers go behind @_spi(GrowHost), logic only the built-in plugins share behind \
      @_spi(GrowBuiltIn).
      """)
  }

  /// What the daemon wires into a plugin's context and the helpers only the host and the
  /// built-in plugins use are not something a plugin can call or overwrite.
  @Test func hostHooksAndHostHelpersAreNotPluginAPI() throws {
    let built = try Self.builtListing()
    let hostOnly = [
      "PluginContext  @MainActor final var onDisable", "PluginContext  @MainActor final var onNote",
      "PluginContext  @MainActor final var onEmergencyAction",
      "PluginContext  @MainActor final var onAvailability", "GrowCore  enum PathText",
      "GrowCore  enum BackgroundThread", "GrowCore  func sleepThread", "GrowCore  func writeAll",
      "GrowCore  func shown(", "GrowCore  func shortened(", "GrowCore  func closestMatch(",
      "GrowPluginKit  @MainActor final class DistractionWatch",
      "GrowPluginKit  enum DoNotDisturbBackend", "GrowPluginKit  struct DoNotDisturbRestore",
      "GrowConfig  struct MakoConfig", "GrowPluginKit  let builtInPluginIDs",
      "GrowCore  final class ManualTimeSource",
    ]
    for declaration in hostOnly {
      let found = built.filter { $0.contains(declaration) }
      #expect(found.isEmpty, "a plugin sees \(found)")
    }
    // The test double is the test kit's.
    #expect(built.contains { $0.hasPrefix("GrowPluginTesting  final class ManualTimeSource") })
  }
}
