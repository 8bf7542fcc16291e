import Foundation
import Glibc
import Testing

/// A private Wayland session for one test suite: a real headless sway 1.7 (wlroots headless
/// backend, pixman renderer, lazy Xwayland) and a private session bus, both run as an
/// unprivileged user that the session creates and removes. Torn down by `stop()` or deinit:
/// no process of that user, no user, no socket and no directory is left.
///
/// sway refuses to run as root ("Unable to drop root"), and CI runs the tests as root, hence
/// the user. The daemon under test and the test's own tools (swaymsg, grim, gdbus) run as root
/// and still reach everything:
/// - Wayland and sway's IPC: sway makes its sockets `srwxr-xr-x` in an XDG_RUNTIME_DIR of mode
///   0700 owned by the user; root passes both checks (CAP_DAC_OVERRIDE), and neither libwayland
///   nor sway asks who the peer is. `environment` names the sockets by absolute path
///   (libwayland takes an absolute `WAYLAND_DISPLAY`), so root's processes keep their own
///   XDG_RUNTIME_DIR and never write into the user's.
/// - The bus: dbus-daemon admits only its own uid unless its policy says otherwise (root was
///   refused here), so the bus config has `<allow user="*"/>`. It has no service directories:
///   nothing is ever activated (see scripts/dbus-session.conf for why).
///
/// The user's programs see nothing of the checkout: the checkout may sit in a directory only
/// the person running the tests can enter (a home directory of mode 0700), so they run in the
/// user's home, with an environment of their own (not the test process's, whose PWD and paths
/// lead into it), and a program of this build they need is first put into the session's own
/// directory (`install`).
public final class WaylandSession: @unchecked Sendable {
  /// The user everything in the session runs as, and its ids.
  public let user: String
  public let uid: uid_t
  public let gid: gid_t
  /// The user's home; its XDG_CONFIG_HOME is `home/.config`.
  public let home: URL
  /// The user's XDG_RUNTIME_DIR (mode 0700, owned by the user).
  public let runtimeDirectory: URL
  /// `unix:path=…`: the private session bus, as DBUS_SESSION_BUS_ADDRESS wants it.
  public let busAddress: String
  /// The compositor's Wayland socket, as an absolute path (a valid `WAYLAND_DISPLAY`).
  public let waylandSocket: String
  /// sway's IPC socket (`SWAYSOCK`).
  public let swaySocket: String
  /// Xwayland's `DISPLAY` (`:N`); Xwayland itself starts when the first X client connects.
  public let xDisplay: String

  /// For the daemon and the tools the test runs as root: the session's bus, compositor, IPC
  /// and Xwayland display. Merge it over a `DaemonHarness`'s environment.
  public var environment: [String: String] {
    [
      "DBUS_SESSION_BUS_ADDRESS": busAddress, "WAYLAND_DISPLAY": waylandSocket,
      "SWAYSOCK": swaySocket, "DISPLAY": xDisplay, "XDG_SESSION_TYPE": "wayland",
      "XDG_CURRENT_DESKTOP": "sway",
    ]
  }

  /// For programs run as the user (`start`, `run`): the user's own directories as well.
  /// NO_AT_BRIDGE and GTK_USE_PORTAL keep GTK programs (swaync, waybar) from calling services
  /// that would need activation; GSETTINGS_BACKEND=memory because swaync 0.7.3, unable to save
  /// its DND state in dconf (not activatable here), flips it back a moment later.
  public var userEnvironment: [String: String] {
    Self.baseEnvironment.merging(environment) { $1 }.merging(
      [
        "HOME": home.path, "USER": user, "LOGNAME": user, "SHELL": "/bin/sh",
        "XDG_RUNTIME_DIR": runtimeDirectory.path,
        "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
        "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
        "XDG_STATE_HOME": home.appendingPathComponent(".local/state").path,
        "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path,
        "NO_AT_BRIDGE": "1", "GTK_USE_PORTAL": "0", "GSETTINGS_BACKEND": "memory",
        "GDK_BACKEND": "wayland",
      ]
    ) { $1 }
  }

  /// sway's process id, e.g. to stop it (`kill -STOP`) as a hung compositor.
  public var compositorPID: Int32 { compositor.pid }

  private let directory: URL
  private var bus: BackgroundProcess?
  private var compositor: BackgroundProcess
  private var clients: [BackgroundProcess] = []
  private let lock = NSLock()
  private var stopped = false

  /// The output's size in pixels.
  public let width: Int
  public let height: Int

  /// - Parameter swayConfig: more lines for sway's config (a `bar { … }` block, bindings).
  public init(
    width: Int = 1024, height: Int = 600, swayConfig: String = "", timeout: TimeInterval = 15
  ) throws {
    self.width = width
    self.height = height
    Self.removeUsersOfEndedProcesses()
    (user, uid, gid) = try Self.createUser()
    directory = URL(fileURLWithPath: "/tmp/\(user)-\(UUID().uuidString.prefix(8))")
    home = directory.appendingPathComponent("home")
    runtimeDirectory = directory.appendingPathComponent("runtime")
    do {
      for (url, mode) in [(directory, 0o755), (home, 0o755), (runtimeDirectory, 0o700)] {
        try FileManager.default.createDirectory(
          at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
      }
      try FileManager.default.createDirectory(
        at: home.appendingPathComponent(".config"), withIntermediateDirectories: true)
      (bus, busAddress) = try Self.startBus(
        directory: directory, runtime: runtimeDirectory, uid: uid, gid: gid, timeout: timeout)
      let config = directory.appendingPathComponent("sway.config")
      try """
      output HEADLESS-1 resolution \(width)x\(height) bg #335577 solid_color
      xwayland enable
      font pango:DejaVu Sans 10
      focus_follows_mouse no
      \(swayConfig)
      exec echo "$DISPLAY" > \(directory.path)/xdisplay

      """.write(to: config, atomically: true, encoding: .utf8)
      try Self.chownTree(directory, uid: uid, gid: gid)
      let runtime = runtimeDirectory
      let userEnvironment = Self.baseEnvironment.merging([
        "HOME": home.path, "XDG_RUNTIME_DIR": runtime.path,
        "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
        // sway binds its IPC socket to SWAYSOCK when that names no file yet, so the path is
        // known; it must not be the test's own (empty would fail the bind).
        "DBUS_SESSION_BUS_ADDRESS": busAddress, "WAYLAND_DISPLAY": "", "DISPLAY": "",
        "SWAYSOCK": runtime.appendingPathComponent("sway-ipc.sock").path,
        "WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman",
        "WLR_LIBINPUT_NO_DEVICES": "1",
      ]) { $1 }
      compositor = try BackgroundProcess(
        "setpriv", Self.dropPrivileges(uid: uid, gid: gid) + ["sway", "-c", config.path],
        environment: userEnvironment, inheritingEnvironment: false, directory: home.path)
      var found: (wayland: String, ipc: String, x: String)?
      let compositor = compositor
      let xdisplayFile = directory.appendingPathComponent("xdisplay").path
      compositor.waitUntil(timeout: timeout) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: runtime.path)) ?? []
        guard
          let wayland = names.first(where: { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }),
          let ipc = names.first(where: { $0.hasPrefix("sway-ipc.") }),
          let x = try? String(contentsOfFile: xdisplayFile, encoding: .utf8),
          x.hasSuffix("\n")
        else { return false }
        found = (
          runtime.appendingPathComponent(wayland).path, runtime.appendingPathComponent(ipc).path,
          x.trimmingCharacters(in: .whitespacesAndNewlines)
        )
        return true
      }
      guard let found, !found.x.isEmpty else {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: runtime.path)) ?? []
        throw HarnessError(
          "sway did not come up in \(timeout) s (runtime dir: \(names), DISPLAY file: "
            + "\(String(describing: try? String(contentsOfFile: xdisplayFile, encoding: .utf8)))): "
            + compositor.stderr)
      }
      (waylandSocket, swaySocket, xDisplay) = found
    } catch {
      Self.tearDown(
        user: user, uid: uid, processes: [], compositor: nil, directory: directory, xDisplay: nil)
      throw error
    }
  }

  deinit { stop() }

  /// Stops the session: sway with SIGTERM (it then closes its clients' connections and removes
  /// Xwayland's socket), then anything of the user's still running with SIGKILL; removes the
  /// user and the directories. Safe to call more than once.
  public func stop() {
    let processes: [BackgroundProcess]? = lock.withLock {
      guard !stopped else { return nil }
      stopped = true
      return clients + [bus].compactMap { $0 }
    }
    guard let processes else { return }
    Self.tearDown(
      user: user, uid: uid, processes: processes, compositor: compositor, directory: directory,
      xDisplay: xDisplay)
  }

  /// Starts `executable` as the session's user, with `userEnvironment` plus `environment`.
  /// Stopped with the session, if the test does not stop it first.
  public func start(
    _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:]
  ) throws -> BackgroundProcess {
    let process = try BackgroundProcess(
      "setpriv", Self.dropPrivileges(uid: uid, gid: gid) + [executable] + arguments,
      environment: userEnvironment.merging(environment) { $1 }, inheritingEnvironment: false,
      directory: home.path)
    lock.withLock { clients.append(process) }
    return process
  }

  /// Runs a short-lived program as the session's user and waits for it.
  @discardableResult
  public func run(
    _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
    timeout: TimeInterval = 10
  ) throws -> (status: Int32, stdout: String, stderr: String) {
    try Command.run(
      "setpriv", Self.dropPrivileges(uid: uid, gid: gid) + [executable] + arguments,
      environment: userEnvironment.merging(environment) { $1 }, inheritingEnvironment: false,
      directory: home.path, timeout: timeout)
  }

  /// Puts a program of this build (`Binaries.grow`, say) where the session's user can run it,
  /// and returns its path there: the checkout may be out of the user's reach. The shared
  /// libraries beside it (libGrowKit.so, which it finds through its `$ORIGIN` run path) come
  /// along, and so do the programs the `grow` front runs (`grow-cli`, InstallLayout) and the
  /// static daemon image (`grow-daemon`, DaemonImage); the Swift runtime's are in the
  /// toolchain's directory, open to everyone.
  /// Hard links where the file system allows (no copying), copies elsewhere.
  public func install(_ executable: String) throws -> String {
    let source = URL(fileURLWithPath: executable)
    let bin = directory.appendingPathComponent("bin")
    try FileManager.default.createDirectory(
      at: bin, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
    let beside = try FileManager.default.contentsOfDirectory(
      atPath: source.deletingLastPathComponent().path)
    let names =
      [source.lastPathComponent]
      + beside.filter { $0.hasSuffix(".so") || $0 == "grow-cli" || $0 == "grow-daemon" }
    for name in names {
      let from = source.deletingLastPathComponent().appendingPathComponent(name)
      let to = bin.appendingPathComponent(name)
      guard !FileManager.default.fileExists(atPath: to.path) else { continue }
      if link(from.path, to.path) != 0 { try FileManager.default.copyItem(at: from, to: to) }
    }
    return bin.appendingPathComponent(source.lastPathComponent).path
  }

  /// What of the session's user's processes mentions `path` (the checkout's, say): its working
  /// directory, command line, environment or mapped files; one line per sighting, empty when
  /// none does. Read from /proc as root.
  public func processesSeeing(_ path: String) -> [String] {
    Self.processes(of: uid).flatMap { pid -> [String] in
      let command =
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
      var seen: [String] = []
      if let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd"),
        cwd.hasPrefix(path)
      {
        seen.append("working directory \(cwd)")
      }
      for file in ["cmdline", "environ", "maps"] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/\(file)") else {
          continue
        }
        let text = String(decoding: data.map { $0 == 0 ? 0x0A : $0 }, as: UTF8.self)
        for line in text.split(separator: "\n") where line.contains(path) {
          seen.append("\(file): \(line)")
        }
      }
      return seen.map { "\(command) (pid \(pid)): \($0)" }
    }
  }

  /// Runs `swaymsg ARGUMENTS` (as root, over `swaySocket`); returns its stdout, throws when
  /// sway says a command failed.
  @discardableResult
  public func swaymsg(_ arguments: String...) throws -> String {
    let result = try Command.run(
      "swaymsg", ["-s", swaySocket] + arguments, environment: environment, timeout: 10)
    guard result.status == 0 else {
      throw HarnessError("swaymsg \(arguments.joined(separator: " ")): \(result)")
    }
    return result.stdout
  }

  /// sway's tree (`swaymsg -t get_tree`), decoded.
  public func tree() throws -> [String: Any] {
    let text = try swaymsg("-r", "-t", "get_tree")
    guard let tree = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    else { throw HarnessError("unreadable sway tree: \(text)") }
    return tree
  }

  /// Every window in the tree (tiled and floating), depth first.
  public func windows() throws -> [[String: Any]] {
    func walk(_ node: [String: Any]) -> [[String: Any]] {
      let children =
        (node["nodes"] as? [[String: Any]] ?? [])
        + (node["floating_nodes"] as? [[String: Any]] ?? [])
      let isWindow =
        node["pid"] != nil && (node["type"] as? String).map { $0.hasSuffix("con") } == true
      return (isWindow ? [node] : []) + children.flatMap(walk)
    }
    return walk(try tree())
  }

  /// The focused window's `app_id` (native) or X class (Xwayland); nil when none has focus.
  public func focusedWindow() throws -> String? {
    guard let window = try windows().first(where: { $0["focused"] as? Bool == true }) else {
      return nil
    }
    return window["app_id"] as? String
      ?? (window["window_properties"] as? [String: Any])?["class"] as? String
  }

  /// Opens a native Wayland window (foot running `sleep`) with this app_id and title, and
  /// waits until sway has mapped it (it then has the focus).
  @discardableResult
  public func openNativeWindow(appID: String, title: String, timeout: TimeInterval = 15) throws
    -> BackgroundProcess
  {
    let foot = try start(
      "foot", ["--app-id=\(appID)", "--title=\(title)", "sleep", "100000"],
      environment: ["WAYLAND_DISPLAY": waylandSocket])
    try waitForWindow(foot, timeout: timeout) { $0["app_id"] as? String == appID }
    return foot
  }

  /// Opens an X11 window through Xwayland (an xterm running `sleep`) with this WM_CLASS class
  /// and title, and waits until sway has mapped it. The first one starts Xwayland (about 1 s).
  @discardableResult
  public func openXwaylandWindow(
    class windowClass: String, title: String, timeout: TimeInterval = 15
  )
    throws -> BackgroundProcess
  {
    let xterm = try start("xterm", ["-class", windowClass, "-T", title, "-e", "sleep", "100000"])
    try waitForWindow(xterm, timeout: timeout) {
      ($0["window_properties"] as? [String: Any])?["class"] as? String == windowClass
    }
    return xterm
  }

  private func waitForWindow(
    _ process: BackgroundProcess, timeout: TimeInterval, _ matches: ([String: Any]) -> Bool
  ) throws {
    let mapped = process.waitUntil(timeout: timeout, interval: 0.05) {
      ((try? windows()) ?? []).contains(where: matches)
    }
    guard mapped else {
      throw HarnessError("\(process.commandLine) opened no window: \(process.stderr)")
    }
  }

  /// The output's pixels now (grim, as PPM), or a rectangle of them (`x`, `y`, `width`,
  /// `height`); also saved as a PNG at `pngPath` when given, for a person to look at.
  public func screenshot(
    x: Int = 0, y: Int = 0, width: Int? = nil, height: Int? = nil,
    savingPNGTo pngPath: String? = nil
  ) throws -> Screenshot {
    let ppm = directory.appendingPathComponent("shot-\(UUID().uuidString).ppm").path
    defer { try? FileManager.default.removeItem(atPath: ppm) }
    let region = ["-g", "\(x),\(y) \(width ?? self.width)x\(height ?? self.height)"]
    for (type, path) in [("ppm", ppm), ("png", pngPath)] {
      guard let path else { continue }
      let result = try Command.run(
        "grim", region + ["-t", type, path], environment: environment)
      guard result.status == 0 else { throw HarnessError("grim: \(result)") }
    }
    return try Screenshot(ppm: Data(contentsOf: URL(fileURLWithPath: ppm)))
  }

  /// Writes `text` to `path` under the user's XDG_CONFIG_HOME (`mako/config`), owned by the user.
  public func writeUserConfig(_ path: String, _ text: String) throws {
    let url = home.appendingPathComponent(".config").appendingPathComponent(path)
    try FileManager.default.createDirectory(
      at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: url, atomically: true, encoding: .utf8)
    try Self.chownTree(home, uid: uid, gid: gid)
  }

  /// Waits until `name` has an owner on the session's bus (a server started with `start`).
  public func waitForBusName(
    _ name: String, process: BackgroundProcess, timeout: TimeInterval = 15
  ) throws {
    try NotificationServers.waitForName(
      name, environment: environment, process: process, timeout: timeout)
  }

  /// Whether a process of the session's user still runs (false once `stop()` is done).
  public var userHasProcesses: Bool { !Self.processes(of: uid).isEmpty }

  // MARK: - Setting up and tearing down

  /// What the user's programs get of the test process's environment: where programs are, and
  /// the pinned locale; nothing that may name the checkout (PWD, the build's paths).
  private static var baseEnvironment: [String: String] {
    let inherited = ProcessInfo.processInfo.environment
    let checkout = RepoPaths.root.path
    var base = ["PATH": "/usr/local/bin:/usr/bin:/bin"]
    if let path = inherited["PATH"] {
      base["PATH"] = path.split(separator: ":").filter { !$0.hasPrefix(checkout) }
        .joined(separator: ":")
    }
    for name in ["TZ", "TERM"] {
      if let value = inherited[name], !value.contains(checkout) { base[name] = value }
    }
    // The same language on every machine (PinnedLocale), not the test runner's.
    base["LANG"] = PinnedLocale.locale
    base["LC_ALL"] = PinnedLocale.locale
    return base
  }

  /// A name of this process's own (`growwl-PID-N`), so a later run can tell a user left behind
  /// by a test process that died from one a test running now uses.
  private static let counter = LockedBox(0)

  private static func createUser() throws -> (String, uid_t, gid_t) {
    let number = counter.withLock {
      $0 += 1
      return $0
    }
    let name = "growwl-\(getpid())-\(number)"
    // useradd takes /etc/passwd's lock and gives up ("cannot lock", 10) if another test holds
    // it at that moment.
    var last: (status: Int32, stdout: String, stderr: String)?
    for _ in 0..<40 {
      let result = try Command.run(
        "useradd",
        ["--system", "--no-create-home", "--user-group", "-s", "/usr/sbin/nologin", name])
      if result.status == 0, let entry = getpwnam(name) {
        return (name, entry.pointee.pw_uid, entry.pointee.pw_gid)
      }
      last = result
      guard result.status == 10 || result.stderr.contains("lock") else { break }
      Thread.sleep(forTimeInterval: 0.05)
    }
    throw HarnessError("cannot create the session's user \(name): \(String(describing: last))")
  }

  /// setpriv's arguments to run a program as `uid`, with none of root's groups. setpriv execs
  /// the program, so the process id is the program's (a test can stop it with SIGSTOP).
  private static func dropPrivileges(uid: uid_t, gid: gid_t) -> [String] {
    ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"]
  }

  private static func startBus(
    directory: URL, runtime: URL, uid: uid_t, gid: gid_t, timeout: TimeInterval
  ) throws -> (BackgroundProcess, String) {
    let socket = runtime.appendingPathComponent("bus").path
    let config = directory.appendingPathComponent("bus.conf")
    try """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:path=\(socket)</listen>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow user="*"/>
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
      </policy>
    </busconfig>
    """.write(to: config, atomically: true, encoding: .utf8)
    try chownTree(directory, uid: uid, gid: gid)
    let bus = try BackgroundProcess(
      "setpriv",
      dropPrivileges(uid: uid, gid: gid) + [
        "dbus-daemon", "--config-file=\(config.path)", "--nofork", "--print-address=1",
      ],
      environment: baseEnvironment.merging([
        "HOME": directory.path, "XDG_RUNTIME_DIR": runtime.path,
      ]) { $1 }, inheritingEnvironment: false, directory: directory.path)
    guard bus.waitUntil(timeout: timeout, { bus.stdout.contains("\n") }) else {
      bus.kill()
      throw HarnessError("the session's bus did not start: \(bus.stderr)")
    }
    return (bus, String(bus.stdout.prefix { $0 != "\n" }))
  }

  private static func chownTree(_ root: URL, uid: uid_t, gid: gid_t) throws {
    var paths = [root.path]
    if let walker = FileManager.default.enumerator(atPath: root.path) {
      for case let relative as String in walker { paths.append(root.path + "/" + relative) }
    }
    for path in paths where lchown(path, uid, gid) != 0 {
      throw HarnessError("chown \(path): \(String(cString: strerror(errno)))")
    }
  }

  private static func tearDown(
    user: String, uid: uid_t, processes: [BackgroundProcess], compositor: BackgroundProcess?,
    directory: URL, xDisplay: String?
  ) {
    if let compositor, compositor.terminate(timeout: 3) == nil { compositor.kill() }
    for process in processes where process.terminate(timeout: 1) == nil { process.kill() }
    // What sway started (swaybg, Xwayland, `exec` lines) and anything a client forked.
    killProcesses(of: uid)
    for _ in 0..<40 {
      let result = try? Command.run("userdel", [user])
      if result?.status == 0 || getpwnam(user) == nil { break }
      Thread.sleep(forTimeInterval: 0.05)
    }
    // Xwayland's socket and lock, should sway have died before removing them; only ours.
    if let number = xDisplay?.dropFirst() {
      for path in ["/tmp/.X11-unix/X\(number)", "/tmp/.X\(number)-lock"] {
        var info = stat()
        if lstat(path, &info) == 0, info.st_uid == uid { unlink(path) }
      }
    }
    try? FileManager.default.removeItem(at: directory)
  }

  /// The process ids whose real uid is `uid`.
  private static func processes(of uid: uid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry in
      guard let pid = pid_t(entry) else { return nil }
      var info = stat()
      // /proc/PID is owned by the process's effective uid.
      guard stat("/proc/\(entry)", &info) == 0, info.st_uid == uid else { return nil }
      return pid
    }
  }

  /// SIGKILLs every process of `uid` (a user only a session uses) until none is left, up to 2 s.
  private static func killProcesses(of uid: uid_t) {
    for _ in 0..<40 {
      let left = processes(of: uid)
      if left.isEmpty { return }
      for pid in left { Glibc.kill(pid, SIGKILL) }
      Thread.sleep(forTimeInterval: 0.05)
    }
  }

  /// Removes `growwl-PID-N` users whose test process has ended (it was killed before its
  /// sessions were stopped), and whatever they still run.
  private static func removeUsersOfEndedProcesses() {
    guard let passwd = try? String(contentsOfFile: "/etc/passwd", encoding: .utf8) else { return }
    for line in passwd.split(separator: "\n") {
      let fields = line.split(separator: ":", omittingEmptySubsequences: false)
      guard fields.count > 2, fields[0].hasPrefix("growwl-"), let uid = uid_t(fields[2]) else {
        continue
      }
      let parts = fields[0].split(separator: "-")
      guard parts.count == 3, let owner = pid_t(parts[1]), owner != getpid(),
        Glibc.kill(owner, 0) != 0, errno == ESRCH
      else { continue }
      killProcesses(of: uid)
      _ = try? Command.run("userdel", [String(fields[0])])
    }
  }
}

/// `@Suite(.waylandSession)`: one `WaylandSession` for the whole suite (sway starts in about a
/// second, but a suite of many tests should not pay it each time), stopped when the suite ends;
/// its tests find it as `WaylandSession.current`.
public struct WaylandSessionTrait: SuiteTrait, TestScoping {
  public var isRecursive: Bool { false }

  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    let session = try WaylandSession()
    defer { session.stop() }
    try await WaylandSession.$current.withValue(session) { try await function() }
  }
}

extension Trait where Self == WaylandSessionTrait {
  /// A headless sway session shared by the suite's tests (`WaylandSession.current`).
  public static var waylandSession: Self { WaylandSessionTrait() }
}

extension WaylandSession {
  /// The suite's session, inside a suite marked `.waylandSession`.
  @TaskLocal public static var current: WaylandSession?

  /// The suite's session, or an error that says the suite lacks the trait.
  public static func required() throws -> WaylandSession {
    guard let current else {
      throw HarnessError("no Wayland session: mark the suite @Suite(.waylandSession)")
    }
    return current
  }
}
