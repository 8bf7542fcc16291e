import Foundation
import GrowTestSupport
import Testing

/// The package make test built (scripts/build-deb names it in GROW_TEST_DEB), and whether a
/// grow package is installed already.
enum BuiltPackage {
  static var path: String? {
    guard let path = ProcessInfo.processInfo.environment["GROW_TEST_DEB"],
      FileManager.default.fileExists(atPath: path)
    else { return nil }
    return path
  }

  static var growIsInstalled: Bool {
    let query = try? Command.run("dpkg-query", ["-W", "-f=${db:Status-Status}", "grow"])
    return query?.stdout == "installed"
  }
}

/// The Debian package installed for real (`apt-get install ./grow_*.deb`), used from its
/// installed files with no toolchain on PATH, then purged: the machine's files are the same
/// before and after. `make test` builds the package first (scripts/build-deb, once per
/// source state) and names it in GROW_TEST_DEB; installing needs root.
@Suite(
  .serialized,
  .enabled(
    if: BuiltPackage.path != nil,
    "GROW_TEST_DEB names no .deb: run through make test, or set it to make deb's output"),
  .enabled(if: getuid() == 0, "installing a package needs root (apt-get install)"),
  .enabled(
    if: !BuiltPackage.growIsInstalled,
    "a grow package is installed already; this test would not restore it"))
struct DebianPackageTests {
  /// The installed grow runs with what a person has: no Swift toolchain on PATH, a private
  /// home, no display.
  static let path = "/usr/sbin:/usr/bin:/sbin:/bin"

  /// What the package may change, and what apt and dpkg change beside it (their logs, caches
  /// and the status database are theirs to keep).
  static let watched = ["/usr", "/etc", "/opt", "/var/lib"]
  static let ignored = [
    "/var/lib/dpkg/", "/var/lib/apt/", "/var/lib/systemd/", "/etc/ld.so.cache",
    "/var/lib/man-db/", "/var/lib/ucf/",
  ]

  /// Every file, directory and link under the watched roots (one filesystem each).
  func machineFiles() throws -> Set<String> {
    let find = try Command.run(
      "find", Self.watched + ["-xdev"], environment: ["PATH": Self.path], timeout: 300)
    return Set(
      find.stdout.split(separator: "\n").map(String.init).filter { path in
        !Self.ignored.contains { path.hasPrefix($0) || path == $0 }
      })
  }

  func apt(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    try Command.run(
      "apt-get", ["-o", "DPkg::Lock::Timeout=600", "-y"] + arguments,
      environment: ["DEBIAN_FRONTEND": "noninteractive", "PATH": Self.path], timeout: 900)
  }

  @Test func installedFromTheDebItWorksFromItsFilesAndPurgeLeavesNothing() throws {
    let deb = try #require(BuiltPackage.path)
    let before = try machineFiles()
    let install = try apt(["install", "--no-install-recommends", deb])
    // Whatever happens below, the machine goes back to how it was.
    defer {
      // (Once purged, apt no longer knows the name: only a package still there is purged.)
      if BuiltPackage.growIsInstalled {
        let purge = try? apt(["purge", "grow"])
        #expect(purge?.status == 0, "\(purge?.stderr ?? "apt-get purge did not run")")
      }
    }
    try #require(install.status == 0, "\(install.stdout)\n\(install.stderr)")
    // Its dependencies are there on the test machine: apt installs grow alone, so purging it
    // alone restores the machine.
    #expect(install.stdout.contains("1 newly installed"), "\(install.stdout)")

    try checkInstalledFiles()
    try checkActivationAndDoctor()

    let purge = try apt(["purge", "grow"])
    #expect(purge.status == 0, "\(purge.stderr)")
    let after = try machineFiles()
    #expect(after.subtracting(before).sorted() == [], "left behind by apt-get purge grow")
    #expect(before.subtracting(after).sorted() == [], "removed by install and purge")
    #expect(!BuiltPackage.growIsInstalled)
  }

  /// The files where Debian Policy puts them, and the installed command line loading its
  /// Swift runtime from /usr/lib/grow only (the `grow` front has it linked in).
  func checkInstalledFiles() throws {
    let environment = ["PATH": Self.path]
    let front = try Command.run("ldd", ["/usr/bin/grow"], environment: environment)
    #expect(!front.stdout.contains("libswiftCore"), "\(front.stdout)")
    let ldd = try Command.run("ldd", ["/usr/lib/grow/grow-cli"], environment: environment)
    #expect(ldd.status == 0)
    #expect(ldd.stdout.contains("/usr/lib/grow/libswiftCore.so"), "\(ldd.stdout)")
    #expect(!ldd.stdout.contains("not found") && !ldd.stdout.contains("/opt/"), "\(ldd.stdout)")
    let version = try Command.run("grow", ["--version"], environment: environment)
    #expect(version.status == 0 && version.stdout.hasPrefix("grow "), "\(version.stderr)")

    // The catalogues in /usr/share/locale, found beside /usr/bin/grow: with no bus, the
    // error in each language of po/, as its po file words it.
    let noBus =
      "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and there is no "
      + "$XDG_RUNTIME_DIR/bus; run Grow inside a desktop session (or `dbus-run-session`)"
    for language in try Catalogues.shippedLanguages() {
      let words = try #require(try Catalogues.translation(of: noBus, in: language))
      let status = try Command.run(
        "grow", ["status"],
        environment: ["PATH": Self.path, "LC_ALL": "C.UTF-8", "LANGUAGE": language],
        inheritingEnvironment: false)
      #expect(status.status == 3 && status.stderr == "grow: \(words)\n", "\(status.stderr)")
    }

    // The man pages, through man itself (compressed by dh_installman).
    let man = try Command.run(
      "man", ["-P", "cat", "grow"], environment: environment.merging(["MANWIDTH": "80"]) { $1 },
      timeout: 60)
    #expect(man.status == 0 && man.stdout.contains("grow"), "\(man.stderr)")
    let ini = try Command.run("man", ["-w", "5", "grow.ini"], environment: environment)
    #expect(ini.stdout.hasPrefix("/usr/share/man/man5/grow.ini.5"), "\(ini.stdout)\(ini.stderr)")

    // Completions where bash-completion, zsh and fish look for them.
    let bash = try Command.run(
      "bash",
      ["-c", "source /usr/share/bash-completion/completions/grow && complete -p grow"],
      environment: environment)
    #expect(bash.status == 0 && bash.stdout.contains("grow"), "\(bash.stderr)")
    let fish = try Command.run(
      "fish", ["-c", "complete --do-complete='grow sta'"],
      environment: environment.merging([
        "HOME": NSTemporaryDirectory(), "XDG_CONFIG_HOME": NSTemporaryDirectory() + "/none",
        "XDG_DATA_HOME": NSTemporaryDirectory() + "/none",
      ]) { $1 }, timeout: 30)
    #expect(fish.stdout.contains("start") && fish.stdout.contains("status"), "\(fish.stderr)")
    let zsh = try Command.run(
      "zsh", ["-fc", "autoload -Uz compinit && compinit -u -D && print -r -- $_comps[grow]"],
      environment: environment.merging(["HOME": NSTemporaryDirectory()]) { $1 }, timeout: 30)
    #expect(zsh.stdout == "_grow\n", "\(zsh.stdout)\(zsh.stderr)")

    // The systemd user unit runs the installed grow.
    let unit = try String(contentsOfFile: "/usr/lib/systemd/user/grow.service", encoding: .utf8)
    #expect(unit.contains("ExecStart=/usr/bin/grow daemon"), "\(unit)")
    let verify = try Command.run(
      "systemd-analyze", ["verify", "/usr/lib/systemd/user/grow.service"],
      environment: environment, timeout: 60)
    let complaints = verify.stderr.split(separator: "\n").filter { $0.contains("grow.service") }
    #expect(complaints == [], "\(verify.stderr)")

    // The browser's native messaging hosts name the installed script, which runs grow's host.
    for manifest in [
      "/etc/chromium/native-messaging-hosts/org.grow.grow.json",
      "/usr/lib/mozilla/native-messaging-hosts/org.grow.grow.json",
    ] {
      let data = try Data(contentsOf: URL(fileURLWithPath: manifest))
      let fields = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
      #expect(fields["path"] as? String == "/usr/lib/grow/browser-host", "\(manifest)")
    }
    #expect(FileManager.default.isExecutableFile(atPath: "/usr/lib/grow/browser-host"))
    let script = try String(contentsOfFile: "/usr/lib/grow/browser-host", encoding: .utf8)
    #expect(script.contains("exec /usr/bin/grow browser-host"), "\(script)")
  }

  /// A session bus configured as a desktop's (dbus-run-session: the standard service
  /// directories, /usr/share/dbus-1/services among them) starts the installed daemon for
  /// `grow start`, and `grow doctor` says so.
  func checkActivationAndDoctor() throws {
    let home = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-deb-\(getpid())").path
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: home) }
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home)
    let environment = [
      "PATH": Self.path, "HOME": home, "XDG_RUNTIME_DIR": home,
      "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
      "XDG_STATE_HOME": home + "/state", "XDG_DATA_DIRS": "/usr/share", "LANG": "C.UTF-8",
    ]
    // The daemon's executable, as the bus knows its pid: the one /usr/bin/grow.
    let script = """
      grow start || exit 10
      grow status --json || exit 11
      pid=$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / \
        org.freedesktop.DBus.GetConnectionUnixProcessID string:org.grow.Grow1 | awk '{print $2}')
      echo "exe=$(readlink /proc/$pid/exe)"
      grow doctor
      grow stop
      exit 0
      """
    let run = try Command.run(
      "dbus-run-session", ["--", "sh", "-c", script], environment: environment,
      inheritingEnvironment: false, timeout: 120)
    #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
    #expect(run.stdout.contains("\"state\":\"focus\""), "\(run.stdout)")
    // D-Bus activation ran grow daemon, which runs the static daemon image (DaemonImage).
    #expect(run.stdout.contains("exe=/usr/lib/grow/grow-daemon\n"), "\(run.stdout)")
    #expect(run.stdout.contains("✔ daemon: running"), "\(run.stdout)")
    #expect(run.stdout.contains("(built-in /usr/lib/grow/grow-daemon)"), "\(run.stdout)")
  }
}

/// README.md's "Installing" starts with the package: `make deb`, then one apt command whose
/// path matches what make deb writes (scripts/build-deb: .build/deb/grow_VERSION_ARCH.deb).
@Suite struct DebianPackageREADMETests {
  @Test func theREADMEsFirstCommandsBuildAndInstallThePackage() throws {
    let readme = try String(
      contentsOf: RepoPaths.root.appendingPathComponent("README.md"), encoding: .utf8)
    let section = try #require(readme.components(separatedBy: "## Installing\n").dropFirst().first)
    let block = try #require(section.components(separatedBy: "```").dropFirst().first)
    let commands = block.split(separator: "\n").dropFirst().map {
      ($0.split(separator: "#").first ?? "").split(separator: " ").map(String.init)
    }.filter { !$0.isEmpty }
    try #require(commands.count >= 2, "\(commands)")
    #expect(commands[0] == ["make", "deb"])
    #expect(commands[1].prefix(3) == ["sudo", "apt", "install"] && commands[1].count == 4)

    let version = try Command.run(
      "dpkg-parsechangelog", ["-S", "Version"], directory: RepoPaths.root.path)
    let arch = try Command.run("dpkg-architecture", ["-qDEB_HOST_ARCH"])
    let built =
      "./.build/deb/grow_\(version.stdout.trimmingCharacters(in: .newlines))_"
      + "\(arch.stdout.trimmingCharacters(in: .newlines)).deb"
    #expect(fnmatch(commands[1][3], built, 0) == 0, "\(commands[1][3]) does not match \(built)")
  }
}
