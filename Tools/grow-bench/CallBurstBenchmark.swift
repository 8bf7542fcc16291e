import Foundation
import GrowConfig
import GrowTestSupport

/// Call bursts from other local clients (CallBurstTests) against a real
/// `grow daemon`, while GetStatusProbe calls GetStatus every 50 ms from a connection of its
/// own: pipelined Timer.Toggle and Extend, ListCards of 1,000 cards (the most a config may have), and a flood of
/// notification-server signals from a client that is not the server (the daemon's CPU).
struct CallBurstBenchmark {
  struct Row: Encodable {
    let burst: String
    let sent: Int
    let calls: Int
    let failedCalls: Int
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    let maxMilliseconds: Double
    /// PropertiesChanged signals per call of the burst (Toggle and Extend only).
    let signalsPerCall: Double?
  }

  struct Sample: Encodable {
    var rows: [Row] = []
    /// ListCards of 1,000 cards (the most a config may have) as a client sees it: the first call after the daemon
    /// started (the reply is encoded then) and the median of the next ones.
    var listCardsFirstSeconds = 0.0
    var listCardsMedianSeconds = 0.0
    var rogueSignalsSent = 0
    var rogueSeconds = 0.0
    /// The daemon's CPU time during the rogue's flood, as a share of one core.
    var rogueDaemonCPUShare = 0.0
  }

  let seconds: TimeInterval
  static let cards = GrowConfig.maximumCards

  func run() throws -> Sample {
    var sample = Sample()
    do {
      let harness = try DaemonHarness()
      defer { harness.daemon?.kill() }
      guard try harness.grow("start").status == 0 else { throw HarnessError("grow start") }
      let watcher = try RawBusClient(address: harness.bus.address, timeout: 60)
      try watcher.addMatch(
        "type='signal',sender='org.grow.Grow1',interface='org.freedesktop.DBus.Properties',"
          + "member='PropertiesChanged'")
      let sent = LockedBox(0)
      let address = harness.bus.address
      let stop = GetStatusProbe.flood {
        guard let client = try? RawBusClient(address: address, timeout: 60) else { return }
        let calls = (0..<1000).flatMap { _ in
          [
            RawBusClient.MethodCall.timer("Toggle"),
            RawBusClient.MethodCall.timer("Extend", seconds: 1),
          ]
        }
        _ = try? client.pipeline(calls)
        sent.withLock { $0 += calls.count }
      }
      let probe = try GetStatusProbe(harness, seconds: seconds)
      stop()
      let signals = try Self.signalsUntilBarrier(watcher)
      let total = sent.current
      sample.rows.append(
        row(
          "Toggle+Extend, 2,000 pipelined", sent: total, probe,
          signalsPerCall: total == 0 ? nil : Double(signals) / Double(total)))
    }
    do {
      let config =
        "[timer]\nfocus = 25m\n"
        + (0..<Self.cards).map { "[card.c\($0)]\nfocus = 1m\n" }.joined()
      let harness = try DaemonHarness(config: config)
      defer { harness.daemon?.kill() }
      let client = try RawBusClient(address: harness.bus.address, timeout: 120)
      var timings: [TimeInterval] = []
      for _ in 0..<6 {
        let start = Date()
        guard
          try client.call(
            path: "/org/grow/Grow1", interface: "org.grow.Grow1.Timer", member: "ListCards",
            destination: "org.grow.Grow1") == .returned
        else { throw HarnessError("ListCards failed") }
        timings.append(Date().timeIntervalSince(start))
      }
      sample.listCardsFirstSeconds = timings[0]
      sample.listCardsMedianSeconds = timings.dropFirst().sorted()[timings.count / 2 - 1]
      let sent = LockedBox(0)
      let address = harness.bus.address
      let stop = GetStatusProbe.flood {
        guard let client = try? RawBusClient(address: address, timeout: 120) else { return }
        _ = try? client.pipeline(
          Array(repeating: RawBusClient.MethodCall.timer("ListCards"), count: 4))
        sent.withLock { $0 += 4 }
      }
      let probe = try GetStatusProbe(harness, seconds: seconds)
      stop()
      sample.rows.append(row("ListCards, 1,000 cards", sent: sent.current, probe))
    }
    do {
      let harness = try DaemonHarness()
      defer { harness.daemon?.kill() }
      let pid = harness.daemon?.pid ?? 0
      _ = try harness.status()
      let before = Self.cpuSeconds(of: pid)
      let start = Date()
      let flood = try harness.run(
        "/usr/bin/python3", ["-c", Self.rogue(seconds: seconds)], timeout: seconds + 60)
      // What the bus forwarded is handled by now: GetStatus comes after it.
      _ = try harness.status()
      sample.rogueSeconds = Date().timeIntervalSince(start)
      sample.rogueDaemonCPUShare = (Self.cpuSeconds(of: pid) - before) / sample.rogueSeconds
      sample.rogueSignalsSent =
        Int(flood.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
    return sample
  }

  /// A client that is not the notification server sending its ActionInvoked to everyone for
  /// `seconds`; prints how many.
  static func rogue(seconds: TimeInterval) -> String {
    """
    import dbus, dbus.lowlevel, time
    bus = dbus.SessionBus()
    end = time.monotonic() + \(seconds)
    sent = 0
    while time.monotonic() < end:
        for _ in range(200):
            signal = dbus.lowlevel.SignalMessage(
                '/org/freedesktop/Notifications', 'org.freedesktop.Notifications', 'ActionInvoked')
            signal.append(dbus.UInt32(sent), dbus.String('start-break'))
            bus.send_message(signal)
            sent += 1
        bus.flush()
    print(sent)
    """
  }

  /// The PropertiesChanged signals `watcher` received, counted up to the reply of a GetStatus
  /// it sends now (the daemon sends what it gathered before answering a later call).
  static func signalsUntilBarrier(_ watcher: RawBusClient) throws -> Int {
    let barrier = try watcher.send([RawBusClient.MethodCall.timer("GetStatus")])[0]
    var signals = 0
    while let message = try watcher.receive(), message.replySerial != barrier {
      if message.member == "PropertiesChanged" { signals += 1 }
    }
    return signals
  }

  /// User and system CPU seconds of `pid` so far (/proc/PID/stat, clock ticks).
  static func cpuSeconds(of pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the command: state is field 3, utime 14 and stime 15 (1-based, from the pid).
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12])
    else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }

  private func row(
    _ burst: String, sent: Int, _ probe: GetStatusProbe, signalsPerCall: Double? = nil
  ) -> Row {
    Row(
      burst: burst, sent: sent, calls: probe.latencies.count, failedCalls: probe.failures.count,
      p50Milliseconds: probe.milliseconds(0.5), p99Milliseconds: probe.milliseconds(0.99),
      maxMilliseconds: probe.milliseconds(1), signalsPerCall: signalsPerCall)
  }
}
