import Foundation

/// Why a window pattern cannot be used; the message says how to write it.
public enum WindowPatternError: Error, Equatable, CustomStringConvertible {
  case empty
  case unterminatedRegex(String)
  case invalidRegex(String, reason: String)
  case invalidName(String)

  public var description: String {
    switch self {
    case .empty:
      "an empty pattern; write a name (discord), name:/title regex/ or /title regex/"
    case .unterminatedRegex(let text):
      "'\(text)' has no closing '/'; write a title regex as /youtube|reddit/"
    case .invalidRegex(let text, let reason):
      "'\(text)' is not a valid regular expression: \(reason)"
    case .invalidName(let text):
      "'\(text)' is not a window name; a name is a WM_CLASS such as firefox, without spaces or '/'"
    }
  }
}

/// One entry of `distractions =` or `allow =`, matched against the active window.
///
/// - `discord`: the WM_CLASS instance or class equals the name, ignoring case;
/// - `firefox:/youtube|reddit/`: that, and the title matches the regular expression;
/// - `/youtube/`: the title matches, whatever the application.
///
/// Regular expressions are Swift's own (`Regex`, in the standard library) and ignore case.
/// Using the standard library keeps GrowCore free of a C regex engine and gives the same
/// syntax everywhere Swift runs; the config checker compiles each one, so a bad pattern is a
/// file:line error at load time, never a surprise during focus.
public struct WindowPattern: @unchecked Sendable {
  // @unchecked: `Regex<AnyRegexOutput>` is immutable once built; it is only read.
  public let text: String
  public let name: String?
  private let titleRegex: Regex<AnyRegexOutput>?

  public init(_ text: String) throws(WindowPatternError) {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    self.text = trimmed
    guard !trimmed.isEmpty else { throw .empty }
    let namePart: Substring
    let regexPart: Substring?
    if let slash = trimmed.firstIndex(of: "/") {
      var before = trimmed[..<slash]
      if !before.isEmpty {
        guard before.last == ":" else { throw .invalidName(trimmed) }
        before = before.dropLast()
      }
      namePart = before
      let body = trimmed[trimmed.index(after: slash)...]
      guard body.count >= 1, body.last == "/" else { throw .unterminatedRegex(trimmed) }
      regexPart = body.dropLast()
    } else {
      namePart = Substring(trimmed)
      regexPart = nil
    }
    let name = namePart.trimmingCharacters(in: .whitespaces)
    if name.contains(where: { $0.isWhitespace }) { throw .invalidName(trimmed) }
    self.name = name.isEmpty ? nil : name
    if let regexPart {
      do {
        titleRegex = try Regex(String(regexPart)).ignoresCase()
      } catch {
        throw .invalidRegex(String(regexPart), reason: "\(error)")
      }
    } else {
      titleRegex = nil
    }
    if self.name == nil && titleRegex == nil { throw .empty }
  }

  /// Whether a window with this WM_CLASS and title is what the pattern describes.
  public func matches(instance: String, windowClass: String, title: String) -> Bool {
    if let name {
      guard
        name.caseInsensitiveCompare(instance) == .orderedSame
          || name.caseInsensitiveCompare(windowClass) == .orderedSame
      else { return false }
    }
    if let titleRegex {
      return (try? titleRegex.firstMatch(in: title)) != nil
    }
    return true
  }

  /// Splits a config value at the commas that are not inside a `/regex/`, so
  /// `firefox:/a{1,3}/, steam` gives two patterns.
  public static func split(_ value: String) -> [String] {
    var items: [String] = []
    var current = ""
    var inRegex = false
    var escaped = false
    for character in value {
      if inRegex {
        if escaped {
          escaped = false
        } else if character == "\\" {
          escaped = true
        } else if character == "/" {
          inRegex = false
        }
        current.append(character)
      } else if character == "/" {
        inRegex = true
        current.append(character)
      } else if character == "," {
        items.append(current)
        current = ""
      } else {
        current.append(character)
      }
    }
    items.append(current)
    return items.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
  }
}

/// A card's distraction rules, compiled: what is flagged, and what is allowed anyway.
public struct DistractionRules: Sendable {
  public let distractions: [WindowPattern]
  public let allowed: [WindowPattern]

  /// Compiles a card's lists. They were checked when the config was read, so a pattern that
  /// fails here (a card made in code) is skipped rather than fatal.
  public init(distractions: [String], allowed: [String]) {
    self.distractions = distractions.compactMap { try? WindowPattern($0) }
    self.allowed = allowed.compactMap { try? WindowPattern($0) }
  }

  /// The pattern that makes this window a distraction, if any.
  public func distraction(instance: String, windowClass: String, title: String) -> WindowPattern? {
    guard
      !allowed.contains(where: {
        $0.matches(instance: instance, windowClass: windowClass, title: title)
      })
    else { return nil }
    return distractions.first {
      $0.matches(instance: instance, windowClass: windowClass, title: title)
    }
  }
}
