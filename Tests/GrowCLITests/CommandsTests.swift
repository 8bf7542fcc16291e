import Foundation
import GrowTestSupport
import Testing

/// `grow` subcommands against a real daemon on a private session bus.
@Suite struct CommandsTests {
  @Test func withoutADaemonTheCLISaysHowToStartOneAndFails() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let result = try harness.grow("status")
    #expect(result.status == 3)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr
        == "grow: the grow daemon is not running; start it with 'grow daemon &', or run "
        + "'grow install --user' once so the first command starts it (and your session at "
        + "login)\n")
  }

  @Test func startPauseResumeSkipStopDriveTheTimer() throws {
    let harness = try DaemonHarness()
    var status = try harness.status()
    #expect(status["state"] as? String == "idle")

    let started = try harness.grow("start", "--intention", "Chapter 3")
    #expect(started.status == 0)
    #expect(started.stdout.hasPrefix("● focus on 'work' · "))
    status = try harness.status()
    #expect(status["state"] as? String == "focus")
    #expect(status["card"] as? String == "work")
    #expect(status["duration"] as? Int == 1500)
    #expect(status["intention"] as? String == "Chapter 3")
    #expect(status["cycle"] as? Int == 1)
    #expect(status["ends_at"] is String)

    #expect(try harness.grow("pause").status == 0)
    let paused = try harness.status()
    #expect(paused["paused"] as? Bool == true)
    #expect(paused["ends_at"] is NSNull, "null while paused")
    Thread.sleep(forTimeInterval: 1.2)
    // Time spent paused does not count.
    #expect(try harness.status()["remaining"] as? Int == paused["remaining"] as? Int)

    #expect(try harness.grow("resume").status == 0)
    #expect(try harness.status()["paused"] as? Bool == false)

    #expect(try harness.grow("extend", "5m").status == 0)
    #expect(try harness.status()["duration"] as? Int == 1800)
    #expect(try harness.grow("shorten", "10m").status == 0)
    #expect(try harness.status()["duration"] as? Int == 1200)
    // A phase keeps its last minute: the refusal says so, and what to do instead.
    let tooMuch = try harness.grow("shorten", "1h")
    #expect(tooMuch.status == 0, "cut to its last minute: \(tooMuch.stderr)")
    let refused = try harness.grow("shorten", "1m")
    #expect(refused.status != 0)
    #expect(refused.stderr.contains("a phase keeps its last minute ('grow skip' ends it)"))

    #expect(try harness.grow("skip").status == 0)
    status = try harness.status()
    #expect(status["state"] as? String == "short-break")
    #expect(status["completed_today"] as? Int == 0)

    let stopped = try harness.grow("stop")
    #expect(stopped.status == 0)
    #expect(try harness.status()["state"] as? String == "idle")
  }

  /// `grow status --json` has every key in every state, `null` when it does
  /// not apply (keys were left out), as `grow help status` and grow(1) document.
  @Test func statusJSONHasEveryKeyAndNullWhenItDoesNotApply() throws {
    let harness = try DaemonHarness()
    let idle = try harness.grow("status", "--json")
    #expect(
      idle.stdout
        == #"{"card":null,"completed_today":0,"cut_short_today":0,"cycle":0,"daily_goal":null,"#
        + #""duration":0,"elapsed":0,"ends_at":null,"focus_today":0,"intention":null,"#
        + #""long_break_after":0,"next":null,"next_phase":null,"paused":false,"remaining":0,"#
        + #""started_at":null,"#
        + #""state":"idle"}"# + "\n")
    #expect(try harness.grow("start").status == 0)
    let running = try harness.status()
    #expect(running.count == 17)
    #expect(running["next"] is NSNull && running["intention"] is NSNull)
    #expect(running["next_phase"] as? String == "short-break")
    #expect(running["card"] as? String == "work" && running["ends_at"] is String)
    let help = try harness.grow("help", "status").stdout
    for key in [
      "state", "paused", "card", "duration", "remaining", "elapsed", "started_at", "ends_at",
      "cycle", "long_break_after", "next", "next_phase", "completed_today", "focus_today",
      "cut_short_today", "daily_goal", "intention",
    ] {
      #expect(help.contains("\n                      \(key) "), "\(key) documented")
    }
    #expect(help.contains("every key always present (null when it does"))
  }

  @Test func refusedCommandsExplainThemselvesWithExitStatusOne() throws {
    let harness = try DaemonHarness()
    let stop = try harness.grow("stop")
    #expect(stop.status == 1)
    #expect(stop.stderr == "grow: nothing is running to stop; start with 'grow start [CARD]'\n")

    #expect(try harness.grow("start").status == 0)
    let again = try harness.grow("start")
    #expect(again.status == 1)
    #expect(again.stderr.contains("focus on 'work' is already running"))
    #expect(again.stderr.contains("'grow stop'"))
  }

  @Test func oneOffOverridesApplyToThisSessionOnly() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start", "--focus", "50m").status == 0)
    #expect(try harness.status()["duration"] as? Int == 3000)
    #expect(try harness.grow("stop").status == 0)
    #expect(try harness.grow("start").status == 0)
    #expect(try harness.status()["duration"] as? Int == 1500)
  }

  @Test func badCommandLinesExitTwoWithAHint() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let unknown = try harness.grow("strat")
    #expect(unknown.status == 2)
    #expect(
      unknown.stderr == "grow: unknown command 'strat'; did you mean 'start'? (see 'grow help')\n")
    let badDuration = try harness.grow("extend", "5x")
    #expect(badDuration.status == 2)
    #expect(badDuration.stderr.contains("'5x' is not a duration"))
    let badOption = try harness.grow("status", "--jsn")
    #expect(badOption.status == 2)
    #expect(
      badOption.stderr.contains(
        "unknown option --jsn (this command takes --follow, --format, --icons, --json, --template)")
    )
  }

  @Test func helpAndVersionNeedNoDaemon() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let help = try harness.grow("help")
    #expect(help.status == 0)
    for command in [
      "daemon", "start", "pause", "resume", "toggle", "skip", "stop", "extend",
      "shorten", "status", "cards", "config", "demo",
    ] {
      #expect(help.stdout.contains("\n  \(command) "), "help lists \(command)")
    }
    let startHelp = try harness.grow("help", "start")
    #expect(startHelp.stdout.hasPrefix("usage: grow start [CARD]"))
    #expect(try harness.grow("start", "--help").stdout == startHelp.stdout)
    #expect(try harness.grow("--version").stdout.hasPrefix("grow "))
  }

  @Test func cardsListsTheEmbeddedDefaultWithoutAConfigFile() throws {
    let harness = try DaemonHarness()
    let cards = try harness.grow("cards")
    #expect(cards.stdout == "* work: 25m focus, 5m break, 15m long break after 4\n")
    let json = try harness.grow("cards", "--json")
    let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
    #expect(decoded?.first?["name"] as? String == "work")
    #expect(decoded?.first?["auto_start_focus"] as? Bool == false)
  }

  @Test func aSecondDaemonRefusesAndNamesTheRunningOne() throws {
    let harness = try DaemonHarness()
    let second = try harness.grow("daemon")
    #expect(second.status == 1)
    let pid = try #require(harness.daemon?.pid)
    #expect(second.stderr.contains("already owns org.grow.Grow1 (pid \(pid))"))
    #expect(try harness.grow("status").status == 0)
  }

  @Test func sigtermShutsDownCleanlyAndReleasesTheName() throws {
    let harness = try DaemonHarness()
    let daemon = try #require(harness.daemon)
    #expect(daemon.terminate() == 0)
    #expect(try harness.grow("status").status == 3)
  }

  @Test func demoRunsAFullCycleAndExits() throws {
    let harness = try DaemonHarness(startDaemon: false)
    let demo = try Command.run(
      Binaries.grow, ["demo"], environment: harness.bus.environment, timeout: 60)
    #expect(demo.status == 0)
    let lines = demo.stdout.split(separator: "\n").map(String.init)
    let steps = lines.filter { $0.contains("▶") || $0.contains("■") }.map {
      $0.split(separator: "]", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)
    }
    #expect(
      steps == [
        "▶ focus started: 6s (cycle 1/2)", "■ focus completed", "▶ short break started: 3s",
        "■ short break completed", "▶ focus started: 6s (cycle 2/2)", "■ focus completed",
        "▶ long break started: 5s", "■ long break completed",
      ])
    #expect(demo.stdout.contains("✔ cycle done: 2 focus phases completed, 12s of focus."))
  }
}
