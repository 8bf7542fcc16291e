internal import CLinux
import Glibc

/// The three Linux clocks at one instant, in seconds.
///
/// MONOTONIC stops while the machine is suspended, BOOTTIME does not, and REALTIME is the wall
/// clock, which can be set. So between two readings, the growth of BOOTTIME − MONOTONIC is the
/// time spent asleep, and the change of REALTIME − BOOTTIME is how far the wall clock was set.
public struct ClockReading: Sendable, Equatable {
  public var realtime: Double
  public var monotonic: Double
  public var boottime: Double

  public init(realtime: Double, monotonic: Double, boottime: Double) {
    self.realtime = realtime
    self.monotonic = monotonic
    self.boottime = boottime
  }

  public static func now() -> ClockReading {
    ClockReading(
      realtime: seconds(CLOCK_REALTIME), monotonic: seconds(CLOCK_MONOTONIC),
      boottime: seconds(CLOCK_BOOTTIME))
  }

  private static func seconds(_ clock: clockid_t) -> Double {
    var spec = timespec()
    clock_gettime(clock, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }

  /// What happened between `earlier` and this reading.
  public func changes(since earlier: ClockReading) -> ClockChanges {
    ClockChanges(
      slept: (boottime - monotonic) - (earlier.boottime - earlier.monotonic),
      wallClockSet: (realtime - boottime) - (earlier.realtime - earlier.boottime))
  }
}

/// Sleep and wall-clock changes between two readings; each below `ClockWatch.threshold` is
/// noise (reading the three clocks is not atomic) and reads as zero.
public struct ClockChanges: Sendable, Equatable {
  public var slept: Double
  public var wallClockSet: Double

  public init(slept: Double, wallClockSet: Double) {
    self.slept = slept
    self.wallClockSet = wallClockSet
  }

  public var isEmpty: Bool { slept == 0 && wallClockSet == 0 }
}

/// Notices a suspend and resume, and the wall clock being set, without waking up to look.
///
/// One timerfd on CLOCK_REALTIME with TFD_TIMER_CANCEL_ON_SET, armed for the far future, never
/// expires: the kernel cancels it, making it readable, when the wall clock is set, and also
/// after a resume. Anyone else who knows of a resume (logind's PrepareForSleep, an alarm firing
/// late) calls `check()`. Each check compares the clocks with the last one, so a sleep is
/// counted once, however many of them notice it.
@MainActor
public final class ClockWatch {
  /// Changes smaller than this are left alone: 1 s.
  public static let threshold: Double = 1

  private let read: () -> ClockReading
  private let onChange: (ClockChanges) -> Void
  private var last: ClockReading
  private var descriptor: Int32 = -1
  private var watch: FileWatcher.Watch?

  /// - Parameters:
  ///   - read: the clocks (tests pass readings of their own).
  ///   - onChange: called on the main queue with every sleep or wall-clock change found.
  public init(
    read: @escaping () -> ClockReading = ClockReading.now,
    onChange: @escaping (ClockChanges) -> Void
  ) {
    self.read = read
    self.onChange = onChange
    self.last = read()
  }

  /// Starts listening to the kernel. Without a timerfd (never seen on Linux) only `check()`
  /// calls notice anything; the error says why.
  public func start() throws(ClockWatchError) {
    guard descriptor < 0 else { return }
    let fd = timerfd_create(CLOCK_REALTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
    guard fd >= 0 else { throw .timerUnavailable(String(cString: strerror(errno))) }
    descriptor = fd
    try arm()
    watch = FileWatcher.shared.watch(fd, for: .readable) { [weak self] _ in
      self?.kernelSaidTheClockChanged()
    }
  }

  /// Compares the clocks with the last look and reports what changed.
  public func check() {
    let now = read()
    var changes = now.changes(since: last)
    if abs(changes.slept) < Self.threshold { changes.slept = 0 }
    if abs(changes.wallClockSet) < Self.threshold { changes.wallClockSet = 0 }
    // Keep the old baseline for what stayed under the threshold, so that many small
    // readings cannot hide a change made of small steps.
    if !changes.isEmpty {
      last = now
      onChange(changes)
    }
  }

  public func stop() {
    watch?.cancel()
    watch = nil
    if descriptor >= 0 { close(descriptor) }
    descriptor = -1
  }

  private func kernelSaidTheClockChanged() {
    // The read fails with ECANCELED, which is the news; the timer must be armed again.
    var expirations: UInt64 = 0
    _ = Glibc.read(descriptor, &expirations, MemoryLayout<UInt64>.size)
    try? arm()
    check()
  }

  private func arm() throws(ClockWatchError) {
    var spec = itimerspec()
    // Far in the future, so it never expires: only a clock change makes it readable.
    spec.it_value.tv_sec = Int(Int32.max) * 64
    let flags = Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET)
    guard timerfd_settime(descriptor, flags, &spec, nil) == 0 else {
      throw .timerUnavailable(String(cString: strerror(errno)))
    }
  }
}

public enum ClockWatchError: Error, CustomStringConvertible {
  case timerUnavailable(String)

  public var description: String {
    switch self {
    case .timerUnavailable(let reason):
      "cannot watch the wall clock (timerfd: \(reason)); a suspend is noticed only when "
        + "logind reports it or a phase ends"
    }
  }
}
