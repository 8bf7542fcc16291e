import Glibc

/// Where `grow`'s two executables are, the one place that says so: `PREFIX/bin/grow` is the
/// small static front (`grow status`, its `--json`), which `execv`s the whole command line,
/// `PREFIX/lib/grow/grow-cli`, for every other command (argv unchanged). In a build directory
/// both are side by side (`.build/debug/grow`, `.build/debug/grow-cli`). What the command line
/// finds from its own path (the catalogues, the plugins, the `Exec=` of the files it writes)
/// it finds from the front's directory, `binDirectoryOfRunningGrow`, so both layouts read the
/// same.
public enum InstallLayout {
  /// The full command line, relative to PREFIX when installed.
  public static let cliInPrefix = "lib/grow/grow-cli"
  /// Its file name, beside the front in a build directory.
  public static let cliName = "grow-cli"
  /// The front, relative to PREFIX.
  public static let frontInPrefix = "bin/grow"

  /// The directory of the `grow` front that runs now (or would: the grow-cli process was
  /// exec'ed by it); nil when /proc/self/exe cannot be read.
  public static var binDirectoryOfRunningGrow: String? {
    executable.map(binDirectory(ofExecutable:))
  }

  /// PREFIX: the parent of `binDirectoryOfRunningGrow`.
  public static var prefixOfRunningGrow: String? {
    binDirectoryOfRunningGrow.map(parent)
  }

  /// The directory of the front for an executable at `path`: `PREFIX/bin` for
  /// `PREFIX/lib/grow/grow-cli`, the executable's own directory otherwise.
  public static func binDirectory(ofExecutable path: String) -> String {
    let installedTail = "/" + cliInPrefix
    if path.hasSuffix(installedTail) {
      let prefix = String(path.dropLast(installedTail.count))
      return joined(prefix.isEmpty ? "/" : prefix, "bin")
    }
    return parent(path)
  }

  /// Where the full command line is for a front at `frontPath`: `PREFIX/lib/grow/grow-cli`
  /// when that exists, else `grow-cli` beside the front (a build directory).
  public static func cli(forFront frontPath: String) -> String {
    let directory = parent(frontPath)
    let installed = joined(parent(directory), cliInPrefix)
    if access(installed, X_OK) == 0 { return installed }
    return joined(directory, cliName)
  }

  /// The running executable, symlinks resolved.
  public static var executable: String? {
    guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// `path` without its last component: `/a/b` → `/a`, `/a` → `/`.
  public static func parent(_ path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
  }

  /// `base/relative`, without a doubled slash.
  public static func joined(_ base: String, _ relative: String) -> String {
    base.hasSuffix("/") ? base + relative : base + "/" + relative
  }
}
