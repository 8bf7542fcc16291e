import Foundation
import GrowTestSupport
import Testing

/// The gnome-pomodoro plugin against the real GNOME Pomodoro 0.22.1 (Debian's
/// gnome-shell-pomodoro, installed by scripts/install-deps): one client script
/// (Tests/Fixtures/GnomePomodoroClient) drives each the way scripts and bar modules do, with
/// busctl, gdbus, dbus-send and dbus-monitor, and the two recordings must match wherever the
/// models agree (docs/gnome-pomodoro.md lists where they do not, and why). And the two on one
/// bus: Grow never takes the name from GNOME Pomodoro, and takes it when GNOME Pomodoro quits.
@Suite(.serialized, .enabled(if: GnomePomodoro.isInstalled, "gnome-pomodoro is not installed"))
struct GnomePomodoroDifferentialTests {
  /// Grow's standard card starts focus after a break only when asked; GNOME Pomodoro always
  /// does. With `auto-start-focus` the models agree on every step of the client's session.
  static let config = """
    [timer]
    auto-start-focus = true

    [plugin.gnome-pomodoro]
    enabled = true
    """

  @Test func theClientSeesWhatItSeesWithGnomePomodoro() throws {
    let display = try PrivateDisplay()
    let (real, realXML) = try GnomePomodoro.record(display: display)

    let harness = try DaemonHarness(config: Self.config)
    #expect(
      try harness.eventually { try harness.plugins()["gnome-pomodoro"]?["state"] == "running" })
    let grow = try GnomePomodoro.runClient(environment: harness.environment)

    #expect(real.count == grow.count, "\(real)\n\(grow)")
    for (expected, actual) in zip(real, grow) {
      let step = expected["step"] as? String ?? "?"
      #expect(actual["step"] as? String == step)
      let differences = GnomePomodoro.differences(
        expected, actual, at: step, ignoring: step == "ticks" ? [] : ["ticks"])
      #expect(differences.isEmpty, "\(step):\n\(differences.joined(separator: "\n"))")
      if step == "ticks" {
        // Elapsed announced once a second while a phase runs, by both.
        #expect((expected["ticks"] as? Int ?? 0) >= 2)
        #expect((actual["ticks"] as? Int ?? 0) >= 2)
      }
    }
    // The same interface: gdbus-codegen makes the same C API from both introspections.
    let growXML = try GnomePomodoro.introspect(environment: harness.environment)
    let directory = harness.bus.directory.path
    let realHeader = try GnomePomodoro.codegenHeader(realXML, in: directory + "/real")
    #expect(realHeader.contains("pomodoro_pomodoro_call_set_state_duration"))
    #expect(try GnomePomodoro.codegenHeader(growXML, in: directory + "/grow") == realHeader)

    // The one property that says which it is.
    let version = try harness.run(
      "busctl",
      [
        "--user", "get-property", "org.gnome.Pomodoro", "/org/gnome/Pomodoro", "org.gnome.Pomodoro",
        "Version",
      ])
    #expect(version.stdout.hasPrefix("s \"0.22.1 (Grow "), "\(version)")
  }

  @Test func growWaitsForGnomePomodoroToQuitAndThenServesItsName() throws {
    let display = try PrivateDisplay()
    let harness = try DaemonHarness(config: Self.config, startDaemon: false)
    let home = harness.bus.directory.appendingPathComponent("gnome-pomodoro-home").path
    let real = try BackgroundProcess(
      "/usr/bin/gnome-pomodoro", ["--no-default-window"],
      environment: harness.environment.merging(GnomePomodoro.environment(display, home: home)) {
        $1
      })
    defer { _ = real.kill() }
    #expect(try harness.eventually { try GnomePomodoro.version(harness.environment) == "0.22.1" })

    try harness.start()
    let reason =
      "org.gnome.Pomodoro is owned by gnome-pomodoro (pid \(real.pid)); Grow serves it when "
      + "that one quits"
    #expect(
      try harness.eventually {
        let plugin = try harness.plugins()["gnome-pomodoro"]
        return plugin?["state"] == "unavailable" && plugin?["error"] == reason
      }, "\((try? harness.plugins()) ?? [:])")
    #expect(try GnomePomodoro.version(harness.environment) == "0.22.1", "not taken from it")

    let quit = try harness.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.gnome.Pomodoro", "--object-path",
        "/org/gnome/Pomodoro", "--method", "org.gnome.Pomodoro.Quit",
      ])
    #expect(quit.status == 0, "\(quit)")
    #expect(real.waitForExit(timeout: 30) != nil)
    #expect(
      try harness.eventually { try harness.plugins()["gnome-pomodoro"]?["state"] == "running" })
    #expect(try GnomePomodoro.version(harness.environment)?.hasPrefix("0.22.1 (Grow ") == true)

    // Turned off, Grow gives the name back.
    try harness.writeConfig("[plugin.gnome-pomodoro]\nenabled = false\n")
    #expect(try harness.grow("reload").status == 0)
    #expect(try harness.eventually { try GnomePomodoro.version(harness.environment) == nil })
  }
}

/// Running the real GNOME Pomodoro and the client script.
enum GnomePomodoro {
  static let binary = "/usr/bin/gnome-pomodoro"
  static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binary) }
  static let client = RepoPaths.root
    .appendingPathComponent("Tests/Fixtures/GnomePomodoroClient/gnome-pomodoro-client.py").path

  /// What GNOME Pomodoro needs to run headless and forget itself afterwards: an X display (it
  /// is a GTK application), settings in memory, a home of its own (its statistics).
  static func environment(_ display: PrivateDisplay, home: String) -> [String: String] {
    [
      "DISPLAY": display.display, "GSETTINGS_BACKEND": "memory", "HOME": home,
      "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
      "XDG_CACHE_HOME": home + "/cache",
    ]
  }

  /// `Version` of whoever owns org.gnome.Pomodoro; nil when nobody does.
  static func version(_ environment: [String: String]) throws -> String? {
    let result = try Command.run(
      "busctl",
      [
        "--user", "get-property", "org.gnome.Pomodoro", "/org/gnome/Pomodoro",
        "org.gnome.Pomodoro", "Version",
      ], environment: environment)
    guard result.status == 0 else { return nil }
    let text = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    return text.hasPrefix("s \"") ? String(text.dropFirst(3).dropLast()) : text
  }

  /// The client's recording of the real GNOME Pomodoro, started by D-Bus activation (as a
  /// session starts it) on a bus of its own, and asked to quit afterwards.
  static func record(display: PrivateDisplay) throws -> ([[String: Any]], String) {
    let harness = try DaemonHarness(startDaemon: false)
    let services = harness.bus.directory.appendingPathComponent("services")
    try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
    let home = harness.bus.directory.appendingPathComponent("gnome-pomodoro-home").path
    let variables = environment(display, home: home).sorted { $0.key < $1.key }
      .map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    try """
    [D-BUS Service]
    Name=org.gnome.Pomodoro
    Exec=/usr/bin/env \(variables) \(binary) --no-default-window

    """.write(
      to: services.appendingPathComponent("org.gnome.Pomodoro.service"), atomically: true,
      encoding: .utf8)
    let (bus, environment) = try harness.activatingBus(services: services.path)
    defer { _ = bus.terminate() }
    let ping = try Command.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.gnome.Pomodoro", "--object-path",
        "/org/gnome/Pomodoro", "--method", "org.freedesktop.DBus.Peer.Ping",
      ],
      environment: environment, timeout: 60)
    guard ping.status == 0 else { throw HarnessError("GNOME Pomodoro did not start: \(ping)") }
    defer {
      _ = try? Command.run(
        "gdbus",
        [
          "call", "--session", "--dest", "org.gnome.Pomodoro", "--object-path",
          "/org/gnome/Pomodoro", "--method", "org.gnome.Pomodoro.Quit",
        ],
        environment: environment)
    }
    return (try runClient(environment: environment), try introspect(environment: environment))
  }

  /// `gdbus introspect --xml` of /org/gnome/Pomodoro.
  static func introspect(environment: [String: String]) throws -> String {
    let result = try Command.run(
      "gdbus",
      [
        "introspect", "--session", "--dest", "org.gnome.Pomodoro", "--object-path",
        "/org/gnome/Pomodoro", "--xml",
      ], environment: environment)
    guard result.status == 0 else { throw HarnessError("no introspection: \(result)") }
    return result.stdout
  }

  /// The C header gdbus-codegen makes from the org.gnome.Pomodoro interface of `xml` (the
  /// other interfaces left out: GNOME Pomodoro's object also has GApplication's), written
  /// in `directory`.
  static func codegenHeader(_ xml: String, in directory: String) throws -> String {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let full = directory + "/introspection.xml"
    let only = directory + "/pomodoro.xml"
    try xml.write(toFile: full, atomically: true, encoding: .utf8)
    let extract = """
      import sys, xml.etree.ElementTree as E
      node = E.Element("node")
      node.extend(i for i in E.parse(sys.argv[1]).getroot() if i.get("name") == "org.gnome.Pomodoro")
      E.ElementTree(node).write(sys.argv[2])
      """
    let extracted = try Command.run("/usr/bin/python3", ["-c", extract, full, only])
    guard extracted.status == 0 else { throw HarnessError("\(extracted)") }
    let header = directory + "/pomodoro.h"
    let codegen = try Command.run(
      "gdbus-codegen",
      [
        "--interface-prefix", "org.gnome.", "--c-namespace", "Pomodoro", "--header", "--output",
        header, only,
      ])
    guard codegen.status == 0 else { throw HarnessError("gdbus-codegen failed: \(codegen)") }
    return try String(contentsOfFile: header, encoding: .utf8)
  }

  /// Runs the client script on the bus in `environment`; its recording, one object per step.
  static func runClient(environment: [String: String]) throws -> [[String: Any]] {
    let result = try Command.run(
      "/usr/bin/python3", [client], environment: environment, timeout: 180)
    guard result.status == 0 else { throw HarnessError("the client failed: \(result)") }
    return try result.stdout.split(separator: "\n").map { line in
      guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      else { throw HarnessError("not a JSON object: \(line)") }
      return object
    }
  }

  /// Where two recordings differ: another type letter, string, truth value or length, and
  /// doubles (`["d", x]`) more than a second apart (GNOME Pomodoro's Elapsed is the value of
  /// its last once-a-second tick, Grow's the time now).
  static func differences(
    _ expected: Any?, _ actual: Any?, at path: String, ignoring: Set<String> = []
  ) -> [String] {
    let different = ["\(path): \(String(describing: expected)) but \(String(describing: actual))"]
    switch (expected, actual) {
    case (let a as [String: Any], let b as [String: Any]):
      return Set(a.keys).union(b.keys).subtracting(ignoring).sorted().flatMap {
        differences(a[$0], b[$0], at: path + "." + $0)
      }
    case (let a as [Any], let b as [Any]):
      if a.count == 2, b.count == 2, a.first as? String == "d", b.first as? String == "d",
        let x = (a[1] as? NSNumber)?.doubleValue, let y = (b[1] as? NSNumber)?.doubleValue
      {
        return abs(x - y) <= 1 ? [] : different
      }
      guard a.count == b.count else { return different }
      return zip(a, b).enumerated().flatMap { differences($1.0, $1.1, at: "\(path)[\($0)]") }
    case (let a as String, let b as String):
      return a == b ? [] : different
    case (let a as NSNumber, let b as NSNumber):
      return a == b ? [] : different
    case (nil, nil):
      return []
    default:
      return different
    }
  }
}
