import Foundation
import GrowTestSupport
import Testing

/// A test's i3 keeps its IPC socket in the display's own directory: a killed i3 leaves the
/// socket behind, and the person running the tests must not find them in their runtime dir.
@Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/i3")))
func i3LeavesNoIPCSocketInTheUsersRuntimeDirectory() throws {
  let userRuntime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? "/run/user/0"
  var display: PrivateDisplay? = try PrivateDisplay(windowManager: .i3)
  // i3 announces its socket on the root window.
  let property = try #require(try display?.xprop("-root", "I3_SOCKET_PATH"))
  let socket = try #require(
    property.split(separator: "\"", omittingEmptySubsequences: false).dropFirst().first
      .map(String.init))
  #expect(FileManager.default.fileExists(atPath: socket), "\(property)")
  #expect(!socket.hasPrefix(userRuntime + "/"), "i3's socket is in \(userRuntime): \(socket)")
  display = nil
  #expect(!FileManager.default.fileExists(atPath: socket))
}
