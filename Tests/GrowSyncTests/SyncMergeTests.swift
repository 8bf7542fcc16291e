import Foundation
import GrowCore
import GrowHistory
import Testing

@testable import GrowSync

/// One machine of a test: its own history, and its own copy of the sync folder.
final class TestMachine {
  let root: URL
  let identity: MachineIdentity
  let store: HistoryStore
  let folder: SyncFolder

  init(_ name: String, id: String, root: URL) throws {
    self.root = root.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: self.root, withIntermediateDirectories: true)
    identity = MachineIdentity(id: id, name: name)
    store = try HistoryStore(path: self.root.appendingPathComponent("history.sqlite").path)
    folder = SyncFolder(path: self.root.appendingPathComponent("Sync").path, identity: identity)
    try folder.create()
  }

  /// A completed focus of 25 minutes ending `minutes` after a fixed instant.
  @discardableResult
  func grow(_ card: String, endingAfter minutes: Double) throws -> PhaseRecord {
    let end = Date(timeIntervalSince1970: 1_780_000_000 + minutes * 60)
    var phase = PhaseRecord(
      card: card, kind: .focus, plannedSeconds: 1500, actualSeconds: 1500,
      startedAt: end.addingTimeInterval(-1500), endedAt: end, outcome: .completed, timeZone: .utc)
    phase.id = try store.record(phase)
    return phase
  }

  /// Writes this machine's new phases into its journal.
  func journal() throws { try folder.writeNewPhases(from: store) }

  var journalData: Data {
    (try? Data(contentsOf: URL(fileURLWithPath: folder.journalPath))) ?? Data()
  }

  /// What every machine should agree on: each phase by uid, where it was grown, its card and
  /// outcome.
  func agreed() throws -> [String] {
    try store.phases().map { phase in
      "\(phase.uid ?? "unshared") \(phase.machine ?? identity.id) \(phase.card) "
        + "\(phase.outcome.rawValue) \(phase.startedAt.timeIntervalSince1970)"
    }.sorted()
  }
}

/// Copies `bytes` (a journal, or a first part of it, as a sync tool might leave it midway) into
/// `machine`'s folder as `name`, replacing what was there by a rename as Syncthing does.
func deliver(_ bytes: Data, as name: String, to machine: TestMachine) throws {
  let target = URL(fileURLWithPath: machine.folder.path).appendingPathComponent(name)
  let temporary = URL(fileURLWithPath: machine.folder.path)
    .appendingPathComponent(".syncthing.\(name).tmp")
  try bytes.write(to: temporary)
  _ = rename(temporary.path, target.path)
}

@Suite struct SyncMergeTests {
  let root = FileManager.default.temporaryDirectory.appendingPathComponent(
    "grow-sync-\(UUID().uuidString)")

  /// Three machines grow phases, edit and delete them (two editing the same phase), and
  /// their journals arrive at each other in every kind of order: whole, in parts cut mid-line,
  /// repeated, twice as conflict copies. Every machine ends with the same history.
  @Test(arguments: 0..<12) func everyMachineConvergesWhateverOrderTheJournalsArriveIn(seed: UInt64)
    throws
  {
    defer { try? FileManager.default.removeItem(at: root) }
    var random = SeededRandom(seed: seed)
    let machines = try [
      TestMachine("laptop", id: "aaaaaaaaaaaaaaaa", root: root),
      TestMachine("desktop", id: "bbbbbbbbbbbbbbbb", root: root),
      TestMachine("office", id: "cccccccccccccccc", root: root),
    ]
    for (index, machine) in machines.enumerated() {
      for minute in stride(from: 0.0, to: 300, by: 30) {
        try machine.grow(["math", "work", "art"][index], endingAfter: minute + Double(index))
      }
      try machine.journal()
    }
    // Everyone gets everything once, so the edits below can name other machines' phases.
    for machine in machines {
      for other in machines where other !== machine {
        try deliver(other.journalData, as: other.identity.journalName, to: machine)
      }
      _ = machine.folder.merge(into: machine.store)
    }
    // Edits and deletes: the laptop and the desktop both edit the office's first phase (the
    // later edit must win everywhere), the office deletes one of the laptop's phases, the
    // desktop edits one the laptop deletes.
    let officeFirst = try #require(try machines[2].store.phases(machine: "").first?.uid)
    let laptopPhases = try machines[0].store.phases(machine: "").compactMap(\.uid)
    let t0 = Date(timeIntervalSince1970: 1_790_000_000)
    try machines[0].folder.recordChange(
      [.card("laptop-says")], uid: officeFirst, at: t0, in: machines[0].store)
    try machines[1].folder.recordChange(
      [.card("desktop-says"), .outcome(.stopped)], uid: officeFirst, at: t0 + 5,
      in: machines[1].store)
    try machines[2].folder.recordChange(
      [.deleted], uid: laptopPhases[1], at: t0 + 1, in: machines[2].store)
    try machines[1].folder.recordChange(
      [.card("after-delete")], uid: laptopPhases[2], at: t0 + 9, in: machines[1].store)
    try machines[0].folder.recordChange(
      [.deleted], uid: laptopPhases[2], at: t0 + 2, in: machines[0].store)
    // More phases after the edits.
    for (index, machine) in machines.enumerated() {
      try machine.grow("late", endingAfter: 1000 + Double(index))
      try machine.journal()
    }

    // Deliveries in a shuffled order, some cut short (a partial last line), some repeated,
    // some as conflict copies; a merge after each.
    var deliveries: [(from: Int, to: Int, cut: Bool, conflict: Bool)] = []
    for from in 0..<3 {
      for to in 0..<3 where to != from {
        deliveries.append((from, to, false, false))
        deliveries.append((from, to, random.next() % 2 == 0, false))
        if random.next() % 3 == 0 { deliveries.append((from, to, false, true)) }
      }
    }
    deliveries.shuffle(using: &random)
    for delivery in deliveries {
      let source = machines[delivery.from]
      let target = machines[delivery.to]
      var bytes = source.journalData
      if delivery.cut { bytes = bytes.prefix(Int(random.next() % UInt64(bytes.count))) }
      let name =
        delivery.conflict
        ? source.identity.journalName.replacingOccurrences(
          of: ".jsonl", with: ".sync-conflict-20261204-070000-ABCDEFG.jsonl")
        : source.identity.journalName
      try deliver(bytes, as: name, to: target)
      _ = target.folder.merge(into: target.store)
    }
    // Whatever was cut short arrives whole in the end.
    for machine in machines {
      for other in machines where other !== machine {
        try deliver(other.journalData, as: other.identity.journalName, to: machine)
      }
      _ = machine.folder.merge(into: machine.store)
    }

    let histories = try machines.map { try $0.agreed() }
    #expect(histories[0] == histories[1])
    #expect(histories[1] == histories[2])
    #expect(histories[0].count == 3 * 10 - 2 + 3, "two phases deleted, three late ones")
    let office = try #require(try machines[0].store.phases().first { $0.uid == officeFirst })
    #expect(office.card == "desktop-says" && office.outcome == .stopped, "the later edit wins")
    #expect(try machines[1].store.phases().allSatisfy { $0.uid != laptopPhases[2] })
    #expect(
      try machines[1].store.phases(machine: "aaaaaaaaaaaaaaaa").allSatisfy {
        $0.machineName == "laptop"
      })
  }

  /// A journal merged twice, and its conflict copy, count once; Syncthing's temporary files
  /// are not read at all.
  @Test func conflictCopiesAndTemporaryFilesAreNeverCountedTwice() throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let laptop = try TestMachine("laptop", id: "aaaaaaaaaaaaaaaa", root: root)
    let desktop = try TestMachine("desktop", id: "bbbbbbbbbbbbbbbb", root: root)
    for minute in [0.0, 30, 60] { try laptop.grow("math", endingAfter: minute) }
    try laptop.journal()
    let name = laptop.identity.journalName
    try deliver(laptop.journalData, as: name, to: desktop)
    try deliver(
      laptop.journalData,
      as: name.replacingOccurrences(of: ".jsonl", with: ".sync-conflict-20261204-1-XYZ.jsonl"),
      to: desktop)
    try laptop.journalData.write(
      to: URL(fileURLWithPath: desktop.folder.path).appendingPathComponent(".syncthing.x.jsonl.tmp")
    )
    let first = desktop.folder.merge(into: desktop.store)
    #expect(first.result.added == 3)
    #expect(first.problems.isEmpty)
    #expect(desktop.folder.merge(into: desktop.store).result == SyncMergeResult())
    #expect(try desktop.store.phases().count == 3)
    #expect(try desktop.store.dailyActivity().values.map(\.completedFocus).reduce(0, +) == 3)
  }

  /// A year of this machine's history joins: written into its journal once, then only new
  /// phases.
  @Test func existingHistoryIsWrittenToTheJournalOnce() throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let laptop = try TestMachine("laptop", id: "aaaaaaaaaaaaaaaa", root: root)
    for minute in stride(from: 0.0, to: 600, by: 30) {
      try laptop.grow("math", endingAfter: minute)
    }
    #expect(try laptop.folder.writeNewPhases(from: laptop.store) == 20)
    #expect(try laptop.folder.writeNewPhases(from: laptop.store) == 0)
    try laptop.grow("math", endingAfter: 900)
    #expect(try laptop.folder.writeNewPhases(from: laptop.store) == 1)
    let lines = String(decoding: laptop.journalData, as: UTF8.self).split(separator: "\n")
    #expect(lines.count == 22, "the journal line and 21 phases")
    #expect(lines[0].contains(#""type":"journal""#))
    // Its own journal read back (a history file lost and made anew) restores the phases.
    let fresh = try HistoryStore(path: laptop.root.appendingPathComponent("new.sqlite").path)
    let report = laptop.folder.merge(into: fresh)
    #expect(report.result.added == 21)
    #expect(try fresh.phases().allSatisfy { $0.machine == nil })
  }

  /// This machine's journal loses its tail (a restore from an older backup, a disk that lost
  /// its last block, in the middle of a line): the next write puts every phase it no longer
  /// holds back, so the other machines still get them, and each counts once.
  @Test func aJournalCutShortIsWrittenWholeAgain() throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let laptop = try TestMachine("laptop", id: "aaaaaaaaaaaaaaaa", root: root)
    let desktop = try TestMachine("desktop", id: "bbbbbbbbbbbbbbbb", root: root)
    for minute in [0.0, 30, 60] { try laptop.grow("math", endingAfter: minute) }
    try laptop.journal()
    let whole = laptop.journalData
    // The last phase's line cut in half, before any other machine saw it.
    #expect(truncate(laptop.folder.journalPath, off_t(whole.count - 40)) == 0)
    try laptop.grow("math", endingAfter: 90)
    try laptop.journal()
    try deliver(laptop.journalData, as: laptop.identity.journalName, to: desktop)
    _ = desktop.folder.merge(into: desktop.store)
    #expect(try desktop.store.phases().filter { $0.machine != nil }.count == 4)
    // A journal that only grew is never written again.
    let size = laptop.journalData.count
    try laptop.grow("math", endingAfter: 120)
    try laptop.journal()
    let added = String(decoding: laptop.journalData.dropFirst(size), as: UTF8.self)
    #expect(added.split(separator: "\n").count == 1, "\(added)")
    try deliver(laptop.journalData, as: laptop.identity.journalName, to: desktop)
    _ = desktop.folder.merge(into: desktop.store)
    #expect(try desktop.store.phases().filter { $0.machine != nil }.count == 5)
  }

  /// Damaged journals are read as far as they are valid, each problem named by file and line;
  /// the history keeps what it had.
  @Test func damagedJournalsAreReadAsFarAsTheyAreValid() throws {
    defer { try? FileManager.default.removeItem(at: root) }
    let laptop = try TestMachine("laptop", id: "aaaaaaaaaaaaaaaa", root: root)
    let desktop = try TestMachine("desktop", id: "bbbbbbbbbbbbbbbb", root: root)
    try desktop.grow("own", endingAfter: 5)
    for minute in [0.0, 30, 60, 90] { try laptop.grow("math", endingAfter: minute) }
    try laptop.journal()
    var lines = String(decoding: laptop.journalData, as: UTF8.self).split(separator: "\n")
      .map(String.init)
    // Line 3 damaged, line 5 from a newer Grow (reading stops there), and a partial last line.
    lines[2] = "{\"v\":1,\"type\":\"phase\",\"uid\":"
    lines.insert(#"{"v":2,"type":"phase","uid":"x"}"#, at: 4)
    let text = lines.joined(separator: "\n") + "\n" + #"{"v":1,"type":"pha"#
    let name = laptop.identity.journalName
    try deliver(Data(text.utf8), as: name, to: desktop)
    try deliver(Data("hello, not a journal\n".utf8), as: "notes.jsonl", to: desktop)
    let report = desktop.folder.merge(into: desktop.store)
    #expect(report.result.added == 2, "lines 2 and 4 (line 3 is damaged, line 5 is newer)")
    let path = desktop.folder.path + "/" + name
    #expect(
      report.problems.contains(
        JournalProblem(
          path: path, line: 3, issue: .invalidRecord("not a journal record (JSON with v and type)"))
      ))
    #expect(report.problems.contains(JournalProblem(path: path, line: 5, issue: .newerVersion(2))))
    #expect(
      report.problems.contains(
        JournalProblem(path: desktop.folder.path + "/notes.jsonl", line: 1, issue: .notGrows)))
    #expect(report.problems.first { $0.line == 3 }?.description.hasPrefix(path + ":3: ") == true)
    #expect(try desktop.store.phases(machine: "").map(\.card) == ["own"])

    // Restored from a backup: a shorter file replaces it. Read again from the start.
    try deliver(Data((lines.prefix(2).joined(separator: "\n") + "\n").utf8), as: name, to: desktop)
    let again = desktop.folder.merge(into: desktop.store)
    #expect(again.problems.filter { $0.path == path }.map(\.issue) == [.rewritten])
    #expect(try desktop.store.phases().count == 3, "what it no longer holds stays")
    #expect(desktop.folder.check().problems.isEmpty == false, "the notes file is still there")
  }
}

/// A small seeded generator (SplitMix64), so a failing shuffle can be run again.
struct SeededRandom: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

@Suite struct MachineIdentityTests {
  /// Made once, then read back the same by every program (the daemon, the CLI).
  @Test func theIdIsMadeOnceAndKept() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "grow-id-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("grow/machine-id").path
    let made = try MachineIdentity.load(path: path, name: "laptop")
    #expect(MachineIdentity.isValidID(made.id))
    #expect(try MachineIdentity.load(path: path, name: "laptop") == made)
    #expect(made.journalName == "grow-laptop-\(made.id).jsonl")
    #expect(MachineIdentity(id: made.id, name: "my pc/2").journalName.hasPrefix("grow-my_pc_2-"))
  }
}
