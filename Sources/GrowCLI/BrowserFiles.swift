import FoundationEssentials
@_spi(GrowHost) import GrowCore
@_spi(GrowBuiltIn) import GrowPluginKit

/// The files that let a browser start `grow browser-host` for Grow's extension (browser/):
/// a native messaging host manifest where each browser looks for one, naming a small script
/// that runs this grow. (A manifest's `path` takes no arguments, hence the script.)
enum BrowserFiles {
  /// The host's name, as the extension's `connectNative` asks for it (browser/background.js).
  static let hostName = "org.grow.grow"
  /// The extension's id in Chromium and Chrome: fixed by the public key in
  /// browser/manifest.json (`BrowserFilesTests` derives it from the key).
  static let chromiumExtensionID = "mikjebhnojnjhnhbjncinbcgejfbcinb"
  /// Its id in Firefox (`browser_specific_settings.gecko.id` in browser/manifest.json).
  static let firefoxExtensionID = "browser@grow.org"
  static let marker = "Written by 'grow install --user'"

  /// Where each browser reads per-user host manifests (Chromium and Chrome under
  /// `$XDG_CONFIG_HOME`, Firefox under `~/.mozilla`), with whether it is Firefox's kind.
  static func manifestPaths(configHome: String, home: String) -> [(path: String, firefox: Bool)] {
    [
      (configHome + "/chromium/NativeMessagingHosts/\(hostName).json", false),
      (configHome + "/google-chrome/NativeMessagingHosts/\(hostName).json", false),
      (home + "/.mozilla/native-messaging-hosts/\(hostName).json", true),
    ]
  }

  static func hostScriptPath(dataHome: String) -> String { dataHome + "/grow/browser-host" }

  /// The script a manifest names. `user`: written by `grow install --user`, so it carries the
  /// marker `--remove` looks for; a system-wide one (a package's) does not.
  static func hostScript(executable: String, user: Bool = true) -> String {
    let marker = user ? "\n# \(DesktopFiles.userMarker)" : ""
    return """
      #!/bin/sh\(marker)
      # The browser starts this for Grow's extension (docs/browser.md).
      exec \(DesktopFiles.quotedForExec(executable)) browser-host "$@"

      """
  }

  /// A host manifest: Chromium lists the extension's origin, Firefox its id. `user`: one
  /// `grow install --user` wrote (its description says how to remove it); otherwise a
  /// system-wide one, which the package manager owns.
  static func manifest(script: String, firefox: Bool, user: Bool = true) -> String {
    let allowed: JSONValue =
      firefox
      ? .object(["allowed_extensions": .array([.string(firefoxExtensionID)])])
      : .object([
        "allowed_origins": .array([.string("chrome-extension://\(chromiumExtensionID)/")])
      ])
    guard case .object(var fields) = allowed else { return "" }
    fields["name"] = .string(hostName)
    let about = "Grow, the focus timer: tells it the page in front of you."
    fields["description"] = .string(
      user ? "\(about) \(marker); 'grow install --user --remove' deletes it." : about)
    fields["path"] = .string(script)
    fields["type"] = .string("stdio")
    return JSONValue.object(fields).text + "\n"
  }

  /// The extension's folder next to an installed grow (`make install` puts it in
  /// PREFIX/share/grow/browser), if there is one.
  static func installedExtension(executable: String) -> String? {
    let prefix = PathText.directory(of: PathText.directory(of: executable))
    let folder = prefix + "/share/grow/browser"
    return FileManager.default.fileExists(atPath: folder + "/manifest.json") ? folder : nil
  }
}
