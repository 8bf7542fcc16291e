import Foundation
import GrowTestSupport
import Testing

/// The follower sleeps in one thread's epoll with one timerfd armed at the next displayed
/// change: once a second for a seconds template, never while idle. Under
/// libdispatch timers each second woke its manager thread, a worker and the main queue: about
/// 220 wake-ups a minute.
@Suite struct FollowerWakeUpTests {
  @Test func aSecondsTemplateWakesOnceASecond() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start", "--focus", "10m").status == 0)
    let follower = try BackgroundProcess(
      Binaries.grow, ["status", "--follow", "--template", "{remaining}"],
      environment: harness.environment)
    #expect(follower.waitUntil(timeout: 30) { lines(follower).count >= 2 })
    let seconds = 6.0
    // Voluntary switches: each is a thread that slept and was woken. make test runs suites in
    // parallel, and the preemptions that adds are the machine's, not the follower's; make
    // bench counts both kinds on a quiet machine.
    let (switches, threads) = ContextSwitches.during(
      seconds: seconds, of: follower.pid, voluntaryOnly: true)
    let perMinute = Double(switches) * 60 / seconds
    // One per second is 60; the bound is 65 a minute.
    // Counted over every thread: libdispatch's manager thread exists (the bus connection's
    // call timeouts are its timers) but sleeps; the countdown wakes the main thread only.
    #expect(perMinute <= 65, "\(switches) context switches in \(seconds) s over \(threads) threads")
    #expect(lines(follower).count >= 2 + Int(seconds) - 1, "it kept counting down")
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
}
