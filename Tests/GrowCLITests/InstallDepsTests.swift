import Foundation
import GrowTestSupport
import Testing

/// `scripts/install-deps` while another package manager holds apt's locks (unattended-upgrades
/// at boot, a second terminal): it waits for them instead of failing at once.
@Suite struct InstallDepsTests {
  @Test(.enabled(if: getuid() == 0 && installed("apt-get") && installed("python3")))
  func waitsForAnotherAptToLetGoOfItsLocks() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-deps-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    // A test double for dpkg-query, the one part that cannot be arranged for real: a package
    // missing on this machine. It reports `dbus` (installed, since the tests need it) as
    // missing, so the script runs the real apt-get update and install, which finds nothing
    // to do.
    try writeExecutable(
      """
      #!/bin/sh
      for last; do :; done
      [ "$last" = dbus ] && exit 1
      exec /usr/bin/dpkg-query "$@"

      """, to: directory.appendingPathComponent("dpkg-query").path)
    // The locks apt-get update and apt-get install take, held as apt holds them (fcntl), until
    // install-deps says it waits for them: however slow the machine, the script meets them.
    let holder = try BackgroundProcess(
      "python3",
      [
        "-c",
        """
        import fcntl, os, sys, time
        fds = [os.open(p, os.O_RDWR | os.O_CREAT, 0o640) for p in sys.argv[1:]]
        for fd in fds: fcntl.lockf(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep(600)
        """,
        "/var/lib/apt/lists/lock", "/var/lib/dpkg/lock-frontend",
      ])
    defer { _ = holder.kill() }
    #expect(holder.waitUntil(timeout: 60) { holder.stdout.contains("held") }, "\(holder.stderr)")
    let path = directory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
    let script = try BackgroundProcess(
      RepoPaths.scripts.appendingPathComponent("install-deps").path, [],
      environment: ["PATH": path])
    defer { _ = script.kill() }
    let waited = script.waitUntil(timeout: 120) {
      script.stdout.contains("install-deps: waiting up to 600s for another package manager: ")
    }
    #expect(waited, "\(script.stdout)\(script.stderr)")
    #expect(script.isRunning, "install-deps gave up while the locks were held")
    _ = holder.kill()
    #expect(script.waitForExit(timeout: 300) == 0, "\(script.stdout)\(script.stderr)")
    #expect(script.stdout.contains("install-deps: packages installed"), "\(script.stdout)")
  }
}
