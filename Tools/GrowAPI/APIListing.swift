import Foundation

/// The SDK's promise written down: every declaration of its modules' public `.swiftinterface`
/// files (what `make install` ships and plugins compile against), one per line, sorted, so that
/// `api/GrowKit.api.txt` shows what a change adds or takes away.
///
/// A line is `MODULE[.OWNER]  DECLARATION`: `GrowCore  struct CardDeck : Sendable, Equatable`,
/// `GrowCore.CardDeck  var cards: [FocusCard] { get }`. Types of the module itself and of the
/// standard library and Foundation are written without their module, `public` is left out
/// (everything listed is public), and so are attributes that do not change what a plugin can
/// call (`@discardableResult`, `@_hasMissingDesignatedInitializers`). Bodies that are compiled
/// into plugins (`@inlinable`, `@_alwaysEmitIntoClient`) stay, on the declaration's line.
/// `@_spi` declarations are not in the public interface, so not in the listing.
public enum APIListing {
  /// The SDK's modules: libGrowKit.so's, then the plugin test kit's.
  public static let modules = [
    "GrowCore", "GrowConfig", "GrowLoop", "GrowDBus", "GrowPluginKit", "GrowPluginTesting",
  ]

  /// The listing of the modules whose interfaces are in `directory` (a build's `Modules`).
  public static func listing(interfacesIn directory: URL) throws(APIListingError) -> [String] {
    var lines: [String] = []
    for module in modules {
      let file = directory.appendingPathComponent("\(module).swiftinterface")
      guard let text = try? String(contentsOf: file, encoding: .utf8) else {
        throw .missingInterface(file.path)
      }
      lines += listing(module: module, interface: text)
    }
    return lines.sorted()
  }

  /// The lines of one module's interface, sorted.
  public static func listing(module: String, interface: String) -> [String] {
    var parser = InterfaceParser(module: module)
    for line in interface.split(separator: "\n", omittingEmptySubsequences: true) {
      parser.read(String(line))
    }
    return Array(Set(parser.lines)).sorted()
  }

  /// What changed from `promised` to `built`: lines only in one of them, each marked `-` (no
  /// longer there) or `+` (new), in listing order.
  public static func difference(promised: [String], built: [String]) -> [String] {
    let old = Set(promised)
    let new = Set(built)
    let removed = promised.filter { !new.contains($0) }.map { "- " + $0 }
    let added = built.filter { !old.contains($0) }.map { "+ " + $0 }
    return (removed + added).sorted { $0.dropFirst(2) < $1.dropFirst(2) }
  }
}

/// Why no listing could be made.
public enum APIListingError: Error, Equatable, CustomStringConvertible {
  case missingInterface(String)

  public var description: String {
    switch self {
    case .missingInterface(let path):
      "no module interface at \(path): build the SDK first ('swift build --build-tests' or 'make api')"
    }
  }
}

/// Reads a `.swiftinterface` line by line: the compiler prints one declaration per line, with
/// blocks for types, extensions, accessors and inlinable bodies.
struct InterfaceParser {
  private enum Block {
    /// A type or extension: declarations inside belong to `owner`.
    case scope(owner: String)
    /// The accessors of a property or subscript, gathered onto its line.
    case accessors(declaration: String, owner: String, accessors: [String], depth: Int)
    /// A body compiled into clients, kept on its declaration's line.
    case body(declaration: String, owner: String, text: [String], depth: Int)
  }

  let module: String
  private(set) var lines: [String] = []
  private var blocks: [Block] = []
  /// Attributes printed on a line of their own, for the next declaration.
  private var pendingAttributes = ""

  init(module: String) { self.module = module }

  private var owner: String {
    for block in blocks.reversed() {
      if case .scope(let owner) = block { return owner }
    }
    return ""
  }

  mutating func read(_ raw: String) {
    let line = raw.trimmingCharacters(in: .whitespaces)
    if case .body(let declaration, let owner, let text, let depth) = blocks.last {
      let newDepth = depth + braceBalance(line)
      if newDepth <= 0 {
        blocks.removeLast()
        let inner = (text + [String(line.dropLast())]).filter { !$0.isEmpty }
        emit(declaration + " { " + inner.joined(separator: " ") + " }", owner: owner)
      } else {
        blocks[blocks.count - 1] = .body(
          declaration: declaration, owner: owner, text: text + [line], depth: newDepth)
      }
      return
    }
    if case .accessors(let declaration, let owner, let accessors, let depth) = blocks.last {
      let newDepth = depth + braceBalance(line)
      if newDepth <= 0 {
        blocks.removeLast()
        emit(declaration + " { " + accessors.joined(separator: " ") + " }", owner: owner)
      } else {
        // An accessor starts at the block's own depth; deeper lines are its body.
        let entry = depth == 1 ? [normalized(line)] : []
        blocks[blocks.count - 1] = .accessors(
          declaration: declaration, owner: owner,
          accessors: depth == 1 ? accessors + entry : appendingBody(line, to: accessors),
          depth: newDepth)
      }
      return
    }
    if line.isEmpty || line.hasPrefix("//") || line.hasPrefix("import ") || line.hasPrefix("#") {
      return
    }
    if line == "}" {
      if !blocks.isEmpty { blocks.removeLast() }
      return
    }
    if isAttributeOnly(line) {
      pendingAttributes += line + " "
      return
    }
    let text = normalized(pendingAttributes + line)
    pendingAttributes = ""
    declare(text)
  }

  private mutating func declare(_ text: String) {
    let opens = text.hasSuffix("{")
    let empty = text.hasSuffix("{}")
    let head =
      empty
      ? String(text.dropLast(2)).trimmingCharacters(in: .whitespaces)
      : opens ? String(text.dropLast()).trimmingCharacters(in: .whitespaces) : text
    if head.hasSuffix("deinit") { return }
    if let (keyword, name) = typeName(head) {
      let nested = keyword == "extension" ? name : owner.isEmpty ? name : owner + "." + name
      if keyword != "extension" || head.contains(" : ") || head.contains(" where ") {
        emit(head, owner: owner)
      }
      if opens && !empty { blocks.append(.scope(owner: nested)) }
      return
    }
    guard opens && !empty else {
      emit(head, owner: owner)
      return
    }
    if isStorage(head) {
      blocks.append(.accessors(declaration: head, owner: owner, accessors: [], depth: 1))
    } else {
      blocks.append(.body(declaration: head, owner: owner, text: [], depth: 1))
    }
  }

  private mutating func emit(_ declaration: String, owner: String) {
    lines.append(module + (owner.isEmpty ? "" : "." + owner) + "  " + declaration)
  }

  /// `(keyword, name)` when `head` declares a type or an extension.
  private func typeName(_ head: String) -> (String, String)? {
    let words = head.split(separator: " ").map(String.init)
    for keyword in ["struct", "enum", "class", "protocol", "actor", "extension"] {
      guard let index = words.firstIndex(of: keyword), index + 1 < words.count,
        words[..<index].allSatisfy(isModifierOrAttribute)
      else { continue }
      var name = words[index + 1]
      // `class func`, `class var`: a modifier here, not a type.
      if ["func", "var", "let", "subscript", "init"].contains(name) { return nil }
      if let cut = name.firstIndex(where: { $0 == "<" || $0 == ":" }) {
        name = String(name[..<cut])
      }
      if keyword == "extension", let clause = head.range(of: " where ") {
        name += " where " + head[clause.upperBound...]
      }
      return (keyword, name)
    }
    return nil
  }

  private func isModifierOrAttribute(_ word: String) -> Bool {
    word.hasPrefix("@") || word.hasSuffix(")")
      || [
        "final", "open", "indirect", "nonisolated", "internal", "package", "static",
      ].contains(word)
  }

  /// A `var` or `subscript` whose block lists accessors.
  private func isStorage(_ head: String) -> Bool {
    let words = head.split(separator: " ").map(String.init)
    guard let first = words.firstIndex(where: { !isModifierOrAttribute($0) }) else { return false }
    let keyword = words[first]
    return keyword == "var" || keyword.hasPrefix("subscript")
      || (["class", "mutating", "nonmutating"].contains(keyword)
        && words.dropFirst(first + 1).first == "var")
  }

  private func appendingBody(_ line: String, to accessors: [String]) -> [String] {
    guard let last = accessors.last else { return accessors }
    return accessors.dropLast() + [last + " " + line]
  }

  private func isAttributeOnly(_ line: String) -> Bool {
    line.hasPrefix("@") && !line.contains(" ") && !line.hasSuffix("{")
  }

  private func braceBalance(_ line: String) -> Int {
    line.reduce(0) { $0 + ($1 == "{" ? 1 : $1 == "}" ? -1 : 0) }
  }

  /// The line without module aliases, the module's own name, the standard modules' names,
  /// `public` and attributes that are noise to a reader.
  private func normalized(_ line: String) -> String {
    var text = line
    text = text.replacingOccurrences(of: "Module___\(module).", with: "")
    for standard in ["Swift", "_Concurrency", "FoundationEssentials", "Foundation"] {
      text = text.replacingOccurrences(of: "Module___\(standard).", with: "")
      text = text.replacingOccurrences(
        of: #"(?<![\w.])"# + standard + #"\."#, with: "", options: .regularExpression)
    }
    text = text.replacingOccurrences(of: "Module___", with: "")
    for noise in [
      "@discardableResult", "@_hasMissingDesignatedInitializers",
      "@_inheritsConvenienceInitializers",
    ] {
      text = text.replacingOccurrences(of: noise + " ", with: "")
    }
    text = text.replacingOccurrences(
      of: #"(^|(?<= ))public "#, with: "", options: .regularExpression)
    return text.trimmingCharacters(in: .whitespaces)
  }
}
