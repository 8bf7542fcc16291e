import Foundation
import GrowDaemon
import GrowTestSupport
import Testing

/// `grow plugin new` and `grow plugin install`: what a plugin author types,
/// run as a program in a directory of its own. The fast tests use the build's `grow` and
/// executable plugins (no compiler); the last one walks the three commands of
/// docs/writing-plugins.md against a `make install` into a temporary prefix.
@Suite struct PluginCommandsTests {
  /// Runs `script` with /bin/sh in `directory` with the harness's environment, `grow` first on
  /// PATH from `bin`: the commands as a person types them.
  static func shell(
    _ script: String, in directory: String, bin: String, harness: DaemonHarness,
    timeout: TimeInterval = 30
  ) throws -> (status: Int32, stdout: String, stderr: String) {
    let path = bin + ":/opt/swift/usr/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
    return try Command.run(
      "/bin/sh", ["-c", "cd \"$0\" && set -e\n" + script, directory],
      environment: harness.environment.merging(["PATH": path]) { $1 }, timeout: timeout)
  }

  static var buildBin: String { (Binaries.grow as NSString).deletingLastPathComponent }

  static func contents(_ path: String) -> String? {
    try? String(contentsOfFile: path, encoding: .utf8)
  }

  @Test func newRefusesABadNameAnExistingDirectoryAndASwiftPluginWithoutAnInstalledSDK()
    throws
  {
    let harness = try DaemonHarness(startDaemon: false)
    let work = harness.bus.directory.path
    try FileManager.default.createDirectory(
      atPath: work + "/taken", withIntermediateDirectories: false)
    try "mine\n".write(toFile: work + "/taken/notes.txt", atomically: true, encoding: .utf8)

    let existing = try Self.shell(
      "grow plugin new taken --python", in: work, bin: Self.buildBin, harness: harness)
    #expect(existing.status == 1)
    #expect(existing.stderr.contains("taken exists already; pick another name"), "\(existing)")
    #expect(Self.contents(work + "/taken/notes.txt") == "mine\n")
    #expect(
      (try FileManager.default.contentsOfDirectory(atPath: work + "/taken")) == ["notes.txt"])

    for bad in ["Hello", "2fast", "my_plugin", "a-", "with.dot"] {
      let result = try Self.shell(
        "grow plugin new \(bad) --shell", in: work, bin: Self.buildBin, harness: harness)
      #expect(result.status == 2, "\(bad): \(result)")
      #expect(result.stderr.contains("'\(bad)' cannot be a plugin id"), "\(result.stderr)")
      #expect(!FileManager.default.fileExists(atPath: work + "/" + bad))
    }

    // The build's grow has no SDK beside it (only `make install` puts one in PREFIX/lib/grow).
    let swift = try Self.shell(
      "grow plugin new hello", in: work, bin: Self.buildBin, harness: harness)
    #expect(swift.status == 1)
    #expect(swift.stderr.contains("no plugin SDK in ") && swift.stderr.contains("make install"))
    #expect(!FileManager.default.fileExists(atPath: work + "/hello"))
  }

  @Test func installRefusesWhatTheDaemonWouldRefuseAndKeepsWhatWasInstalled() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let work = harness.bus.directory.path
    let plugins = harness.pluginDirectory
    let made = try Self.shell(
      "grow plugin new keep --shell && grow plugin install keep", in: work, bin: Self.buildBin,
      harness: harness)
    try #require(made.status == 0, "\(made)")
    #expect(
      made.stdout.contains("installed plugin 'keep' (executable): \(plugins)/grow-plugin-keep"))
    #expect(made.stdout.contains("daemon: not running"))
    let installed = try #require(Self.contents(plugins + "/grow-plugin-keep"))

    // The same id again, but a file anyone could change: refused, the installed copy stays.
    try "#!/bin/sh\nexec cat >/dev/null\n".write(
      toFile: work + "/keep/grow-plugin-keep.sh", atomically: true, encoding: .utf8)
    chmod(work + "/keep/grow-plugin-keep.sh", 0o777)
    let writable = try Self.shell(
      "grow plugin install keep", in: work, bin: Self.buildBin, harness: harness)
    #expect(writable.status == 1)
    #expect(
      writable.stderr.contains(
        "it is writable by other users; run 'chmod go-w \(work)/keep/grow-plugin-keep.sh'"),
      "\(writable.stderr)")
    #expect(writable.stderr.contains("nothing was installed"))
    #expect(Self.contents(plugins + "/grow-plugin-keep") == installed)

    try "hello\n".write(toFile: work + "/notes.txt", atomically: true, encoding: .utf8)
    try "not a library\n".write(
      toFile: work + "/libgrow-plugin-fake.so", atomically: true, encoding: .utf8)
    try "echo hi\n".write(toFile: work + "/grow-plugin-plain", atomically: true, encoding: .utf8)
    try FileManager.default.createDirectory(
      atPath: work + "/empty", withIntermediateDirectories: false)
    try "#!/bin/sh\n".write(
      toFile: work + "/grow-plugin-notify", atomically: true, encoding: .utf8)
    chmod(work + "/grow-plugin-notify", 0o755)
    // A plugin built for another API version, as the daemon's own tests make one.
    try FileManager.default.copyItem(
      atPath: try FixturePlugins.library("libgrowtest-future-api.so"),
      toPath: work + "/libgrow-plugin-future.so")
    let cases: [(path: String, says: String)] = [
      ("missing.so", "missing.so: no such file or directory"),
      ("notes.txt", "notes.txt is not a Grow plugin: its name is neither libgrow-plugin-ID.so"),
      ("libgrow-plugin-fake.so", "cannot load \(work)/libgrow-plugin-fake.so"),
      ("grow-plugin-plain", "is not a Grow plugin: it is not executable; run 'chmod +x"),
      ("empty", "nothing to install in \(work)/empty: neither a Swift package"),
      ("grow-plugin-notify", "'notify' is the id of a built-in plugin"),
      ("libgrow-plugin-future.so", "was built for Grow plugin API"),
    ]
    for (path, says) in cases {
      let result = try Self.shell(
        "grow plugin install \(path)", in: work, bin: Self.buildBin, harness: harness)
      #expect(result.status == 1, "\(path): \(result)")
      #expect(result.stderr.contains(says), "\(path): \(result.stderr)")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: plugins) == ["grow-plugin-keep"])
  }

  /// A library whose entry point faults is checked in a process of its own: the installer
  /// refuses it with the signal, instead of dying of it, and installs nothing.
  @Test func aLibraryThatCrashesWhenOpenedIsRefusedNotFatal() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let work = harness.bus.directory.path
    try FileManager.default.copyItem(
      atPath: try FixturePlugins.library("libgrowtest-crashes-on-load.so"),
      toPath: work + "/libgrow-plugin-crashes-on-load.so")
    let result = try Self.shell(
      "grow plugin install libgrow-plugin-crashes-on-load.so", in: work, bin: Self.buildBin,
      harness: harness)
    #expect(result.status == 1, "\(result)")
    #expect(
      result.stderr.contains(
        "libgrow-plugin-crashes-on-load.so crashed the process that opened it to check it "
          + "(signal 11, Segmentation fault)"), "\(result.stderr)")
    #expect(result.stderr.contains("nothing was installed"))
    #expect(
      !FileManager.default.fileExists(
        atPath: harness.pluginDirectory + "/libgrow-plugin-crashes-on-load.so"))
  }

  /// A plugin and a config.ini that are symbolic links (dotfiles): the plugin's content is
  /// installed and its file left as it was; the config's real file gets the plugin. An id
  /// that reads as an option is refused.
  @Test func installCopiesWhatALinkLeadsToAndEditsTheConfigThroughItsLink() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let work = harness.bus.directory.path
    let plugins = harness.pluginDirectory
    let dotfiles = work + "/dotfiles"
    try FileManager.default.createDirectory(atPath: dotfiles, withIntermediateDirectories: true)
    try "[plugins]\nenable = statusbar\n".write(
      toFile: dotfiles + "/config.ini", atomically: true, encoding: .utf8)
    try FileManager.default.createDirectory(
      atPath: (harness.configPath as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: harness.configPath, withDestinationPath: dotfiles + "/config.ini")
    let made = try Self.shell(
      "grow plugin new linked --shell && chmod 700 linked/grow-plugin-linked.sh "
        + "&& ln -s linked/grow-plugin-linked.sh grow-plugin-linked "
        + "&& grow plugin install grow-plugin-linked",
      in: work, bin: Self.buildBin, harness: harness)
    try #require(made.status == 0, "\(made)")
    let source = work + "/linked/grow-plugin-linked.sh"
    let installed = plugins + "/grow-plugin-linked"
    let sourceMode = try FileManager.default.attributesOfItem(atPath: source)[.posixPermissions]
    #expect(sourceMode as? Int == 0o700, "the source's mode is left alone")
    let kind = try FileManager.default.attributesOfItem(atPath: installed)[.type]
    #expect(kind as? FileAttributeType == .typeRegular, "a copy, not a link")
    #expect(Self.contents(installed) == Self.contents(source))
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: harness.configPath)
        == dotfiles + "/config.ini", "the config is still the person's link")
    #expect(Self.contents(dotfiles + "/config.ini") == "[plugins]\nenable = statusbar, linked\n")

    try "#!/bin/sh\nexec cat >/dev/null\n".write(
      toFile: work + "/grow-plugin--rf", atomically: true, encoding: .utf8)
    chmod(work + "/grow-plugin--rf", 0o755)
    let option = try Self.shell(
      "grow plugin install ./grow-plugin--rf", in: work, bin: Self.buildBin, harness: harness)
    #expect(option.status == 1, "\(option)")
    #expect(option.stderr.contains("'-rf' cannot be a plugin id"), "\(option.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: plugins) == ["grow-plugin-linked"])
    #expect(Self.contents(dotfiles + "/config.ini") == "[plugins]\nenable = statusbar, linked\n")
  }

  @Test(.timeLimit(.minutes(2)))
  func aPythonPluginGoesFromNewToRunningInTheDaemonWhichTheConfigEnables() throws {
    // An enable line that leaves the new plugin out: install adds it, keeping the comment.
    let harness = try DaemonHarness(
      config: "[plugins]\nenable = statusbar ; the bar only\n", environment: ["DISPLAY": ""])
    let work = harness.bus.directory.path
    let made = try Self.shell(
      "grow plugin new greeter --python\ngreeter/test-plugin\ngrow plugin install greeter --json",
      in: work, bin: Self.buildBin, harness: harness)
    try #require(made.status == 0, "\(made)")
    #expect(made.stdout.contains("ok: {\"command\":\"log\""))
    let json = try #require(made.stdout.split(separator: "\n").last.map(String.init))
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    #expect(report["id"] as? String == "greeter")
    #expect(report["kind"] as? String == "executable")
    #expect(report["installed"] as? String == harness.pluginDirectory + "/grow-plugin-greeter")
    #expect(report["config_changed"] as? Bool == true)
    #expect(report["daemon_running"] as? Bool == true)
    #expect(report["state"] as? String == "running", "\(report)")
    #expect(
      Self.contents(harness.configPath) == "[plugins]\nenable = statusbar, greeter ; the bar only\n"
    )

    let greeter = try #require(try harness.plugins()["greeter"])
    #expect(greeter["state"] == "running")
    #expect(greeter["source"] == "executable")
    // Its handler's effect: the command it sends when focus starts is carried out (logged).
    #expect(try harness.grow("start").status == 0)
    let daemon = try #require(harness.daemon)
    #expect(
      try daemon.waitUntil(timeout: 10) { daemon.stderr.contains("good luck with focus 1") },
      "\(daemon.stderr)")

    // Installed again (a new version): replaced, and the running daemon restarts it.
    let again = try Self.shell(
      "grow plugin install greeter/grow-plugin-greeter.py", in: work, bin: Self.buildBin,
      harness: harness)
    #expect(again.status == 0, "\(again)")
    #expect(again.stdout.contains("replaced plugin 'greeter'"))
    #expect(again.stdout.contains("config: enabled already"))
    #expect(again.stdout.contains("daemon: restarted plugin 'greeter'"))
    #expect(again.stdout.contains("daemon: 'greeter' is running"))

    // What the template's README promises: where the greeting shows, and the guide it cites.
    let readme = try #require(Self.contents(work + "/greeter/README.md"))
    #expect(readme.contains("(`grow logs --plugin greeter` shows each greeting"), "\(readme)")
    let logs = try harness.grow("logs", "--plugin", "greeter")
    #expect(logs.stdout.contains("good luck with focus 1"), "\(logs)")
    let program = try #require(Self.contents(work + "/greeter/grow-plugin-greeter.py"))
    #expect(!program.contains("in Grow's sources"))
  }

  /// A program plugin, then a Swift library with the same id (the docs' Python example, then
  /// their Swift one): the library replaces the program, install says so, and the daemon runs
  /// the library; never both on disk with one silently winning.
  @Test(.timeLimit(.minutes(2)))
  func aLibraryWithAProgramsIDReplacesItAndSaysSo() throws {
    let harness = try DaemonHarness(environment: ["DISPLAY": ""])
    let work = harness.bus.directory.path
    let plugins = harness.pluginDirectory
    let id = "throws-in-handler"
    let program = try Self.shell(
      "grow plugin new \(id) --shell\ngrow plugin install \(id)", in: work, bin: Self.buildBin,
      harness: harness)
    try #require(program.status == 0, "\(program)")
    try FileManager.default.copyItem(
      atPath: try FixturePlugins.library("libgrowtest-throws-in-handler.so"),
      toPath: work + "/libgrow-plugin-\(id).so")
    let library = try Self.shell(
      "grow plugin install libgrow-plugin-\(id).so", in: work, bin: Self.buildBin,
      harness: harness)
    #expect(library.status == 0, "\(library)")
    #expect(
      library.stdout.contains(
        "installed plugin '\(id)' (library): \(plugins)/libgrow-plugin-\(id).so\n"
          + "  from \(work)/libgrow-plugin-\(id).so\n"
          + "  replacing the program plugin '\(id)' it removed: \(plugins)/grow-plugin-\(id)\n"),
      "\(library.stdout)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: plugins) == ["libgrow-plugin-\(id).so"])
    let listed = try #require(try harness.plugins()[id])
    #expect(listed["source"] == "library", "\(listed)")
    #expect(listed["state"] == "running", "\(listed)")
  }

  /// The three commands of docs/writing-plugins.md ("From nothing to a running plugin"), read
  /// from the file and run as written, with the installed grow first on PATH.
  static func documentedCommands() throws -> String {
    let docs = try String(
      contentsOf: RepoPaths.root.appendingPathComponent("docs/writing-plugins.md"),
      encoding: .utf8)
    let section = try #require(
      docs.range(of: "## From nothing to a running plugin: three commands"))
    let rest = docs[section.upperBound...]
    let start = try #require(rest.range(of: "```sh\n"))
    let end = try #require(rest[start.upperBound...].range(of: "```"))
    return String(rest[start.upperBound..<end.lowerBound])
  }

  @Test(.timeLimit(.minutes(10)))
  func theThreeDocumentedCommandsRunANewSwiftPluginInTheInstalledDaemon() throws {
    let commands = try Self.documentedCommands()
    #expect(commands.split(separator: "\n").count == 3, "\(commands)")
    let harness = try DaemonHarness(startDaemon: false, environment: ["DISPLAY": ""])
    let work = harness.bus.directory.path
    let prefix = work + "/prefix"
    try PluginSDKTests.installDebugBuild(into: prefix)
    let grow = prefix + "/bin/grow"
    let daemon = try PluginSDKTests.startInstalledDaemon(prefix: prefix, harness: harness)
    defer {
      daemon.terminate()
      daemon.kill()
    }

    let started = Date()
    let walked = try Self.shell(
      commands, in: work, bin: prefix + "/bin", harness: harness, timeout: 540)
    let seconds = Date().timeIntervalSince(started)
    try #require(walked.status == 0, "\(walked.stdout)\n\(walked.stderr)")
    print("the three documented commands took \(Int(seconds)) s")
    #expect(
      walked.stdout.contains(
        "wrote hello/, the plugin 'hello' (a Swift plugin against the SDK in \(prefix)/lib/grow)"))
    #expect(
      walked.stdout.contains(
        "installed plugin 'hello' (library): \(harness.pluginDirectory)/libgrow-plugin-hello.so"))
    // The static daemon image hands over to the daemon that loads plugin libraries.
    #expect(
      walked.stdout.contains("daemon: started plugin 'hello'")
        || walked.stdout.contains(
          "daemon: \(DaemonImage.handOverReport): plugin 'hello' is a library"),
      "\(walked.stdout)")
    #expect(walked.stdout.contains("daemon: 'hello' is running"), "\(walked.stdout)")

    // Running in the daemon, and its one handler does what it says.
    #expect(try Command.run(grow, ["start"], environment: harness.environment).status == 0)
    var hello: [String: Any] = [:]
    for _ in 0..<50 {
      let listed = try Command.run(grow, ["plugins", "--json"], environment: harness.environment)
      let list =
        try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
      hello = list?.first { $0["id"] as? String == "hello" } ?? [:]
      if hello["note"] != nil { break }
      usleep(100_000)
    }
    #expect(hello["state"] as? String == "running", "\(hello)")
    #expect(hello["source"] as? String == "library")
    #expect((hello["note"] as? String)?.hasPrefix("Good luck: focus 1 on ") == true, "\(hello)")

    // The scaffold's own test, on the installed test kit.
    let tested = try Self.shell(
      "swift test --package-path hello", in: work, bin: prefix + "/bin", harness: harness,
      timeout: 540)
    #expect(tested.status == 0, "\(tested.stdout)\n\(tested.stderr)")
    #expect(
      (tested.stdout + tested.stderr).contains("Test greetsEveryFocusPhaseAsItStarts() passed"),
      "\(tested.stdout)")
  }
}
