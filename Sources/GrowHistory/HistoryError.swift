/// Why the history could not be read or written. Every message names the file and says what
/// the person can do about it.
public enum HistoryError: Error, Equatable, CustomStringConvertible {
  /// The directory for the database could not be made (`reason` says why).
  case cannotCreateDirectory(path: String, reason: String)
  case cannotOpen(path: String, reason: String)
  case readOnly(path: String)
  case diskFull(path: String)
  /// Another program holds the database's write lock (an open `sqlite3` transaction, say).
  case locked(path: String)
  case corrupt(path: String)
  /// The file was written by a newer Grow.
  case newerSchema(path: String, found: Int, supported: Int)
  /// Any other SQLite failure, with SQLite's own message.
  case sqlite(path: String, message: String)
  case noSuchPhase(id: Int64)
  case noChange

  public var description: String {
    switch self {
    case .cannotCreateDirectory(let path, let reason):
      "cannot create the history directory \(path): \(reason)"
    case .cannotOpen(let path, let reason):
      "cannot open the history database \(path): \(reason)"
    case .readOnly(let path):
      "the history database \(path) is read-only; check the permissions of the file and its "
        + "directory, or the mount"
    case .diskFull(let path):
      "the disk holding the history database \(path) is full; free some space"
    case .locked(let path):
      "the history database \(path) is locked by another program (an open transaction in "
        + "sqlite3?); end that transaction"
    case .corrupt(let path):
      "the history database \(path) is damaged; move it aside and Grow starts a new one"
    case .newerSchema(let path, let found, let supported):
      "the history database \(path) was written by a newer Grow (schema \(found), this one "
        + "knows up to \(supported)); update Grow"
    case .sqlite(let path, let message):
      "history database \(path): \(message)"
    case .noSuchPhase(let id):
      "no phase with id \(id); 'grow history' lists them with their ids"
    case .noChange:
      "nothing to change; give --card NAME or --outcome OUTCOME"
    }
  }
}
