import Foundation
import GrowTestSupport
import Testing

/// The locales these tests run in, generated for them with `localedef` (the `locales`
/// package's definitions, which scripts/install-deps installs) into a directory of their own
/// that `LOCPATH` names: nothing the machine had generated before counts, and nothing of the
/// machine's changes.
enum GeneratedLocales {
  static let names = ["de_DE", "fr_FR", "ru_RU", "en_US"]

  /// The directory holding NAME.UTF-8 for each name, made again by each test process (in
  /// the build directory, so runs do not pile copies up); nil when one cannot be generated.
  static let directory: String? = {
    let directory = RepoPaths.root.appendingPathComponent(".build/test-locales").path
    try? FileManager.default.removeItem(atPath: directory)
    guard
      (try? FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)) != nil
    else { return nil }
    for name in names {
      guard
        let made = try? Command.run(
          "localedef", ["-i", name, "-f", "UTF-8", "\(directory)/\(name).UTF-8"], timeout: 120),
        made.status == 0
          || FileManager.default.fileExists(
            atPath: "\(directory)/\(name).UTF-8/LC_TIME")
      else { return nil }
    }
    return directory
  }()
}

/// Dates and times in the person's locale (LC_TIME, through the C library) and the words in
/// their language (LANGUAGE, through gettext), as `grow` prints them under generated locales.
@Suite(
  .enabled(
    if: GeneratedLocales.directory != nil,
    """
    localedef cannot generate de_DE.UTF-8, fr_FR.UTF-8, ru_RU.UTF-8 and en_US.UTF-8 here \
    (scripts/install-deps installs the locales package that defines them)
    """))
final class LocaleTimeTests {
  let catalogues: URL
  let harness: DaemonHarness

  /// The shipped catalogues (every po/LL.po), compiled, and a history of a focus that
  /// completed and a break that was stopped.
  init() throws {
    catalogues = try Catalogues.compileShipped()
    harness = try DaemonHarness(
      config: DaemonHarness.oneSecondCycle, environment: ["LC_ALL": "C.UTF-8"])
    _ = try harness.grow("start")
    _ = try harness.waitForStatus { ($0["completed_today"] as? Int ?? 0) >= 1 }
    _ = try harness.grow("stop")
    try harness.waitForHistory()
  }

  deinit { try? FileManager.default.removeItem(at: catalogues) }

  /// `grow` in `locale` (LC_ALL) speaking `language` (LANGUAGE).
  func grow(_ language: String, _ locale: String, _ arguments: String...) throws -> String {
    let environment = harness.environment.merging([
      "LANGUAGE": language, "LC_ALL": locale, "LOCPATH": GeneratedLocales.directory ?? "",
      "TEXTDOMAINDIR": catalogues.path,
    ]) { $1 }
    let run = try Command.run(Binaries.grow, arguments, environment: environment)
    return run.stdout + run.stderr
  }

  /// The week's seven days each carry the locale's weekday name; the words are German.
  @Test func statsNameTheWeekdaysInGerman() throws {
    let stats = try grow("de", "de_DE.UTF-8", "stats", "--week")
    for weekday in ["Mo", "Di", "Mi", "Do", "Fr", "Sa", "So"] {
      #expect(
        stats.contains(try Regex(#"\d{4}-\d\d-\d\d "# + weekday + " ")), "\(weekday): \(stats)")
    }
    #expect(!stats.contains("Mon") && !stats.contains("Thu"), "\(stats)")
    #expect(stats.contains("Fokusphasen: 1 geschafft"), "\(stats)")
    #expect(stats.contains("Ablenkungen: keine festgehalten"), "\(stats)")
    #expect(stats.contains("Serie: 1 Tag (längste 1 Tag)"), "\(stats)")

    // Over two months, a row per month, named as the locale names it standing alone.
    let year = try grow("de", "de_DE.UTF-8", "stats", "--year")
    let month = try Command.run("date", ["+%m"]).stdout
    let german = [
      "Jan", "Feb", "Mär", "Apr", "Mai", "Jun", "Jul", "Aug", "Sep", "Okt", "Nov", "Dez",
    ]
    let thisMonth = german[(Int(month.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 1) - 1]
    #expect(year.contains("  \(thisMonth) "), "\(year)")
  }

  /// Russian and French weekday names from their locales: LC_TIME alone decides them, while
  /// the words follow LANGUAGE.
  @Test func historyNamesTheDayAndTimeAsTheLocaleWritesThem() throws {
    let russian = try grow("ru", "ru_RU.UTF-8", "history")
    #expect(
      russian.contains(try Regex(#"\d{4}-\d\d-\d\d (Пн|Вт|Ср|Чт|Пт|Сб|Вс) \d\d:\d\d–\d\d:\d\d"#)),
      "\(russian)")
    #expect(russian.contains("фокус") && russian.contains("завершена"), "\(russian)")
    let french = try grow("fr", "fr_FR.UTF-8", "history")
    #expect(
      french.contains(
        try Regex(#"\d{4}-\d\d-\d\d (lun\.|mar\.|mer\.|jeu\.|ven\.|sam\.|dim\.) \d\d:\d\d"#)),
      "\(french)")
    #expect(french.contains("concentration") && french.contains("terminée"), "\(french)")
    // American English writes a time of day on the 12-hour clock.
    let american = try grow("en", "en_US.UTF-8", "history")
    #expect(american.contains(try Regex(#"\d\d:\d\d [AP]M–\d\d:\d\d [AP]M"#)), "\(american)")
    // Machine output keeps ISO 8601 whatever the locale.
    let json = try grow("ru", "ru_RU.UTF-8", "history", "--json")
    #expect(json.contains(try Regex(#""started_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"#)), "\(json)")
  }

  /// `grow doctor` in Russian: each check's words and its fix.
  @Test func doctorSpeaksRussian() throws {
    let doctor = try grow("ru", "ru_RU.UTF-8", "doctor")
    #expect(doctor.contains("✔ session bus: доступна"), "\(doctor)")
    #expect(doctor.contains(try Regex(#"✔ daemon: работает \(pid \d+\)"#)), "\(doctor)")
    #expect(
      doctor.contains(
        "✘ notifications: на сессионной шине нет сервера уведомлений; решение: запускайте его"),
      "\(doctor)")
    #expect(!doctor.contains("; fix: "), "\(doctor)")
  }
}
