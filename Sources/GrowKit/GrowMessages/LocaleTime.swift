internal import CGettext
import FoundationEssentials
import Glibc
import GrowCore

/// Dates and times as the person's locale writes them (`LC_TIME`): weekday and month names,
/// and a clock time ("14:30", "2:30 PM"). FoundationEssentials has no locale data, so this
/// asks the C library (`nl_langinfo_l`, `strftime_l`) with a locale object read once from
/// `LC_ALL`, `LC_TIME` or `LANG`; where that locale is not installed, the C locale's English
/// names and 24-hour clock. Machine output (JSON, CSV, D-Bus) keeps ISO 8601 and never comes
/// here.
public enum LocaleTime {
  /// The LC_TIME locale, made once; never freed (the process reads it to its end).
  private struct TimeLocale: @unchecked Sendable {
    let handle: locale_t
  }
  private static let locale = TimeLocale(handle: grow_time_locale())

  /// The weekday's name: 0 is Sunday, as in C's `struct tm` ("Mo", "пн", "Mon" abbreviated).
  public static func weekdayName(_ weekday: Int, abbreviated: Bool = true) -> String {
    String(
      cString: grow_weekday_name(Int32(weekday.clamped(0...6)), abbreviated ? 1 : 0, locale.handle))
  }

  /// The month's name as it stands alone (a table's row): 1 is January.
  public static func monthName(_ month: Int, abbreviated: Bool = true) -> String {
    String(
      cString: grow_month_name(
        Int32((month - 1).clamped(0...11)), abbreviated ? 1 : 0, locale.handle))
  }

  /// `instant`'s hour and minute on the local clock of `zone`, written as the locale writes a
  /// time of day without its seconds: "14:30" in German or Russian, "02:30 PM" in American
  /// English.
  public static func clock(_ instant: Date, in zone: LocalZone = .system) -> String {
    let local = Int(
      (instant.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: instant)))
        .rounded(.down))
    let minuteOfDay = ((local % 86_400) + 86_400) % 86_400 / 60
    return LocalClock.text(hour: minuteOfDay / 60, minute: minuteOfDay % 60)
      ?? zone.clockText(of: instant)
  }
}

extension Comparable {
  fileprivate func clamped(_ range: ClosedRange<Self>) -> Self {
    min(max(self, range.lowerBound), range.upperBound)
  }
}
