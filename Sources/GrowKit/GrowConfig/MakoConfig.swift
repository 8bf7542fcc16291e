import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore

/// What Grow needs from a mako config: whether its `do-not-disturb` mode hides anything, and
/// whether it still shows critical notifications. Grow's DND for mako adds that mode
/// (Plugins/DoNotDisturbPlugin/DndBackends.swift), which does nothing unless the config gives
/// it `invisible=1`; `grow doctor` says so, and the notify plugin sends its own notifications
/// during focus as critical only where a section lets critical ones through. The built-in
/// plugins' and `grow doctor`'s (`@_spi(GrowBuiltIn)`), not part of the plugin API.
@_spi(GrowBuiltIn) public struct MakoConfig: Equatable, Sendable {
  /// mako configs are a few lines; a larger file is not read (the notify plugin reads it on
  /// the daemon's loop).
  public static let maximumFileSize = 256 * 1024

  /// The file mako 1.7 reads: `$XDG_CONFIG_HOME/mako/config` (`~/.config` without it), else
  /// `~/.mako/config`; nil when neither exists (mako then runs on its defaults).
  public let path: String?
  /// A `[mode=do-not-disturb]` section sets `invisible=1`.
  public let modeHidesNotifications: Bool
  /// A section for that mode and `urgency=critical` sets `invisible=0`: critical ones show.
  public let modeShowsCritical: Bool

  public init(environment: [String: String]) {
    let directories = XDGDirectories(environment: environment)
    var found: (path: String, text: String)?
    for path in [directories.configHome + "/mako/config", directories.home + "/.mako/config"] {
      switch RawFile.contents(of: path, limit: Self.maximumFileSize) {
      case .missing: continue
      case .bytes(let bytes): found = (path, String(decoding: bytes, as: UTF8.self))
      // mako would fail on it too; nothing in it counts.
      default: found = (path, "")
      }
      break
    }
    self.init(path: found?.path, text: found?.text ?? "")
  }

  public init(path: String?, text: String) {
    self.path = path
    var hides = false
    var showsCritical = false
    // Criteria of the section being read; nil before the first header (global options).
    var criteria: Set<String>?
    for rawLine in text.split(whereSeparator: \.isNewline) {
      let line = rawLine.trimmingWhitespace()
      if line.isEmpty || line.hasPrefix("#") { continue }
      if line.hasPrefix("["), line.hasSuffix("]") {
        criteria = Set(line.dropFirst().dropLast().split(separator: " ").map(String.init))
        continue
      }
      guard let criteria, criteria.contains("mode=do-not-disturb") else { continue }
      let parts = line.split(separator: "=", maxSplits: 1).map {
        $0.trimmingWhitespace()
      }
      guard parts.count == 2, parts[0] == "invisible" else { continue }
      let on = ["1", "true"].contains(parts[1])
      if criteria == ["mode=do-not-disturb"], on { hides = true }
      if criteria == ["mode=do-not-disturb", "urgency=critical"], !on { showsCritical = true }
    }
    modeHidesNotifications = hides
    modeShowsCritical = showsCritical
  }
}
