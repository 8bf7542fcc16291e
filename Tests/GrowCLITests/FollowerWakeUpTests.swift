import Foundation
import GrowTestSupport
import Testing

/// The follower sleeps in one thread's epoll with one timerfd armed at the next displayed
/// change: once a second for a seconds template, never while idle. Under
/// libdispatch timers each second woke its manager thread, a worker and the main queue: about
/// 220 wake-ups a minute.
@Suite struct FollowerWakeUpTests {
  @Test func aSecondsTemplateWakesOnceASecond() throws {
    let (harness, follower) = try followingACountdown()
    defer { withExtendedLifetime(harness) {} }
    let seconds = 6.0
    // Voluntary switches: each is a thread that slept and was woken. make test runs suites in
    // parallel, and the preemptions that adds are the machine's, not the follower's; make
    // bench counts both kinds on a quiet machine.
    let (switches, threads) = ContextSwitches.during(
      seconds: seconds, of: follower.pid, voluntaryOnly: true)
    let perMinute = Double(switches) * 60 / seconds
    // One per second is 60; the bound is 65 a minute.
    // Counted over every thread; there is only one (`aFollowerIsOneThread`).
    #expect(perMinute <= 65, "\(switches) context switches in \(seconds) s over \(threads) threads")
    #expect(lines(follower).count >= 2 + Int(seconds) - 1, "it kept counting down")
  }

  /// Its countdown, its bus connection (calls, their timeouts, signals) and its watches on
  /// the bar all sleep in one epoll on the main thread: libdispatch starts no thread for it.
  @Test func aFollowerIsOneThread() throws {
    let (harness, follower) = try followingACountdown()
    defer { withExtendedLifetime(harness) {} }
    let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(follower.pid)/task")
    #expect(threads.count == 1, "threads: \(ContextSwitches.perThread(of: follower.pid))")
  }

  @Test func anIdleFollowerNeverWakes() throws {
    let harness = try DaemonHarness()
    let follower = try BackgroundProcess(
      Binaries.grow, ["status", "--follow", "--template", "{remaining}"],
      environment: harness.environment)
    #expect(follower.waitUntil(timeout: 30) { lines(follower).count >= 1 })
    let (switches, _) = ContextSwitches.during(seconds: 3, of: follower.pid)
    #expect(switches == 0)
  }

  /// A follower showing seconds of a running focus phase, once it printed two lines; the
  /// harness keeps the daemon running.
  private func followingACountdown() throws -> (DaemonHarness, BackgroundProcess) {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start", "--focus", "10m").status == 0)
    let follower = try BackgroundProcess(
      Binaries.grow, ["status", "--follow", "--template", "{remaining}"],
      environment: harness.environment)
    #expect(follower.waitUntil(timeout: 30) { lines(follower).count >= 2 })
    return (harness, follower)
  }
}
