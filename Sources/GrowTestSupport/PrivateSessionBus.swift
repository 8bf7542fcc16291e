import Foundation

/// Why a `PrivateSessionBus` could not be started.
public struct PrivateSessionBusError: Error, CustomStringConvertible {
  public let description: String
}

/// A private D-Bus session bus plus private XDG directories, for one test (or suite).
///
/// Runs `dbus-daemon` with `scripts/dbus-session.conf`, which has no service directories, so
/// nothing is auto-activated: calling a service nobody owns fails fast with ServiceUnknown
/// instead of starting whichever notification daemon Debian happens to have installed.
/// Merge `environment` into every child so it uses this bus and never the real user's files.
public final class PrivateSessionBus: @unchecked Sendable {
  /// The bus address, e.g. `unix:path=/tmp/dbus-XXXX,guid=…`; a new one after `restart()`.
  public private(set) var address: String
  /// Private per-test directories: `HOME` and the XDG base dirs live under it.
  public let directory: URL
  /// `DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR` (mode 0700), `XDG_CONFIG_HOME`,
  /// `XDG_DATA_HOME`, `XDG_STATE_HOME`, `XDG_CACHE_HOME` and `HOME`.
  public private(set) var environment: [String: String]

  private var daemon: BackgroundProcess
  private let timeout: TimeInterval

  /// Starts the bus and waits (up to `timeout` seconds) for its address.
  public init(timeout: TimeInterval = 10) throws {
    let config = RepoPaths.scripts.appendingPathComponent("dbus-session.conf")
    guard FileManager.default.fileExists(atPath: config.path) else {
      throw PrivateSessionBusError(description: "missing bus config \(config.path)")
    }

    let fileManager = FileManager.default
    directory = fileManager.temporaryDirectory
      .appendingPathComponent("grow-test-\(UUID().uuidString)")
    var environment: [String: String] = [:]
    let dirs = [
      ("XDG_RUNTIME_DIR", "runtime"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
      ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache"), ("HOME", "home"),
    ]
    for (variable, name) in dirs {
      let url = directory.appendingPathComponent(name)
      // 0700 for all of them; the XDG spec requires it for XDG_RUNTIME_DIR.
      try fileManager.createDirectory(
        at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      environment[variable] = url.path
    }

    self.timeout = timeout
    do {
      (daemon, address) = try Self.launch(environment: environment, timeout: timeout)
    } catch {
      try? fileManager.removeItem(at: directory)
      throw error
    }
    environment["DBUS_SESSION_BUS_ADDRESS"] = address
    self.environment = environment
  }

  /// Starts a dbus-daemon and waits for its address.
  private static func launch(environment: [String: String], timeout: TimeInterval) throws
    -> (BackgroundProcess, String)
  {
    let config = RepoPaths.scripts.appendingPathComponent("dbus-session.conf")
    // --print-address=1 writes the address to stdout, which BackgroundProcess sends to a file.
    let daemon = try BackgroundProcess(
      "dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--print-address=1"],
      environment: environment)
    let ready = daemon.waitUntil(timeout: timeout) { daemon.stdout.contains("\n") }
    let printed = daemon.stdout.split(separator: "\n").first.map(String.init) ?? ""
    guard ready, !printed.isEmpty else {
      let why = daemon.isRunning ? "no address after \(timeout)s" : "dbus-daemon exited"
      let stderr = daemon.stderr
      daemon.kill()
      throw PrivateSessionBusError(description: "private session bus: \(why): \(stderr)")
    }
    return (daemon, printed)
  }

  /// Kills the bus daemon (SIGKILL, as when a session crashes) and keeps the directories, so
  /// that `restart()` can bring up a new bus for the same "user".
  public func crash() {
    daemon.kill()
  }

  /// Starts a new bus daemon (after `crash()`) with the same directories; `address` and
  /// `environment` then name the new bus.
  public func restart() throws {
    if daemon.isRunning, daemon.terminate(timeout: 2) == nil { daemon.kill() }
    (daemon, address) = try Self.launch(environment: environment, timeout: timeout)
    environment["DBUS_SESSION_BUS_ADDRESS"] = address
  }

  deinit { stop() }

  /// Stops the bus daemon and removes the private directories. Safe to call more than once.
  public func stop() {
    if daemon.isRunning, daemon.terminate(timeout: 2) == nil { daemon.kill() }
    try? FileManager.default.removeItem(at: directory)
  }
}
