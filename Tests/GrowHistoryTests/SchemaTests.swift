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
    #expect(try store.schemaVersion() == 2)
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

  @Test func aDatabaseFromANewerGrowIsRefusedWithAHint() throws {
    let directory = try TemporaryDirectory()
    _ = try HistoryStore(path: directory.databasePath)
    try SQLiteConnection(path: directory.databasePath).execute("PRAGMA user_version = 9")
    #expect(
      throws: HistoryError.newerSchema(path: directory.databasePath, found: 9, supported: 2)
    ) { try HistoryStore(path: directory.databasePath) }
  }
}
