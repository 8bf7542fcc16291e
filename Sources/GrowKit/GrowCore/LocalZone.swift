import FoundationEssentials
import Glibc
import Synchronization

/// Where the person is: the UTC offset in force at any instant, which decides where their
/// days begin.
///
/// Every local day and UTC offset in Grow comes from here. The system zone asks the C library
/// (`localtime_r`'s `tm_gmtoff`, honouring `TZ` and /etc/localtime): FoundationEssentials has
/// no time-zone database, and its `TimeZone.current` compiles but is GMT at run time on Linux.
public struct LocalZone: Sendable {
  private let offsetAt: @Sendable (Date) -> Int

  /// A zone whose offset at each instant `offsetAt` gives, in seconds east of UTC.
  public init(offsetAt: @escaping @Sendable (Date) -> Int) { self.offsetAt = offsetAt }

  /// The machine's zone, as the C library sees it. `tzset` runs at most once a second
  /// (`TZSetGate`), so a changed /etc/localtime (the person travelled) counts from the first
  /// day computed a second later.
  public static let system = LocalZone { instant in
    var seconds = time_t(instant.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    TZSetGate.refresh()
    guard localtime_r(&seconds, &parts) != nil else { return 0 }
    return parts.tm_gmtoff
  }

  /// UTC, the offset that never changes.
  public static let utc = LocalZone.fixed(secondsEast: 0)

  /// A zone `seconds` east of UTC all year.
  public static func fixed(secondsEast seconds: Int) -> LocalZone { LocalZone { _ in seconds } }

  /// A Foundation time zone, e.g. one a test made by name with the full Foundation (whose
  /// zone database FoundationEssentials lacks).
  public init(_ timeZone: TimeZone) { self.init { timeZone.secondsFromGMT(for: $0) } }

  /// Seconds east of UTC at `instant`.
  public func secondsFromGMT(for instant: Date) -> Int { offsetAt(instant) }

  /// `HH:MM` on the local 24-hour clock (what a person reads as "until 14:25").
  public func clockText(of instant: Date) -> String {
    let local = Int((instant.timeIntervalSince1970 + Double(offsetAt(instant))).rounded(.down))
    let minuteOfDay = ((local % 86_400) + 86_400) % 86_400 / 60
    return (minuteOfDay / 60).zeroPadded(2) + ":" + (minuteOfDay % 60).zeroPadded(2)
  }

  /// The local calendar day of `instant`, as days since 1970-01-01.
  public func dayNumber(of instant: Date) -> Int {
    let local = instant.timeIntervalSince1970 + Double(offsetAt(instant))
    return Int((local / 86_400).rounded(.down))
  }
}

/// Runs `tzset` at most once a second. Without `TZ`, glibc's `tzset` looks at /etc/localtime
/// (a `stat` of the file each time) to notice a new zone: that was a tenth of the daemon's
/// CPU per `GetStatus`, which reads today's figures and so the local day.
enum TZSetGate {
  /// The coarse monotonic second of the last `tzset`; `Int64.min` before the first.
  private static let last = Atomic<Int64>(.min)

  static func refresh() {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
    let second = Int64(now.tv_sec)
    let previous = last.load(ordering: .relaxed)
    guard second != previous,
      last.compareExchange(expected: previous, desired: second, ordering: .relaxed).exchanged
    else { return }
    tzset()
  }
}
