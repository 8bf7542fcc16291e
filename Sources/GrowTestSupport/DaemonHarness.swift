import Foundation

/// A private session bus with a `grow daemon` on it, for tests that drive Grow from outside
/// exactly as a person or a script would.
public final class DaemonHarness {
  public let bus: PrivateSessionBus
  public private(set) var daemon: BackgroundProcess?

  /// - Parameter config: written to `$XDG_CONFIG_HOME/grow/config.ini` when given.
  /// Extra environment for the daemon and the CLI (`DISPLAY: ""` to run without X).
  public var environment: [String: String]

  public init(
    config: String? = nil, startDaemon: Bool = true, environment: [String: String] = [:]
  ) throws {
    bus = try PrivateSessionBus()
    self.environment = bus.environment.merging(environment) { $1 }
    if let config { try writeConfig(config) }
    if startDaemon { try start() }
  }

  deinit {
    daemon?.kill()
    bus.stop()
  }

  /// Starts a new session bus for the same directories after `bus.crash()`, and points the
  /// harness (the next `start()`, `grow`, `run`) at it.
  public func restartBus() throws {
    try bus.restart()
    environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
  }

  /// `$XDG_DATA_HOME/grow/plugins`, where the daemon looks for third-party plugins.
  public var pluginDirectory: String {
    bus.environment["XDG_DATA_HOME", default: ""] + "/grow/plugins"
  }

  /// Copies a library into the plugin directory as plugin `id`: a fixture
  /// (`libgrowtest-*.so`, from `FixturePlugins`) or one of the build (`libGrowKit.so`).
  public func installPlugin(library: String, as id: String, mode: Int = 0o755) throws {
    try FileManager.default.createDirectory(
      atPath: pluginDirectory, withIntermediateDirectories: true)
    let source =
      library.hasPrefix("libgrowtest-")
      ? try FixturePlugins.library(library)
      : (Binaries.grow as NSString).deletingLastPathComponent + "/" + library
    let target = pluginDirectory + "/libgrow-plugin-\(id).so"
    try? FileManager.default.removeItem(atPath: target)
    try FileManager.default.copyItem(atPath: source, toPath: target)
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target)
  }

  /// `grow plugins --json`, decoded and keyed by id; a list (`last_output`) as its lines
  /// joined by newlines.
  public func plugins() throws -> [String: [String: String]] {
    let result = try grow("plugins", "--json")
    guard result.status == 0,
      let list = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        as? [[String: Any]]
    else { throw HarnessError("grow plugins --json failed: \(result)") }
    let texts = list.map { plugin in
      plugin.compactMapValues { value in
        value as? String ?? (value as? [String])?.joined(separator: "\n")
      }
    }
    return Dictionary(uniqueKeysWithValues: texts.map { ($0["id"] ?? "", $0) })
  }

  /// The daemon's memory map (`/proc/PID/maps`), read whole: Foundation's file reading stops
  /// at 4 kB on /proc files.
  public func daemonMemoryMap() throws -> String {
    guard let pid = daemon?.pid else { throw HarnessError("no daemon") }
    return try Command.run("cat", ["/proc/\(pid)/maps"]).stdout
  }

  /// A memory figure of the daemon from /proc/PID/status, in MiB: `VmRSS` (resident now) or
  /// `VmHWM` (its peak).
  public func daemonMemoryMiB(_ field: String = "VmRSS") throws -> Double {
    guard let pid = daemon?.pid else { throw HarnessError("no daemon") }
    let text = try Command.run("cat", ["/proc/\(pid)/status"]).stdout
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
      let kib = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { throw HarnessError("no \(field) in /proc/\(pid)/status") }
    return kib / 1024
  }

  /// How many match rules the daemon's connection has on the bus, as the bus counts them
  /// (`org.freedesktop.DBus.Debug.Stats.GetConnectionStats`).
  public func daemonMatchRules() throws -> Int {
    let owner = try run(
      "busctl",
      [
        "--user", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
        "GetNameOwner", "s", "org.grow.Grow1",
      ])
    guard owner.status == 0, let name = owner.stdout.split(separator: "\"").dropFirst().first
    else { throw HarnessError("no owner of org.grow.Grow1: \(owner)") }
    let stats = try run(
      "busctl",
      [
        "--user", "--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus.Debug.Stats", "GetConnectionStats", "s", String(name),
      ])
    guard stats.status == 0,
      let reply = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8))
        as? [String: Any],
      let fields = (reply["data"] as? [Any])?.first as? [String: Any],
      let rules = (fields["MatchRules"] as? [String: Any])?["data"] as? Int
    else { throw HarnessError("GetConnectionStats of \(name) gave no MatchRules: \(stats)") }
    return rules
  }

  public var configPath: String {
    bus.environment["XDG_CONFIG_HOME", default: ""] + "/grow/config.ini"
  }

  public func writeConfig(_ text: String) throws {
    let url = URL(fileURLWithPath: configPath)
    try FileManager.default.createDirectory(
      at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: url, atomically: true, encoding: .utf8)
  }

  /// Starts `grow daemon` and waits until it answers on the bus.
  /// - Parameter umask: the file-creation mask to start it with (octal, such as "000"), set by
  ///   a shell that then becomes the daemon; the test process's own otherwise.
  /// - Parameter fileLimit: the soft limit on open descriptors (`ulimit -n`), set the same way.
  public func start(arguments: [String] = [], umask: String? = nil, fileLimit: Int? = nil) throws {
    touchInput()
    let limits = [umask.map { "umask \($0)" }, fileLimit.map { "ulimit -Sn \($0)" }].compactMap {
      $0
    }
    let daemon =
      if !limits.isEmpty {
        try BackgroundProcess(
          "/bin/sh",
          [
            "-c", (limits + ["exec \"$0\" \"$@\""]).joined(separator: " && "), Binaries.grow,
            "daemon",
          ] + arguments,
          environment: environment)
      } else {
        try BackgroundProcess(Binaries.grow, ["daemon"] + arguments, environment: environment)
      }
    self.daemon = daemon
    let ready = try daemon.waitUntil(timeout: 60) { try grow("status").status == 0 }
    guard ready else {
      throw HarnessError("grow daemon did not come up; stderr:\n\(daemon.stderr)")
    }
  }

  /// Moves the pointer one pixel and back on the harness's display, as a person who has just
  /// typed a command has used the input. The tests' Xvfb gets no input otherwise, so its idle
  /// time, counted from the server's start, crossed the x11 plugin's `idle-pause` (3 min)
  /// in whichever test ran focus at that moment, and the focus became a pause.
  public func touchInput() {
    let display = environment["DISPLAY"] ?? ProcessInfo.processInfo.environment["DISPLAY"]
    guard let display, !display.isEmpty else { return }
    for step in ["1", "-1"] {
      _ = try? Command.run(
        "xdotool", ["mousemove_relative", "--", step, "0"], environment: environment, timeout: 5)
    }
  }

  /// A second session bus, as a login's, whose one service directory is `services` (it need
  /// not exist yet), so D-Bus activation can be tested; the harness's own bus activates
  /// nothing. Returns it with this harness's environment pointed at it (and no DISPLAY): an
  /// activated daemon gets the address from dbus-daemon, not from us.
  public func activatingBus(services: String) throws -> (BackgroundProcess, [String: String]) {
    let configPath = bus.directory.appendingPathComponent("activating-bus.conf").path
    try """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:tmpdir=/tmp</listen>
      <auth>EXTERNAL</auth>
      <servicedir>\(services)</servicedir>
      <policy context="default">
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
      </policy>
    </busconfig>
    """.write(toFile: configPath, atomically: true, encoding: .utf8)
    var environment = self.environment
    environment["DISPLAY"] = ""
    environment["DBUS_SESSION_BUS_ADDRESS"] = ""
    let daemon = try BackgroundProcess(
      "dbus-daemon", ["--config-file=\(configPath)", "--nofork", "--print-address=1"],
      environment: environment)
    guard daemon.waitUntil(timeout: 10, { daemon.stdout.contains("\n") }) else {
      daemon.kill()
      throw HarnessError("the activating bus did not start: \(daemon.stderr)")
    }
    environment["DBUS_SESSION_BUS_ADDRESS"] = String(daemon.stdout.prefix { $0 != "\n" })
    return (daemon, environment)
  }

  /// Runs the `grow` CLI against this bus.
  @discardableResult
  public func grow(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String)
  {
    try Command.run(Binaries.grow, arguments, environment: environment)
  }

  /// Runs any program (busctl, gdbus, dbus-send) against this bus.
  @discardableResult
  public func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 10) throws
    -> (status: Int32, stdout: String, stderr: String)
  {
    try Command.run(executable, arguments, environment: environment, timeout: timeout)
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

  /// A config of one-second phases that follow each other by themselves: many phase ends in a
  /// few seconds.
  public static let oneSecondCycle = """
    [timer]
    focus = 1s
    short-break = 1s
    long-break = 1s
    auto-start-breaks = true
    auto-start-focus = true
    """

  /// `$XDG_STATE_HOME/grow/pending-history.json`: ended phases the daemon keeps until they
  /// are in the history file.
  public var pendingHistoryPath: String {
    environment["XDG_STATE_HOME", default: ""] + "/grow/pending-history.json"
  }

  /// Waits until every phase that ended is in the history file (the daemon writes it off its
  /// loop, a moment after the phase ends): nothing is kept in `pendingHistoryPath` any more.
  public func waitForHistory(timeout: TimeInterval = 30) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while FileManager.default.fileExists(atPath: pendingHistoryPath) {
      guard Date() < deadline else {
        throw HarnessError(
          "phases still wait for the history; daemon log:\n\(daemon?.stderr ?? "")")
      }
      Thread.sleep(forTimeInterval: 0.02)
    }
  }

  /// Waits until `grow status --json` satisfies `condition`.
  public func waitForStatus(timeout: TimeInterval = 30, _ condition: ([String: Any]) -> Bool) throws
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
