import Foundation
import GrowLoop
import Testing

/// ClockWatch on readings the test makes up: the machine here cannot suspend and the test may
/// not set the clock, so the three clocks are moved by hand as a suspend or `date -s` would.
@MainActor
@Suite struct ClockWatchTests {
  /// Clocks that advance together, except where the test says otherwise.
  final class FakeClocks {
    var reading = ClockReading(realtime: 1_780_000_000, monotonic: 5000, boottime: 5000)
    func awake(_ seconds: Double) {
      reading.realtime += seconds
      reading.monotonic += seconds
      reading.boottime += seconds
    }
    /// MONOTONIC stands still while suspended; the others go on.
    func suspend(_ seconds: Double) {
      reading.realtime += seconds
      reading.boottime += seconds
    }
    func setWallClock(by seconds: Double) { reading.realtime += seconds }
  }

  func makeWatch() -> (ClockWatch, FakeClocks, () -> [ClockChanges]) {
    let clocks = FakeClocks()
    var seen: [ClockChanges] = []
    let watch = ClockWatch(read: { clocks.reading }, onChange: { seen.append($0) })
    return (watch, clocks, { seen })
  }

  @Test func aSuspendIsMeasuredByTheClocksAndCountedOnce() {
    let (watch, clocks, seen) = makeWatch()
    clocks.awake(600)
    watch.check()
    #expect(seen().isEmpty, "ten minutes awake are not a change")
    clocks.suspend(1800)
    clocks.awake(2)
    watch.check()
    // logind's PrepareForSleep(false) and the kernel both noticed: only one sleep.
    watch.check()
    #expect(seen() == [ClockChanges(slept: 1800, wallClockSet: 0)])
  }

  @Test func settingTheWallClockIsNotSleep() {
    let (watch, clocks, seen) = makeWatch()
    clocks.setWallClock(by: -3600)
    clocks.awake(5)
    watch.check()
    #expect(seen() == [ClockChanges(slept: 0, wallClockSet: -3600)])
  }

  @Test func changesUnderASecondAreNoise() {
    let (watch, clocks, seen) = makeWatch()
    clocks.suspend(0.4)
    watch.check()
    clocks.setWallClock(by: 0.3)
    watch.check()
    #expect(seen().isEmpty)
    // But they are not forgotten: small steps that add up are reported.
    clocks.suspend(0.7)
    watch.check()
    #expect(seen().count == 1)
    #expect(abs((seen().first?.slept ?? 0) - 1.1) < 1e-6)
  }

  @Test func theKernelTimerIsArmedToCancelOnAClockChange() throws {
    let before = try timerDescriptors()
    let watch = ClockWatch { _ in }
    try watch.start()
    let armed = try timerDescriptors().subtracting(before)
    #expect(armed.count == 1)
    watch.stop()
    #expect(try timerDescriptors() == before)
  }

  /// This process's timerfds on CLOCK_REALTIME armed with TFD_TIMER_ABSTIME and
  /// TFD_TIMER_CANCEL_ON_SET ("clockid: 0", "settime flags: 03" in fdinfo).
  func timerDescriptors() throws -> Set<String> {
    let directory = "/proc/self/fdinfo"
    var found: Set<String> = []
    for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
      guard let handle = FileHandle(forReadingAtPath: "\(directory)/\(name)") else { continue }
      let text = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
      try? handle.close()
      if text.contains("clockid: 0"), text.contains("settime flags: 03") { found.insert(name) }
    }
    return found
  }
}
