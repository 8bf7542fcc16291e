import Foundation
import GrowTestSupport
import Testing

/// The `grow` front (Sources/grow): `grow status` and `--json` in a static image, every other
/// command exec'ed in grow-cli. Its output must be grow-cli's, byte for byte, in every state
/// and language, since both print with GrowBasics' `StatusText`.
@Suite struct FrontTests {
  /// What the front and grow-cli print for `arguments` in `environment`: each run until two
  /// runs in a row agree (a running countdown can cross a second between the two), at most 5.
  private func bothPrint(
    _ arguments: [String], _ harness: DaemonHarness, language: [String: String] = [:]
  ) throws -> (front: String, cli: String) {
    let environment = harness.environment.merging(language) { $1 }
    var last: (front: String, cli: String) = ("", "")
    for _ in 0..<5 {
      let front = try Command.run(Binaries.grow, arguments, environment: environment)
      let cli = try Command.run(Binaries.locate("grow-cli"), arguments, environment: environment)
      last = (
        "\(front.status)|\(front.stdout)|\(front.stderr)",
        "\(cli.status)|\(cli.stdout)|\(cli.stderr)"
      )
      if last.front == last.cli { break }
    }
    return last
  }

  /// po/de.po compiled into a TEXTDOMAINDIR of its own, with the environment that reads it.
  private func german() throws -> (directory: URL, environment: [String: String]) {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-front-\(UUID().uuidString)")
    let messages = directory.appendingPathComponent("de/LC_MESSAGES")
    try FileManager.default.createDirectory(at: messages, withIntermediateDirectories: true)
    let compiled = try Command.run(
      "msgfmt",
      [
        "-o", messages.appendingPathComponent("grow.mo").path,
        RepoPaths.root.appendingPathComponent("po/de.po").path,
      ])
    try #require(compiled.status == 0, "msgfmt: \(compiled.stderr)")
    return (
      directory,
      ["LC_ALL": "C.UTF-8", "LANGUAGE": "de", "TEXTDOMAINDIR": directory.path]
    )
  }

  @Test func theFrontPrintsWhatGrowCLIPrintsInEveryStateAndInGerman() throws {
    let harness = try DaemonHarness(config: "[card.work]\ndaily-goal = 2h\n")
    let (directory, deutsch) = try german()
    defer { try? FileManager.default.removeItem(at: directory) }
    let steps: [(String, [String])] = [
      ("idle", []), ("running", ["start", "--intention", "Kapitel \"3\" / \\ é 😀"]),
      ("paused", ["pause"]), ("break", ["skip"]), ("waiting", ["skip"]),
    ]
    var germanDiffers = false
    for (state, command) in steps {
      if !command.isEmpty {
        let done = try harness.run(Binaries.locate("grow-cli"), command)
        try #require(done.status == 0, "\(command): \(done.stderr)")
      }
      for arguments in [["status"], ["status", "--json"]] {
        let english = try bothPrint(arguments, harness)
        #expect(english.front == english.cli, "\(state) \(arguments)")
        #expect(english.front.hasPrefix("0|"), "\(state) \(arguments): \(english.front)")
        let translated = try bothPrint(arguments, harness, language: deutsch)
        #expect(translated.front == translated.cli, "\(state) \(arguments), German")
        if arguments == ["status"], translated.front != english.front { germanDiffers = true }
      }
    }
    #expect(germanDiffers, "the German catalogue changed what grow status says")
  }

  /// No daemon: the front leaves the words to grow-cli, so they and the exit status are its.
  @Test func withoutADaemonTheFrontSaysWhatGrowCLISays() throws {
    let harness = try DaemonHarness(startDaemon: false)
    for arguments in [["status"], ["status", "--json"]] {
      let both = try bothPrint(arguments, harness)
      #expect(both.front == both.cli)
      #expect(both.front.hasPrefix("3||grow: the grow daemon is not running"))
    }
  }

  /// Every other command is grow-cli's, argv unchanged.
  @Test func everyOtherCommandIsGrowCLIs() throws {
    let harness = try DaemonHarness()
    for arguments in [
      ["--version"], ["help", "status"], ["status", "--format", "waybar"], ["status", "--nope"],
      ["cards", "--json"], ["nonsense"],
    ] {
      let both = try bothPrint(arguments, harness)
      #expect(both.front == both.cli, "\(arguments)")
    }
  }

  /// The front is one fully static executable: it needs no shared library at all (neither the
  /// Swift runtime's nor Foundation nor GrowKit, nor libdbus), so nothing is loaded or
  /// relocated before `grow status` asks the daemon; grow-cli links GrowKit.
  @Test(
    "the front is one static executable",
    .enabled(
      if: ProcessInfo.processInfo.environment["GROW_SANITIZER"] == nil,
      "under a sanitizer the front links glibc shared (Package.swift, frontLinkage)"))
  func theFrontIsOneStaticExecutable() throws {
    let front = try Command.run("readelf", ["-d", "-l", Binaries.grow])
    try #require(front.status == 0)
    let needed = front.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
    #expect(needed.isEmpty, "grow needs \(needed)")
    #expect(!front.stdout.contains("INTERP"), "grow asks for a program interpreter")
    let cli = try Command.run("readelf", ["-d", Binaries.locate("grow-cli")])
    #expect(cli.stdout.contains("[libGrowKit.so]"))
  }

  /// `grow status --follow` runs in the front itself: the static image, with no grow-cli and
  /// no Foundation mapped, so a bar's feed costs a few megabytes rather than the whole kit.
  @Test func theFollowerIsTheFrontWithoutFoundation() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start").status == 0)
    let follower = try BackgroundProcess(
      Binaries.grow, ["status", "--follow", "--template", "{icon} {remaining}"],
      environment: harness.environment)
    defer { follower.kill() }
    #expect(follower.waitUntil(timeout: 30) { follower.stdout.hasPrefix("● ") })
    let image = try FileManager.default.destinationOfSymbolicLink(
      atPath: "/proc/\(follower.pid)/exe")
    #expect(
      URL(fileURLWithPath: image).resolvingSymlinksInPath()
        == URL(fileURLWithPath: Binaries.grow).resolvingSymlinksInPath())
    let maps = try String(contentsOfFile: "/proc/\(follower.pid)/maps", encoding: .utf8)
    #expect(!maps.contains("Foundation"), "the follower maps Foundation")
    #expect(!maps.contains("GrowKit"), "the follower maps GrowKit")
  }

  /// One update for a bar on an interval (`--format` without `--follow`) is the front's too,
  /// and says what grow-cli says in every format and state.
  @Test func oneUpdateInEveryFormatIsWhatGrowCLIPrints() throws {
    let harness = try DaemonHarness(config: "[plugin.notify]\nwarn-before = 30m\n")
    for command in [[], ["start", "--intention", "a & <b>"], ["pause"], ["skip"]] {
      if !command.isEmpty { #expect(try harness.run(Binaries.grow, command).status == 0) }
      for format in ["plain", "i3blocks", "polybar", "waybar", "i3bar"] {
        let arguments = ["status", "--format", format, "--template", "{icon} {state} {card}"]
        let both = try bothPrint(arguments, harness)
        // polybar's click commands run the `grow` that printed them.
        let cli = both.cli.replacing(Binaries.locate("grow-cli"), with: Binaries.grow)
        #expect(both.front == cli, "\(command) \(format)")
        #expect(both.front.hasPrefix("0|"), "\(command) \(format): \(both.front)")
      }
    }
  }
}
