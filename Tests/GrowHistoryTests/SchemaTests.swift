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
    try SQLiteConnection(path: directory.databasePath).execute("PRAGMA user_version = 9")
    #expect(
      throws: HistoryError.newerSchema(
        path: directory.databasePath, found: 9, supported: HistoryStore.currentSchemaVersion)
    ) { try HistoryStore(path: directory.databasePath) }
  }
}
