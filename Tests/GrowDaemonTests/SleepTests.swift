import Foundation
import GrowTestSupport
import Testing

/// The daemon hears logind's PrepareForSleep and watches the wall clock. logind cannot run
/// here, so python-dbusmock's logind template stands in for it on a private system bus; the
/// machine cannot suspend either, so what a sleep does to the timer is tested on a manual
/// clock (GrowCoreTests/SleepAndClockTests) and the clock arithmetic on made-up readings
/// (GrowLoopTests/ClockWatchTests). This test shows the wiring, and that the clocks, not
/// logind's word, decide how long the machine slept.
@Suite struct SleepTests {
  @Test func logindSleepAndWakeAreHeardAndTheClocksDecideHowLongItSlept() throws {
    let systemBus = try PrivateSessionBus()
    defer { systemBus.stop() }
    let onSystemBus = ["DBUS_SYSTEM_BUS_ADDRESS": systemBus.address]
    let logind = try BackgroundProcess(
      "/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "logind"],
      environment: systemBus.environment.merging(onSystemBus) { $1 })
    defer { logind.kill() }
    let busctl = { (arguments: [String]) throws in
      try Command.run("gdbus", ["call", "--address", systemBus.address] + arguments)
    }
    let ready = try logind.waitUntil(timeout: 15, interval: 0.1) {
      try busctl([
        "-d", "org.freedesktop.DBus", "-o", "/org/freedesktop/DBus",
        "-m", "org.freedesktop.DBus.NameHasOwner", "org.freedesktop.login1",
      ]).stdout.contains("true")
    }
    try #require(ready, "dbusmock's logind did not start: \(logind.stderr)")

    let harness = try DaemonHarness(config: "[timer]\nfocus = 10m\n", environment: onSystemBus)
    let daemon = try #require(harness.daemon)
    #expect(try harness.grow("start").status == 0)
    let endsAt = try harness.status()["ends_at"] as? String

    let prepareForSleep = { (goingToSleep: Bool) throws in
      let result = try busctl([
        "-d", "org.freedesktop.login1", "-o", "/org/freedesktop/login1",
        "-m", "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.login1.Manager",
        "PrepareForSleep", "b", "[<\(goingToSleep)>]",
      ])
      #expect(result.status == 0, "\(result)")
    }
    try prepareForSleep(true)
    #expect(try daemon.waitUntil(timeout: 10) { daemon.stderr.contains("going to sleep") })
    try prepareForSleep(false)
    #expect(try daemon.waitUntil(timeout: 10) { daemon.stderr.contains("the system woke up") })

    // Nothing slept: MONOTONIC kept pace with BOOTTIME, so the focus keeps its deadline.
    #expect(!daemon.stderr.contains("the system slept for"))
    let status = try harness.status()
    #expect(status["state"] as? String == "focus")
    #expect(status["ends_at"] as? String == endsAt)

    // The kernel's side: a timerfd on CLOCK_REALTIME armed to cancel when the clock is set.
    let fdinfo = try Command.run(
      "sh", ["-c", "cat /proc/\(daemon.pid)/fdinfo/* 2>/dev/null"]
    ).stdout
    #expect(fdinfo.contains("clockid: 0\nticks: 0\nsettime flags: 03"))
  }

  @Test func withoutASystemBusTheDaemonSaysSoAndRunsOn() throws {
    let harness = try DaemonHarness(
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/system_bus_socket"])
    #expect(try harness.grow("start").status == 0)
    #expect(
      harness.daemon?.stderr.contains("suspends are noticed through the clocks alone") == true)
  }
}
