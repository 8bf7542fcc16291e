import Foundation

/// The translations Grow ships (po/LL.po), and message catalogues compiled from them as
/// `make install` compiles them, for a test to point TEXTDOMAINDIR at. The languages are
/// whatever po/ holds: a new po/LL.po is tested without a list to extend.
public enum Catalogues {
  public static let po = RepoPaths.root.appendingPathComponent("po")

  /// Each po/LL.po's LL, sorted: "de", "fr", "pt_BR"….
  public static func shippedLanguages() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: po.path)
      .filter { $0.hasSuffix(".po") }.map { String($0.dropLast(3)) }.sorted()
  }

  /// po/`language`.po's text.
  public static func shipped(_ language: String) throws -> String {
    try String(contentsOf: po.appendingPathComponent("\(language).po"), encoding: .utf8)
  }

  /// Compiles each `(language, po text)` with `msgfmt --check` into
  /// LANGUAGE/LC_MESSAGES/grow.mo under a new directory, as TEXTDOMAINDIR takes it.
  public static func compile(_ sources: [(String, String)]) throws -> URL {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-catalogues-\(UUID().uuidString)")
    for (language, text) in sources {
      let messages = directory.appendingPathComponent("\(language)/LC_MESSAGES")
      try FileManager.default.createDirectory(at: messages, withIntermediateDirectories: true)
      let source = directory.appendingPathComponent("\(language).po")
      try text.write(to: source, atomically: true, encoding: .utf8)
      let compiled = try Command.run(
        "msgfmt",
        ["--check", "-o", messages.appendingPathComponent("grow.mo").path, source.path])
      guard compiled.status == 0 else {
        throw HarnessError("msgfmt --check \(language): \(compiled.stderr)")
      }
    }
    return directory
  }

  /// The shipped catalogues of `languages` (all of po/ when nil), compiled.
  public static func compileShipped(_ languages: [String]? = nil) throws -> URL {
    try compile((languages ?? shippedLanguages()).map { ($0, try shipped($0)) })
  }

  /// What po/`language`.po says for `english` (its msgstr, or the singular's msgstr[0]);
  /// nil when it has no such msgid.
  public static func translation(of english: String, in language: String) throws -> String? {
    // msgcat puts each string on one line; a translation holds no line break here.
    let joined = try Command.run(
      "msgcat", ["--no-wrap", po.appendingPathComponent("\(language).po").path])
    guard joined.status == 0 else { throw HarnessError("msgcat \(language): \(joined.stderr)") }
    let lines = joined.stdout.split(separator: "\n").map(String.init)
    let wanted = "msgid " + quoted(english)
    guard let index = lines.firstIndex(of: wanted) else { return nil }
    for line in lines[(index + 1)...] where line.hasPrefix("msgstr") {
      guard let open = line.firstIndex(of: "\"") else { return nil }
      return unquoted(String(line[open...]))
    }
    return nil
  }

  static func quoted(_ text: String) -> String {
    "\""
      + text.replacingOccurrences(of: "\\", with: "\\\\")
      .replacingOccurrences(of: "\"", with: "\\\"") + "\""
  }

  static func unquoted(_ text: String) -> String {
    var result = ""
    var escaped = false
    for character in text.dropFirst().dropLast() {
      if escaped {
        result.append(character == "n" ? "\n" : character == "t" ? "\t" : character)
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else {
        result.append(character)
      }
    }
    return result
  }
}
