import Foundation
import GrowCore
import Testing

@testable import GrowHistory

@Suite struct HistoryStoreTests {
  @Test func aRecordedPhaseReadsBackWithEveryField() throws {
    let directory = try TemporaryDirectory()
    let store = try HistoryStore(path: directory.databasePath)
    var phase = PhaseRecord(
      card: "math", kind: .focus, plannedSeconds: 1500, actualSeconds: 1200.5,
      startedAt: local("2026-03-07 23:50"), endedAt: local("2026-03-08 00:15"),
      outcome: .stopped, pauseCount: 2, pausedSeconds: 300, intention: "Chapter 3, part \"b\"",
      timeZone: newYork)
    phase.id = try store.record(phase)
    #expect(phase.id == 1)
    #expect(try store.phases() == [phase])
    #expect(phase.startOffset == -5 * 3600)
    #expect(phase.day == LocalDay(text: "2026-03-08"), "a phase counts for the day it ended")
    #expect(
      try store.phases(days: LocalDay(text: "2026-03-07")!...LocalDay(text: "2026-03-07")!)
        .isEmpty)
    #expect(try store.phases(card: "work").isEmpty)
  }

  /// A daemon killed between recording a phase and saving the session after it ends the same
  /// phase again when it restarts; the history keeps one row (found by the soak).
  @Test func thePhaseRecordedAgainKeepsOneRowAndItsID() throws {
    let directory = try TemporaryDirectory()
    let store = try HistoryStore(path: directory.databasePath)
    let phase = focus("work", minutes: 25, endingAt: local("2026-03-02 10:00"))
    let first = try store.record(phase)
    try store.record(Distraction(phaseID: first, appClass: "firefox", seconds: 30))
    var again = phase
    again.intention = "a second write of the same phase"
    #expect(try store.record(again) == first)
    try store.record(all: [phase, phase])
    #expect(
      try store.phases() == [
        {
          var kept = phase
          kept.id = first
          kept.distractionCount = 1
          kept.distractionSeconds = 30
          return kept
        }()
      ])
    #expect(try store.distractions().count == 1)
    let end = try #require(try store.recordedEnd(of: .focus, startedAt: phase.startedAt))
    #expect(end.outcome == .completed && end.endedAt == phase.endedAt)
    #expect(try store.recordedEnd(of: .shortBreak, startedAt: phase.startedAt) == nil)
    // A different phase starting at the same instant (a break) is a row of its own.
    try store.record(
      PhaseRecord(
        card: "work", kind: .shortBreak, plannedSeconds: 300, actualSeconds: 300,
        startedAt: phase.startedAt, endedAt: phase.endedAt, outcome: .completed))
    #expect(try store.phases().count == 2)
  }

  @Test func theFileIsPrivateInWALModeAndIntact() throws {
    let directory = try TemporaryDirectory()
    let store = try HistoryStore(path: directory.databasePath)
    try store.record(focus("work", minutes: 25, endingAt: local("2026-03-02 10:00")))
    let attributes = try FileManager.default.attributesOfItem(atPath: directory.databasePath)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let parent = (directory.databasePath as NSString).deletingLastPathComponent
    let parentAttributes = try FileManager.default.attributesOfItem(atPath: parent)
    #expect((parentAttributes[.posixPermissions] as? Int) == 0o700)
    #expect(FileManager.default.fileExists(atPath: directory.databasePath + "-wal"))
    #expect(try store.integrityCheck() == "ok")
    #expect(try store.schemaVersion() == HistoryStore.currentSchemaVersion)
  }

  @Test func editChangesCardOrOutcomeAndNamesAMissingPhase() throws {
    let directory = try TemporaryDirectory()
    let store = try HistoryStore(path: directory.databasePath)
    let id = try store.record(focus("wrok", minutes: 25, endingAt: local("2026-03-02 10:00")))
    try store.edit(id: id, card: "work")
    try store.edit(id: id, outcome: .abandoned)
    let phase = try #require(try store.phases().first)
    #expect(phase.card == "work")
    #expect(phase.outcome == .abandoned)
    #expect(throws: HistoryError.noSuchPhase(id: 99)) { try store.edit(id: 99, card: "x") }
    #expect(throws: HistoryError.noChange) { try store.edit(id: id) }
    #expect(
      HistoryError.noSuchPhase(id: 99).description
        == "no phase with id 99; 'grow history' lists them with their ids")
  }

  @Test func deleteRemovesWholeLocalDaysAndTheirDistractions() throws {
    let directory = try TemporaryDirectory()
    let store = try HistoryStore(path: directory.databasePath)
    let kept = try store.record(focus("work", minutes: 25, endingAt: local("2026-03-01 23:59")))
    let gone = try store.record(focus("work", minutes: 25, endingAt: local("2026-03-02 00:01")))
    try store.record(focus("work", minutes: 25, endingAt: local("2026-03-03 23:59")))
    try store.record(Distraction(phaseID: gone, appClass: "firefox", seconds: 60))
    let days =
      try #require(LocalDay(text: "2026-03-02"))...(try #require(LocalDay(text: "2026-03-03")))
    #expect(try store.delete(days: days) == 2)
    #expect(try store.phases().map(\.id) == [kept])
    #expect(try store.distractions().isEmpty)
  }

  @Test func aFileWhereTheDirectoryShouldBeIsAClearError() throws {
    let directory = try TemporaryDirectory()
    let blocker = directory.url.appendingPathComponent("grow")
    #expect(FileManager.default.createFile(atPath: blocker.path, contents: Data("x".utf8)))
    #expect(throws: HistoryError.self) { try HistoryStore(path: directory.databasePath) }
    do {
      _ = try HistoryStore(path: directory.databasePath)
    } catch {
      #expect(
        error.description
          == "cannot create the history directory \(blocker.path): a file is in the way; "
          + "move it aside so Grow can keep history")
    }
  }

  @Test func aFileThatIsNotADatabaseIsReportedAsDamaged() throws {
    let directory = try TemporaryDirectory()
    try FileManager.default.createDirectory(
      atPath: (directory.databasePath as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    try Data(String(repeating: "not sqlite ", count: 200).utf8)
      .write(to: URL(fileURLWithPath: directory.databasePath))
    #expect(throws: HistoryError.corrupt(path: directory.databasePath)) {
      try HistoryStore(path: directory.databasePath)
    }
  }

  @Test func aFullDiskAndAReadOnlyFileHaveMessagesThatNameTheFile() {
    #expect(
      SQLiteConnection.error(code: 13, message: "database or disk is full", "/d/h.sqlite")
        .description == "the disk holding the history database /d/h.sqlite is full; free some space"
    )
    #expect(
      SQLiteConnection.error(code: 8, message: "readonly", "/d/h.sqlite").description
        == "the history database /d/h.sqlite is read-only; check the permissions of the file "
        + "and its directory, or the mount")
  }
}
