import Foundation
import GrowConfig
import GrowLoop
@_spi(GrowHost) import GrowPluginKit
import GrowTestSupport
import Testing

@testable import GrowCore
@testable import GrowDaemon

/// External plugins end to end: a real `grow daemon` on a private bus runs the scripts named by
/// `[plugin.ID] exec = …`, and the tests watch what the scripts record and what the daemon
/// logs, while checking that `grow status` keeps answering.
@Suite struct ExternalPluginTests {
  /// A harness whose daemon is not started yet, plus its private HOME for scripts and files.
  struct Setup {
    let harness: DaemonHarness
    let home: String

    init() throws {
      harness = try DaemonHarness(startDaemon: false)
      home = harness.bus.environment["HOME", default: NSTemporaryDirectory()]
    }

    /// Writes an executable script into HOME and returns its path.
    func script(_ name: String, _ text: String) throws -> String {
      let path = "\(home)/\(name)"
      try writeExecutable(text, to: path)
      return path
    }

    func read(_ name: String) -> String {
      (try? String(contentsOfFile: "\(home)/\(name)", encoding: .utf8)) ?? ""
    }

    var daemonLog: String { harness.daemon?.stderr ?? "" }

    /// Waits for `condition`, checking that the daemon still answers every time.
    func wait(
      timeout: TimeInterval = 30, _ what: String, _ condition: () throws -> Bool
    ) throws {
      let deadline = Date().addingTimeInterval(timeout)
      while try !condition() {
        let answer = try harness.grow("status")
        #expect(answer.status == 0, "the daemon answers while waiting: \(answer)")
        guard Date() < deadline else {
          throw HarnessError("timed out waiting for \(what); daemon log:\n\(daemonLog)")
        }
        Thread.sleep(forTimeInterval: 0.05)
      }
    }

    /// SIGTERM, so the daemon stops its plugins instead of leaving them behind. The deadline
    /// only catches a daemon that never leaves: on a busy machine a normal exit takes seconds.
    func stopDaemon() {
      let status = harness.daemon?.terminate(timeout: 60)
      #expect(status == 0, "daemon log:\n\(daemonLog)")
    }
  }

  static let fastTimer = """
    [timer]
    focus = 1s
    short-break = 1s
    long-break = 1s
    auto-start-breaks = true
    auto-start-focus = true

    """

  static var examples: String { RepoPaths.root.appendingPathComponent("examples/plugins").path }

  /// What runs is the file that was checked, not what its path leads to by then: replaced
  /// after the check (only the user could, in a directory that passed), the checked one runs.
  /// A script reads itself through /dev/fd, and is told its path in GROW_PLUGIN_PROGRAM.
  @MainActor @Test func theFileCheckedIsTheFileThatRuns() throws {
    let setup = try Setup()
    let path = try setup.script("swapped", "#!/bin/sh\necho checked\n")
    let file = try TrustedFile.open(path)
    try writeExecutable("#!/bin/sh\necho replacement\n", to: path + ".new")
    #expect(rename(path + ".new", path) == 0)
    var output: [Int32] = [-1, -1]
    #expect(pipe(&output) == 0)
    let input = open("/dev/null", O_RDONLY | O_CLOEXEC)
    defer { for descriptor in [input, output[0]] { close(descriptor) } }
    let pid = try ProcessLauncher.launch(
      file.descriptor, arguments: ["swapped"], environment: [],
      standardStreams: (input, output[1], output[1]), umask: nil, defaultSignals: [],
      deathSignal: 0)
    close(output[1])
    let text = String(
      decoding: try FileHandle(fileDescriptor: output[0]).readToEnd() ?? Data(), as: UTF8.self)
    var status: Int32 = 0
    _ = waitpid(pid, &status, 0)
    #expect(text == "checked\n")
    #expect(status == 0)

    let reporter = try setup.script(
      "reporter",
      "#!/bin/sh\necho \"$0 $GROW_PLUGIN_PROGRAM\" >\"$HOME/seen\"\nexec cat >/dev/null\n")
    try setup.harness.writeConfig("[plugin.reporter]\nexec = \(reporter)\n")
    try setup.harness.start()
    defer { setup.stopDaemon() }
    try setup.wait("the reporter to run") { setup.read("seen").hasSuffix("\n") }
    #expect(setup.read("seen").hasPrefix("/dev/fd/"))
    #expect(setup.read("seen").hasSuffix(" \(reporter)\n"))
  }

  @Test func pythonExampleRecordsCompletedFocusPhases() throws {
    let setup = try Setup()
    defer { setup.stopDaemon() }
    try setup.harness.writeConfig(
      Self.fastTimer + """
        [plugin.log-completed]
        exec = \(Self.examples)/log-completed.py ~/focus.log
        """)
    try setup.harness.start()
    #expect(try setup.harness.grow("start").status == 0)
    try setup.wait("two completed focus phases in the log") {
      setup.read("focus.log").split(separator: "\n").count >= 2
    }
    try setup.harness.grow("stop")
    for line in setup.read("focus.log").split(separator: "\n") {
      let fields = line.split(separator: "\t")
      #expect(fields.count == 3)
      #expect(fields.first?.hasSuffix("Z") == true, "ended_at in UTC: \(line)")
      #expect(fields.dropFirst().first == "work")
      #expect(fields.last == "0.02", "1 s is 0.02 minutes: \(line)")
    }
  }

  @Test func shellExamplePausesOnSIGUSR1AndResumesOnSIGUSR2() throws {
    let setup = try Setup()
    defer { setup.stopDaemon() }
    try setup.harness.writeConfig(
      """
      [plugin.pause-on-signal]
      exec = \(Self.examples)/pause-on-signal.sh ~/pause.pid
      """)
    try setup.harness.start()
    #expect(try setup.harness.grow("start").status == 0)
    try setup.wait("the plugin's pid file") { Int32(setup.read("pause.pid").trimmed) != nil }
    let pid = try #require(Int32(setup.read("pause.pid").trimmed))

    kill(pid, SIGUSR1)
    _ = try setup.harness.waitForStatus(timeout: 5) { $0["paused"] as? Bool == true }
    kill(pid, SIGUSR2)
    _ = try setup.harness.waitForStatus(timeout: 5) { $0["paused"] as? Bool == false }
    // The whole process group, as `kill -USR1 -PGID` would; the reader subshell survives it.
    kill(-getpgid(pid), SIGUSR1)
    let status = try setup.harness.waitForStatus(timeout: 5) { $0["paused"] as? Bool == true }
    #expect(status["state"] as? String == "focus")
    #expect(kill(pid, 0) == 0, "still running after a signal to its group")
    #expect(!setup.daemonLog.contains("restarting"), "never restarted:\n\(setup.daemonLog)")
  }

  @Test func aPluginThatExitsAtOnceIsRestartedWithBackoff() throws {
    let setup = try Setup()
    defer { setup.stopDaemon() }
    let script = try setup.script("quitter", "#!/bin/sh\necho run >>\"$HOME/runs\"\nexit 3\n")
    try setup.harness.writeConfig("[plugin.quitter]\nexec = \(script)\n")
    try setup.harness.start()
    try setup.wait("two runs") { setup.read("runs").split(separator: "\n").count >= 2 }
    #expect(
      setup.daemonLog.contains("grow[quitter] warning: exited with status 3; restarting in 1s"))
    try setup.wait("the third run, 2 s later") {
      setup.read("runs").split(separator: "\n").count >= 3
    }
    #expect(setup.daemonLog.contains("restarting in 2s"))
  }

  @Test func aPluginThatStopsReadingIsCutOffWhileTheDaemonAnswers() throws {
    let setup = try Setup()
    defer { setup.stopDaemon() }
    // Never reads its stdin.
    let silent = try setup.script("silent", "#!/bin/sh\nexec sleep 30\n")
    // Drives the timer hard (toggle, about 400 times a second) and reads what it is sent, so
    // events flood towards `silent`.
    let toggler = try setup.script(
      "toggler",
      """
      #!/usr/bin/env python3
      import sys, threading, time
      threading.Thread(target=lambda: [None for _ in sys.stdin], daemon=True).start()
      end = time.time() + 8
      while time.time() < end:
          sys.stdout.write('{"command":"toggle"}\\n'); sys.stdout.flush(); time.sleep(0.0025)
      for _ in sys.stdin: pass
      """)
    try setup.harness.writeConfig(
      "[plugin.silent]\nexec = \(silent)\n[plugin.toggler]\nexec = \(toggler)\n")
    try setup.harness.start()
    try setup.wait(timeout: 60, "silent cut off") {
      setup.daemonLog.contains("grow[silent] warning: stopped reading its input (256 KiB")
    }
    #expect(!setup.daemonLog.contains("grow[toggler] warning"), "the reader is left alone")
    #expect(try setup.harness.grow("status").status == 0)
  }

  @Test func aPluginThatIgnoresEndOfInputStillEndsWithADaemonKilledByKillNine() throws {
    let setup = try Setup()
    // Never reads its stdin, so it never sees end of file; SIGTERM still ends it.
    let stubborn = try setup.script(
      "stubborn", "#!/bin/sh\necho $$ > \"$HOME/stubborn.pid\"\nwhile :; do sleep 0.1; done\n")
    try setup.harness.writeConfig("[plugin.stubborn]\nexec = \(stubborn)\n")
    try setup.harness.start()
    try setup.wait("the plugin wrote its pid") { !setup.read("stubborn.pid").isEmpty }
    let pid = try #require(
      Int32(setup.read("stubborn.pid").trimmingCharacters(in: .whitespacesAndNewlines)))
    #expect(kill(pid, 0) == 0, "running")
    #expect(setup.harness.daemon?.kill() == 128 + SIGKILL)
    let deadline = Date().addingTimeInterval(10)
    // kill(pid, 0) fails with ESRCH once it is gone (it is not our child: no zombie to reap).
    while kill(pid, 0) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    #expect(kill(pid, 0) != 0, "the plugin program outlived the daemon")
  }

  @Test func aPluginProgramRunsOnWhileTheDaemonIdles() throws {
    let setup = try Setup()
    defer { setup.stopDaemon() }
    let quiet = try setup.script("quiet", "#!/bin/sh\nexec cat > /dev/null\n")
    try setup.harness.writeConfig("[plugin.quiet]\nexec = \(quiet)\n")
    try setup.harness.start()
    // Started again from a D-Bus call, so from whichever libdispatch worker thread serves the
    // main queue then; idle long enough for that worker to retire. The death signal must mean
    // the daemon died, not that the thread which happened to start the program did.
    #expect(try setup.harness.grow("plugins", "reload", "quiet").status == 0)
    Thread.sleep(forTimeInterval: 12)
    #expect(try setup.harness.grow("status").status == 0)
    let log = setup.daemonLog
    #expect(log.components(separatedBy: "grow[quiet] info: started").count == 3, "\(log)")
    #expect(!log.contains("grow[quiet] warning"), "\(log)")
  }

  @Test func aPluginSendingCommandsAsFastAsItCanDoesNotHoldUpTheDaemon() throws {
    let setup = try Setup()
    defer { setup.stopDaemon() }
    // Toggles with no pause at all for 6 s: far more than the daemon can carry out.
    let hammer = try setup.script(
      "hammer",
      """
      #!/usr/bin/env python3
      import os, sys, threading, time
      threading.Thread(target=lambda: [None for _ in sys.stdin], daemon=True).start()
      end = time.time() + 6
      line = '{"command":"toggle"}\\n' * 64
      while time.time() < end:
          sys.stdout.write(line); sys.stdout.flush()
      open(os.environ['GROW_PLUGIN_PROGRAM'] + '.done', 'w').close()
      for _ in sys.stdin: pass
      """)
    try setup.harness.writeConfig("[plugin.hammer]\nexec = \(hammer)\n")
    try setup.harness.start()
    // `wait` asks `grow status` every 50 ms and fails on any call the daemon leaves without
    // an answer for the CLI's 5 s (NoReply), which is what a person would see.
    try setup.wait(timeout: 30, "the hammer to finish or be cut off") {
      FileManager.default.fileExists(atPath: hammer + ".done")
        || setup.daemonLog.contains("grow[hammer] warning: flooded its output")
    }
  }

  /// SIGTERM while a plugin floods commands (800 a second, under the flood
  /// limit, so it is not cut off) and the daemon gets only a sliver of the CPU (it runs 5 ms in
  /// every 100 ms, stopped and continued by a helper process, as on a machine loaded far beyond
  /// its cores). The daemon still leaves the normal way
  /// (status 0, plugins stopped, session ended), not by the emergency exit: how busy the
  /// machine is says nothing about a plugin being stuck.
  @Test func sigtermWhileAPluginFloodsOnAStarvedMachineLeavesTheNormalWay() throws {
    let setup = try Setup()
    let hammer = try setup.script(
      "hammer",
      """
      #!/usr/bin/env python3
      import sys, threading, time
      threading.Thread(target=lambda: [None for _ in sys.stdin], daemon=True).start()
      line = '{"command":"toggle"}\\n' * 64
      while True:
          sys.stdout.write(line); sys.stdout.flush(); time.sleep(0.08)
      """)
    // SIGSTOP and SIGCONT in turn until the daemon is gone; continues it when told to end.
    let starver = try setup.script(
      "starver",
      """
      #!/usr/bin/env python3
      import os, signal, sys, time
      pid = int(sys.argv[1])
      def leave(*_):
          try: os.kill(pid, signal.SIGCONT)
          except ProcessLookupError: pass
          sys.exit(0)
      signal.signal(signal.SIGTERM, leave)
      try:
          while True:
              os.kill(pid, signal.SIGSTOP); time.sleep(0.095)
              os.kill(pid, signal.SIGCONT); time.sleep(0.005)
      except ProcessLookupError:
          pass
      finally:
          leave()
      """)
    try setup.harness.writeConfig("[plugin.hammer]\nexec = \(hammer)\n")
    try setup.harness.start()
    let daemon = try #require(setup.harness.daemon)
    // The flood is being carried out: its toggles started a session.
    try setup.wait(timeout: 30, "the hammer's toggles to start a session") {
      try setup.harness.status()["state"] as? String != "idle"
    }
    let slowing = try BackgroundProcess(starver, [String(daemon.pid)])
    defer {
      slowing.terminate()
      kill(daemon.pid, SIGCONT)
    }
    // Let a backlog build up in the plugin's pipe, more than the starved daemon gets through.
    Thread.sleep(forTimeInterval: 3)
    // Generous: only a daemon that never leaves fails here.
    let status = daemon.terminate(timeout: 120)
    #expect(status == 0, "daemon log:\n\(setup.daemonLog)")
    #expect(!setup.daemonLog.contains("exiting without it"), "\(setup.daemonLog)")
    #expect(setup.daemonLog.contains("grow[hammer] info: stopped"), "\(setup.daemonLog)")
  }

  @Test func garbageGetsRefusedAndChangesNothing() throws {
    let setup = try Setup()
    defer { setup.stopDaemon() }
    let plugin = try setup.script(
      "garbage",
      """
      #!/usr/bin/env python3
      import json, os, sys
      lines = ["hello", "[1]", '{"command":"explode"}', '{"command":"extend","seconds":"x"}',
               '{"command":"pause"}', "x" * 70000, '{"command":"log","message":"hi there"}']
      for line in lines:
          sys.stdout.write(line + "\\n")
      sys.stdout.flush()
      results = []
      for line in sys.stdin:
          event = json.loads(line)
          if event["type"] == "command-result":
              results.append(event)
              if len(results) == len(lines):
                  path = os.environ["HOME"] + "/results"
                  with open(path + ".tmp", "w") as out:
                      json.dump(results, out)
                  os.rename(path + ".tmp", path)
      """)
    try setup.harness.writeConfig("[plugin.garbage]\nexec = \(plugin)\n")
    try setup.harness.start()
    try setup.wait("all replies") { !setup.read("results").isEmpty }
    let results = try #require(
      try JSONSerialization.jsonObject(with: Data(setup.read("results").utf8))
        as? [[String: Any]])
    #expect(results.map { $0["ok"] as? Bool } == [false, false, false, false, false, false, true])
    let errors = results.map { $0["error"] as? String ?? "" }
    #expect(errors[0].hasPrefix("not JSON; send one JSON object per line; accepted: "))
    #expect(errors[1].hasPrefix("not a JSON object"))
    #expect(errors[2].hasPrefix("unknown command 'explode'"))
    #expect(errors[3].hasPrefix(#""seconds" must be a number"#))
    #expect(errors[4] == "nothing is running to pause; start with 'grow start [CARD]'")
    #expect(errors[5].hasPrefix("line of 70000 bytes refused"))
    #expect(
      results.map { $0["command"] as? String } == [
        nil, nil, "explode", "extend", "pause", nil, "log",
      ])
    #expect(setup.daemonLog.contains("grow[garbage] info: hi there"))
    #expect(setup.daemonLog.contains("grow[garbage] warning: refused a command line: not JSON"))
    #expect(try setup.harness.status()["state"] as? String == "idle")
  }

  @Test func execIsSplitWithoutAShell() throws {
    let setup = try Setup()
    defer { setup.stopDaemon() }
    let plugin = try setup.script(
      "args",
      """
      #!/usr/bin/env python3
      import json, os, sys
      with open(os.environ["HOME"] + "/argv.tmp", "w") as out:
          json.dump(sys.argv[1:], out)
      os.rename(os.environ["HOME"] + "/argv.tmp", os.environ["HOME"] + "/argv")
      for _ in sys.stdin: pass
      """)
    try setup.harness.writeConfig(
      """
      [plugin.args]
      exec = ~/args '$(touch ~/pwned)' x;y "a \\"b\\"" x\\ y ~/z $HOME *
      """)
    try setup.harness.start()
    try setup.wait("the argument list") { !setup.read("argv").isEmpty }
    let arguments = try JSONSerialization.jsonObject(with: Data(setup.read("argv").utf8))
    #expect(
      arguments as? [String] == [
        "$(touch ~/pwned)", "x;y", #"a "b""#, "x y", "\(setup.home)/z", "$HOME", "*",
      ])
    #expect(!FileManager.default.fileExists(atPath: "\(setup.home)/pwned"))
    _ = plugin
  }

  @Test func aBrokenExecIsAConfigErrorWithFileAndLine() throws {
    let setup = try Setup()
    defer { setup.stopDaemon() }
    try setup.harness.writeConfig("[timer]\nfocus = 25m\n\n[plugin.broken]\nexec = 'oops\n")
    try setup.harness.start()
    try setup.wait("the error") { setup.daemonLog.contains("plugin 'broken' not started") }
    let listed = try setup.harness.plugins()["broken"]
    #expect(listed?["state"] == "failed")
    #expect(listed?["error"]?.contains("exec has a ' that is never closed") == true)
    #expect(
      setup.daemonLog.contains(
        "\(setup.harness.configPath):5: ")
        && setup.daemonLog.contains("exec has a ' that is never closed"),
      "\(setup.daemonLog)")
  }
}

/// `ExternalPlugin` in this process, with short limits, so the slow paths (giving up after 5
/// failures, SIGKILL after the grace period) run in a fraction of a second.
@MainActor @Suite struct ExternalPluginInProcessTests {
  let bus = EventBus()
  let timer: FocusTimer
  let directory: String

  init() throws {
    timer = FocusTimer(deck: .standard, bus: bus, time: MainLoop())
    directory = NSTemporaryDirectory() + "grow-external-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  }

  func plugin(_ script: String, limits: ExternalPlugin.Limits) throws -> ExternalPlugin {
    let path = directory + "/plugin"
    try writeExecutable(script, to: path)
    let context = PluginContext(
      id: "test", config: ConfigSection(name: "plugin.test", path: "test.ini", line: 1),
      log: Logger(label: "test", minimumLevel: .error), events: bus, timer: timer)
    return ExternalPlugin(context: context, arguments: [path], growVersion: "test", limits: limits)
  }

  // Generous: the whole suite runs in parallel on two shared cores; passing tests return early.
  func waitUntil(_ timeout: TimeInterval = 30, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
      if Date() > deadline { return false }
      try await Task.sleep(for: .milliseconds(10))
    }
    return true
  }

  static func isRestarting(_ state: ExternalPlugin.State) -> Bool {
    if case .restarting = state { true } else { false }
  }

  static var quick: ExternalPlugin.Limits {
    var limits = ExternalPlugin.Limits()
    limits.firstRestartDelay = 0.02
    limits.stopGracePeriod = 0.2
    return limits
  }

  @Test func givesUpAfterFiveFailuresAndReportsWhy() async throws {
    let plugin = try plugin("#!/bin/sh\nexit 7\n", limits: Self.quick)
    var states: [ExternalPlugin.State] = []
    plugin.onStateChange = { states.append($0) }
    plugin.start()
    #expect(try await waitUntil { if case .failed = plugin.state { true } else { false } })
    #expect(plugin.state == .failed(reason: "exited with status 7"))
    #expect(plugin.lastError == "exited with status 7")
    let delays = states.compactMap { if case .restarting(let after) = $0 { after } else { nil } }
    #expect(delays == [0.02, 0.04, 0.08, 0.16], "exponential backoff")

    plugin.start()  // a reload starts from scratch
    #expect(plugin.state == .running)
    plugin.stop()
  }

  @Test func aChildThatStopsReadingIsKilledAndRestarted() async throws {
    var limits = Self.quick
    limits.outgoingBuffer = 4096
    // Stays in `restarting` for the checks below, however late they run: the whole suite
    // shares two cores, and a busy run can hold this test up for tens of seconds.
    limits.firstRestartDelay = 3600
    limits.maximumRestartDelay = 3600
    let plugin = try plugin("#!/bin/sh\nexec sleep 30\n", limits: limits)
    plugin.start()
    let pid = try #require(plugin.pid)
    // Far more than the pipe (64 KiB) and the buffer hold.
    for _ in 0..<1000 { bus.publish(TimerChanged(status: timer.status)) }
    #expect(try await waitUntil { plugin.lastError != nil })
    #expect(Self.isRestarting(plugin.state), "\(plugin.state)")
    #expect(plugin.lastError == "stopped reading its input (4 KiB of events waiting)")
    #expect(kill(pid, 0) != 0, "the child is gone")
    plugin.stop()
    #expect(plugin.state == .stopped)
  }

  @Test func floodingIsCutOff() async throws {
    var limits = Self.quick
    limits.firstRestartDelay = 3600  // stays in `restarting` (see above)
    limits.maximumRestartDelay = 3600
    // Blank lines get no reply, so only the line count can trip.
    let plugin = try plugin("#!/bin/sh\nwhile :; do echo; done\n", limits: limits)
    plugin.start()
    #expect(try await waitUntil { plugin.lastError != nil })
    #expect(Self.isRestarting(plugin.state), "\(plugin.state)")
    #expect(plugin.lastError == "flooded its output (more than 1000 lines in a second)")
    plugin.stop()
  }

  @Test func stopKillsAChildThatIgnoresSIGTERM() async throws {
    let ready = directory + "/ready"
    let plugin = try plugin(
      "#!/bin/sh\ntrap '' TERM\ntouch \(ready)\nwhile :; do sleep 1; done\n", limits: Self.quick)
    plugin.start()
    let pid = try #require(plugin.pid)
    #expect(try await waitUntil { FileManager.default.fileExists(atPath: ready) })
    var stopped = false
    let began = Date()
    plugin.stop { stopped = true }
    #expect(plugin.state == .running, "still there until it exits")
    #expect(try await waitUntil { stopped })
    #expect(plugin.state == .stopped)
    #expect(Date().timeIntervalSince(began) >= 0.2, "after the grace period")
    #expect(kill(pid, 0) != 0)
  }

  @Test func aMissingProgramIsAFailureThatNamesIt() async throws {
    let context = PluginContext(
      id: "missing", config: ConfigSection(name: "plugin.missing", path: "t.ini", line: 1),
      log: Logger(label: "missing", minimumLevel: .error), events: bus, timer: timer)
    let plugin = ExternalPlugin(
      context: context, arguments: ["/nonexistent/grow-hook"], growVersion: "t",
      limits: Self.quick)
    plugin.start()
    #expect(plugin.lastError?.hasPrefix("cannot start '/nonexistent/grow-hook'") == true)
    plugin.stop()
    #expect(plugin.state == .stopped)
  }
}

@Suite struct ExecCommandLineTests {
  @Test func splitsLikeASimpleShellCommandWithoutExpanding() throws {
    let split = { (text: String) throws in try ExecCommandLine.split(text, home: "/home/me") }
    #expect(try split("  ~/bin/hook.py --verbose ") == ["/home/me/bin/hook.py", "--verbose"])
    #expect(try split(#"a 'b c' "d \"e\" \n" f\ g"#) == ["a", "b c", #"d "e" \n"#, "f g"])
    #expect(try split("~ ~x a~/b '~/q' \\~/r") == ["/home/me", "~x", "a~/b", "~/q", "~/r"])
    #expect(try split("x '' y") == ["x", "", "y"])
    #expect(try split("$(rm -rf /) ; | &&") == ["$(rm", "-rf", "/)", ";", "|", "&&"])
    #expect(throws: ExecSyntaxError.empty) { try split("   ") }
    #expect(throws: ExecSyntaxError.unterminatedQuote("\"")) { try split(#"a "b"#) }
    #expect(throws: ExecSyntaxError.trailingBackslash) { try split("a \\") }
  }

  @Test func errorsNameFileAndLine() throws {
    let section = ConfigSection(
      name: "plugin.x", path: "/c/config.ini", line: 3,
      entries: [ConfigEntry(key: "exec", value: "", line: 4)])
    #expect(throws: ConfigError.self) { try ExecCommandLine.arguments(of: section, home: nil) }
    do {
      _ = try ExecCommandLine.arguments(of: section, home: nil)
    } catch {
      #expect(error.description.hasPrefix("/c/config.ini:4: "))
      #expect(error.description.contains("exec is empty"))
    }
    let none = ConfigSection(name: "plugin.y", path: "/c/config.ini", line: 5)
    #expect(try ExecCommandLine.arguments(of: none, home: nil) == nil)
  }

  @Test func linesAreSplitAndOverlongOnesRefused() {
    var splitter = LineSplitter(limit: 4)
    #expect(splitter.feed(Array("ab\ncd".utf8)) == [.line(Array("ab".utf8))])
    #expect(splitter.feed(Array("e\nlonger than four".utf8)) == [.line(Array("cde".utf8))])
    #expect(splitter.feed(Array(" still\nok\n".utf8)) == [.tooLong(bytes: 22), .line([111, 107])])
    #expect(splitter.feed(Array("tail".utf8)) == [])
    #expect(splitter.finish() == [.line(Array("tail".utf8))])
  }
}

extension String {
  fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
