import Foundation
import GrowTestSupport
import Testing

@Test func commandReturnsStatusAndBothStreams() throws {
  let result = try Command.run("sh", ["-c", "echo out; echo err >&2; exit 3"], environment: [:])
  #expect(result.status == 3)
  #expect(result.stdout == "out\n")
  #expect(result.stderr == "err\n")
}

@Test func commandFeedsStdinAndMergesEnvironment() throws {
  let result = try Command.run(
    "sh", ["-c", "cat; echo \"$GROW_TEST_VALUE\""], environment: ["GROW_TEST_VALUE": "42"],
    stdin: "hello\n")
  #expect(result.stdout == "hello\n42\n")
}

@Test func chattyChildOnBothStreamsDoesNotDeadlock() throws {
  // 1 MiB on each stream: far more than a pipe buffer holds.
  let script = "head -c 1048576 /dev/zero | tr '\\0' a; head -c 1048576 /dev/zero | tr '\\0' b >&2"
  let result = try Command.run("sh", ["-c", script], environment: [:], timeout: 20)
  #expect(result.status == 0)
  #expect(result.stdout.utf8.count == 1_048_576)
  #expect(result.stderr.utf8.count == 1_048_576)
}

/// The timeout kills the command: its process is gone once `run` throws. A `run` that waited
/// for it instead would return after the 60 s sleep, without throwing.
@Test func commandIsKilledOnTimeout() throws {
  var said = ""
  #expect {
    _ = try Command.run("sh", ["-c", "echo $$; exec sleep 60"], environment: [:], timeout: 0.5)
  } throws: { error in
    guard case CommandError.timedOut(_, _, let stdout, _) = error else { return false }
    said = stdout
    return true
  }
  let pid = try #require(Int32(said.trimmingCharacters(in: .whitespacesAndNewlines)))
  #expect(kill(pid, 0) != 0 && errno == ESRCH, "the timed-out command still runs")
}

@Test func missingCommandIsReported() {
  #expect(throws: CommandError.self) {
    _ = try Command.run("grow-no-such-command", [], environment: [:])
  }
}

@Test func backgroundProcessCapturesOutputAndStops() throws {
  let child = try BackgroundProcess(
    "sh", ["-c", "echo ready; echo warn >&2; exec sleep 30"], environment: [:])
  #expect(child.waitUntil(timeout: 5) { child.stdout.contains("ready") })
  #expect(child.waitUntil(timeout: 5) { child.stderr.contains("warn") })
  #expect(child.isRunning)
  #expect(child.terminate() == 128 + SIGTERM)
  #expect(!child.isRunning)
}

@Test func backgroundProcessReportsExitStatusAndKill() throws {
  let quick = try BackgroundProcess("sh", ["-c", "exit 7"], environment: [:])
  #expect(quick.waitForExit(timeout: 5) == 7)
  #expect(!quick.waitUntil(timeout: 0.2) { false })

  let stubborn = try BackgroundProcess(
    "sh", ["-c", "trap '' TERM; echo up; while :; do sleep 0.1; done"], environment: [:])
  #expect(stubborn.waitUntil(timeout: 5) { stubborn.stdout.contains("up") })
  #expect(stubborn.terminate(timeout: 0.5) == nil)
  #expect(stubborn.kill() == 128 + SIGKILL)
}

@Test func growBinaryIsFound() {
  let path = Binaries.grow
  #expect(FileManager.default.isExecutableFile(atPath: path), "not executable: \(path)")
  #expect(path.hasSuffix("/grow"))
}

@Test func childStartsWithNoBlockedOrIgnoredSignals() throws {
  // Lines "SigBlk:\t…" and "SigIgn:\t…" of the child's own /proc status.
  let result = try Command.run("grep", ["-E", "^Sig(Blk|Ign)", "/proc/self/status"])
  #expect(result.stdout.contains("SigBlk:\t0000000000000000"), "\(result.stdout)")
  #expect(!result.stdout.contains("SigIgn:\t0000000000001000"), "SIGPIPE ignored: \(result.stdout)")
}

@Test func childThatIgnoresStdinDoesNotKillTheRunner() throws {
  let big = String(repeating: "x", count: 1_048_576)
  let result = try Command.run("true", [], stdin: big)
  #expect(result.status == 0)
}
