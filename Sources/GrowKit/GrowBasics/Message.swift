internal import CGettext
import Glibc

/// One thing Grow says to a person: its English text, which is also its key in a gettext
/// catalogue (msgid), with named placeholders (`{card}`, `{minutes}`) that `render` fills.
/// A message about a count has an English plural too (msgid_plural), and the placeholder whose
/// number chooses the form: the catalogue of a language knows its own plural rule, as
/// gettext's `ngettext` chooses.
///
/// Messages are whole sentences: a translation can reorder the placeholders, so a sentence is
/// never glued from pieces.
public struct Message: Sendable, Hashable {
  /// The English text, and the msgid.
  public let english: String
  /// The English plural (msgid_plural), for a message about a count.
  public let englishPlural: String?
  /// The placeholder whose number chooses between the singular and the plural.
  public let countedBy: String?

  public init(_ english: String) {
    self.english = english
    self.englishPlural = nil
    self.countedBy = nil
  }

  /// A message about `countedBy`'s number: `one` for 1 in English, `other` for the rest.
  public init(one: String, other: String, countedBy: String) {
    self.english = one
    self.englishPlural = other
    self.countedBy = countedBy
  }

  /// The names of the placeholders in the English text (and its plural).
  public var placeholders: Set<String> {
    var names = Set<String>()
    for text in [english, englishPlural].compactMap({ $0 }) {
      _ = Self.fill(text) { name in
        names.insert(name)
        return nil
      }
    }
    return names
  }

  /// `text` with each `{name}` for which `value` has a value replaced, in one pass: a value
  /// that holds braces itself (a card named "{card}") is never filled again.
  static func fill(_ text: String, _ value: (String) -> String?) -> String {
    var filled = ""
    var rest = Substring(text)
    while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
      filled += rest[..<open]
      let name = String(rest[rest.index(after: open)..<close])
      filled += value(name) ?? "{\(name)}"
      rest = rest[rest.index(after: close)...]
    }
    return filled + rest
  }

  /// The message in the reader's language (the English when no catalogue has it), with each
  /// `{name}` replaced by `values[name]`. The plural form follows the number in
  /// `values[countedBy]`.
  public func render(_ values: [String: any CustomStringConvertible] = [:])
    -> String
  {
    Self.fill(MessageCatalogue.translated(self, count: count(in: values))) { name in
      values[name]?.description
    }
  }

  /// The message in English whatever the reader's language, filled as `render` fills it: for
  /// a log line, which stays English so that it can be searched for and pasted into a bug
  /// report, like GLib's g_warning.
  public func renderInEnglish(_ values: [String: any CustomStringConvertible] = [:]) -> String {
    let text = englishPlural.flatMap { count(in: values) == 1 ? nil : $0 } ?? english
    return Self.fill(text) { name in values[name]?.description }
  }

  private func count(in values: [String: any CustomStringConvertible]) -> Int {
    guard let countedBy, let value = values[countedBy]
    else { return 0 }
    if let number = value as? Int { return number }
    return Int(value.description) ?? 0
  }
}

/// The gettext seam: Grow's catalogues are the domain "grow", found under
/// `$TEXTDOMAINDIR` (gettext's convention for a program's own catalogues) or else
/// `share/locale` beside the installed `bin/grow`; the languages come from the environment
/// (`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`). No catalogue installed: the English.
public enum MessageCatalogue {
  public static let domain = "grow"

  /// Bound once, before the first message is looked up.
  private static let bound: Bool = {
    grow_bind_domain(domain, directory)
    return true
  }()

  /// Where the catalogues are looked for.
  public static var directory: String {
    if let given = getenv("TEXTDOMAINDIR").map({ String(cString: $0) }), !given.isEmpty {
      return given
    }
    // PREFIX/bin/grow (or PREFIX/lib/grow/grow-cli, InstallLayout) → PREFIX/share/locale.
    guard let prefix = InstallLayout.prefixOfRunningGrow else { return "/usr/share/locale" }
    return InstallLayout.joined(prefix, "share/locale")
  }

  static func translated(_ message: Message, count: Int) -> String {
    _ = bound
    // gettext returns the msgid itself when nothing translates it: read it while the C copy
    // of the Swift string is alive.
    return message.english.withCString { english in
      guard let plural = message.englishPlural else {
        return String(cString: grow_dgettext(domain, english))
      }
      return plural.withCString { plural in
        String(cString: grow_dngettext(domain, english, plural, UInt(max(0, count))))
      }
    }
  }
}
