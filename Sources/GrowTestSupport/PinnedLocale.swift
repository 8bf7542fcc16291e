import Foundation

/// The language a child of a test runs in: the same on every machine. The test runner's own
/// `LANG`, `LC_*` and `LANGUAGE` (German on a German desktop) never reach a child; one that
/// sets no locale itself runs in `C.UTF-8` (English messages, English weekday names, a
/// 24-hour clock), and one that sets some (`LANGUAGE: "de"`, `LC_ALL: "ru_RU.UTF-8"`) gets
/// only those.
public enum PinnedLocale {
  /// The locale of a child that asks for none.
  public static let locale = "C.UTF-8"

  /// `inherited` (this process's environment) with `given` merged over it, the locale
  /// variables being `given`'s alone, or `C.UTF-8` when it has none.
  public static func childEnvironment(
    _ given: [String: String],
    inheriting inherited: [String: String] = ProcessInfo.processInfo.environment
  ) -> [String: String] {
    var environment = inherited.filter { !isLocaleVariable($0.key) }
    if !given.keys.contains(where: { $0 == "LANG" || $0.hasPrefix("LC_") }) {
      environment["LC_ALL"] = locale
      environment["LANG"] = locale
    }
    return environment.merging(given) { $1 }
  }

  /// `LANG`, `LANGUAGE` and the `LC_` categories (`LC_ALL`, `LC_MESSAGES`, `LC_TIME`, …).
  static func isLocaleVariable(_ name: String) -> Bool {
    name == "LANG" || name == "LANGUAGE" || name.hasPrefix("LC_")
  }
}
