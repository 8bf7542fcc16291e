import Foundation
import GrowTestSupport
import Testing

/// `grow install --user` into private HOME and XDG directories, and D-Bus activation for real.
@Suite struct InstallTests {
  struct Paths {
    let dbusService: String
    let unit: String
    let autostart: String

    init(_ harness: DaemonHarness) {
      let data = harness.environment["XDG_DATA_HOME", default: ""]
      let config = harness.environment["XDG_CONFIG_HOME", default: ""]
      dbusService = data + "/dbus-1/services/org.grow.Grow1.service"
      unit = config + "/systemd/user/grow.service"
      autostart = config + "/autostart/grow.desktop"
    }
  }

  static let marker =
    "# Written by 'grow install --user'; 'grow install --user --remove' deletes it.\n"

  /// The grow that runs, as /proc/self/exe names it (symlinks resolved).
  var growPath: String {
    URL(fileURLWithPath: Binaries.grow).resolvingSymlinksInPath().path
  }

  func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

  @Test func autostartWritesActivationAndAnEntryAndExplainsEachChoice() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let paths = Paths(harness)
    let runtime = harness.environment["XDG_RUNTIME_DIR", default: ""]
    let result = try harness.grow("install", "--user")
    #expect(result.status == 0)
    #expect(result.stderr == "")
    #expect(
      result.stdout == """
        Starting at login with an XDG autostart entry: no user systemd instance is running \
        (no \(runtime)/systemd/private). Desktops like GNOME, KDE and Xfce start these \
        entries; use --systemd for a unit instead.
        wrote \(paths.dbusService)
          D-Bus activation: the first 'grow start', or any app calling org.grow.Grow1, starts \
        the daemon.
        wrote \(paths.autostart)
          Your desktop starts it at login; set Hidden=true in it to switch it off.
        i3 does not start autostart entries or graphical-session.target; add to \
        ~/.config/i3/config:
          exec --no-startup-id dbus-update-activation-environment --systemd DISPLAY XAUTHORITY
          exec --no-startup-id \(growPath) daemon
        The first line gives a daemon started by D-Bus or systemd your DISPLAY.
        Check the result with 'grow doctor'; undo it with 'grow install --user --remove'.

        """)
    #expect(
      read(paths.dbusService)
        == Self.marker + "[D-BUS Service]\nName=org.grow.Grow1\nExec=\(growPath) daemon\n")
    #expect(
      read(paths.autostart) == Self.marker + """
        [Desktop Entry]
        Type=Application
        Name=Grow
        Comment=Grow focus timer daemon
        Exec=\(growPath) daemon
        TryExec=\(growPath)
        NoDisplay=true
        Hidden=false
        Terminal=false

        """)
    #expect(read(paths.unit) == nil)
    let validation = try Command.run("desktop-file-validate", [paths.autostart])
    #expect(validation.status == 0)
    #expect(validation.stdout + validation.stderr == "")
  }

  /// Under umask 000 what the session reads on the user's behalf (the D-Bus service file, the
  /// autostart entry) would be 0666: anyone could make the session run their command. Both
  /// are 0644 whatever the umask, and so is a rewrite of an existing 0666 file.
  @Test func theFilesItWritesAre0644EvenUnderUmask000() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let paths = Paths(harness)
    try FileManager.default.createDirectory(
      atPath: (paths.autostart as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    #expect(
      FileManager.default.createFile(atPath: paths.autostart, contents: Data(Self.marker.utf8)))
    #expect(chmod(paths.autostart, 0o666) == 0)
    let result = try harness.run(
      "/bin/sh", ["-c", "umask 000 && exec \"$0\" install --user", Binaries.grow])
    #expect(result.status == 0, "\(result)")
    for path in [paths.dbusService, paths.autostart] {
      let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
      #expect(mode == 0o644, "\(path) is \(String(mode ?? 0, radix: 8))")
    }
  }

  @Test func systemdWhenAUserManagerRunsAndTheUnitVerifies() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let paths = Paths(harness)
    // What the user manager leaves in the runtime dir: a socket at systemd/private.
    let runtime = harness.environment["XDG_RUNTIME_DIR", default: ""]
    let socket = runtime + "/systemd/private"
    try FileManager.default.createDirectory(
      atPath: runtime + "/systemd", withIntermediateDirectories: true)
    let bound = try Command.run(
      "python3",
      ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", socket])
    #expect(bound.status == 0)

    let result = try harness.grow("install", "--user")
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(
      lines.first
        == "Starting at login with a systemd user unit: a user systemd instance is running "
        + "(\(socket)). Use --autostart for an autostart entry instead.")
    #expect(lines.contains("wrote \(paths.unit)"))
    #expect(
      lines.contains(
        "  systemctl --user daemon-reload && systemctl --user enable --now grow.service"))
    #expect(lines.contains("  exec --no-startup-id systemctl --user start grow.service"))
    #expect(
      read(paths.dbusService) == Self.marker
        + "[D-BUS Service]\nName=org.grow.Grow1\nExec=\(growPath) daemon\n"
        + "SystemdService=grow.service\n")
    #expect(
      read(paths.unit) == Self.marker + """
        [Unit]
        Description=Grow focus timer
        PartOf=graphical-session.target
        After=graphical-session.target

        [Service]
        Type=dbus
        BusName=org.grow.Grow1
        ExecStart=\(growPath) daemon
        ExecReload=/bin/kill -HUP $MAINPID
        ExecStopPost=-\(growPath) dnd restore
        Restart=on-failure

        [Install]
        WantedBy=graphical-session.target

        """)
    #expect(read(paths.autostart) == nil)
    try verifyUnit(paths.unit, environment: harness.environment)
  }

  /// `systemd-analyze --user verify` needs a user manager, which a root CI container lacks;
  /// the system manager's `verify` reads the same unit syntax, so fall back to it.
  func verifyUnit(_ path: String, environment: [String: String]) throws {
    let complaints = try unitComplaints(path, environment: environment)
    #expect(complaints == [], "\(complaints)")
  }

  /// What `systemd-analyze verify` says about the unit at `path`. It also reports every
  /// other unit it loads on the way (graphical-session.target pulls in the person's own
  /// units, or mako's), so only the lines that name this unit count: the test checks
  /// Grow's unit, not the machine's.
  func unitComplaints(_ path: String, environment: [String: String]) throws -> [String] {
    let name = (path as NSString).lastPathComponent
    let about = { (stderr: String) in
      stderr.split(separator: "\n").map(String.init).filter {
        $0.contains(path) || $0.hasPrefix(name + ":")
      }
    }
    let user = try Command.run(
      "systemd-analyze", ["--user", "verify", path], environment: environment)
    if user.status == 0 { return about(user.stderr) }
    print(
      "systemd-analyze --user verify cannot run here (\(user.stderr.trimmingCharacters(in: .newlines))); using systemd-analyze verify"
    )
    let system = try Command.run("systemd-analyze", ["verify", path], environment: environment)
    #expect(system.status == 0, "\(system.stderr)")
    return about(system.stderr)
  }

  @Test func anotherInstalledUnitsWarningsDoNotFailTheUnitCheck() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let paths = Paths(harness)
    #expect(try harness.grow("install", "--user", "--systemd").status == 0)
    // Someone else's unit, wanted by the same target, with a key systemd does not know.
    let units = (paths.unit as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(
      atPath: units + "/graphical-session.target.wants", withIntermediateDirectories: true)
    try "[Unit]\nDescription=Another notifier\nPartOf=graphical-session.target\nBogusKey=1\n"
      .appending("[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=graphical-session.target\n")
      .write(toFile: units + "/other.service", atomically: true, encoding: .utf8)
    try FileManager.default.createSymbolicLink(
      atPath: units + "/graphical-session.target.wants/other.service",
      withDestinationPath: "../other.service")
    let raw = try Command.run(
      "systemd-analyze", ["--user", "verify", paths.unit], environment: harness.environment)
    if raw.status == 0 {
      // systemd does report the other unit: this is the situation the filter is for.
      #expect(raw.stderr.contains("other.service"), "\(raw.stderr)")
    }
    #expect(try unitComplaints(paths.unit, environment: harness.environment) == [])

    // A fault in Grow's own unit is still caught.
    let unit = try #require(read(paths.unit))
    try unit.replacingOccurrences(of: "[Service]\n", with: "[Service]\nExecStarts=/bin/true\n")
      .write(toFile: paths.unit, atomically: true, encoding: .utf8)
    let complaints = try unitComplaints(paths.unit, environment: harness.environment)
    #expect(complaints.contains { $0.contains("ExecStarts") }, "\(complaints)")
  }

  @Test func switchingToAutostartRemovesTheUnitAndRemoveUndoesEverything() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let paths = Paths(harness)
    #expect(try harness.grow("install", "--user", "--systemd").status == 0)
    #expect(read(paths.unit) != nil)
    let switched = try harness.grow("install", "--user", "--autostart")
    #expect(switched.stdout.contains("removed \(paths.unit) (the autostart entry replaces it)\n"))
    #expect(read(paths.unit) == nil)

    // A file of the person's own at one of the paths is never touched.
    try FileManager.default.createDirectory(
      atPath: (paths.unit as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try "[Unit]\n".write(toFile: paths.unit, atomically: true, encoding: .utf8)
    let removed = try harness.grow("install", "--user", "--remove")
    #expect(removed.status == 0)
    #expect(
      removed.stdout == """
        removed \(paths.dbusService)
        left \(paths.unit) alone: grow install --user did not write it
        removed \(paths.autostart)

        """)
    #expect(read(paths.dbusService) == nil)
    #expect(read(paths.autostart) == nil)
    #expect(read(paths.unit) == "[Unit]\n")

    // Only a unit it wrote can have been enabled: then, and only then, the systemctl hint.
    try FileManager.default.removeItem(atPath: paths.unit)
    #expect(try harness.grow("install", "--user", "--systemd").status == 0)
    let removedUnit = try harness.grow("install", "--user", "--remove")
    #expect(
      removedUnit.stdout == """
        removed \(paths.dbusService)
        removed \(paths.unit)
        A unit you enabled stays enabled until: systemctl --user disable --now grow.service

        """)
  }

  @Test func withoutUserItSaysWhatToRun() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let result = try harness.grow("install")
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "grow: grow install sets up your user account only: run 'grow install --user' (to "
        + "install grow itself, run 'make install' from the source tree) (see 'grow help')\n")
  }

  @Test func dbusActivationStartsTheDaemonOnTheFirstStatus() throws {
    // No daemon and no bus yet: the harness provides the private XDG dirs.
    let harness = try DaemonHarness(startDaemon: false)
    #expect(try harness.grow("install", "--user", "--autostart").status == 0)
    let serviceDirectory = harness.environment["XDG_DATA_HOME", default: ""] + "/dbus-1/services"

    // A bus of our own whose only service directory is the one grow install wrote to.
    let (bus, environment) = try harness.activatingBus(services: serviceDirectory)
    defer { bus.terminate() }

    let activatable = try Command.run(
      "dbus-send",
      [
        "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus.ListActivatableNames",
      ], environment: environment)
    #expect(activatable.stdout.contains("string \"org.grow.Grow1\""))

    let status = try Command.run(Binaries.grow, ["status"], environment: environment)
    #expect(status.status == 0, "\(status.stderr)")
    #expect(status.stdout.hasPrefix("○ idle"), "\(status.stdout)")
    let owner = try Command.run(
      "dbus-send",
      [
        "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.grow.Grow1",
      ],
      environment: environment)
    let pid = owner.stdout.split(separator: " ").last.flatMap {
      Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    #expect(pid != nil)
    // The daemon dbus-daemon started is the grow that was installed: the front, which execs
    // the whole command line beside it (InstallLayout).
    if let pid {
      let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
      let cli = URL(fileURLWithPath: growPath).deletingLastPathComponent().path + "/grow-cli"
      // ...whose `grow daemon` runs the static image beside it when there is one (DaemonImage).
      let image = URL(fileURLWithPath: cli).deletingLastPathComponent().path + "/grow-daemon"
      #expect(executable == (FileManager.default.isExecutableFile(atPath: image) ? image : cli))
      kill(pid, SIGTERM)
    }
  }
}

/// `grow install --user --gnome-pomodoro`: only when asked, a service file for GNOME
/// Pomodoro's name that starts Grow, whose gnome-pomodoro plugin then answers.
@Suite struct GnomePomodoroInstallTests {
  @Test func askedForScriptsCallingGnomePomodoroStartGrow() throws {
    let harness = try DaemonHarness(
      config: "[plugin.gnome-pomodoro]\nenabled = true\n", startDaemon: false)
    let services = harness.environment["XDG_DATA_HOME", default: ""] + "/dbus-1/services"
    let file = services + "/org.gnome.Pomodoro.service"
    #expect(try harness.grow("install", "--user", "--autostart").status == 0)
    #expect(!FileManager.default.fileExists(atPath: file), "not unless asked")

    let install = try harness.grow("install", "--user", "--autostart", "--gnome-pomodoro")
    #expect(install.status == 0, "\(install.stderr)")
    #expect(install.stdout.contains("wrote \(file)\n"))
    let grow = URL(fileURLWithPath: Binaries.grow).resolvingSymlinksInPath().path
    #expect(
      (try? String(contentsOfFile: file, encoding: .utf8))
        == InstallTests.marker
        + "[D-BUS Service]\nName=org.gnome.Pomodoro\nExec=\(grow) daemon\n")

    // A script's first call starts the daemon, and the plugin answers it.
    let (bus, environment) = try harness.activatingBus(services: services)
    defer { bus.terminate() }
    let version = try Command.run(
      "busctl",
      [
        "--user", "get-property", "org.gnome.Pomodoro", "/org/gnome/Pomodoro",
        "org.gnome.Pomodoro", "Version",
      ], environment: environment, timeout: 30)
    #expect(version.stdout.hasPrefix("s \"0.22.1 (Grow "), "\(version)")
    let owner = try Command.run(
      "busctl", ["--user", "status", "org.grow.Grow1"], environment: environment)
    if let line = owner.stdout.split(separator: "\n").first(where: { $0.hasPrefix("PID=") }),
      let pid = Int32(line.dropFirst(4))
    {
      kill(pid, SIGTERM)
    }

    let doctor = try harness.grow("doctor")
    #expect(
      doctor.stdout.contains(
        "✔ gnome-pomodoro: scripts calling org.gnome.Pomodoro reach Grow, and start it if "
          + "needed (\(file))"), "\(doctor.stdout)")
    try harness.writeConfig("")
    #expect(
      try harness.grow("doctor").stdout.contains(
        "! gnome-pomodoro: \(file) starts Grow for org.gnome.Pomodoro, but the gnome-pomodoro "
          + "plugin is off; fix: turn it on"))

    let remove = try harness.grow("install", "--user", "--remove")
    #expect(remove.stdout.contains("removed \(file)"))
    #expect(!FileManager.default.fileExists(atPath: file))
  }
}

/// `make install` into a DESTDIR staging root, and `make uninstall` from it.
@Suite struct MakeInstallTests {
  /// What `make install` puts in place: the files below and a catalogue for each po/LL.po.
  /// The static daemon image is installed when the build has it (`make test` builds it).
  static let hasDaemonImage = FileManager.default.isExecutableFile(
    atPath: URL(fileURLWithPath: Binaries.grow).resolvingSymlinksInPath()
      .deletingLastPathComponent().path + "/grow-daemon")

  static let expectedFiles =
    (listedFiles + (hasDaemonImage ? ["usr/lib/grow/grow-daemon"] : [])
    + ((try? Catalogues.shippedLanguages()) ?? []).map {
      "usr/share/locale/\($0)/LC_MESSAGES/grow.mo"
    }).sorted()

  static let listedFiles = [
    "usr/bin/grow",
    "usr/lib/grow/browser-host",
    "usr/lib/grow/grow-cli",
    "usr/lib/grow/install-manifest",
    "usr/lib/grow/libGrowKit.so",
    "usr/lib/grow/libGrowPluginTesting.a",
    "usr/lib/grow/plugins/libgrow-plugin-breakscreen.so",
    "usr/lib/grow/plugins/libgrow-plugin-browser.so",
    "usr/lib/grow/plugins/libgrow-plugin-dnd.so",
    "usr/lib/grow/plugins/libgrow-plugin-gnome-pomodoro.so",
    "usr/lib/grow/plugins/libgrow-plugin-notify.so",
    "usr/lib/grow/plugins/libgrow-plugin-sound.so",
    "usr/lib/grow/plugins/libgrow-plugin-statusbar.so",
    "usr/lib/grow/plugins/libgrow-plugin-tray.so",
    "usr/lib/grow/plugins/libgrow-plugin-wayland.so",
    "usr/lib/grow/plugins/libgrow-plugin-x11.so",
    "usr/lib/grow/swift/GrowConfig.swiftinterface",
    "usr/lib/grow/swift/GrowCore.swiftinterface",
    "usr/lib/grow/swift/GrowDBus.swiftinterface",
    "usr/lib/grow/swift/GrowLoop.swiftinterface",
    "usr/lib/grow/swift/GrowPluginKit.swiftinterface",
    "usr/lib/grow/swift/GrowPluginTesting.swiftinterface",
    "usr/lib/pkgconfig/grow-plugin.pc",
    "usr/lib/systemd/user/grow.service",
    "usr/share/applications/grow.desktop",
    "usr/share/bash-completion/completions/grow",
    "usr/share/dbus-1/interfaces/org.grow.Grow1.Timer.xml",
    "usr/share/dbus-1/services/org.grow.Grow1.service",
    "usr/share/doc/grow/plugin-protocol.md",
    "usr/share/doc/grow/writing-plugins.md",
    "usr/share/fish/vendor_completions.d/grow.fish",
    "usr/share/grow/browser/_locales/de/messages.json",
    "usr/share/grow/browser/_locales/en/messages.json",
    "usr/share/grow/browser/_locales/es/messages.json",
    "usr/share/grow/browser/_locales/fr/messages.json",
    "usr/share/grow/browser/_locales/pt_BR/messages.json",
    "usr/share/grow/browser/_locales/ru/messages.json",
    "usr/share/grow/browser/background.js",
    "usr/share/grow/browser/blocked.html",
    "usr/share/grow/browser/blocked.js",
    "usr/share/grow/browser/grow.css",
    "usr/share/grow/browser/i18n.js",
    "usr/share/grow/browser/manifest.json",
    "usr/share/grow/browser/popup.html",
    "usr/share/grow/browser/popup.js",
    "usr/share/grow/browser/rules.js",
    "usr/share/man/man1/grow.1",
    "usr/share/man/man5/grow.ini.5",
    "usr/share/metainfo/org.grow.Grow.metainfo.xml",
    "usr/share/zsh/site-functions/_grow",
  ]

  func files(under root: String) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: root)
    var found: [String] = []
    while let path = enumerator?.nextObject() as? String {
      var isDirectory: ObjCBool = false
      _ = FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory)
      if !isDirectory.boolValue { found.append(path) }
    }
    return found.sorted()
  }

  @Test func installStagesARunnableGrowThatLoadsItsPluginsAndUninstallRemovesIt() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    let stage = harness.bus.directory.appendingPathComponent("stage").path
    // NO_BUILD: the debug build is there already, and a nested swift build would wait for
    // the lock this swift test holds.
    let make = [
      "-C", RepoPaths.root.path, "DESTDIR=\(stage)", "PREFIX=/usr", "CONFIGURATION=debug",
      "NO_BUILD=1",
    ]
    let install = try Command.run("make", ["install"] + make, timeout: 120)
    #expect(install.status == 0, "\(install.stderr)")

    let installed = files(under: stage)
    // Everything but the Swift runtime, which is whatever the toolchain needs.
    #expect(
      installed.filter { !$0.hasPrefix("usr/lib/grow/lib") || $0.contains("GrowKit") }
        == Self.expectedFiles.filter { !$0.hasPrefix("usr/lib/grow/lib") || $0.contains("GrowKit") }
    )
    #expect(installed.contains("usr/lib/grow/libswiftCore.so"))
    // FoundationEssentials only: neither the full Foundation nor ICU.
    #expect(installed.contains("usr/lib/grow/libFoundationEssentials.so"))
    #expect(!installed.contains("usr/lib/grow/libFoundation.so"))
    #expect(!installed.contains("usr/lib/grow/lib_FoundationICU.so"))
    #expect(!installed.contains { $0.contains("growtest") })

    let grow = stage + "/usr/bin/grow"
    // The front links no Swift library; grow-cli finds GrowKit and the runtime beside it.
    let runpath = try Command.run("readelf", ["-d", stage + "/usr/lib/grow/grow-cli"]).stdout
    #expect(runpath.contains("$ORIGIN"))
    let version = try Command.run(grow, ["--version"], environment: harness.environment)
    #expect(version.stdout == "grow 0.1.0\n")
    let service = try String(
      contentsOfFile: stage + "/usr/share/dbus-1/services/org.grow.Grow1.service", encoding: .utf8)
    #expect(
      service
        == "[D-BUS Service]\nName=org.grow.Grow1\nExec=/usr/bin/grow daemon\n"
        + "SystemdService=grow.service\n")
    // The installed interface is one gdbus-codegen takes, annotations and docs included.
    let interface = stage + "/usr/share/dbus-1/interfaces/org.grow.Grow1.Timer.xml"
    let codegen = try Command.run(
      "gdbus-codegen",
      [
        "--interface-prefix", "org.grow.Grow1.", "--output-directory", harness.bus.directory.path,
        "--generate-c-code", "timer", interface,
      ])
    #expect(codegen.status == 0 && codegen.stderr.isEmpty, "\(codegen.stderr)")
    let desktop = try Command.run(
      "desktop-file-validate", [stage + "/usr/share/applications/grow.desktop"])
    #expect(desktop.status == 0 && desktop.stdout.isEmpty, "\(desktop.stdout)")

    // The staged daemon finds its plugins in ../lib/grow/plugins, not in the build dir.
    let daemon = try BackgroundProcess(grow, ["daemon"], environment: harness.environment)
    defer { daemon.kill() }
    #expect(
      daemon.waitUntil(timeout: 10) {
        (try? Command.run(grow, ["status"], environment: harness.environment).status) == 0
      }, "\(daemon.stderr)")
    let plugins = try Command.run(grow, ["plugins", "--json"], environment: harness.environment)
    let list =
      try JSONSerialization.jsonObject(with: Data(plugins.stdout.utf8)) as? [[String: String]]
    let locations = Dictionary(uniqueKeysWithValues: (list ?? []).map { ($0["id"] ?? "", $0) })
    for id in ["notify", "dnd", "statusbar", "x11", "wayland", "sound", "tray", "gnome-pomodoro"] {
      #expect(
        locations[id]?["location"]
          == (Self.hasDaemonImage
            ? "\(stage)/usr/lib/grow/grow-daemon"
            : "\(stage)/usr/lib/grow/plugins/libgrow-plugin-\(id).so"))
    }
    #expect(locations["statusbar"]?["state"] == "running")
    daemon.terminate()

    let uninstall = try Command.run("make", ["uninstall"] + make, timeout: 60)
    #expect(uninstall.status == 0, "\(uninstall.stderr)")
    let left = try FileManager.default.contentsOfDirectory(atPath: stage)
    #expect(left == [])
  }

  /// The commands of README.md's "Installing" block with `make install` (the one from
  /// source; the package's comes first) before `grow install --user`, comments and `sudo`
  /// dropped: what a person types to build and install.
  static func readmeInstallCommands() throws -> [[String]] {
    let readme = try String(
      contentsOf: RepoPaths.root.appendingPathComponent("README.md"), encoding: .utf8)
    let section = try #require(readme.components(separatedBy: "## Installing\n").dropFirst().first)
    // Code blocks are the odd pieces between the fences.
    let blocks = section.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }
    let block = try #require(blocks.map(\.element).first { $0.contains("make install") })
    var commands: [[String]] = []
    for line in block.split(separator: "\n").dropFirst() {
      let words = (line.split(separator: "#").first ?? "").split(separator: " ").map(String.init)
      guard !words.isEmpty else { continue }
      if words.first == "grow" { break }
      commands.append(words.first == "sudo" ? Array(words.dropFirst()) : words)
    }
    return commands
  }

  /// The README's two commands: the build step builds everything `make install NO_BUILD=1`
  /// copies, and the install step installs it into a staging root that `make uninstall`
  /// empties again. The build step runs as `make -n` (what it would build): a nested build
  /// would wait for the lock this swift test holds, and a release build costs minutes; the
  /// install step installs the debug build the tests already have.
  @Test func theREADMEsInstallCommandsBuildWhatInstallNeedsAndInstall() throws {
    let commands = try Self.readmeInstallCommands()
    try #require(commands.count == 2, "\(commands)")
    let build = commands[0]
    let install = commands[1]
    try #require(
      build.first == "make",
      "README's build step '\(build.joined(separator: " "))' is not a make target: a plain swift build leaves out what make install needs"
    )
    let dryRun = try Command.run(
      "make", ["-n", "-C", RepoPaths.root.path] + build.dropFirst(), timeout: 60)
    #expect(dryRun.status == 0, "\(dryRun.stderr)")
    let built = dryRun.stdout
    for product in [
      "grow", "grow-plugin-notify", "grow-plugin-dnd", "grow-plugin-x11",
      "grow-plugin-wayland", "grow-plugin-statusbar",
    ] {
      #expect(built.contains(" \(product) ") || built.contains(" \(product);"), "\(built)")
    }
    #expect(built.contains("swift build -c release --product"), "\(built)")
    #expect(built.contains("-c release --target GrowPluginTesting"), "\(built)")

    #expect(install.starts(with: ["make", "install"]) && install.contains("NO_BUILD=1"))
    let stage = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-readme-install-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: stage) }
    let staging = [
      "-C", RepoPaths.root.path, "DESTDIR=\(stage)", "PREFIX=/usr", "CONFIGURATION=debug",
    ]
    let installed = try Command.run(
      "make", staging + install.dropFirst(), timeout: 120)
    #expect(installed.status == 0, "\(installed.stderr)")
    #expect(files(under: stage).contains("usr/lib/grow/libGrowPluginTesting.a"))
    let uninstall = try Command.run("make", ["uninstall"] + staging, timeout: 60)
    #expect(uninstall.status == 0, "\(uninstall.stderr)")
    #expect(files(under: stage) == [])
  }

  /// A build without the plugin test kit (what a plain `swift build` makes) is refused before
  /// anything is written, with the build to run.
  @Test func aBuildWithoutTheTestKitIsRefusedBeforeAnythingIsInstalled() throws {
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-partial-build-\(getpid())")
    defer { try? FileManager.default.removeItem(at: root) }
    let build = root.appendingPathComponent("build")
    let modules = build.appendingPathComponent("Modules")
    try FileManager.default.createDirectory(at: modules, withIntermediateDirectories: true)
    let debug = RepoPaths.root.appendingPathComponent(".build/debug")
    let entries = try FileManager.default.contentsOfDirectory(atPath: debug.path)
    for entry in entries where entry == "grow" || entry.hasSuffix(".so") {
      try FileManager.default.createSymbolicLink(
        at: build.appendingPathComponent(entry),
        withDestinationURL: debug.appendingPathComponent(entry))
    }
    for module in ["GrowCore", "GrowConfig", "GrowLoop", "GrowDBus", "GrowPluginKit"] {
      try FileManager.default.createSymbolicLink(
        at: modules.appendingPathComponent("\(module).swiftinterface"),
        withDestinationURL: debug.appendingPathComponent("Modules/\(module).swiftinterface"))
    }
    let stage = root.appendingPathComponent("stage").path
    let result = try Command.run(
      RepoPaths.scripts.appendingPathComponent("install-grow").path,
      ["install", build.path, "/usr", stage], environment: ["BUILD_COMMAND": "make release"],
      timeout: 60)
    #expect(result.status == 1)
    #expect(
      result.stderr == "install-grow: error: \(build.path) lacks "
        + "Modules/GrowPluginTesting.swiftinterface GrowPluginTesting.build/*.o; nothing was "
        + "installed. Run 'make release' as yourself first (it builds grow, each plugin and the "
        + "SDK with its test kit; a plain 'swift build' leaves out the test kit), then this again.\n"
    )
    #expect(!FileManager.default.fileExists(atPath: stage))
  }

  /// An install that stops half way (here a file where the man page directory goes) has
  /// listed what it wrote, so `make uninstall` removes it.
  @Test func anInstallThatStopsHalfWayCanBeUninstalled() throws {
    let stage = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-half-install-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: stage) }
    try FileManager.default.createDirectory(
      atPath: stage + "/usr/share", withIntermediateDirectories: true)
    #expect(FileManager.default.createFile(atPath: stage + "/usr/share/man", contents: Data()))
    let make = [
      "-C", RepoPaths.root.path, "DESTDIR=\(stage)", "PREFIX=/usr", "CONFIGURATION=debug",
      "NO_BUILD=1",
    ]
    let install = try Command.run("make", ["install"] + make, timeout: 120)
    #expect(install.status != 0)
    #expect(files(under: stage).contains("usr/bin/grow"))
    let uninstall = try Command.run("make", ["uninstall"] + make, timeout: 60)
    #expect(uninstall.status == 0, "\(uninstall.stderr)")
    #expect(files(under: stage) == ["usr/share/man"])
  }
  /// `make uninstall` after `grow install --user`: the D-Bus service file and the autostart
  /// entry that start the removed grow go too (left behind, every caller of org.grow.Grow1
  /// would get Spawn.ExecFailed); files for another grow stay.
  @Test func uninstallAlsoRemovesWhatGrowInstallUserWroteForThatGrow() throws {
    let harness = try DaemonHarness(startDaemon: false, environment: ["SUDO_USER": ""])
    let prefix = harness.bus.directory.appendingPathComponent("prefix").path
    let make = [
      "-C", RepoPaths.root.path, "PREFIX=\(prefix)", "CONFIGURATION=debug", "NO_BUILD=1",
    ]
    let install = try Command.run(
      "make", ["install"] + make, environment: harness.environment, timeout: 120)
    try #require(install.status == 0, "\(install.stderr)")
    let user = try Command.run(
      prefix + "/bin/grow", ["install", "--user", "--autostart"], environment: harness.environment)
    try #require(user.status == 0, "\(user.stderr)")
    let paths = InstallTests.Paths(harness)
    #expect(FileManager.default.fileExists(atPath: paths.dbusService))

    let uninstall = try Command.run(
      "make", ["uninstall"] + make, environment: harness.environment, timeout: 60)
    #expect(uninstall.status == 0, "\(uninstall.stderr)")
    #expect(
      uninstall.stdout.contains(
        "install-grow: removed \(paths.dbusService) ('grow install --user' wrote it to start "
          + "\(prefix)/bin/grow)\n"), "\(uninstall.stdout)")
    #expect(!FileManager.default.fileExists(atPath: paths.dbusService))
    #expect(!FileManager.default.fileExists(atPath: paths.autostart))
    #expect(!uninstall.stdout.contains("systemctl"))
  }
}

/// `grow install --user --browser`: the host manifests each browser reads, allowing only
/// Grow's extension, naming a script that runs this grow's `browser-host`.
@Suite struct BrowserInstallTests {
  @Test func theManifestsAllowGrowsExtensionAndRemoveUndoesThem() throws {
    let harness = try DaemonHarness(
      config: "[card.math]\ndistractions = site:video.test\n", startDaemon: false)
    #expect(
      try harness.grow("doctor").stdout.contains(
        "! browser: cards list sites, but no browser can reach Grow to block or flag them; "
          + "fix: run 'grow install --user --browser'"))
    let home = harness.environment["HOME", default: ""]
    let config = harness.environment["XDG_CONFIG_HOME", default: ""]
    let script = harness.environment["XDG_DATA_HOME", default: ""] + "/grow/browser-host"
    let install = try harness.grow("install", "--user", "--autostart", "--browser")
    #expect(install.status == 0, "\(install.stderr)")
    let chromium = config + "/chromium/NativeMessagingHosts/org.grow.grow.json"
    let firefox = home + "/.mozilla/native-messaging-hosts/org.grow.grow.json"
    for path in [
      chromium, config + "/google-chrome/NativeMessagingHosts/org.grow.grow.json", firefox,
    ] {
      #expect(install.stdout.contains("wrote \(path)\n"), "\(install.stdout)")
    }
    let manifest = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: chromium)))
        as? [String: Any])
    #expect(manifest["name"] as? String == "org.grow.grow")
    #expect(manifest["path"] as? String == script)
    #expect(manifest["type"] as? String == "stdio")
    #expect(
      manifest["allowed_origins"] as? [String]
        == ["chrome-extension://\(Chromium.extensionID)/"])
    let mozilla = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: firefox)))
        as? [String: Any])
    #expect(mozilla["allowed_extensions"] as? [String] == ["browser@grow.org"])
    // The script runs this grow's host: with no browser on its stdin it ends at once.
    #expect(FileManager.default.isExecutableFile(atPath: script))
    let run = try Command.run(script, [], environment: harness.environment, stdin: "")
    #expect(run.status == 0, "\(run.stderr)")
    let doctor = try harness.grow("doctor").stdout
    #expect(doctor.contains("✔ browser: 3 browsers can start 'grow browser-host'"), "\(doctor)")

    let remove = try harness.grow("install", "--user", "--remove")
    for path in [chromium, firefox, script] {
      #expect(remove.stdout.contains("removed \(path)"), "\(remove.stdout)")
      #expect(!FileManager.default.fileExists(atPath: path))
    }
  }

  /// The id Chromium gives the extension comes from the key in browser/manifest.json (the
  /// first 32 hex digits of its SHA-256, 0–f written a–p): the one the manifests allow.
  @Test func theExtensionsKeyGivesTheIdTheManifestsAllow() throws {
    let manifestURL = RepoPaths.root.appendingPathComponent("browser/manifest.json")
    let manifest = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
    let key = try #require(manifest["key"] as? String)
    let digest = try Command.run(
      "sh", ["-c", "printf %s \"$0\" | base64 -d | sha256sum", key])
    let id = String(
      digest.stdout.prefix(32).map { hex in
        Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(hex.hexDigitValue ?? 0)))
      })
    #expect(id == Chromium.extensionID)
    let gecko = (manifest["browser_specific_settings"] as? [String: Any])?["gecko"]
    #expect((gecko as? [String: Any])?["id"] as? String == "browser@grow.org")
  }
}
