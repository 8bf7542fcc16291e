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

  /// Whether `text` is this message as another Grow process rendered it, in the reader's
  /// language or in English (a daemon speaks its session's language, normally the reader's),
  /// with `values` filled in and any other placeholder standing for any text: for reading
  /// back a line of a reply meant for people, such as `grow reload`'s report.
  public func matches(_ text: String, _ values: [String: String]) -> Bool {
    [MessageCatalogue.translated(self, count: 0), english].contains { template in
      Self.pattern(of: template, values).matches(text)
    }
  }

  /// The template as literal pieces between the placeholders `values` leaves open.
  private static func pattern(of template: String, _ values: [String: String]) -> [String] {
    var pieces = [""]
    var rest = Substring(template)
    while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
      pieces[pieces.count - 1] += rest[..<open]
      let name = String(rest[rest.index(after: open)..<close])
      if let value = values[name] { pieces[pieces.count - 1] += value } else { pieces.append("") }
      rest = rest[rest.index(after: close)...]
    }
    pieces[pieces.count - 1] += rest
    return pieces
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

extension [String] {
  /// Whether `text` is these pieces in order with anything between each two (a glob whose
  /// stars are the open placeholders).
  fileprivate func matches(_ text: String) -> Bool {
    guard let first, let last, text.hasPrefix(first) else { return false }
    var rest = Substring(text).dropFirst(first.count)
    guard count > 1 else { return rest.isEmpty }
    for piece in self[1..<(count - 1)] where !piece.isEmpty {
      guard let start = rest.indices.first(where: { rest[$0...].hasPrefix(piece) }) else {
        return false
      }
      rest = rest[start...].dropFirst(piece.count)
    }
    return rest.count >= last.count && rest.hasSuffix(last)
  }
}
