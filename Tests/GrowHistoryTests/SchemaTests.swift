import Foundation
import Testing

@testable import GrowHistory

@Suite struct SchemaTests {
  /// A database as the first release wrote it: schema 1, written here with raw SQL.
  @Test func aVersionOneDatabaseIsMigratedAndKeepsItsPhases() throws {
    let directory = try TemporaryDirectory()
    try FileManager.default.createDirectory(
      atPath: (directory.databasePath as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    do {
      let old = try SQLiteConnection(path: directory.databasePath)
      try old.execute(
        """
        CREATE TABLE phases (
          id INTEGER PRIMARY KEY, card TEXT NOT NULL, kind TEXT NOT NULL,
          planned_seconds REAL NOT NULL, actual_seconds REAL NOT NULL, started_at REAL NOT NULL,
          start_offset INTEGER NOT NULL, ended_at REAL NOT NULL, end_offset INTEGER NOT NULL,
          outcome TEXT NOT NULL, pause_count INTEGER NOT NULL DEFAULT 0,
          paused_seconds REAL NOT NULL DEFAULT 0, intention TEXT);
        -- 2026-03-08 00:10 in New York (05:10 UTC), the day before in UTC terms it is not.
        INSERT INTO phases VALUES
          (1, 'math', 'focus', 1500, 1500, 1772945100, -18000, 1772946600, -18000,
           'completed', 0, 0, 'old intention');
        PRAGMA user_version = 1;
        """)
    }
    let store = try HistoryStore(path: directory.databasePath)
    #expect(try store.schemaVersion() == HistoryStore.currentSchemaVersion)
    let phase = try #require(try store.phases().first)
    #expect(phase.card == "math")
    #expect(phase.intention == "old intention")
    #expect(phase.awaySeconds == 0)
    #expect(try store.phases(days: phase.day...phase.day).count == 1, "day was filled in")
    #expect(
      phase.day.text
        == HistoryExport.timestamp(phase.endedAt, offset: -18_000).prefix(10).description)
    try store.record(Distraction(phaseID: phase.id, appClass: "xterm", seconds: 5))
    #expect(try store.distractions().count == 1)
    #expect(try store.integrityCheck() == "ok")
  }

  /// Version 2 let a daemon killed at the wrong moment record a phase twice; version 3 keeps
  /// the first row of each phase, with every distraction, and refuses twins from then on.
  @Test func aVersionTwoDatabaseLosesItsTwinRowsButNotTheirDistractions() throws {
    let directory = try TemporaryDirectory()
    try FileManager.default.createDirectory(
      atPath: (directory.databasePath as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    do {
      let old = try SQLiteConnection(path: directory.databasePath)
      for version in 0..<2 { try old.execute(Schema.migrations[version]) }
      try old.execute(
        """
        INSERT INTO phases (id, card, kind, planned_seconds, actual_seconds, started_at,
          start_offset, ended_at, end_offset, outcome, day) VALUES
          (1, 'work', 'focus', 1500, 1500, 1772945100, 0, 1772946600, 0, 'completed', 20520),
          (2, 'work', 'short-break', 300, 300, 1772946600, 0, 1772946900, 0, 'completed', 20520),
          (3, 'work', 'focus', 1500, 1500, 1772945100, 0, 1772946600, 0, 'completed', 20520);
        INSERT INTO distractions (phase_id, app_class, seconds) VALUES
          (1, 'firefox', 10), (3, 'xterm', 20);
        PRAGMA user_version = 2;
        """)
    }
    let store = try HistoryStore(path: directory.databasePath)
    #expect(try store.phases().map(\.id) == [1, 2])
    #expect(try store.distractions().map(\.phaseID) == [1, 1])
    #expect(try store.distractions().map(\.appClass) == ["firefox", "xterm"])
    #expect(try store.integrityCheck() == "ok")
  }

  @Test func aDatabaseFromANewerGrowIsRefusedWithAHint() throws {
    let directory = try TemporaryDirectory()
    _ = try HistoryStore(path: directory.databasePath)
    let newer = HistoryStore.currentSchemaVersion + 1
    try SQLiteConnection(path: directory.databasePath).execute("PRAGMA user_version = \(newer)")
    #expect(
      throws: HistoryError.newerSchema(
        path: directory.databasePath, found: newer, supported: HistoryStore.currentSchemaVersion)
    ) { try HistoryStore(path: directory.databasePath) }
  }

  /// What `focus_days` must always hold: every focus phase grouped by day (the query the
  /// daemon ran over the whole history at every phase end before schema 4).
  static func groupedFocus(_ connection: SQLiteConnection) throws -> [String] {
    try connection.query(
      """
      SELECT day, total(iif(outcome = 'completed', actual_seconds, 0)),
        sum(outcome = 'completed'), total(iif(outcome = 'completed', 0, actual_seconds))
      FROM phases WHERE kind = 'focus' GROUP BY day ORDER BY day
      """
    ) { "\($0.int(0)) \($0.double(1)) \($0.int(2)) \($0.double(3))" }
  }

  static func focusDays(_ connection: SQLiteConnection) throws -> [String] {
    try connection.query(
      "SELECT day, completed_seconds, completed, cut_short_seconds FROM focus_days ORDER BY day"
    ) { "\($0.int(0)) \($0.double(1)) \($0.int(2)) \($0.double(3))" }
  }

  /// A version 3 database (the last release's) gets `focus_days` filled from its phases, and
  /// from then on the triggers keep it equal to grouping every phase, whoever inserts, edits
  /// or deletes (the daemon, grow history, the sqlite3 program).
  @Test func aVersionThreeDatabaseGetsFocusPerDayThatFollowsEveryChange() throws {
    let directory = try TemporaryDirectory()
    try FileManager.default.createDirectory(
      atPath: (directory.databasePath as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    do {
      let old = try SQLiteConnection(path: directory.databasePath)
      for version in 0..<3 { try old.execute(Schema.migrations[version]) }
      try old.execute(
        """
        INSERT INTO phases (card, kind, planned_seconds, actual_seconds, started_at,
          start_offset, ended_at, end_offset, outcome, day) VALUES
          ('work', 'focus', 1500, 1500, 1000, 0, 2500, 0, 'completed', 20520),
          ('work', 'short-break', 300, 300, 2500, 0, 2800, 0, 'completed', 20520),
          ('work', 'focus', 1500, 600.5, 2800, 0, 3400.5, 0, 'stopped', 20520),
          ('math', 'focus', 1500, 1500, 90000, 0, 91500, 0, 'completed', 20522);
        PRAGMA user_version = 3;
        """)
    }
    let store = try HistoryStore(path: directory.databasePath)
    #expect(try store.schemaVersion() == HistoryStore.currentSchemaVersion)
    let connection = try SQLiteConnection(path: directory.databasePath)
    #expect(try Self.focusDays(connection) == ["20520 1500.0 1 600.5", "20522 1500.0 1 0.0"])

    try store.record(
      PhaseRecord(
        card: "work", kind: .focus, plannedSeconds: 1500, actualSeconds: 1200,
        startedAt: Date(timeIntervalSince1970: 20520 * 86400 + 4000),
        endedAt: Date(timeIntervalSince1970: 20520 * 86400 + 5200),
        outcome: .completed, timeZone: .utc))
    #expect(try Self.focusDays(connection) == Self.groupedFocus(connection))
    try store.edit(id: 3, outcome: .completed)
    #expect(try Self.focusDays(connection) == Self.groupedFocus(connection))
    try store.delete(ids: [4])
    #expect(try Self.focusDays(connection) == Self.groupedFocus(connection))
    #expect(try Self.focusDays(connection).count == 1, "a day without focus has no row")
    // A phase moved to another day and turned into a break, as a hand edit could.
    try connection.execute("UPDATE phases SET day = 20530 WHERE id = 1")
    try connection.execute("UPDATE phases SET kind = 'short-break' WHERE id = 3")
    #expect(try Self.focusDays(connection) == Self.groupedFocus(connection))
    _ = try store.delete(days: LocalDay(number: 20500)...LocalDay(number: 20600))
    #expect(try Self.focusDays(connection).isEmpty)
    #expect(try store.integrityCheck() == "ok")
  }
}
