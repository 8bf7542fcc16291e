import FoundationEssentials
import Glibc
import GrowCore

/// What Grow changed on the notification server, kept on disk while it is changed, so that a
/// daemon killed with SIGKILL (or a crash) can put it back at its next start.
struct RestoreRecord: Codable, Equatable {
  /// The backend that was switched (`dunst`, …).
  var backend: String
  /// The server's DND state before Grow switched it.
  var previous: Bool
  /// What Grow set it to.
  var set: Bool
}

/// `$XDG_STATE_HOME/grow/dnd-restore.json`, mode 0600, replaced atomically.
struct RestoreFile {
  let path: String

  init(environment: [String: String]) {
    path = XDGDirectories(environment: environment).growState + "/dnd-restore.json"
  }

  func load() -> RestoreRecord? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    return try? JSONDecoder().decode(RestoreRecord.self, from: data)
  }

  /// Written to a temporary file in the same directory and renamed over the old one, so a
  /// crash mid-write never leaves half a record (`PrivateFiles.replace`).
  func save(_ record: RestoreRecord) throws {
    try PrivateFiles.replace(path, with: try JSONEncoder().encode(record))
  }

  func remove() { unlink(path) }
}
