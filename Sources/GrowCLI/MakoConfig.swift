import Foundation
import GrowCore

/// What `grow doctor` needs from a mako config: whether its `do-not-disturb` mode hides
/// anything. Grow's DND for mako adds that mode (Plugins/DoNotDisturbPlugin/DndBackends.swift),
/// which does nothing unless the config gives it `invisible=1`.
struct MakoConfig: Equatable {
  /// The file mako 1.7 reads: `$XDG_CONFIG_HOME/mako/config` (`~/.config` without it), else
  /// `~/.mako/config`; nil when neither exists (mako then runs on its defaults).
  let path: String?
  /// A `[mode=do-not-disturb]` section sets `invisible=1`.
  let modeHidesNotifications: Bool
  /// A section for that mode and `urgency=critical` sets `invisible=0`: critical ones show.
  let modeShowsCritical: Bool

  init(environment: [String: String]) {
    let directories = XDGDirectories(environment: environment)
    let candidates = [directories.configHome + "/mako/config", directories.home + "/.mako/config"]
    let path = candidates.first { FileManager.default.fileExists(atPath: $0) }
    let text = path.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
    self.init(path: path, text: text)
  }

  init(path: String?, text: String) {
    self.path = path
    var hides = false
    var showsCritical = false
    // Criteria of the section being read; nil before the first header (global options).
    var criteria: Set<String>?
    for rawLine in text.split(whereSeparator: \.isNewline) {
      let line = rawLine.trimmingCharacters(in: .whitespaces)
      if line.isEmpty || line.hasPrefix("#") { continue }
      if line.hasPrefix("["), line.hasSuffix("]") {
        criteria = Set(line.dropFirst().dropLast().split(separator: " ").map(String.init))
        continue
      }
      guard let criteria, criteria.contains("mode=do-not-disturb") else { continue }
      let parts = line.split(separator: "=", maxSplits: 1).map {
        $0.trimmingCharacters(in: .whitespaces)
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
