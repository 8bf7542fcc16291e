import FoundationEssentials
import Glibc
import GrowBasics
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowMessages
@_spi(GrowHost) import GrowPluginKit

/// The two executables that can be the daemon, and which one `grow daemon` runs.
///
/// `grow` links libGrowKit.so and the shared Swift runtime, and opens each plugin library with
/// dlopen: a third-party plugin built against the installed SDK finds the one GrowKit and the
/// one runtime of the process. `grow-daemon`, the static image (Package.swift,
/// `GROW_DAEMON_IMAGE=static`, scripts/build-daemon-image), holds the daemon, GrowKit, the
/// built-in plugins of `linkedIn` and the Swift runtime in one file, so it maps less (no
/// shared libraries to relocate, no PIE): it opens no plugin library, since a library brings
/// a second GrowKit and a second runtime. `grow daemon` runs the static image when every
/// enabled plugin is linked into it or is a program (external plugins are processes of their
/// own), and runs the daemon itself otherwise, saying why in the log.
public enum DaemonImage {
  /// The static image's file name: beside the running executable (a build directory, or
  /// PREFIX/lib/grow for a CLI installed there), else in PREFIX/lib/grow for PREFIX/bin/grow.
  public static let fileName = "grow-daemon"

  /// The built-in plugins linked into the static image (`linkedIntoDaemonImage` in
  /// Package.swift; Sources/grow-daemon registers their types).
  public static let linkedIn: Set<String> = [
    "notify", "dnd", "x11", "wayland", "statusbar", "sound", "tray", "gnome-pomodoro",
    "browser",
  ]

  /// Which daemon to run, and why.
  public enum Choice: Equatable, Sendable {
    case linkedIn(path: String)
    case dynamic(reason: String)

    /// One line for the log.
    public var logLine: String {
      switch self {
      case .linkedIn(let path):
        "running the static daemon image \(path): every enabled plugin is linked into it or "
          + "runs as a program"
      case .dynamic(let reason):
        "running the daemon with plugin libraries (grow, libGrowKit.so): \(reason)"
      }
    }
  }

  /// `/proc/self/exe`, else the program's name as it was run.
  public static func runningExecutable() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
  }

  /// Where the static image is for the executable at `executable`, if it is there.
  public static func locate(besides executable: String = runningExecutable()) -> String? {
    let directory = PathText.directory(of: executable)
    return [
      PathText.join(directory, fileName),
      PathText.normalized(PathText.join(directory, "../lib/grow/" + fileName)),
    ].first { access($0, X_OK) == 0 }
  }

  /// The image a daemon started with `config` runs: `GROW_DAEMON_IMAGE=dynamic` asks for
  /// `grow`'s own; otherwise the static image when it is installed and every plugin that would
  /// start is linked into it or is a program.
  @MainActor
  public static func choose(
    config: GrowConfig, directories: PluginDirectories = .standard(),
    environment: [String: String] = ProcessInfo.processInfo.environment,
    image: String? = locate()
  ) -> Choice {
    if environment["GROW_DAEMON_IMAGE"] == "dynamic" {
      return .dynamic(reason: "GROW_DAEMON_IMAGE=dynamic asks for it")
    }
    guard let image else {
      return .dynamic(reason: "there is no static image (\(fileName)) beside this grow")
    }
    let plan = PluginHost.plan(config: config, available: PluginHost.discover(in: directories))
    for item in plan where item.decision == .load {
      switch item.source {
      case .library:
        return .dynamic(
          reason: "plugin '\(item.id)' is a library built against libGrowKit.so, which only "
            + "the daemon with plugin libraries (grow) can load")
      case .builtIn where !linkedIn.contains(item.id):
        return .dynamic(
          reason: "built-in plugin '\(item.id)' is not linked into the static image")
      case .builtIn, .executable, .unknown: continue
      }
    }
    return .linkedIn(path: image)
  }

  /// The first words of the answer to `grow reload` when the static image hands over to the
  /// daemon that loads plugin libraries (`Daemon.handOver`): `grow` waits for that daemon.
  public static let handOverReport = "handing over to the daemon that loads plugin libraries"

  /// Set for the daemon a hand-over starts: the image it came from, to go back to when the
  /// new config cannot be loaded there either (so a typo never leaves no daemon at all).
  public static let handedOverVariable = "GROW_HANDED_OVER_FROM"

  /// Replaces the static image (running at `image`) with `grow daemon` of the full command
  /// line beside it, asked for the daemon that loads plugin libraries; returns the errno when
  /// it could not.
  public static func execDynamic(image: String, configPath: String?) -> Int32 {
    let cli = PathText.join(PathText.directory(of: image), InstallLayout.cliName)
    setenv("GROW_DAEMON_IMAGE", "dynamic", 1)
    setenv(handedOverVariable, image, 1)
    return execute(cli, [cli, "daemon"] + (configPath.map { ["--config", $0] } ?? []))
  }

  /// Replaces this process with the static image at `path`, given `--config PATH` when
  /// `configPath` is set; returns the errno when it could not.
  public static func exec(_ path: String, configPath: String?) -> Int32 {
    execute(path, [path] + (configPath.map { ["--config", $0] } ?? []))
  }

  private static func execute(_ path: String, _ words: [String]) -> Int32 {
    var argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    execv(path, &argv)
    let code = errno
    for word in argv { free(word) }
    return code
  }
}

/// Why the static daemon image did not start a plugin.
public enum DaemonImageError: WordedError, Equatable {
  case notLinkedIn(String, path: String)

  public var worded: Worded {
    switch self {
    case .notLinkedIn(let id, let path):
      Worded(
        Message(
          "plugin '{id}' ({path}) is not linked into the static daemon image, which loads no "
            + "plugin library; restart the daemon: 'grow daemon' then runs the one that loads it"),
        ["id": id, "path": path]
      )
    }
  }
}

/// The static image's `main`: `grow-daemon [--config PATH]`, the daemon with the plugins
/// `linkedIn` registered by their types. Returns the exit status when it cannot start.
@MainActor
public func runLinkedInDaemon(_ arguments: [String], linkedIn: [any GrowPlugin.Type]) -> Int32 {
  PluginHost.linkedIn = Dictionary(
    linkedIn.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
  let log = Logger(label: "daemon", destination: .forDaemon())
  var configPath: String?
  var words = arguments[...]
  while let word = words.popFirst() {
    if word == "--config", let path = words.popFirst() {
      configPath = path
    } else if word.hasPrefix("--config=") {
      configPath = String(word.dropFirst("--config=".count))
    } else {
      return refuse("usage: \(DaemonImage.fileName) [--config PATH]", status: 2, log: log)
    }
  }
  let config: GrowConfig
  do {
    config = try GrowConfig.load(
      path: configPath,
      pluginSettings: { id in
        MainActor.assumeIsolated {
          PluginHost.linkedIn?[id].flatMap { $0.settings.isEmpty ? nil : $0.settings }
        }
      })
  } catch {
    return refuse(nothingStarted(becauseOf: error.description), status: 1, log: log)
  }
  let unknown = PluginHost.unknownSections(in: config, directories: .standard())
  guard unknown.isEmpty else {
    return refuse(
      nothingStarted(becauseOf: ConfigError(unknown).description), status: 1, log: log)
  }
  let path = configPath
  let daemon = Daemon(
    config: config, log: log,
    reloadConfig: { @Sendable () throws in try GrowConfig.load(path: path) })
  daemon.handOver = {
    let code = DaemonImage.execDynamic(
      image: DaemonImage.runningExecutable(), configPath: path)
    log.error("cannot run grow daemon: \(String(cString: strerror(code)))")
  }
  do {
    try daemon.run()
  } catch {
    return refuse(error.description, status: 1, log: log)
  }
}

/// Why nothing was started: the config's problems, as `grow daemon` (on stderr, to the person
/// who ran it) and the CLI say it.
public func nothingStarted(becauseOf problems: String) -> String {
  Message("the config has problems; nothing was started:\n{problems}").render([
    "problems": problems
  ])
}

/// Says why the image stops, on stderr as `grow` says it (`grow: ` on each line) and in the log.
@MainActor
private func refuse(_ message: String, status: Int32, log: Logger) -> Int32 {
  Logger(
    label: "daemon", destination: LogDestination(standardError: false, file: log.destination.file)
  )
  .error(message)
  let text =
    message.split(separator: "\n", omittingEmptySubsequences: false)
    .map { $0.isEmpty ? "" : "grow: \($0)" }.joined(separator: "\n") + "\n"
  var bytes = Array(text.utf8)
  _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
  return status
}
