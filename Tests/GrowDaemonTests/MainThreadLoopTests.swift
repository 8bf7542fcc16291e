import Foundation
import GrowTestSupport
import Testing

/// The daemon's main thread runs its loop (`MainLoop.runOnMainThread`): a D-Bus call wakes
/// that one thread, which reads, answers and goes back to sleep. Under `dispatchMain`
/// libdispatch's manager thread saw the epoll and woke a worker to run the main queue, so each
/// call woke two other threads (3.8 context switches a GetStatus in `make bench`). Counted in
/// voluntary context switches, which a loaded machine does not add (it preempts: involuntary).
@Suite struct MainThreadLoopTests {
  @Test func aGetStatusWakesOnlyTheMainThread() throws {
    let harness = try DaemonHarness()
    let pid = try #require(harness.daemon?.pid)
    let client = try RawBusClient(address: harness.bus.address, timeout: 60)
    let getStatus = RawBusClient.MethodCall.timer("GetStatus")
    // Settle: start-up's work (the streak read off the loop) is done.
    _ = try client.pipeline([getStatus])
    Thread.sleep(forTimeInterval: 1)
    let calls = 200
    let before = ContextSwitches.perThread(of: pid, voluntaryOnly: true)
    for _ in 0..<calls {
      let outcome = try client.pipeline([getStatus])[0]
      #expect(outcome == .returned, "\(outcome)")
    }
    let after = ContextSwitches.perThread(of: pid, voluntaryOnly: true)
    let others = after.filter { $0.key != String(pid) }
      .reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
    let main = (after[String(pid)] ?? 0) - (before[String(pid)] ?? 0)
    // One sleep of the main thread a call; other threads at most now and then (a libdispatch
    // worker retiring), not once or twice a call.
    #expect(others < calls / 10, "other threads: \(others) switches for \(calls) calls")
    #expect(main >= calls / 2, "main thread: \(main) switches for \(calls) calls")
  }
}
