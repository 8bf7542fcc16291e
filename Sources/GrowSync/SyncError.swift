import GrowHistory
import GrowMessages

/// Why sync could not do what was asked. Every message names the file and says what to do.
public enum SyncError: Error, Equatable, CustomStringConvertible {
  /// The sync folder (or the state directory) could not be made.
  case cannotCreateDirectory(path: String, reason: String)
  /// This machine's id could not be read or kept.
  case machineID(path: String, reason: String)
  /// This machine's journal could not be written.
  case cannotWrite(path: String, reason: String)
  /// A file of this machine's that sync writes is a symbolic link or not a regular file.
  case notARegularFile(path: String)
  case history(HistoryError)

  public var description: String {
    switch self {
    case .cannotCreateDirectory(let path, let reason):
      Message("cannot create {path} ({reason}); check its parent's permissions").render([
        "path": path, "reason": reason,
      ])
    case .machineID(let path, let reason):
      Message(
        "cannot keep this machine's sync id in {path} ({reason}); check that the directory is "
          + "writable"
      ).render(["path": path, "reason": reason])
    case .cannotWrite(let path, let reason):
      Message(
        "cannot write this machine's sync journal {path} ({reason}); the phases wait in the "
          + "history and are written there once it can be"
      ).render(["path": path, "reason": reason])
    case .notARegularFile(let path):
      Message(
        "{path} is not a regular file (a symbolic link?); Grow never follows one there: move it "
          + "aside"
      ).render(["path": path])
    case .history(let error):
      error.description
    }
  }
}
