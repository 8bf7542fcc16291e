import FoundationEssentials
import Glibc
import GrowCore

/// Keeps the running session in `$XDG_STATE_HOME/grow/session.json`, so that a daemon started
/// again after a crash or `kill -9` takes the session up where real time says it is.
///
/// Written on every change of the timer (never per second): a temporary file renamed over the
/// old one, so the file is always either the old session or the new one, and a daemon killed
/// right after a change finds it. The fsync that makes it survive a machine crash too is done
/// once per turn of the event loop, off the loop (`PrivateFiles.flushInBackground`), so a
/// burst of changes costs one and a busy disk never holds the loop.
/// A clean shutdown removes it: the session ended there (and history recorded it so).
public struct SessionStore {
  public let path: String

  /// `$XDG_STATE_HOME/grow/session.json`, or `~/.local/state/grow/session.json`.
  public static func defaultPath(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    XDGDirectories(environment: environment).sessionFile
  }

  enum LoadError: Error, CustomStringConvertible {
    case unreadable(String, String)
    var description: String {
      switch self {
      case .unreadable(let path, let reason):
        "the saved session in \(path) cannot be read (\(reason)); starting without it"
      }
    }
  }

  /// The saved session, or nil when there is none.
  func load() throws(LoadError) -> FocusTimer.SavedSession? {
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    do {
      let data = try Data(contentsOf: URL(fileURLWithPath: path))
      let decoder = JSONDecoder()
      decoder.dateDecodingStrategy = .secondsSince1970
      return try decoder.decode(FocusTimer.SavedSession.self, from: data)
    } catch {
      throw .unreadable(path, "\(error)")
    }
  }

  /// Saves `saved`, or removes the file for nil (idle); `flush` is false when `flush()`
  /// follows.
  func save(_ saved: FocusTimer.SavedSession?, flush: Bool = true) throws {
    guard let saved else {
      if FileManager.default.fileExists(atPath: path) {
        try FileManager.default.removeItem(atPath: path)
      }
      return
    }
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .secondsSince1970
    try PrivateFiles.replace(path, with: try encoder.encode(saved), flush: flush)
  }
}
