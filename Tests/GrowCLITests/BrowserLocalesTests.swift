import Foundation
import GrowTestSupport
import Testing

/// The extension's words (browser/_locales/LL/messages.json, the WebExtensions i18n format):
/// every language Grow speaks has every message, with the same placeholders, and the plural
/// forms its language needs. `BrowserExtensionTests` shows them in Chromium.
@Suite struct BrowserLocalesTests {
  static let folder = RepoPaths.root.appendingPathComponent("browser/_locales")
  /// The languages of po/, in the browser's spelling (pt_BR as Chromium names its locale).
  static let languages = ["de", "es", "fr", "pt_BR", "ru"]

  typealias Entry = (text: String, placeholders: Set<String>)

  /// The messages of one language: name → (text, placeholder names).
  static func messages(_ language: String) throws -> [String: Entry] {
    let file = folder.appendingPathComponent("\(language)/messages.json")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: [String: Any]],
      "\(file.path) is not a messages.json")
    return try object.mapValues { entry in
      let text = try #require(entry["message"] as? String, "\(language): a message without text")
      let declared = (entry["placeholders"] as? [String: Any]).map { Set($0.keys) } ?? []
      return (text, declared)
    }
  }

  /// `$NAME$` placeholders a text uses, lower-cased as they are declared.
  static func used(in text: String) -> Set<String> {
    var names = Set<String>()
    var rest = Substring(text)
    while let start = rest.firstIndex(of: "$") {
      let after = rest[rest.index(after: start)...]
      guard let end = after.firstIndex(of: "$") else { break }
      let name = after[..<end]
      if !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "_" }) {
        names.insert(name.lowercased())
      }
      rest = after[after.index(after: end)...]
    }
    return names
  }

  @Test func theManifestTakesItsDescriptionFromTheEnglishMessages() throws {
    let manifest = try #require(
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: RepoPaths.root.appendingPathComponent("browser/manifest.json")))
        as? [String: Any])
    #expect(manifest["default_locale"] as? String == "en")
    let description = try #require(manifest["description"] as? String)
    #expect(description == "__MSG_extensionDescription__")
    #expect(try Self.messages("en")["extensionDescription"] != nil)
  }

  @Test(arguments: languages)
  func everyLanguageHasEveryMessageWithItsPlaceholders(language: String) throws {
    let english = try Self.messages("en")
    let translated = try Self.messages(language)
    // Plural messages (name_one, name_few…) differ in their forms per language: compared
    // below by their stem.
    let singular = { (names: Dictionary<String, Entry>.Keys) in
      Set(names.filter { !$0.contains("_") })
    }
    #expect(singular(translated.keys) == singular(english.keys), "\(language)")
    for (name, message) in translated {
      #expect(!message.text.isEmpty, "\(language): \(name) is empty")
      guard name != "languageTag" else {
        #expect(message.text == language.replacingOccurrences(of: "_", with: "-"))
        continue
      }
      #expect(
        Self.used(in: message.text) == message.placeholders, "\(language): \(name): \(message.text)"
      )
      let stem = String(name.split(separator: "_").first ?? "")
      let source = try #require(english[name] ?? english[stem + "_other"], "\(language): \(name)")
      #expect(message.placeholders == source.placeholders, "\(language): \(name)")
    }
  }

  /// The plural forms each language's rule picks for whole numbers (Unicode CLDR, as
  /// `Intl.PluralRules` in the browser has them); browser/i18n.js falls back to `_other`.
  @Test func everyPluralMessageHasTheFormsItsLanguagePicks() throws {
    let forms = [
      "en": ["one", "other"], "de": ["one", "other"], "fr": ["one", "many", "other"],
      "es": ["one", "many", "other"], "pt_BR": ["one", "many", "other"],
      "ru": ["one", "few", "many", "other"],
    ]
    for (language, needed) in forms {
      let names = try Self.messages(language).keys
      let stems = Set(names.filter { $0.contains("_") }.map { $0.split(separator: "_")[0] })
      #expect(!stems.isEmpty)
      for stem in stems {
        #expect(
          Set(names.filter { $0.hasPrefix(stem + "_") }) == Set(needed.map { "\(stem)_\($0)" }),
          "\(language): \(stem)")
      }
    }
  }
}
