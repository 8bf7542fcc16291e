import Foundation

/// The `sqlite3` program with a transaction open on a database, as another program (a person
/// looking at their history in a shell) holds one: the tests' way to lock the history.
public final class SQLiteTransaction {
  public enum Kind: Sendable {
    /// `BEGIN IMMEDIATE`: the write lock. Others can read, nobody else can write.
    case writeLock
    /// `BEGIN` and a read: a snapshot, which keeps checkpoints from copying anything written
    /// after it into the database file.
    case readSnapshot
  }

  public let process: BackgroundProcess

  /// Returns once the transaction is open (sqlite3 has answered inside it).
  public init(_ kind: Kind, on path: String) throws {
    process = try BackgroundProcess("sqlite3", [path], writableStdin: true)
    let begin = kind == .writeLock ? "BEGIN IMMEDIATE;" : "BEGIN;"
    process.writeToStdin("\(begin)\nSELECT 'open', count(*) FROM sqlite_schema;\n")
    guard process.waitUntil(timeout: 10, { process.stdout.contains("open|") }) else {
      throw HarnessError("sqlite3 could not open a transaction on \(path): \(process.stderr)")
    }
  }

  /// Commits (nothing was changed) and lets sqlite3 exit.
  public func end() {
    process.writeToStdin("COMMIT;\n.quit\n")
    process.waitForExit(timeout: 10)
  }
}
