import FoundationEssentials
@_spi(GrowHost) import GrowCore
import GrowMessages

/// A calendar day as the person lived it: the date on the wall clock where they were.
///
/// Stored as days since 1970-01-01, computed from an instant plus the UTC offset in force
/// then, so a day never moves when the time zone changes later (travel, DST) and grouping
/// a year of phases by day is integer arithmetic, not calendar calls.
public struct LocalDay: Hashable, Comparable, Strideable, Sendable, Codable,
  CustomStringConvertible
{
  /// Days since 1970-01-01.
  public let number: Int

  public init(number: Int) { self.number = number }

  /// The day of `instant` at `offset` seconds east of UTC.
  public init(_ instant: Date, offset: Int) {
    let local = instant.timeIntervalSince1970 + Double(offset)
    number = Int((local / 86_400).rounded(.down))
  }

  /// The day of `instant` in `zone`.
  public init(_ instant: Date, in zone: LocalZone) {
    number = zone.dayNumber(of: instant)
  }

  /// Reads `YYYY-MM-DD`; nil for anything else, including dates that do not exist.
  public init?(text: String) {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
      parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
      let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
      (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day)
    else { return nil }
    number = Self.daysFromCivil(year: year, month: month, day: day)
  }

  public static func today(in zone: LocalZone = .system, now: Date = Date()) -> LocalDay {
    LocalDay(now, in: zone)
  }

  /// `YYYY-MM-DD`.
  public var text: String {
    let (year, month, day) = civil
    return year.zeroPadded(4) + "-" + month.zeroPadded(2) + "-" + day.zeroPadded(2)
  }

  public var description: String { text }

  public var civil: (year: Int, month: Int, day: Int) { Self.civilFromDays(number) }

  /// The weekday, abbreviated as the person's locale (`LC_TIME`) writes it: `Mon` … `Sun` in
  /// English and the C locale, `Mo` in German, `пн` in Russian.
  public var weekdayName: String { LocaleTime.weekdayName(weekday) }

  /// 0 for Sunday … 6 for Saturday, as C's `tm_wday`. 1970-01-01 was a Thursday.
  public var weekday: Int { ((number % 7) + 7 + 4) % 7 }

  /// The first instant of this day in `zone` (for seeding and for ranges of instants).
  public func start(in zone: LocalZone) -> Date {
    // Guess with today's offset, then correct once: offsets differ by at most a day.
    let guess = Date(timeIntervalSince1970: Double(number) * 86_400)
    let first = guess.addingTimeInterval(-Double(zone.secondsFromGMT(for: guess)))
    return guess.addingTimeInterval(-Double(zone.secondsFromGMT(for: first)))
  }

  public static func < (a: LocalDay, b: LocalDay) -> Bool { a.number < b.number }
  public func distance(to other: LocalDay) -> Int { other.number - number }
  public func advanced(by days: Int) -> LocalDay { LocalDay(number: number + days) }

  public init(from decoder: any Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    guard let day = LocalDay(text: text) else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: decoder.codingPath, debugDescription: "not a YYYY-MM-DD date: \(text)"))
    }
    self = day
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(text)
  }

  // Howard Hinnant's civil-calendar algorithms (proleptic Gregorian): exact for every date.
  static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shifted = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shifted + 2) / 5 + 1
    let month = shifted < 10 ? shifted + 3 : shifted - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }
}
