import Foundation
import GrowTestSupport
import Testing

/// "Only the user": what a real `grow daemon` writes is readable by the user alone, it runs no
/// plugin program that someone else could have changed, and it serves nothing but the session
/// bus it was given.
@Suite struct OnlyTheUserTests {
  /// Permission bits (`mode & 0o777`) of everything under `root`, by path relative to it.
  func modes(under root: String) -> [String: Int] {
    var found: [String: Int] = [:]
    for relative in FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? [] {
      var info = stat()
      guard lstat(root + "/" + relative, &info) == 0 else { continue }
      let type = info.st_mode & S_IFMT == S_IFDIR ? "/" : ""
      found[relative + type] = Int(info.st_mode & 0o777)
    }
    return found
  }

  /// Everything under `root` that is not owner-only: directories other than 0700, files
  /// other than 0600.
  func notOwnerOnly(_ found: [String: Int]) -> [String] {
    found.filter { path, mode in mode != (path.hasSuffix("/") ? 0o700 : 0o600) }
      .map { "\($0.key) \(String($0.value, radix: 8))" }.sorted()
  }

  /// Under umask 000 Grow still creates its directories 0700 and its files 0600: the history
  /// (with SQLite's -wal and -shm), the saved session, the status files, and every directory
  /// on the way to them. A program it starts gets the umask the daemon was started with.
  @Test func everythingTheDaemonCreatesIsOwnerOnlyWhateverTheUmask() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let base = harness.bus.directory.path
    // Parents that do not exist yet, so Grow makes them too.
    harness.environment["XDG_DATA_HOME"] = base + "/data/nested/share"
    harness.environment["XDG_STATE_HOME"] = base + "/state/nested/state"
    let home = harness.environment["HOME", default: ""]
    let script = home + "/report-umask"
    try writeExecutable(
      "#!/bin/sh\numask >\"$HOME/umask.tmp\"\nmv \"$HOME/umask.tmp\" \"$HOME/umask\"\nexec cat >/dev/null\n",
      to: script)
    try harness.writeConfig(
      """
      [timer]
      focus = 1s
      short-break = 10m

      [plugin.report-umask]
      exec = \(script)
      """)
    try harness.start(umask: "000")
    defer { _ = harness.daemon?.terminate(timeout: 5) }
    #expect(try harness.grow("start").status == 0)
    let status = try harness.waitForStatus { $0["completed_today"] as? Int == 1 }
    #expect(status["state"] as? String == "short-break", "a phase recorded, a session saved")

    let data = modes(under: base + "/data")
    let state = modes(under: base + "/state")
    let runtime = modes(under: harness.environment["XDG_RUNTIME_DIR", default: ""])
    for expected in [
      "nested/", "nested/share/", "nested/share/grow/", "nested/share/grow/history.sqlite",
      "nested/share/grow/history.sqlite-wal", "nested/share/grow/history.sqlite-shm",
    ] {
      #expect(data[expected] != nil, "\(expected) exists: \(data)")
    }
    for expected in [
      "nested/", "nested/state/", "nested/state/grow/", "nested/state/grow/session.json",
    ] {
      #expect(state[expected] != nil, "\(expected) exists: \(state)")
    }
    for expected in ["grow/", "grow/status.json", "grow/status.txt"] {
      #expect(runtime[expected] != nil, "\(expected) exists: \(runtime)")
    }
    #expect(notOwnerOnly(data) == [])
    #expect(notOwnerOnly(state) == [])
    #expect(notOwnerOnly(runtime) == [])

    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: home + "/umask"), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
    }
    let seen = (try? String(contentsOfFile: home + "/umask", encoding: .utf8)) ?? ""
    #expect(seen == "0000\n", "the plugin runs with the user's umask, not the daemon's 077")
  }

  /// A plugin program anyone else may write to would run with the user's rights: the daemon
  /// refuses it at once (no restarts), says how to fix it, and runs on. The file checked is the
  /// one PATH leads to when `exec` names a program without a slash.
  @Test func aPluginProgramOthersCanChangeIsRefusedAndSaysHowToFixIt() throws {
    let setup = try ExternalPluginTests.Setup()
    defer { setup.stopDaemon() }
    let hook = try setup.script(
      "hook", "#!/bin/sh\ntouch \"$HOME/hook-ran\"\nexec cat >/dev/null\n")
    #expect(chmod(hook, 0o777) == 0)
    let bin = setup.home + "/bin"
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    let named = bin + "/grow-test-hook"
    try writeExecutable("#!/bin/sh\nexec cat >/dev/null\n", to: named)
    #expect(chmod(named, 0o775) == 0)
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    setup.harness.environment["PATH"] = bin + ":" + path
    try setup.harness.writeConfig(
      """
      [plugins]
      enable = hook, named

      [plugin.hook]
      exec = \(hook)

      [plugin.named]
      exec = grow-test-hook --quiet
      """)
    let refusal = { (file: String) in
      "refusing to run \(file): it is writable by other users; run 'chmod go-w \(file)'"
    }

    let doctor = try setup.harness.grow("doctor")
    #expect(doctor.stdout.contains("plugin hook: \(refusal(hook))"), "\(doctor.stdout)")

    try setup.harness.start()
    let plugins = try setup.harness.plugins()
    #expect(plugins["hook"]?["state"] == "failed", "given up at once, not restarting")
    #expect(plugins["hook"]?["error"] == refusal(hook))
    #expect(plugins["named"]?["state"] == "failed")
    #expect(plugins["named"]?["error"] == refusal(named))
    let listing = try setup.harness.grow("plugins")
    #expect(listing.stdout.contains("    error: \(refusal(hook))\n"))
    #expect(setup.daemonLog.contains("grow[hook] error: \(refusal(hook))"))
    #expect(!FileManager.default.fileExists(atPath: setup.home + "/hook-ran"))
    #expect(try setup.harness.grow("start").status == 0, "the daemon runs on")

    // Done what it says; a reload starts it.
    #expect(chmod(hook, 0o755) == 0)
    #expect(try setup.harness.grow("plugins", "reload", "hook").status == 0)
    try setup.wait("the fixed hook to run") {
      FileManager.default.fileExists(atPath: setup.home + "/hook-ran")
    }
    #expect(try setup.harness.plugins()["hook"]?["state"] == "running")
  }

  /// Root can hand a file to someone else; then it belongs to another user.
  @Test(.enabled(if: getuid() == 0, "only root can give a file away"))
  func aPluginProgramOfAnotherUserIsRefused() throws {
    let setup = try ExternalPluginTests.Setup()
    defer { setup.stopDaemon() }
    let hook = try setup.script("theirs", "#!/bin/sh\nexec cat >/dev/null\n")
    #expect(chown(hook, 65534, 65534) == 0)
    try setup.harness.writeConfig("[plugins]\nenable = theirs\n[plugin.theirs]\nexec = \(hook)\n")
    try setup.harness.start()
    #expect(
      try setup.harness.plugins()["theirs"]?["error"]
        == "refusing to run \(hook): it belongs to another user (uid 65534); use a copy of your own"
    )
  }

  /// Another user flips a symbolic link, in a directory anyone may write to, between the
  /// user's script and their own, as fast as they can, while the daemon starts the plugin
  /// again and again. Checking the link's target and then running the path would sometimes
  /// run theirs (a loaded run saw 38 in 150); the daemon refuses the directory itself, every
  /// time, and says how to fix it. Once it is fixed, the link (theirs) is refused too.
  @Test(.enabled(if: getuid() == 0, "only root can act as another user (nobody)"))
  func aLinkAnotherUserFlipsInAWorldWritableDirectoryNeverRunsTheirScript() throws {
    let setup = try ExternalPluginTests.Setup()
    defer { setup.stopDaemon() }
    let base = setup.harness.bus.directory.path
    #expect(chmod(base, 0o755) == 0, "nobody may reach the shared directory")
    let shared = base + "/shared"
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
    #expect(chmod(shared, 0o777) == 0)
    let mine = try setup.script("mine", "#!/bin/sh\nexec cat >/dev/null\n")
    let theirs = shared + "/theirs"
    let ran = base + "/their-script-ran"
    try writeExecutable("#!/bin/sh\ntouch \(ran)\nexec cat >/dev/null\n", to: theirs)
    #expect(chown(theirs, 65534, 65534) == 0)
    let link = shared + "/hook"
    #expect(symlink(mine, link) == 0)
    #expect(lchown(link, 65534, 65534) == 0)
    let flipper = try BackgroundProcess(
      "setpriv",
      [
        "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c",
        "cd \(shared) && while :; do ln -sfn \(mine) a && mv -Tf a hook; "
          + "ln -sfn \(theirs) b && mv -Tf b hook; done",
      ], directory: shared)  // not the checkout, which nobody may be unable to enter
    defer { _ = flipper.kill() }
    try setup.harness.writeConfig("[plugins]\nenable = hook\n[plugin.hook]\nexec = \(link)\n")
    try setup.harness.start()

    let refusal =
      "refusing to run \(link): the directory \(shared) is writable by other users; "
      + "run 'chmod go-w \(shared)'"
    var errors: Set<String> = []
    for _ in 0..<150 {
      _ = try setup.harness.grow("plugins", "reload", "hook")
      errors.insert(try setup.harness.plugins()["hook"]?["error"] ?? "none")
    }
    #expect(flipper.isRunning, "the link was flipped all along: \(flipper.stderr)")
    #expect(!FileManager.default.fileExists(atPath: ran), "their script never ran")
    #expect(errors == [refusal])

    // Done what it says: now the directory is safe, but the link in it is theirs.
    _ = flipper.kill()
    #expect(chmod(shared, 0o755) == 0)
    #expect(try setup.harness.grow("plugins", "reload", "hook").status == 0)
    let error = try setup.harness.plugins()["hook"]?["error"] ?? ""
    #expect(
      error
        == "refusing to run \(link): the symbolic link \(link) belongs to another user "
        + "(uid 65534); keep plugins in a directory of your own")
    #expect(!FileManager.default.fileExists(atPath: ran), "their script never ran")
  }

  /// Nothing listens on the network: every socket the daemon holds (with its plugins) is a
  /// Unix socket, or a connection it made out (to an X server over TCP, say), and none of its
  /// Unix sockets accepts connections either. Its API is on the bus it was given and no other.
  @Test func theDaemonListensOnNoSocketAndServesOnlyItsSessionBus() throws {
    // A bus of its own stands for the system bus.
    let systemBus = try PrivateSessionBus()
    defer { systemBus.stop() }
    let harness = try DaemonHarness(environment: ["DBUS_SYSTEM_BUS_ADDRESS": systemBus.address])
    #expect(try harness.grow("start").status == 0)
    let pid = try #require(harness.daemon?.pid)
    let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
    let sockets = Set(
      descriptors.compactMap { descriptor -> String? in
        let target = try? FileManager.default.destinationOfSymbolicLink(
          atPath: "/proc/\(pid)/fd/\(descriptor)")
        guard let target, target.hasPrefix("socket:[") else { return nil }
        return String(target.dropFirst("socket:[".count).dropLast())
      })
    #expect(!sockets.isEmpty, "at least the session bus connection")

    // What each socket is, from the tables of the daemon's network namespace.
    var kinds: [String: String] = [:]
    // Num RefCount Protocol Flags Type St Inode [Path]; flag 0x10000 is __SO_ACCEPTCON.
    for row in try table("/proc/\(pid)/net/unix") {
      let accepts = (Int(row[3], radix: 16) ?? 0) & 0x10000 != 0
      kinds[row[6]] = accepts ? "listening unix socket \(row.dropFirst(7).first ?? "")" : "unix"
    }
    // sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode: talks to the kernel only.
    for row in try table("/proc/\(pid)/net/netlink") { kinds[row[9]] = "netlink" }
    for name in ["tcp", "tcp6", "udp", "udp6", "raw", "raw6"] {
      // sl local_address rem_address st …; 01 is an established TCP connection (one the
      // daemon made, such as to an X server over TCP); anything else listens or could.
      for row in try table("/proc/\(pid)/net/\(name)") {
        kinds[row[9]] =
          name.hasPrefix("tcp") && row[3] == "01" ? "outgoing" : "\(name) \(row[1]) state \(row[3])"
      }
    }
    let unsafe = sockets.map { kinds[$0] ?? "unknown socket \($0)" }
      .filter { !["unix", "netlink", "outgoing"].contains($0) }
    #expect(unsafe == [], "every socket is a Unix one or a connection the daemon made")

    // The API is on the given bus, served by this daemon. (The daemon may hold a second
    // connection there: GLib's, for GSettings.)
    let owner = try harness.run("busctl", ["--user", "status", "org.grow.Grow1"])
    #expect(owner.status == 0)
    #expect(owner.stdout.contains("PID=\(pid)\n"), "\(owner.stdout)")
    // On the system bus the daemon only listens (for logind's PrepareForSleep): it owns no
    // name there, so nothing of its API is reachable from other users.
    let onSystemBus = try harness.run(
      "busctl", ["--address=\(systemBus.address)", "--no-legend", "list"])
    let systemNames = onSystemBus.stdout.split(separator: "\n").map {
      $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    }
    #expect(
      systemNames.contains { $0.first?.hasPrefix(":") == true && $0.dropFirst().first == "\(pid)" })
    #expect(
      !systemNames.contains {
        $0.first?.hasPrefix(":") == false && $0.dropFirst().first == "\(pid)"
      })
    #expect(!onSystemBus.stdout.contains("org.grow.Grow1"))
  }

  /// Rows of a /proc/net table, split on whitespace, without the heading.
  func table(_ path: String) throws -> [[String]] {
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    let text = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    return text.split(separator: "\n").dropFirst().map {
      $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    }
  }
}
