import Foundation

/// Executables built by this package, for tests that run them as child processes.
public enum Binaries {
  /// The built `grow` executable.
  ///
  /// `GROW_BINARY` wins when set. Otherwise: SwiftPM puts the test bundle
  /// (`GrowPackageTests.xctest`) in the same bin dir as the executables
  /// (`.build/<triple>/debug/`), so look next to the running test binary and in its parents;
  /// the last resort is `<repo>/.build/debug/grow`.
  public static var grow: String { locate("grow") }

  /// Finds the executable `name` as described for `grow`.
  public static func locate(_ name: String) -> String {
    let environment = ProcessInfo.processInfo.environment
    if name == "grow", let override = environment["GROW_BINARY"], !override.isEmpty {
      return override
    }
    let fileManager = FileManager.default
    for start in runningBinaryDirectories() {
      var directory = start
      // The bundle may be a directory (…/X.xctest/Contents/MacOS/X) or a plain executable.
      for _ in 0..<5 {
        let candidate = directory.appendingPathComponent(name).path
        if fileManager.isExecutableFile(atPath: candidate) { return candidate }
        let parent = directory.deletingLastPathComponent()
        if parent.path == directory.path { break }
        directory = parent
      }
    }
    return RepoPaths.root.appendingPathComponent(".build/debug/\(name)").path
  }

  /// Directories holding the running test binary, symlinks resolved.
  private static func runningBinaryDirectories() -> [URL] {
    let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    var paths: [String] = []
    if let executable = Bundle.main.executablePath { paths.append(executable) }
    if let first = CommandLine.arguments.first { paths.append(first) }
    return paths.map {
      URL(fileURLWithPath: $0, relativeTo: cwd).standardizedFileURL.resolvingSymlinksInPath()
        .deletingLastPathComponent()
    }
  }
}
