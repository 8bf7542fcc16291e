import Foundation

/// A fontconfig that sees only the fonts of fonts-dejavu-core, the one font package every
/// Debian desktop has: what a status bar can draw with when the person installed no others.
/// Programs get it through `environment` (`FONTCONFIG_FILE`); the system's aliases
/// (monospace → DejaVu Sans Mono) still apply. Removed on deinit.
public final class StockFonts: @unchecked Sendable {
  public let environment: [String: String]
  /// Where the font files are linked; fontconfig names them by this path.
  public let fontsDirectory: String
  private let directory: URL

  public init() throws {
    let listed = try Command.run("dpkg", ["-L", "fonts-dejavu-core"])
    let files = listed.stdout.split(separator: "\n").map(String.init)
      .filter { $0.hasSuffix(".ttf") }
    guard listed.status == 0, !files.isEmpty else {
      throw HarnessError("fonts-dejavu-core is not installed: \(listed.stderr)")
    }
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-fonts-\(UUID().uuidString)")
    let fonts = directory.appendingPathComponent("fonts")
    try FileManager.default.createDirectory(at: fonts, withIntermediateDirectories: true)
    for file in files {
      try FileManager.default.createSymbolicLink(
        atPath: fonts.appendingPathComponent((file as NSString).lastPathComponent).path,
        withDestinationPath: file)
    }
    fontsDirectory = fonts.path
    let config = directory.appendingPathComponent("fonts.conf")
    try """
    <?xml version="1.0"?>
    <!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
    <fontconfig>
      <dir>\(fonts.path)</dir>
      <cachedir>\(directory.path)/cache</cachedir>
      <include ignore_missing="yes">/etc/fonts/conf.d</include>
    </fontconfig>

    """.write(to: config, atomically: true, encoding: .utf8)
    environment = ["FONTCONFIG_FILE": config.path]
  }

  deinit { try? FileManager.default.removeItem(at: directory) }

  /// The characters of `text` that no font of `family` has, as `fc-list ':charset=…'` says.
  public func missing(in text: String, family: String) throws -> [Character] {
    var missing: [Character] = []
    for character in Set(text) where !character.isWhitespace {
      let codes = character.unicodeScalars.map { String($0.value, radix: 16) }.joined(
        separator: " ")
      let found = try Command.run(
        "fc-list", ["\(family):charset=\(codes)", "family"], environment: environment)
      if found.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
        missing.append(character)
      }
    }
    return missing.sorted()
  }
}
