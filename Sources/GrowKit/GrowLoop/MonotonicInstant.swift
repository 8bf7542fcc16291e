import FoundationEssentials
import Glibc

/// An instant on the loop's monotonic clock (CLOCK_MONOTONIC), which never jumps: setting the
/// wall clock, by hand or by NTP, does not move it. Rate limits, flood windows, timeouts and
/// "has it run long enough" are measured between two of these.
///
/// A wall-clock instant is a `Date`; the two do not mix, so a duration cannot be measured
/// from one clock to the other by mistake. The origin is arbitrary (the boot, for the
/// daemon's loop): an instant means nothing outside the loop that gave it.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
  /// Seconds since the clock's origin.
  public let secondsSinceOrigin: TimeInterval

  public init(secondsSinceOrigin: TimeInterval) {
    self.secondsSinceOrigin = secondsSinceOrigin
  }

  /// Seconds from `earlier` to `later` (negative when `later` is the earlier one).
  public static func - (later: MonotonicInstant, earlier: MonotonicInstant) -> TimeInterval {
    later.secondsSinceOrigin - earlier.secondsSinceOrigin
  }

  /// The instant `seconds` after `instant`.
  public static func + (instant: MonotonicInstant, seconds: TimeInterval) -> MonotonicInstant {
    MonotonicInstant(secondsSinceOrigin: instant.secondsSinceOrigin + seconds)
  }

  public static func < (left: MonotonicInstant, right: MonotonicInstant) -> Bool {
    left.secondsSinceOrigin < right.secondsSinceOrigin
  }

  public var description: String { "\(secondsSinceOrigin) s (monotonic)" }

  /// Now on CLOCK_MONOTONIC, whose origin is the boot: what the real loops report.
  static var systemNow: MonotonicInstant {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return MonotonicInstant(secondsSinceOrigin: Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9)
  }
}
