import Foundation
import GrowTestSupport
import Testing

/// `grow completions` and `grow config cards`: scripts generated from the command table.
@Suite struct CompletionsTests {
  static let config = "[timer]\ndefault-card = work\n\n[card.math]\nfocus = 50m\n"

  /// Sources the bash script, sets the words as bash would for `line`, runs the completion
  /// function and returns its candidates, one a line (and bash's stderr, which must be empty).
  func complete(_ words: [String], in harness: DaemonHarness) throws -> (String, String) {
    let scriptPath = harness.bus.directory.appendingPathComponent("grow.bash").path
    let script = try harness.grow("completions", "bash")
    #expect(script.status == 0)
    try script.stdout.write(toFile: scriptPath, atomically: true, encoding: .utf8)
    let quoted = words.map { "'\($0)'" }.joined(separator: " ")
    let program = """
      source '\(scriptPath)'
      COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
      _grow
      printf '%s\\n' "${COMPREPLY[@]}"
      """
    let binDirectory = (Binaries.grow as NSString).deletingLastPathComponent
    var environment = harness.environment
    environment["PATH"] =
      binDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    let result = try Command.run("bash", ["-c", program], environment: environment)
    #expect(result.status == 0)
    return (result.stdout, result.stderr)
  }

  @Test func configCardsListsTheCardNamesWithoutADaemon() throws {
    let harness = try DaemonHarness(config: Self.config, startDaemon: false)
    let cards = try harness.grow("config", "cards")
    #expect(cards.status == 0)
    #expect(cards.stdout == "work\nmath\n")
  }

  @Test func bashCompletesCommands() throws {
    let harness = try DaemonHarness(config: Self.config, startDaemon: false)
    let (candidates, errors) = try complete(["grow", "st"], in: harness)
    #expect(errors == "")
    #expect(candidates == "start\nstop\nstatus\nstats\n")
    #expect(try complete(["grow", "do"], in: harness).0 == "doctor\n")
  }

  @Test func bashCompletesCardNamesFromTheConfig() throws {
    let harness = try DaemonHarness(config: Self.config, startDaemon: false)
    #expect(try complete(["grow", "start", "m"], in: harness).0 == "math\n")
    #expect(try complete(["grow", "stats", "--card", "w"], in: harness).0 == "work\n")
  }

  @Test func bashCompletesOptionsAndActions() throws {
    let harness = try DaemonHarness(config: Self.config, startDaemon: false)
    #expect(try complete(["grow", "start", "--f"], in: harness).0 == "--focus\n")
    #expect(try complete(["grow", "config", ""], in: harness).0 == "check\ncards\n--help\n")
    #expect(try complete(["grow", "completions", "z"], in: harness).0 == "zsh\n")
    #expect(
      try complete(["grow", "install", "--"], in: harness).0
        == "--user\n--autostart\n--systemd\n--gnome-pomodoro\n--browser\n--remove\n--help\n")
    #expect(
      try complete(["grow", "status", "--format", "p"], in: harness).0 == "plain\npolybar\n")
  }

  @Test func bashCompletesPluginIDsForReloadFromTheDaemon() throws {
    let harness = try DaemonHarness(config: "[plugins]\nenable = statusbar\n")
    #expect(
      try complete(["grow", "plugins", "reload", ""], in: harness).0
        == "statusbar\nbreakscreen\nbrowser\ndnd\ngnome-pomodoro\nnotify\nsound\ntray\nwayland\nx11\n"
    )
  }

  @Test func theZshScriptParsesAndFishCompletesWithIt() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let directory = harness.bus.directory.path
    try harness.grow("completions", "zsh").stdout.write(
      toFile: directory + "/_grow", atomically: true, encoding: .utf8)
    let zsh = try Command.run("zsh", ["-n", directory + "/_grow"])
    #expect(zsh.status == 0, "\(zsh.stderr)")
    try harness.grow("completions", "fish").stdout.write(
      toFile: directory + "/grow.fish", atomically: true, encoding: .utf8)
    let fish = try Command.run(
      "fish", ["-c", "source \(directory)/grow.fish; complete -C 'grow sta'"],
      environment: harness.environment)
    #expect(fish.stderr == "")
    let offered = fish.stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] }
    #expect(offered == ["start", "stats", "status"])
  }

  @Test func zshAndFishScriptsListEveryPublicCommandAndNoHiddenOne() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let zsh = try harness.grow("completions", "zsh").stdout
    #expect(zsh.hasPrefix("#compdef grow\n"))
    #expect(zsh.contains("    'doctor:check the desktop Grow runs in; one line per check"))
    #expect(!zsh.contains("'manpage:"))
    let fish = try harness.grow("completions", "fish").stdout
    #expect(
      fish.contains(
        "complete -c grow -n __fish_use_subcommand -a install -d 'make the daemon start by "
          + "itself: on first use (D-Bus) and at login'\n"))
    #expect(fish.contains("complete -c grow -n '__fish_seen_subcommand_from start' -l focus\n"))
    #expect(!fish.contains("-a manpage"))
  }

  @Test func anUnknownShellIsAUsageError() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let result = try harness.grow("completions", "tcsh")
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "grow: grow completions: no shell 'tcsh'; shells: bash, zsh, fish (see 'grow help')\n")
  }
}

/// `grow manpage 1|5`: grow(1) and grow.ini(5), from the command table and the config schema.
@Suite struct ManpageTests {
  /// Renders a page with groff as man does; returns the text and groff's warnings.
  func render(_ section: String) throws -> (text: String, warnings: String) {
    let harness = try DaemonHarness(startDaemon: false)
    let page = try harness.grow("manpage", section)
    #expect(page.status == 0)
    let check = try Command.run("groff", ["-man", "-Tutf8", "-ww", "-z"], stdin: page.stdout)
    let text = try Command.run(
      "groff", ["-man", "-Tutf8", "-P", "-cbou"], environment: ["MANWIDTH": "200"],
      stdin: page.stdout)
    return (text.stdout, check.stderr)
  }

  @Test func growOneDocumentsEveryPublicCommandWithoutRoffWarnings() throws {
    let (text, warnings) = try render("1")
    #expect(warnings == "")
    let help = try DaemonHarness(startDaemon: false).grow("help").stdout
    let commands = help.split(separator: "\n", omittingEmptySubsequences: false).drop {
      $0 != "commands:"
    }.dropFirst()
      .prefix { !$0.isEmpty }.map { $0.split(separator: " ").first.map(String.init) ?? "" }
    #expect(commands.count > 15)
    for command in commands {
      #expect(text.contains("grow \(command)"), "grow(1) lacks \(command)")
    }
    #expect(text.contains("--intention TEXT"))
    #expect(!text.contains("grow manpage"))
  }

  @Test func growIniFiveDocumentsEveryConfigKey() throws {
    let (text, warnings) = try render("5")
    #expect(warnings == "")
    for key in [
      "default-card = name (default: work)", "focus = duration (default: 25m)",
      "long-break-after = 1..100 (default: 4)", "daily-goal = duration or none (default: none)",
      "enable = name, name, ...", "enabled = bool (default: true)", "[card.NAME]",
    ] {
      #expect(text.contains(key), "grow.ini(5) lacks \(key)")
    }
  }
}
