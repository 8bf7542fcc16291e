import Foundation
import GrowTestSupport
import Testing

/// `grow status --follow`: the never-ending feed bars read, against a real daemon.
@Suite struct FollowTests {
  @Test func printsOneLinePerChangeAndNothingElse() throws {
    let harness = try DaemonHarness()
    let follower = try follow(harness, "--template", "{icon} {state}")
    try expectLastLine(follower, "○ idle")
    #expect(try harness.grow("start").status == 0)
    try expectLastLine(follower, "● focus")
    #expect(try harness.grow("pause").status == 0)
    try expectLastLine(follower, "‖ paused")
    #expect(try harness.grow("resume").status == 0)
    try expectLastLine(follower, "● focus")
    // Extending changes properties but not this line: nothing is printed for it.
    #expect(try harness.grow("extend", "1m").status == 0)
    #expect(try harness.grow("skip").status == 0)
    try expectLastLine(follower, "☼ short break")
    #expect(try harness.grow("stop").status == 0)
    try expectLastLine(follower, "○ idle")
    #expect(
      lines(follower)
        == ["○ idle", "● focus", "‖ paused", "● focus", "☼ short break", "○ idle"])
  }

  @Test func countsDownOnceASecondFromEndsAtAndStopsWhilePaused() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start", "--focus", "10m").status == 0)
    let follower = try follow(harness)
    #expect(follower.waitUntil(timeout: 30) { lines(follower).count >= 4 })
    let seconds = lines(follower).prefix(4).map(secondsLeft)
    // Consecutive seconds, one line each: no second skipped or printed twice.
    #expect(zip(seconds, seconds.dropFirst()).allSatisfy { $0 - $1 == 1 })
    #expect(try harness.grow("pause").status == 0)
    #expect(follower.waitUntil(timeout: 30) { lines(follower).last?.hasPrefix("‖ ") == true })
    let whilePaused = lines(follower).count
    Thread.sleep(forTimeInterval: 1.5)
    #expect(lines(follower).count == whilePaused)
  }

  @Test func survivesADaemonRestartShowingOffMeanwhile() throws {
    let harness = try DaemonHarness(startDaemon: false)
    // No daemon at start: off, then the line comes when one appears.
    let follower = try follow(harness, "--template", "{state}")
    try expectLastLine(follower, "off")
    try harness.start()
    try expectLastLine(follower, "idle")
    #expect(try harness.grow("start").status == 0)
    try expectLastLine(follower, "focus")
    // Killed: the new daemon takes the saved session up, so focus comes straight back.
    harness.daemon?.kill()
    try expectLastLine(follower, "off")
    try harness.start()
    try expectLastLine(follower, "focus")
    #expect(try harness.grow("stop").status == 0)
    try expectLastLine(follower, "idle")
    #expect(lines(follower) == ["off", "idle", "focus", "off", "focus", "idle"])
    #expect(follower.isRunning)
  }

  /// The bus connection's call timeouts are alarms on the follower's loop: a daemon that
  /// owns its name but never answers leaves the bar saying "off" once the call times out,
  /// not blank for ever.
  @Test func aDaemonThatNeverAnswersShowsOffOnceTheCallTimesOut() throws {
    let harness = try DaemonHarness()
    let daemon = try #require(harness.daemon)
    kill(daemon.pid, SIGSTOP)
    let follower = try follow(harness, "--template", "{state}")
    try expectLastLine(follower, "off")
    kill(daemon.pid, SIGCONT)
    #expect(try harness.grow("start").status == 0)
    try expectLastLine(follower, "focus")
    #expect(lines(follower) == ["off", "focus"])
  }

  @Test func exitsWhenItsParentDies() throws {
    let harness = try DaemonHarness()
    let pidFile = harness.bus.directory.appendingPathComponent("follower.pid").path
    // The shell stands for the bar: it starts the follower and waits.
    let bar = try BackgroundProcess(
      "sh", ["-c", "\"$0\" status --follow & echo $! > \"$1\"; wait", Binaries.grow, pidFile],
      environment: harness.environment)
    var followerPID: Int32 = 0
    #expect(
      bar.waitUntil(timeout: 30) {
        followerPID =
          Int32(
            (try? String(contentsOfFile: pidFile, encoding: .utf8))?
              .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        return followerPID > 0 && bar.stdout.contains("○ idle")
      })
    bar.kill()
    #expect(waitForProcessToEnd(followerPID, timeout: 5))
  }

  @Test func exitsWhenItsStdoutIsClosedEvenWithNothingToWrite() throws {
    let harness = try DaemonHarness()
    // `sleep` reads nothing and leaves after a second; the idle follower has nothing more to
    // write, so only the hang-up of its stdout can end it, and with it the pipeline. One that
    // missed the hang-up would run until the command's (generous) timeout, which throws.
    let result = try Command.run(
      "sh", ["-c", "\"$0\" status --follow | sleep 1; echo done", Binaries.grow],
      environment: harness.environment, timeout: 60)
    #expect(result.stdout == "done\n")
    #expect(result.stderr.isEmpty)
  }

  @Test func exitsQuietlyWhenAWriteFindsTheReaderGone() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start").status == 0)
    // `head -1` leaves after the first line; the next second's line meets a closed pipe.
    let result = try Command.run(
      "sh", ["-c", "\"$0\" status --follow | head -1; echo done", Binaries.grow],
      environment: harness.environment, timeout: 8)
    #expect(result.stdout.hasPrefix("● "))
    #expect(result.stdout.hasSuffix("\ndone\n"))
    #expect(result.stderr.isEmpty)
  }

  @Test func i3barStreamAndClicksReadFromStdinDriveTheTimer() throws {
    let harness = try DaemonHarness()
    let follower = try BackgroundProcess(
      Binaries.grow, ["status", "--follow", "--format", "i3bar", "--template", "{state}"],
      environment: harness.environment, writableStdin: true)
    #expect(follower.waitUntil(timeout: 30) { lines(follower).count >= 3 })
    let block = { (text: String, color: String) in
      #"[{"color":"\#(color)","full_text":"\#(text)","instance":"timer","markup":"none","#
        + #""name":"grow"}]"#
    }
    #expect(
      lines(follower)
        == [#"{"version":1,"click_events":true}"#, "[", block("idle", "#999999")])

    // Exactly as i3bar writes them: `[`, then one event per line, a comma before all but the
    // first.
    let event = { (button: Int) in
      #"{"name":"grow","instance":"timer","button":\#(button),"modifiers":[],"x":1180,"y":13,"#
        + #""relative_x":10,"relative_y":13,"output_x":1180,"output_y":13,"width":60,"#
        + #""height":26}"#
    }
    follower.writeToStdin("[\n" + event(1) + "\n")
    try expectLastLine(follower, "," + block("focus", "#ff6e6e"))
    follower.writeToStdin("," + event(1) + "\n")
    try expectLastLine(follower, "," + block("paused", "#e6c84b"))
    follower.writeToStdin("," + event(4) + "\n")
    #expect(try harness.waitForStatus { $0["duration"] as? Int == 1560 }["paused"] as? Bool == true)
    follower.writeToStdin("," + event(3) + "\n")
    try expectLastLine(follower, "," + block("short break", "#69d26e"))
    follower.writeToStdin("," + event(5) + "\n" + "," + event(2) + "\n")
    try expectLastLine(follower, "," + block("idle", "#999999"))
    #expect(lines(follower).count == 7)
  }

  // MARK: Helpers

  private func follow(_ harness: DaemonHarness, _ arguments: String...) throws
    -> BackgroundProcess
  {
    try BackgroundProcess(
      Binaries.grow, ["status", "--follow"] + arguments, environment: harness.environment)
  }
}

func lines(_ process: BackgroundProcess) -> [String] {
  process.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    .map(String.init)
}

func expectLastLine(
  _ process: BackgroundProcess, _ line: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let seen = process.waitUntil(timeout: 30) { lines(process).last == line }
  #expect(
    seen, "last line never became \(line); output:\n\(process.stdout)\(process.stderr)",
    sourceLocation: sourceLocation)
}

/// `● 9:58` → 598.
func secondsLeft(_ line: String) -> Int {
  let clock = line.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").last ?? ""
  return clock.split(separator: ":").reduce(0) { $0 * 60 + (Int($1) ?? 0) }
}

/// True once `pid` is gone or a zombie (its parent died and nobody reaped it yet).
func waitForProcessToEnd(_ pid: Int32, timeout: TimeInterval) -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    guard let status else { return true }
    // Field 3, after the command name in parentheses, is the state.
    if let close = status.lastIndex(of: ")"),
      status[status.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    {
      return true
    }
    Thread.sleep(forTimeInterval: 0.05)
  }
  return false
}
