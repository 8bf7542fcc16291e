import Foundation
import Glibc
import GrowTestSupport
import Testing

/// The headless sway session the Wayland tests run in: it comes up as a user of its own, its
/// windows take the focus sway gives them, root (the daemon under test) reaches its compositor
/// and bus, and nothing of it is left once it stops.
@Suite(.serialized) struct WaylandSessionTests {
  @Test func sessionRunsWindowsAndLeavesNothingBehind() throws {
    let running = try WaylandSession()
    let user = running.user
    let uid = running.uid
    let runtime = running.runtimeDirectory.path
    #expect(uid != 0)
    #expect(FileManager.default.fileExists(atPath: running.waylandSocket))

    // sway runs as the user, not as root.
    let owner = try Command.run("ps", ["-o", "user=", "-p", "\(running.compositorPID)"]).stdout
    #expect(owner.trimmingCharacters(in: .whitespacesAndNewlines) == user)

    // The empty output shows the session's background; grim sees it.
    let empty = try running.screenshot()
    #expect(empty.width == running.width && empty.height == running.height)
    #expect(empty.count(of: "#335577", tolerance: 2) == running.width * running.height)

    // A native window and an Xwayland one; sway focuses the one named.
    try running.openNativeWindow(appID: "grow-editor", title: "Editor window")
    try running.openXwaylandWindow(class: "DistractXterm", title: "Time sink")
    #expect(try running.focusedWindow() == "DistractXterm")
    try running.swaymsg("[app_id=grow-editor] focus")
    #expect(try running.focusedWindow() == "grow-editor")

    // Root reaches the bus the user runs.
    let names = try Command.run(
      "dbus-send",
      [
        "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus.GetId",
      ], environment: running.environment)
    #expect(names.status == 0, "\(names.stderr)")
    // The two tiled windows now cover the background.
    #expect(try running.screenshot().count(of: "#335577", tolerance: 2) < running.width * 10)

    // A process the user started, then the stop.
    _ = try running.start("sleep", ["600"])
    // None of the user's programs (sway, Xwayland, the bus, the windows) is in the checkout,
    // which may be out of the user's reach (a clone in a 0700 home directory), or sees its
    // path: their working directory, arguments, environment and mapped files.
    #expect(running.processesSeeing(RepoPaths.root.path) == [])
    let display = running.xDisplay
    running.stop()
    #expect(getpwnam(user) == nil)
    #expect(!FileManager.default.fileExists(atPath: runtime))
    // Xwayland's socket is gone. Another desktop on this machine may take the display number
    // at once (with-desktop picks the first free one), so a socket there is a leftover only
    // if the session's user still owns it.
    var socket = stat()
    let socketPath = "/tmp/.X11-unix/X\(display.dropFirst())"
    #expect(
      stat(socketPath, &socket) != 0 || socket.st_uid != uid,
      "Xwayland left \(socketPath) behind")
    let left = try Command.run("ps", ["-o", "pid=", "-u", "\(uid)"])
    #expect(left.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
  }
}
