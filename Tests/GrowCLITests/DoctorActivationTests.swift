import Foundation
import GrowTestSupport
import Testing

/// `grow doctor` right after `grow install --user`, on a bus that was already running.
@Suite struct DoctorActivationTests {
  /// A session bus whose only service directory is `directory`, as a login's bus has
  /// `$XDG_DATA_HOME/dbus-1/services` among its standard ones; the directory need not exist.
  func bus(readingServicesFrom directory: String, harness: DaemonHarness) throws
    -> (BackgroundProcess, [String: String])
  {
    let configPath = harness.bus.directory.appendingPathComponent("login-bus.conf").path
    try """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:tmpdir=/tmp</listen>
      <auth>EXTERNAL</auth>
      <servicedir>\(directory)</servicedir>
      <policy context="default">
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
      </policy>
    </busconfig>
    """.write(toFile: configPath, atomically: true, encoding: .utf8)
    var environment = harness.environment
    environment["DISPLAY"] = ""
    environment["DBUS_SESSION_BUS_ADDRESS"] = ""
    let bus = try BackgroundProcess(
      "dbus-daemon", ["--config-file=\(configPath)", "--nofork", "--print-address=1"],
      environment: environment)
    #expect(bus.waitUntil(timeout: 10) { bus.stdout.contains("\n") })
    environment["DBUS_SESSION_BUS_ADDRESS"] = String(bus.stdout.prefix { $0 != "\n" })
    return (bus, environment)
  }

  func daemonLine(_ environment: [String: String]) throws -> String {
    let doctor = try Command.run(Binaries.grow, ["doctor"], environment: environment)
    return doctor.stdout.split(separator: "\n").first { $0.contains(" daemon: ") }
      .map(String.init) ?? doctor.stdout
  }

  @Test func rightAfterInstallDoctorKnowsActivationWillStartTheDaemon() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let services = harness.environment["XDG_DATA_HOME", default: ""] + "/dbus-1/services"
    // The bus starts first, before the directory exists: as at login, before the install.
    let (bus, environment) = try bus(readingServicesFrom: services, harness: harness)
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
    let (bus, environment) = try bus(readingServicesFrom: services, harness: harness)
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
}
