import Foundation
import GrowConfig
import GrowLoop
@_spi(GrowHost) import GrowPluginKit
import GrowPluginTesting
import GrowTestSupport
import Testing

@testable import GrowCore
@testable import GrowDaemon

/// `ExternalPlugin` on the test kit's manual loop: the child is a real process with real pipes,
/// but the host's time (backoff, grace periods, flood windows, log rate limits) only moves when
/// the test says so. The standard limits then run in milliseconds, and the wall clock can be
/// set back as a person or NTP would.
@MainActor @Suite struct ExternalPluginManualLoopTests {
  let loop = ManualLoop()
  let bus = EventBus()
  let logs = LogCapture()
  let timer: FocusTimer
  let directory: String

  init() throws {
    timer = FocusTimer(deck: .standard, bus: bus, time: loop)
    directory = NSTemporaryDirectory() + "grow-manual-loop-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  }

  func plugin(_ script: String, limits: ExternalPlugin.Limits = .standard) throws
    -> ExternalPlugin
  {
    let path = directory + "/plugin"
    try writeExecutable(script, to: path)
    let context = PluginContext(
      id: "test", config: ConfigSection(name: "plugin.test", path: "test.ini", line: 1),
      log: logs.logger(label: "test"), events: bus, timer: timer, loop: loop)
    return ExternalPlugin(context: context, arguments: [path], growVersion: "test", limits: limits)
  }

  /// Tells the loop's watches what the kernel says is ready now (pipes, the pidfd), waiting up
  /// to `milliseconds` for something to be; then runs what that made due. The clocks stay.
  func deliverReadiness(waitingUpTo milliseconds: Int32 = 0) {
    var descriptors = loop.watchedDescriptors.map {
      pollfd(fd: $0, events: Int16(POLLIN | POLLOUT), revents: 0)
    }
    guard poll(&descriptors, nfds_t(descriptors.count), milliseconds) > 0 else { return }
    for descriptor in descriptors where descriptor.revents != 0 {
      let events = Int32(descriptor.revents)
      var ready: FileWatcher.Readiness = []
      if events & (POLLIN | POLLHUP | POLLERR) != 0 { ready.insert(.readable) }
      if events & (POLLOUT | POLLERR) != 0 { ready.insert(.writable) }
      if events & (POLLHUP | POLLERR) != 0 { ready.insert(.hangUp) }
      loop.makeReady(descriptor.fd, ready)
    }
    loop.runDue()
  }

  /// Delivers readiness until `condition` holds: the child runs in real time, so this waits
  /// for it (30 s at most, for a loaded machine) without moving the loop's clocks.
  func waitFor(_ what: String, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(30)
    while !condition() {
      guard Date() < deadline else {
        throw HarnessError(
          "timed out waiting for \(what); log:\n\(logs.lines.joined(separator: "\n"))")
      }
      deliverReadiness(waitingUpTo: 20)
    }
  }

  /// A running plugin whose child has written `count` blank lines (which get no reply) to its
  /// stdout and then idles; nothing of them is read yet.
  func pluginThatWroteBlankLines(_ count: Int) throws -> ExternalPlugin {
    let plugin = try plugin(
      "#!/bin/sh\nhead -c \(count) /dev/zero | tr '\\0' '\\n'\ntouch \(directory)/written\n"
        + "exec sleep 3600\n")
    plugin.start()
    try waitForFile("written")
    return plugin
  }

  /// Stops the plugin and waits for its child to be gone.
  func stop(_ plugin: ExternalPlugin) throws {
    var stopped = false
    plugin.stop { stopped = true }
    loop.advance(by: ExternalPlugin.Limits.standard.stopGracePeriod)
    try waitFor("the plugin to stop") { stopped }
  }

  /// Waits for the child to create file `name`, delivering nothing meanwhile: what it wrote
  /// stays in its pipes until the test reads it.
  func waitForFile(_ name: String) throws {
    let deadline = Date().addingTimeInterval(30)
    while !FileManager.default.fileExists(atPath: "\(directory)/\(name)") {
      guard Date() < deadline else { throw HarnessError("timed out waiting for \(name)") }
      usleep(5_000)
    }
  }

  /// A plugin that writes 512 lines a second is well under the flood limit (1,000 a second),
  /// also when the wall clock is set back meanwhile: the window is measured on the monotonic
  /// clock. On the wall clock it never reset after the clock went back, and the plugin was cut
  /// off as a flood once it had written 1,000 lines in all.
  @Test func settingTheClockBackDoesNotMakeASteadyPluginAFlood() throws {
    let plugin = try pluginThatWroteBlankLines(1536)
    // Each turn reads 512 bytes of one pipe: here 512 lines.
    deliverReadiness()
    loop.jumpWallClock(by: -3600)
    for _ in 0..<2 {
      loop.advance(by: 1.5)
      deliverReadiness()
    }
    #expect(plugin.state == .running)
    #expect(plugin.lastError == nil)
    #expect(!logs.contains("flooded"), "\(logs.lines)")
    try stop(plugin)
  }

  /// More than 1,000 lines within a second of the monotonic clock is a flood: the child is
  /// killed and restarted after the first backoff.
  @Test func moreThanAThousandLinesInASecondIsCutOff() throws {
    let plugin = try pluginThatWroteBlankLines(1100)
    for _ in 0..<3 {
      loop.advance(by: 0.2)
      deliverReadiness()
    }
    try waitFor("the killed child to be restarted later") {
      if case .restarting = plugin.state { true } else { false }
    }
    #expect(plugin.state == .restarting(after: 1))
    #expect(plugin.lastError == "flooded its output (more than 1000 lines in a second)")
    try stop(plugin)
  }

  /// The log rate limit refills with time on the monotonic clock. Measured on the wall clock,
  /// setting the clock back an hour drove its tokens deep below zero, and nothing the plugin
  /// wrote to stderr was logged for hours.
  @Test func settingTheClockBackKeepsAPluginsStderrInTheLog() throws {
    let plugin = try plugin(
      "#!/bin/sh\necho first >&2\nread -r hello\nread -r event\necho second >&2\n"
        + "exec sleep 3600\n")
    plugin.start()
    try waitFor("the first line on stderr") { plugin.lastOutput == ["first"] }
    #expect(logs.messages(at: .info).contains("first"))
    loop.jumpWallClock(by: -3600)
    loop.advance(by: 10)
    bus.publish(TimerChanged(status: timer.status))
    try waitFor("the second line on stderr") { plugin.lastOutput == ["first", "second"] }
    #expect(logs.messages(at: .info).contains("second"), "\(logs.lines)")
    try stop(plugin)
  }

  /// A child that keeps exiting is restarted after 1, 2, 4 and 8 seconds, never sooner, and
  /// given up on at the fifth failure.
  @Test func restartsBackOffAndGiveUpAtTheFifthFailure() throws {
    let plugin = try plugin("#!/bin/sh\nexit 7\n")
    plugin.start()
    for delay: TimeInterval in [1, 2, 4, 8] {
      try waitFor("a restart to be planned") { plugin.state != .running }
      #expect(plugin.state == .restarting(after: delay))
      loop.advance(by: delay - 0.01)
      #expect(plugin.state == .restarting(after: delay), "not restarted before its delay")
      loop.advance(by: 0.01)
      #expect(plugin.state == .running, "restarted \(delay) s after the failure")
    }
    try waitFor("the plugin to be given up on") {
      if case .failed = plugin.state { true } else { false }
    }
    #expect(plugin.state == .failed(reason: "exited with status 7"))
    #expect(logs.contains("giving up after 5 failures"), "\(logs.lines)")
  }

  /// A run of a minute (`healthyRun`) counts as healthy: the next restart waits 1 s again,
  /// however the wall clock was set meanwhile.
  @Test func aMinuteRunningStartsTheBackoffAgainEvenWithTheClockSetBack() throws {
    // The first two runs exit at once; the third waits for an event first.
    let plugin = try plugin(
      "#!/bin/sh\nruns=$(cat \(directory)/runs 2>/dev/null || echo 0)\n"
        + "echo $((runs + 1)) >\(directory)/runs\n"
        + "if [ \"$runs\" -ge 2 ]; then read -r hello; read -r event; fi\nexit 3\n")
    plugin.start()
    for delay: TimeInterval in [1, 2] {
      try waitFor("a restart to be planned") { plugin.state != .running }
      #expect(plugin.state == .restarting(after: delay))
      loop.advance(by: delay)
    }
    loop.advance(by: 30)
    loop.jumpWallClock(by: -3600)
    loop.advance(by: 30)
    bus.publish(TimerChanged(status: timer.status))
    try waitFor("the third run to end") { plugin.state != .running }
    #expect(plugin.state == .restarting(after: 1), "a healthy run resets the backoff")
    try stop(plugin)
  }

  /// `stop()` sends SIGTERM, and SIGKILL only once the grace period (2 s) has passed on the
  /// loop's clock.
  @Test func stopKillsAChildThatIgnoresSIGTERMAfterTheGracePeriod() throws {
    let plugin = try plugin(
      "#!/bin/sh\ntrap '' TERM\ntouch \(directory)/ready\nexec sleep 3600\n")
    plugin.start()
    let pid = try #require(plugin.pid)
    try waitForFile("ready")
    var stopped = false
    plugin.stop { stopped = true }
    loop.advance(by: 1.9)
    deliverReadiness(waitingUpTo: 100)
    #expect(!stopped && plugin.state == .running, "still there within the grace period")
    #expect(kill(pid, 0) == 0)
    loop.advance(by: 0.1)
    try waitFor("the child to be killed") { stopped }
    #expect(plugin.state == .stopped)
    #expect(logs.contains("after SIGTERM; killing it"), "\(logs.lines)")
    #expect(kill(pid, 0) != 0)
  }
}

extension ExternalPluginManualLoopTests {
  /// The lines of file `name` in the test's directory (none while it does not exist).
  func lines(of name: String) -> [Substring] {
    let text = (try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)) ?? ""
    return text.split(separator: "\n")
  }

  /// The host never runs two instances of a plugin at once: a reloaded external plugin whose
  /// program ignores SIGTERM starts again only once the old process is gone, killed when the
  /// grace period (2 s on the loop's clock) has passed.
  @Test func aReloadedPluginStartsAgainOnlyOnceItsOldProcessIsGone() throws {
    let path = directory + "/stubborn"
    try writeExecutable(
      "#!/bin/sh\ntrap '' TERM\necho $$ >>\(directory)/pids\nexec sleep 3600\n", to: path)
    let host = PluginHost(
      directories: PluginDirectories(builtIn: [], user: []), log: logs.logger(label: "host"),
      loop: loop
    ) { [bus, timer, logs, loop] id, section in
      PluginContext(
        id: id, config: section, log: logs.logger(label: id), events: bus, timer: timer,
        loop: loop)
    }
    host.unsubscribe = { [bus] id in bus.unsubscribeAll(of: id) }
    host.start(with: try GrowConfig.parse("[plugin.stubborn]\nexec = \(path)\n", path: "t.ini"))
    #expect(host.record("stubborn")?.state == .running)
    try waitFor("the first process") { lines(of: "pids").count == 1 }
    let first = try #require(lines(of: "pids").first.flatMap { Int32($0) })

    try host.reload("stubborn")
    loop.advance(by: 1.9)
    deliverReadiness(waitingUpTo: 100)
    #expect(lines(of: "pids").count == 1, "no second process while the first runs")
    #expect(kill(first, 0) == 0)
    loop.advance(by: 0.1)
    try waitFor("the second process") { lines(of: "pids").count == 2 }
    #expect(kill(first, 0) != 0, "the first is gone")
    #expect(host.record("stubborn")?.state == .running)

    var stopped = false
    host.stopAll { stopped = true }
    loop.advance(by: 2)
    try waitFor("every plugin to stop") { stopped }
  }
}
