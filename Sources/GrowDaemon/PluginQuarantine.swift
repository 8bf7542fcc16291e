import FoundationEssentials
import Glibc
import GrowBasics
import GrowCore

/// In-process plugins that took the daemon down, kept out until the person lets them in again.
///
/// A library plugin runs inside the daemon: one that faults while it is opened or set up kills
/// the whole process, and, since the config still enables it, every start after. So before
/// the daemon opens or sets up a library it writes a marker, `starting-ID`, and removes it once
/// that returned. A marker found at the next start means the daemon died there: the plugin is
/// quarantined (the file `ID` holds why) and not loaded again until `grow plugins enable ID`
/// or `grow plugin install` removes that file. In `$XDG_STATE_HOME/grow/quarantine`.
public struct PluginQuarantine: Sendable {
  public let directory: String

  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    directory = XDGDirectories(environment: environment).growState + "/quarantine"
  }

  /// An id that names a file in `directory` and nothing else (not `..`, no slash).
  private static func isFileName(_ id: String) -> Bool {
    !id.isEmpty && !id.contains("/") && !id.hasPrefix(".")
  }

  private func marker(_ id: String) -> String { directory + "/starting-" + id }
  private func record(_ id: String) -> String { directory + "/" + id }

  /// Runs `work` (opening or setting up plugin `id`) with the marker on disk. The rename makes
  /// the marker whole or absent; it need not survive the machine, only the process.
  func whileStarting<T>(_ id: String, _ work: () throws -> T) rethrows -> T {
    try? PrivateFiles.replace(marker(id), with: Data(), flush: false)
    defer { unlink(marker(id)) }
    return try work()
  }

  /// Turns the markers a dead daemon left into quarantines; returns the ids.
  @discardableResult
  func quarantineLeftMarkers(now: Date = Date()) -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    var found: [String] = []
    for name in names.sorted() where name.hasPrefix("starting-") {
      let id = String(name.dropFirst("starting-".count))
      let when = now.formatted(Date.ISO8601FormatStyle())
      // The time only: the sentence around it is worded when it is read, in the reader's
      // language.
      try? PrivateFiles.replace(record(id), with: Data(when.utf8), flush: false)
      unlink(marker(id))
      found.append(id)
    }
    return found
  }

  /// Why plugin `id` is quarantined, as `grow plugins` and `grow doctor` show it; nil if not.
  public func reason(_ id: String) -> String? {
    guard Self.isFileName(id), let data = FileManager.default.contents(atPath: record(id))
    else { return nil }
    var when = String(decoding: data.prefix(500), as: UTF8.self)
    // A record an older Grow wrote holds the whole English sentence around the time.
    let older = "the daemon died while starting it ("
    if when.hasPrefix(older), when.hasSuffix(")") {
      when = String(when.dropFirst(older.count).dropLast())
    }
    return Message(
      "quarantined: the daemon died while starting it ({when}); not loaded again until "
        + "'grow plugins enable {id}' (or 'grow plugin install' of a new version)"
    ).render(["when": when, "id": id])
  }

  /// Lets plugin `id` load again; whether it was quarantined.
  @discardableResult
  public func release(_ id: String) -> Bool {
    guard Self.isFileName(id) else { return false }
    return unlink(record(id)) == 0
  }
}
