import Foundation

/// The daemon's loop as a separate client sees it while something hammers it: GetStatus every
/// 50 ms over a connection of its own (a new one after a call that got no answer within 5 s),
/// with the daemon's descriptors and memory sampled along. For tests (every call answers) and
/// `grow-bench` (the figures).
public struct GetStatusProbe: CustomStringConvertible, Sendable {
  public private(set) var latencies: [TimeInterval] = []
  public private(set) var failures: [String] = []
  public private(set) var descriptors: [Int] = []
  public private(set) var rssMiB: [Double] = []

  /// Calls GetStatus every 50 ms for `seconds`. A call unanswered after `callTimeout` is a
  /// failure: generous (20 s), because this catches a loop that freezes, not one that is slow
  /// on a busy machine (latencies are printed; `make soak` and `make bench` judge them).
  public init(_ harness: DaemonHarness, seconds: TimeInterval, callTimeout: TimeInterval = 20)
    throws
  {
    let address = harness.bus.address
    var client = try RawBusClient(address: address, timeout: callTimeout)
    let pid = harness.daemon?.pid ?? 0
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
      let start = Date()
      do {
        let outcome = try client.call(
          path: "/org/grow/Grow1", interface: "org.grow.Grow1.Timer", member: "GetStatus",
          destination: "org.grow.Grow1")
        if outcome == .returned {
          latencies.append(Date().timeIntervalSince(start))
        } else {
          failures.append("\(outcome)")
          // A connection the bus closed stays closed: the next call needs a new one, or one
          // lost connection reads as the daemon never answering again.
          if outcome == .disconnected {
            client = try RawBusClient(address: address, timeout: callTimeout)
          }
        }
      } catch {
        failures.append("\(error)")
        client = try RawBusClient(address: address, timeout: callTimeout)
      }
      descriptors.append(Self.descriptors(of: pid))
      rssMiB.append((try? harness.daemonMemoryMiB()) ?? 0)
      Thread.sleep(forTimeInterval: 0.05)
    }
  }

  /// Open descriptors of `pid`, from /proc/PID/fd.
  public static func descriptors(of pid: Int32) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
  }

  /// Nearest-rank percentile of the answered calls, in milliseconds (-1 when none answered).
  public func milliseconds(_ fraction: Double) -> Double {
    let sorted = latencies.sorted()
    guard !sorted.isEmpty else { return -1 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] * 1000
  }

  public var description: String {
    "GetStatus p50 \(Int(milliseconds(0.5))) ms, p99 \(Int(milliseconds(0.99))) ms, max "
      + "\(Int(milliseconds(1))) ms, \(latencies.count) answered, \(failures.count) failed "
      + "\(failures.prefix(3)); descriptors max \(descriptors.max() ?? 0); "
      + "RSS max \(Int(rssMiB.max() ?? 0)) MiB"
  }

  /// Runs `body` again and again on a thread of its own until the returned closure is called
  /// (which waits for the last run to end).
  public static func flood(_ body: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
    let stop = LockedBox(false)
    let done = DispatchSemaphore(value: 0)
    Thread {
      while !stop.current { body() }
      done.signal()
    }.start()
    return {
      stop.withLock { $0 = true }
      done.wait()
    }
  }
}
