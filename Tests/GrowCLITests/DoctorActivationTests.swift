import Foundation
import GrowTestSupport
import Testing

/// `grow doctor` right after `grow install --user`, on a bus that was already running.
@Suite struct DoctorActivationTests {
  func daemonLine(_ environment: [String: String]) throws -> String {
    let doctor = try Command.run(Binaries.grow, ["doctor"], environment: environment)
    return doctor.stdout.split(separator: "\n").first { $0.contains(" daemon: ") }
      .map(String.init) ?? doctor.stdout
  }

  @Test func rightAfterInstallDoctorKnowsActivationWillStartTheDaemon() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let services = harness.environment["XDG_DATA_HOME", default: ""] + "/dbus-1/services"
    // The bus starts first, before the directory exists: as at login, before the install.
    let (bus, environment) = try harness.activatingBus(services: services)
    defer { bus.terminate() }
    #expect(try daemonLine(environment).contains("not running, and nothing starts it"))

    let install = try Command.run(
      Binaries.grow, ["install", "--user", "--autostart"], environment: environment)
    #expect(install.status == 0, "\(install.stderr)")
    let grow = URL(fileURLWithPath: Binaries.grow).resolvingSymlinksInPath().path
    #expect(
      try daemonLine(environment)
        == "✔ daemon: not running; D-Bus activation starts it on first use (\(grow) daemon, "
        + "from \(services)/org.grow.Grow1.service)")
    // And it is so: the next command starts it.
    let status = try Command.run(Binaries.grow, ["status"], environment: environment)
    #expect(status.status == 0, "\(status.stderr)")
    _ = try Command.run(Binaries.grow, ["stop"], environment: environment)
    let pid = try Command.run(
      "dbus-send",
      [
        "--session", "--print-reply=literal", "--dest=org.freedesktop.DBus",
        "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID",
        "string:org.grow.Grow1",
      ], environment: environment
    ).stdout.split(separator: " ").last.flatMap {
      Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    if let pid { kill(pid, SIGTERM) }
  }

  @Test func aServiceFileForAGrowThatIsGoneIsAProblem() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let services = harness.environment["XDG_DATA_HOME", default: ""] + "/dbus-1/services"
    try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
    try "[D-BUS Service]\nName=org.grow.Grow1\nExec=\"/opt/old grow/bin/grow\" daemon\n".write(
      toFile: services + "/org.grow.Grow1.service", atomically: true, encoding: .utf8)
    let (bus, environment) = try harness.activatingBus(services: services)
    defer { bus.terminate() }
    #expect(
      try daemonLine(environment)
        == "✘ daemon: not running; \(services)/org.grow.Grow1.service would start "
        + "/opt/old grow/bin/grow, which is not there; fix: run 'grow install --user' again "
        + "from the grow you use now")
  }

  @Test func aBusThatDoesNotReadTheServiceFileIsSaidSo() throws {
    // The harness's own bus has no service directories at all.
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    #expect(try harness.grow("install", "--user", "--autostart").status == 0)
    let services = harness.environment["XDG_DATA_HOME", default: ""] + "/dbus-1/services"
    #expect(
      try daemonLine(harness.environment)
        == "! daemon: not running; \(services)/org.grow.Grow1.service exists, but this session "
        + "bus does not read it; fix: start grow at login instead ('grow install --user "
        + "--autostart'), or give the bus the standard session service directories")
  }

  /// A config typo the morning after: D-Bus activation starts the daemon, which exits at once.
  /// The person sees the config's own error (file, line, the fix) from `grow start` and
  /// `grow status` (exit 3: no daemon), in `grow logs`, and on doctor's activation line.
  @Test func aBrokenConfigIsWhatActivationSaysWhenTheDaemonExits() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let services = harness.environment["XDG_DATA_HOME", default: ""] + "/dbus-1/services"
    let (bus, environment) = try harness.activatingBus(services: services)
    defer { bus.terminate() }
    let install = try Command.run(
      Binaries.grow, ["install", "--user", "--autostart"], environment: environment)
    #expect(install.status == 0, "\(install.stderr)")
    try harness.writeConfig("[timer]\nfocus = 25 minutes\n")
    let problem =
      "\(harness.configPath):2: focus = '25 minutes' in [timer]: '25 minutes' is not a "
      + "duration; write it like 25m, 90s or 1h30m"

    for command in ["start", "status"] {
      let result = try Command.run(Binaries.grow, [command], environment: environment)
      #expect(result.status == 3)
      #expect(
        result.stderr
          == "grow: the grow daemon that D-Bus activation started exited at once: the config "
          + "has problems; nothing was started:\ngrow: \(problem)\ngrow: fix them, then run the command "
          + "again ('grow config check' checks the file)\n")
    }
    let logs = try Command.run(Binaries.grow, ["logs"], environment: environment)
    #expect(logs.stdout.contains("grow[daemon] error: " + problem), "\(logs)")
    #expect(
      try daemonLine(environment)
        == "✘ daemon: not running; D-Bus activation would start it, but it would exit at once: "
        + "the config has problems: \(problem); fix: edit \(harness.configPath); "
        + "'grow config check' lists every problem")
  }
}
