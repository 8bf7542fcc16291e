import Foundation
import GrowTestSupport

/// The loop-latency probe of the stress faults: a client of its own on the soak's bus that calls
/// `GetStatus` on `org.grow.Grow1` every `interval` from a thread of its own, and the
/// daemon's memory (VmRSS) and open descriptors about once a second. Each answer's latency is filed under the
/// fault the soak says is under way (`fault`), so the report has figures per kind of fault.
///
/// A call that gets no answer within `timeout` counts as `timeout` (and the probe connects
/// anew, as a late reply could be half read). A call the bus answers for the daemon (no one
/// owns the name: the daemon was killed) is no sample: there is no loop to measure. Answers
/// from a daemon that is still starting (`daemonPID` is nil until the soak has seen it
/// answer) go under `starting`: they time its start-up, not a fault.
public final class StatusProbe: @unchecked Sendable {
  public static let betweenFaults = "between faults"
  public static let starting = "daemon starting"

  private struct State {
    var fault: String?
    var daemonPID: Int32?
    var running = true
    var latencies: [String: [Double]] = [:]
    var timeouts: [String: Int] = [:]
    var absent = 0
    /// The longest time from a call that went unanswered to the next answer, per fault.
    var longestSilence: [String: Double] = [:]
    var rssMaxKiB = 0
    var rssFirstKiB: Int?
    var descriptorsMax = 0
    var descriptorsFirst: Int?
    var rssMaxKiBByFault: [String: Int] = [:]
    var descriptorsMaxByFault: [String: Int] = [:]
    /// The slowest answer (a call that timed out counts as `timeout`) since `markWindow()`.
    var windowSlowest = 0.0
    var windowTimeouts = 0
    var windowSlowestSent = Date.distantPast
  }

  private let address: String
  private let interval: TimeInterval
  public let timeout: TimeInterval
  private let state = LockedBox(State())
  private let done = DispatchSemaphore(value: 0)

  public init(address: String, interval: TimeInterval = 0.075, timeout: TimeInterval = 1) {
    self.address = address
    self.interval = interval
    self.timeout = timeout
  }

  /// The fault under way, as `FaultKind.rawValue` (or another label); nil between faults.
  public var fault: String? {
    get { state.current.fault }
    set { state.withLock { $0.fault = newValue } }
  }

  /// The running daemon, for its memory; nil while it is down.
  public var daemonPID: Int32? {
    get { state.current.daemonPID }
    set { state.withLock { $0.daemonPID = newValue } }
  }

  /// Starts a window of calls for `window()`: one fault's figures, for its progress line.
  public func markWindow() {
    state.withLock {
      $0.windowSlowest = 0
      $0.windowTimeouts = 0
    }
  }

  /// The slowest answer in milliseconds and the calls that timed out since `markWindow()`.
  public func window() -> (slowestMilliseconds: Double, timeouts: Int, sent: Date) {
    let state = state.current
    return (state.windowSlowest, state.windowTimeouts, state.windowSlowestSent)
  }

  public func start() {
    let thread = Thread { [self] in
      run()
      done.signal()
    }
    thread.name = "soak status probe"
    thread.start()
  }

  /// Stops the thread and returns what it measured.
  public func stop() -> StatusProbeFigures {
    state.withLock { $0.running = false }
    _ = done.wait(timeout: .now() + timeout + 2)
    let state = state.current
    var figures = StatusProbeFigures()
    for (fault, latencies) in state.latencies {
      figures.byFault[fault] = LatencySummary(
        milliseconds: latencies, timeouts: state.timeouts[fault] ?? 0,
        longestSilenceMilliseconds: state.longestSilence[fault] ?? 0)
    }
    figures.callsWithoutDaemon = state.absent
    figures.rssMaxKiB = state.rssMaxKiB
    figures.rssFirstKiB = state.rssFirstKiB ?? 0
    figures.descriptorsMax = state.descriptorsMax
    figures.descriptorsFirst = state.descriptorsFirst ?? 0
    figures.rssMaxKiBByFault = state.rssMaxKiBByFault
    figures.descriptorsMaxByFault = state.descriptorsMaxByFault
    return figures
  }

  private func run() {
    var client: RawBusClient?
    var lastMemoryReading = Date.distantPast
    var silentSince: Date?
    while state.current.running {
      let sent = Date()
      let startingAtSend = state.current.daemonPID == nil
      if client == nil { client = try? RawBusClient(address: address, timeout: timeout) }
      var latency: Double?
      var timedOut = false
      if let bus = client {
        do {
          let outcome = try bus.call(
            path: "/org/grow/Grow1", interface: "org.grow.Grow1.Timer", member: "GetStatus",
            destination: "org.grow.Grow1")
          switch outcome {
          case .returned:
            latency = Date().timeIntervalSince(sent) * 1000
          case .error(let name, _) where Self.noDaemon.contains(name):
            break
          case .error:
            // The daemon answered with an error: still an answer from its loop.
            latency = Date().timeIntervalSince(sent) * 1000
          case .disconnected:
            client = nil
          }
        } catch {
          timedOut = true
          client = nil
        }
      }
      let now = Date()
      state.withLock { state in
        let starting = startingAtSend || state.daemonPID == nil
        let label = starting ? Self.starting : state.fault ?? Self.betweenFaults
        if timedOut {
          state.latencies[label, default: []].append(timeout * 1000)
          state.timeouts[label, default: 0] += 1
          state.windowTimeouts += 1
          if timeout * 1000 > state.windowSlowest { state.windowSlowestSent = sent }
          state.windowSlowest = max(state.windowSlowest, timeout * 1000)
          if silentSince == nil { silentSince = sent }
        } else if let latency {
          state.latencies[label, default: []].append(latency)
          if !starting, latency > state.windowSlowest {
            state.windowSlowest = latency
            state.windowSlowestSent = sent
          }
          if let since = silentSince {
            let silence = now.timeIntervalSince(since) * 1000
            state.longestSilence[label] = max(state.longestSilence[label] ?? 0, silence)
            silentSince = nil
          }
        } else {
          state.absent += 1
          silentSince = nil
        }
      }
      if now.timeIntervalSince(lastMemoryReading) >= 1 {
        lastMemoryReading = now
        readMemory()
      }
      let pause = interval - Date().timeIntervalSince(sent)
      if pause > 0 { Thread.sleep(forTimeInterval: pause) }
    }
  }

  /// What the bus answers when no one owns the name, or the owner went away mid-call.
  private static let noDaemon: Set<String> = [
    "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
    "org.freedesktop.DBus.Error.NoReply",
  ]

  /// The daemon's resident set and its open descriptors (`/proc/PID/fd`), overall and per
  /// fault.
  private func readMemory() {
    guard let pid = daemonPID,
      let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
      let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return }
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?
      .count
    state.withLock { state in
      let label = state.fault ?? Self.betweenFaults
      state.rssMaxKiB = max(state.rssMaxKiB, kib)
      if state.rssFirstKiB == nil { state.rssFirstKiB = kib }
      state.rssMaxKiBByFault[label] = max(state.rssMaxKiBByFault[label] ?? 0, kib)
      guard let descriptors else { return }
      state.descriptorsMax = max(state.descriptorsMax, descriptors)
      if state.descriptorsFirst == nil { state.descriptorsFirst = descriptors }
      state.descriptorsMaxByFault[label] = max(state.descriptorsMaxByFault[label] ?? 0, descriptors)
    }
  }
}

/// `GetStatus` latencies of one kind of fault, in milliseconds.
public struct LatencySummary: Codable, Equatable, Sendable {
  public var samples = 0
  public var p50 = 0.0
  public var p99 = 0.0
  public var max = 0.0
  /// Calls that got no answer within the probe's timeout (counted at the timeout).
  public var timeouts = 0
  /// The longest stretch from a call that went unanswered to the next answer: how long the
  /// loop stood still, beyond what the timeout caps.
  public var longestSilenceMilliseconds = 0.0

  public init() {}

  public init(milliseconds: [Double], timeouts: Int, longestSilenceMilliseconds: Double = 0) {
    let sorted = milliseconds.sorted()
    samples = sorted.count
    p50 = Self.percentile(0.50, of: sorted)
    p99 = Self.percentile(0.99, of: sorted)
    max = sorted.last ?? 0
    self.timeouts = timeouts
    self.longestSilenceMilliseconds = longestSilenceMilliseconds
  }

  /// The nearest-rank percentile: the smallest sample that `fraction` of all are at or
  /// below.
  static func percentile(_ fraction: Double, of sorted: [Double]) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
  }
}

/// What the probe measured over a run.
public struct StatusProbeFigures: Codable, Equatable, Sendable {
  public var byFault: [String: LatencySummary] = [:]
  /// Calls the bus answered because no daemon owned the name (after kill -9).
  public var callsWithoutDaemon = 0
  /// The daemon's largest resident set, and its first reading, in KiB.
  public var rssMaxKiB = 0
  public var rssFirstKiB = 0
  /// The daemon's open descriptors: most and first reading.
  public var descriptorsMax = 0
  public var descriptorsFirst = 0
  /// The largest resident set (KiB) and descriptor count seen during each fault's label.
  public var rssMaxKiBByFault: [String: Int] = [:]
  public var descriptorsMaxByFault: [String: Int] = [:]

  public init() {}
}
