import Foundation
import GrowDBus
import GrowDaemon
import GrowPluginKit
import GrowTestSupport

/// Latency from a timer command on D-Bus to an external plugin reading the resulting event
/// from its stdin: a real `grow daemon` on a private bus, and a Python plugin (Debian's
/// /usr/bin/python3: a pyenv shim on PATH fails in the private HOME) that writes the
/// wall-clock time at which each event line arrives. An upper bound on "published event to
/// plugin": it also contains the D-Bus call that caused the event.
@MainActor
struct ExternalPluginBenchmark {
  struct Sample: Encodable {
    let events: Int
    let medianMilliseconds: Double
    let p90Milliseconds: Double
    /// SIGTERM to exit while a plugin sends 800 commands a second (the test,
    /// ExternalPluginTests, asserts the exit is the normal one, not how fast it is).
    var sigtermWhileFloodedMilliseconds: Double = 0
    var sigtermWhileFloodedStatus: Int32 = -1
  }

  let events: Int

  static let probe = """
    import sys, time
    out = open(sys.argv[1], "a", buffering=1)
    for line in sys.stdin:
        if '"phase-paused"' in line or '"phase-resumed"' in line:
            out.write(f"{time.time_ns()}\\n")
    """

  func run() throws -> Sample {
    let bus = try PrivateSessionBus()
    defer { bus.stop() }
    let directory = bus.directory.path
    let probe = directory + "/probe.py"
    let results = directory + "/arrivals"
    try Self.probe.write(toFile: probe, atomically: true, encoding: .utf8)
    _ = FileManager.default.createFile(atPath: results, contents: nil)
    let configDirectory = bus.environment["XDG_CONFIG_HOME", default: directory] + "/grow"
    try FileManager.default.createDirectory(
      atPath: configDirectory, withIntermediateDirectories: true)
    try """
    [plugins]
    enable = probe

    [plugin.probe]
    exec = /usr/bin/python3 -u \(probe) \(results)
    """.write(toFile: configDirectory + "/config.ini", atomically: true, encoding: .utf8)

    let daemon = try BackgroundProcess(
      Binaries.grow, ["daemon"], environment: bus.environment)
    defer { daemon.kill() }
    let connection = try BusConnection.connect(address: bus.address, attachToLoop: false)
    func call(_ member: String, _ arguments: [BusValue] = []) throws {
      let message = try BusMessage.methodCall(
        destination: GrowBusAPI.busName, path: GrowBusAPI.objectPath,
        interface: GrowBusAPI.timerInterface, member: member, arguments: arguments)
      _ = try connection.call(message)
    }
    guard daemon.waitUntil(timeout: 10, { (try? call("GetStatus")) != nil }) else {
      throw HarnessError("grow daemon did not start: \(daemon.stderr)")
    }
    try call("Start", [.string("")])
    // Let the plugin start and read its hello line.
    Thread.sleep(forTimeInterval: 1)

    var latencies: [Double] = []
    for index in 0..<events {
      let before = Self.wallClockNanoseconds()
      try call(index % 2 == 0 ? "Pause" : "Resume")
      var arrival: UInt64?
      let deadline = Date().addingTimeInterval(5)
      while arrival == nil, Date() < deadline {
        let lines = ((try? String(contentsOfFile: results, encoding: .utf8)) ?? "")
          .split(separator: "\n")
        if lines.count > index { arrival = UInt64(lines[index]) }
        if arrival == nil { usleep(200) }
      }
      guard let arrival else { throw HarnessError("the probe plugin read no event \(index)") }
      latencies.append(Double(Int64(arrival) - Int64(before)) / 1e6)
    }
    let sorted = latencies.sorted()
    var sample = Sample(
      events: events, medianMilliseconds: median(latencies),
      p90Milliseconds: sorted[min(sorted.count - 1, sorted.count * 9 / 10)])
    (sample.sigtermWhileFloodedMilliseconds, sample.sigtermWhileFloodedStatus) =
      try sigtermWhileFlooded()
    return sample
  }

  static let hammer = """
    import sys, threading, time
    threading.Thread(target=lambda: [None for _ in sys.stdin], daemon=True).start()
    line = '{"command":"toggle"}\\n' * 64
    while True:
        sys.stdout.write(line); sys.stdout.flush(); time.sleep(0.08)
    """

  /// A daemon whose plugin sends toggles just under the flood limit for 3 s, then SIGTERM:
  /// milliseconds until it exited, and its status (0: the normal way).
  private func sigtermWhileFlooded() throws -> (Double, Int32) {
    let bus = try PrivateSessionBus()
    defer { bus.stop() }
    let directory = bus.directory.path
    let hammer = directory + "/hammer.py"
    try Self.hammer.write(toFile: hammer, atomically: true, encoding: .utf8)
    let configDirectory = bus.environment["XDG_CONFIG_HOME", default: directory] + "/grow"
    try FileManager.default.createDirectory(
      atPath: configDirectory, withIntermediateDirectories: true)
    try "[plugin.hammer]\nexec = /usr/bin/python3 -u \(hammer)\n".write(
      toFile: configDirectory + "/config.ini", atomically: true, encoding: .utf8)
    let daemon = try BackgroundProcess(Binaries.grow, ["daemon"], environment: bus.environment)
    defer { daemon.kill() }
    guard daemon.waitUntil(timeout: 30, { daemon.stderr.contains("grow[hammer] info: started") })
    else { throw HarnessError("grow daemon did not start the plugin: \(daemon.stderr)") }
    Thread.sleep(forTimeInterval: 3)
    let before = MonotonicClock.now
    guard let status = daemon.terminate(timeout: 60) else {
      throw HarnessError("grow daemon did not exit 60 s after SIGTERM")
    }
    return ((MonotonicClock.now - before) * 1000, status)
  }

  static func wallClockNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
  }
}
