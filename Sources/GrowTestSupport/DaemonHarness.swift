import Foundation

/// A private session bus with a `grow daemon` on it, for tests that drive Grow from outside
/// exactly as a person or a script would.
public final class DaemonHarness {
  public let bus: PrivateSessionBus
  public private(set) var daemon: BackgroundProcess?

  /// - Parameter config: written to `$XDG_CONFIG_HOME/grow/config.ini` when given.
  public init(config: String? = nil, startDaemon: Bool = true) throws {
    bus = try PrivateSessionBus()
    if let config { try writeConfig(config) }
    if startDaemon { try start() }
  }

  deinit {
    daemon?.kill()
    bus.stop()
  }

  public var configPath: String { bus.environment["XDG_CONFIG_HOME", default: ""] + "/grow/config.ini" }

  public func writeConfig(_ text: String) throws {
    let url = URL(fileURLWithPath: configPath)
    try FileManager.default.createDirectory(
      at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: url, atomically: true, encoding: .utf8)
  }

  /// Starts `grow daemon` and waits until it answers on the bus.
  public func start(arguments: [String] = []) throws {
    let daemon = try BackgroundProcess(
      Binaries.grow, ["daemon"] + arguments, environment: bus.environment)
    self.daemon = daemon
    let ready = try daemon.waitUntil(timeout: 10) { try grow("status").status == 0 }
    guard ready else {
      throw HarnessError("grow daemon did not come up; stderr:\n\(daemon.stderr)")
    }
  }

  /// Runs the `grow` CLI against this bus.
  @discardableResult
  public func grow(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
    try Command.run(Binaries.grow, arguments, environment: bus.environment)
  }

  /// Runs any program (busctl, gdbus, dbus-send) against this bus.
  @discardableResult
  public func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 10) throws
    -> (status: Int32, stdout: String, stderr: String)
  {
    try Command.run(executable, arguments, environment: bus.environment, timeout: timeout)
  }

  /// `grow status --json`, decoded.
  public func status() throws -> [String: Any] {
    let result = try grow("status", "--json")
    guard result.status == 0,
      let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        as? [String: Any]
    else { throw HarnessError("grow status --json failed: \(result)") }
    return object
  }

  /// Waits until `grow status --json` satisfies `condition`.
  public func waitForStatus(timeout: TimeInterval = 10, _ condition: ([String: Any]) -> Bool) throws
    -> [String: Any]
  {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      let current = try status()
      if condition(current) { return current }
      guard Date() < deadline else { throw HarnessError("status never matched; last: \(current)") }
      Thread.sleep(forTimeInterval: 0.05)
    }
  }
}

public struct HarnessError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
