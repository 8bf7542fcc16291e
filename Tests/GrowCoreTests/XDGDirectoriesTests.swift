import GrowCore
import Testing

/// The one XDG lookup that the daemon, the plugins and the CLI share.
@Suite("XDGDirectories")
struct XDGDirectoriesTests {
  @Test func absoluteValuesWinAndLoseATrailingSlash() {
    let directories = XDGDirectories(environment: [
      "HOME": "/home/u", "XDG_STATE_HOME": "/s/", "XDG_DATA_HOME": "/d",
      "XDG_CONFIG_HOME": "/c/", "XDG_RUNTIME_DIR": "/run/user/1",
    ])
    #expect(directories.growState == "/s/grow")
    #expect(directories.growData == "/d/grow")
    #expect(directories.growConfig == "/c/grow")
    #expect(directories.runtimeDirectory == "/run/user/1")
  }

  /// The specification: a relative or empty value is invalid and means "unset".
  @Test func relativeOrEmptyValuesFallBackToHome() {
    let directories = XDGDirectories(environment: [
      "HOME": "/home/u/", "XDG_STATE_HOME": "state", "XDG_DATA_HOME": "",
      "XDG_RUNTIME_DIR": "run",
    ])
    #expect(directories.growState == "/home/u/.local/state/grow")
    #expect(directories.growData == "/home/u/.local/share/grow")
    #expect(directories.growConfig == "/home/u/.config/grow")
    #expect(directories.runtimeDirectory == nil)
  }
}
