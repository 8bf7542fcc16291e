import Foundation
import GrowTestSupport
import Testing

private func busCall(_ method: String, on bus: PrivateSessionBus) throws -> String {
  let result = try Command.run(
    "dbus-send",
    [
      "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
      "org.freedesktop.DBus.\(method)",
    ],
    environment: bus.environment)
  #expect(result.status == 0, "dbus-send \(method) failed: \(result.stderr)")
  return result.stdout
}

@Test func privateBusAnswersAndActivatesNothing() throws {
  let bus = try PrivateSessionBus()
  defer { bus.stop() }

  #expect(bus.address.hasPrefix("unix:"))
  #expect(bus.address != ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"])

  let names = try busCall("ListNames", on: bus)
  #expect(names.contains("\"org.freedesktop.DBus\""))
  // Under `make test` the surrounding desktop's bus has dunst; this one must not.
  #expect(!names.contains("org.freedesktop.Notifications"))

  // No service dirs in scripts/dbus-session.conf, so no notification daemon can be activated.
  let activatable = try busCall("ListActivatableNames", on: bus)
  #expect(activatable.contains("\"org.freedesktop.DBus\""))
  #expect(!activatable.contains("org.freedesktop.Notifications"))
}

@Test func privateBusGivesPrivateDirectories() throws {
  let bus = try PrivateSessionBus()
  let directory = bus.directory.path
  for variable in ["XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "HOME"]
  {
    let path = try #require(bus.environment[variable])
    #expect(path.hasPrefix(directory))
    #expect(FileManager.default.fileExists(atPath: path))
  }
  let runtime = try #require(bus.environment["XDG_RUNTIME_DIR"])
  let mode = try FileManager.default.attributesOfItem(atPath: runtime)[.posixPermissions] as? Int
  #expect(mode == 0o700)

  // The child sees the private HOME, not the runner's.
  let home = try Command.run("sh", ["-c", "echo \"$HOME\""], environment: bus.environment)
  #expect(home.stdout == "\(bus.environment["HOME"] ?? "")\n")

  bus.stop()
  #expect(!FileManager.default.fileExists(atPath: directory))
}
