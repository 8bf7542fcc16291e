import CSQLite
import FoundationEssentials
import Glibc

/// `SQLITE_TRANSIENT` is a cast macro that Swift does not import. It tells SQLite to copy a
/// bound string at once, which is required: a bridged Swift string lives only for the call.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A value bound to or read from a statement.
enum SQLValue: Equatable {
  case integer(Int64)
  case real(Double)
  case text(String)
  case null
}

/// One SQLite connection: the thin layer between the C API and the history store. Nothing
/// outside this file sees an `OpaquePointer`. Used from one thread at a time.
final class SQLiteConnection {
  let path: String
  private let handle: OpaquePointer

  /// Opens (and when `create`, creates) the database at `path`.
  /// - Parameter busyTimeout: how long a statement waits for another process's lock before
  ///   failing with `SQLITE_BUSY`, in milliseconds.
  init(path: String, readOnly: Bool = false, create: Bool = true, busyTimeout: Int32 = 5000)
    throws(HistoryError)
  {
    self.path = path
    var opened: OpaquePointer?
    let flags =
      readOnly
      ? SQLITE_OPEN_READONLY
      : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
    let code = sqlite3_open_v2(path, &opened, flags | SQLITE_OPEN_NOMUTEX, nil)
    guard let opened else { throw .cannotOpen(path: path, reason: "out of memory") }
    guard code == SQLITE_OK else {
      let error = Self.error(code: code, message: String(cString: sqlite3_errmsg(opened)), path)
      sqlite3_close_v2(opened)
      throw error
    }
    handle = opened
    sqlite3_extended_result_codes(handle, 1)
    // Another process (the CLI editing history while the daemon records) may hold the lock
    // for a moment; wait for it rather than failing. The daemon's writer waits less and
    // retries (HistoryWriter), the CLI waits the default.
    sqlite3_busy_timeout(handle, busyTimeout)
  }

  deinit { sqlite3_close_v2(handle) }

  /// Runs one or more statements that return no rows.
  func execute(_ sql: String) throws(HistoryError) {
    let code = sqlite3_exec(handle, sql, nil, nil, nil)
    guard code == SQLITE_OK else { throw failure(code) }
  }

  func prepare(_ sql: String) throws(HistoryError) -> SQLStatement {
    var statement: OpaquePointer?
    let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
    guard code == SQLITE_OK, let statement else { throw failure(code) }
    return SQLStatement(statement, connection: self)
  }

  /// Runs `sql` with `values` and returns every row, read by `read`.
  func query<T>(
    _ sql: String, _ values: [SQLValue] = [], _ read: (SQLRow) -> T
  ) throws(HistoryError) -> [T] {
    let statement = try prepare(sql)
    try statement.bind(values)
    var rows: [T] = []
    while try statement.step() { rows.append(read(SQLRow(statement: statement))) }
    return rows
  }

  /// Runs `sql` with `values` and hands each row to `body` as it is read (nothing is kept).
  func forEachRow(
    _ sql: String, _ values: [SQLValue] = [], _ body: (SQLRow) -> Void
  ) throws(HistoryError) {
    let statement = try prepare(sql)
    try statement.bind(values)
    while try statement.step() { body(SQLRow(statement: statement)) }
  }

  /// Runs a statement that returns no rows; returns how many rows it changed.
  @discardableResult
  func run(_ sql: String, _ values: [SQLValue] = []) throws(HistoryError) -> Int {
    let statement = try prepare(sql)
    try statement.bind(values)
    while try statement.step() {}
    return Int(sqlite3_changes(handle))
  }

  /// Runs `body` in one transaction: all of it is written, or none of it.
  @discardableResult
  func transaction<T>(_ body: () throws(HistoryError) -> T) throws(HistoryError) -> T {
    // IMMEDIATE takes the write lock now, so a concurrent writer waits here (busy timeout)
    // instead of failing halfway through.
    try execute("BEGIN IMMEDIATE")
    do {
      let result = try body()
      try execute("COMMIT")
      return result
    } catch {
      try? execute("ROLLBACK")
      throw error
    }
  }

  var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

  /// The error for a failed call, with SQLite's message.
  func failure(_ code: Int32) -> HistoryError {
    Self.error(code: code, message: String(cString: sqlite3_errmsg(handle)), path)
  }

  /// Maps SQLite's result codes to errors a person can act on.
  static func error(code: Int32, message: String, _ path: String) -> HistoryError {
    switch code & 0xff {
    case SQLITE_READONLY, SQLITE_PERM: .readOnly(path: path)
    case SQLITE_FULL: .diskFull(path: path)
    case SQLITE_CORRUPT, SQLITE_NOTADB: .corrupt(path: path)
    case SQLITE_CANTOPEN: .cannotOpen(path: path, reason: message)
    case SQLITE_BUSY, SQLITE_LOCKED: .locked(path: path)
    default: .sqlite(path: path, message: message)
    }
  }
}

/// A prepared statement. Finalized when released.
final class SQLStatement {
  fileprivate let handle: OpaquePointer
  private let connection: SQLiteConnection

  fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection) {
    self.handle = handle
    self.connection = connection
  }

  deinit { sqlite3_finalize(handle) }

  func bind(_ values: [SQLValue]) throws(HistoryError) {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
    for (offset, value) in values.enumerated() {
      let index = Int32(offset + 1)
      let code =
        switch value {
        case .integer(let number): sqlite3_bind_int64(handle, index, number)
        case .real(let number): sqlite3_bind_double(handle, index, number)
        case .text(let text): sqlite3_bind_text(handle, index, text, -1, transient)
        case .null: sqlite3_bind_null(handle, index)
        }
      guard code == SQLITE_OK else { throw connection.failure(code) }
    }
  }

  /// Advances to the next row; false when done.
  func step() throws(HistoryError) -> Bool {
    let code = sqlite3_step(handle)
    switch code {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default: throw connection.failure(code)
    }
  }
}

/// The current row of a statement, read by column index.
struct SQLRow {
  fileprivate let statement: SQLStatement

  func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement.handle, column) }
  func int(_ column: Int32) -> Int { Int(integer(column)) }
  func double(_ column: Int32) -> Double { sqlite3_column_double(statement.handle, column) }
  func isNull(_ column: Int32) -> Bool {
    sqlite3_column_type(statement.handle, column) == SQLITE_NULL
  }

  func text(_ column: Int32) -> String? {
    guard let bytes = sqlite3_column_text(statement.handle, column) else { return nil }
    return String(cString: bytes)
  }
}
