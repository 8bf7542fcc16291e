import FoundationEssentials
import GrowCore

/// When and where an edit or delete was made: what last-writer-wins compares, the time first,
/// then the machine id (so two machines that edit at the same instant still agree).
public struct SyncStamp: Sendable, Hashable, Comparable, Codable {
  /// Unix seconds.
  public var at: Double
  public var machine: String

  public init(at: Double, machine: String) {
    self.at = at
    self.machine = machine
  }

  public static func < (lhs: SyncStamp, rhs: SyncStamp) -> Bool {
    (lhs.at, lhs.machine) < (rhs.at, rhs.machine)
  }
}

/// An edit or a delete of a synced phase, as journals carry it.
public enum SyncChange: Sendable, Equatable {
  case card(String)
  case outcome(HistoryOutcome)
  /// Gone for good: a delete is never undone, so a late edit cannot bring a phase back.
  case deleted

  /// The sync_changes field it sets.
  public var field: String {
    switch self {
    case .card: "card"
    case .outcome: "outcome"
    case .deleted: "deleted"
    }
  }

  var value: String {
    switch self {
    case .card(let card): card
    case .outcome(let outcome): outcome.rawValue
    case .deleted: "1"
    }
  }
}

/// One record of a sync journal, read and checked (GrowSync), for `HistoryStore.merge`.
public enum SyncItem: Sendable, Equatable {
  /// A machine's id and name, from its journal's first line.
  case machine(id: String, name: String)
  /// An ended phase with its `uid` and `machine` set, and its distractions.
  case phase(PhaseRecord, [Distraction])
  case change(uid: String, SyncChange, SyncStamp)
}

/// What `HistoryStore.merge` changed.
public struct SyncMergeResult: Sendable, Equatable {
  /// Phases new to this history.
  public var added = 0
  /// Phases edited or deleted by a change that won.
  public var changed = 0
  /// Records this history had already (a journal read again, a conflict copy).
  public var known = 0

  public init() {}

  public var changedAnything: Bool { added + changed > 0 }

  public mutating func add(_ other: SyncMergeResult) {
    added += other.added
    changed += other.changed
    known += other.known
  }
}

/// A machine whose phases the history has from a sync journal.
public struct SyncMachine: Sendable, Equatable {
  public var id: String
  public var name: String
  /// The end of its latest phase.
  public var lastRecordAt: Date?
  public var phases: Int
}

/// How far a journal in the sync folder has been read.
public struct JournalPosition: Sendable, Equatable {
  /// The file's inode: another one at the same name was replaced (a restore, a rewrite).
  public var inode: UInt64
  /// Bytes read: every whole line before this offset is in the history.
  public var offset: Int64
  /// Lines read, for messages that name a line.
  public var line: Int

  public init(inode: UInt64, offset: Int64, line: Int) {
    self.inode = inode
    self.offset = offset
    self.line = line
  }
}

/// One history over several machines (docs/sync.md): the records other machines' journals
/// bring are merged here, and this machine's phases are found for its own journal.
///
/// A phase is known everywhere by its uid, so merging the same record twice (a journal read
/// again, a Syncthing conflict copy) changes nothing. Edits and deletes are kept per phase and
/// field with their `SyncStamp`; the latest wins, and one that comes before its phase waits
/// for it, so every machine ends with the same history whatever order the files arrive in.
extension HistoryStore {
  /// Merges `items` in one transaction. A phase whose machine is `thisMachine` is this
  /// machine's own (read back from its journal: after a lost database, say). `journal`, the
  /// journal the items came from and how far it is read with them, is kept in the same
  /// transaction.
  public func merge(
    _ items: [SyncItem], thisMachine: String,
    journal: (name: String, position: JournalPosition)? = nil
  ) throws(HistoryError) -> SyncMergeResult {
    try transactionForSync { () throws(HistoryError) in
      var result = SyncMergeResult()
      if let journal { try setJournalPosition(journal.name, journal.position) }
      for item in items {
        switch item {
        case .machine(let id, let name):
          guard id != thisMachine else { continue }
          try run(
            """
            INSERT INTO sync_machines (id, name) VALUES (?, ?)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name
            """, [.text(id), .text(name)])
        case .phase(var phase, let distractions):
          if phase.machine == thisMachine { phase.machine = nil }
          result.add(try mergePhase(phase, distractions: distractions))
        case .change(let uid, let change, let stamp):
          result.add(try mergeChange(uid: uid, change, stamp: stamp))
        }
      }
      return result
    }
  }

  private func mergePhase(_ phase: PhaseRecord, distractions: [Distraction])
    throws(HistoryError) -> SyncMergeResult
  {
    var result = SyncMergeResult()
    guard let uid = phase.uid else { return result }
    let seen = try query(
      """
      SELECT 1 FROM phases WHERE uid = ?1
      UNION ALL SELECT 1 FROM sync_changes WHERE uid = ?1 AND field = 'deleted'
      """, [.text(uid)]
    ) { _ in true }
    guard seen.isEmpty else {
      result.known = 1
      return result
    }
    let (id, added) = try writeRow(phase, distractions: distractions)
    guard added else {
      // This machine's own phase, kept here before its journal line was read back.
      try run("UPDATE phases SET uid = ? WHERE id = ? AND uid IS NULL", [.text(uid), .integer(id)])
      result.known = 1
      return result
    }
    result.added = 1
    // Edits that came before the phase did.
    let waiting = try query(
      "SELECT field, value FROM sync_changes WHERE uid = ?", [.text(uid)]
    ) { row in (row.text(0) ?? "", row.text(1) ?? "") }
    for (field, value) in waiting { try apply(field: field, value: value, uid: uid) }
    if let machine = phase.machine {
      try run(
        """
        UPDATE sync_machines SET last_record_at = max(coalesce(last_record_at, 0), ?)
        WHERE id = ?
        """, [.real(phase.endedAt.timeIntervalSince1970), .text(machine)])
    }
    return result
  }

  private func mergeChange(uid: String, _ change: SyncChange, stamp: SyncStamp)
    throws(HistoryError) -> SyncMergeResult
  {
    var result = SyncMergeResult()
    guard try keepIfLatest(uid: uid, change, stamp: stamp) else {
      result.known = 1
      return result
    }
    result.changed = try apply(field: change.field, value: change.value, uid: uid) > 0 ? 1 : 0
    return result
  }

  /// Stores the change unless one at least as late is there; true when it was stored.
  private func keepIfLatest(uid: String, _ change: SyncChange, stamp: SyncStamp)
    throws(HistoryError) -> Bool
  {
    let found = try query(
      "SELECT at, machine FROM sync_changes WHERE uid = ? AND field = ?",
      [.text(uid), .text(change.field)]
    ) { row in SyncStamp(at: row.double(0), machine: row.text(1) ?? "") }.first
    if let found, found >= stamp { return false }
    try run(
      """
      INSERT OR REPLACE INTO sync_changes (uid, field, value, at, machine)
      VALUES (?, ?, ?, ?, ?)
      """,
      [
        .text(uid), .text(change.field), .text(change.value), .real(stamp.at),
        .text(stamp.machine),
      ])
    return true
  }

  /// Sets the phase's field; returns the rows changed.
  @discardableResult
  private func apply(field: String, value: String, uid: String) throws(HistoryError) -> Int {
    switch field {
    case "card":
      return try run(
        "UPDATE phases SET card = ? WHERE uid = ? AND card IS NOT ?",
        [.text(value), .text(uid), .text(value)])
    case "outcome":
      guard HistoryOutcome(rawValue: value) != nil else { return 0 }
      return try run(
        "UPDATE phases SET outcome = ? WHERE uid = ? AND outcome IS NOT ?",
        [.text(value), .text(uid), .text(value)])
    case "deleted":
      return try run("DELETE FROM phases WHERE uid = ?", [.text(uid)])
    default:
      return 0
    }
  }

  // MARK: This machine's journal

  /// This machine's phases that are in no journal yet, oldest first, with their distractions
  /// (`journaled` gives them their uid once their lines are written).
  public func unjournaledPhases(limit: Int = 1000) throws(HistoryError)
    -> [(PhaseRecord, [Distraction])]
  {
    let phases = try recordedPhases(
      "WHERE machine = '' AND uid IS NULL ORDER BY started_at, id LIMIT ?",
      [.integer(Int64(limit))])
    var result: [(PhaseRecord, [Distraction])] = []
    result.reserveCapacity(phases.count)
    for phase in phases {
      let distractions = try query(
        "SELECT app_class, seconds, title, site FROM distractions WHERE phase_id = ? ORDER BY id",
        [.integer(phase.id)]
      ) { row in
        Distraction(
          phaseID: phase.id, appClass: row.text(0) ?? "", seconds: row.double(1),
          title: row.text(2), site: row.text(3))
      }
      result.append((phase, distractions))
    }
    return result
  }

  /// Gives these phases their uids: their lines are in this machine's journal.
  public func journaled(_ phases: [(id: Int64, uid: String)]) throws(HistoryError) {
    try transactionForSync { () throws(HistoryError) in
      for (id, uid) in phases {
        try run(
          "UPDATE phases SET uid = ? WHERE id = ? AND uid IS NULL", [.text(uid), .integer(id)])
      }
    }
  }

  /// The uids of these phases that are in a journal (the others were never shared, and need
  /// no record of their edit or delete).
  public func sharedUIDs(ids: [Int64]) throws(HistoryError) -> [Int64: String] {
    var found: [Int64: String] = [:]
    for id in ids {
      let uid = try query("SELECT uid FROM phases WHERE id = ?", [.integer(id)]) { $0.text(0) }
      if let uid = uid.first ?? nil { found[id] = uid }
    }
    return found
  }

  /// The uids of the shared phases that count for `days`.
  public func sharedUIDs(days: ClosedRange<LocalDay>) throws(HistoryError) -> [String] {
    try query(
      "SELECT uid FROM phases WHERE day BETWEEN ? AND ? AND uid IS NOT NULL",
      [.integer(Int64(days.lowerBound.number)), .integer(Int64(days.upperBound.number))]
    ) { $0.text(0) ?? "" }
  }

  /// Keeps edits and deletes made here (`grow history`) with their stamp, in one transaction,
  /// and leaves each phase as the latest change says (one made elsewhere with a later stamp
  /// still wins).
  public func keepLocalChanges(_ changes: [(uid: String, change: SyncChange)], stamp: SyncStamp)
    throws(HistoryError)
  {
    try transactionForSync { () throws(HistoryError) in
      for (uid, change) in changes {
        _ = try keepIfLatest(uid: uid, change, stamp: stamp)
        let winner = try query(
          "SELECT value FROM sync_changes WHERE uid = ? AND field = ?",
          [.text(uid), .text(change.field)]
        ) { $0.text(0) ?? "" }.first
        if let winner { try apply(field: change.field, value: winner, uid: uid) }
      }
    }
  }

  // MARK: Journals read, machines known

  public func journalPosition(_ name: String) throws(HistoryError) -> JournalPosition? {
    try query("SELECT inode, offset, line FROM sync_files WHERE name = ?", [.text(name)]) { row in
      JournalPosition(
        inode: UInt64(bitPattern: row.integer(0)), offset: row.integer(1), line: row.int(2))
    }.first
  }

  public func setJournalPosition(_ name: String, _ position: JournalPosition)
    throws(HistoryError)
  {
    try run(
      "INSERT OR REPLACE INTO sync_files (name, inode, offset, line) VALUES (?, ?, ?, ?)",
      [
        .text(name), .integer(Int64(bitPattern: position.inode)), .integer(position.offset),
        .integer(Int64(position.line)),
      ])
  }

  /// The file and size this machine's journal `name` had after its last write; nil before
  /// the first.
  public func journalWritten(_ name: String) throws(HistoryError) -> (inode: UInt64, size: Int64)? {
    try query("SELECT inode, size FROM sync_written WHERE name = ?", [.text(name)]) { row in
      (UInt64(bitPattern: row.integer(0)), row.integer(1))
    }.first
  }

  public func setJournalWritten(_ name: String, inode: UInt64, size: Int64) throws(HistoryError) {
    try run(
      "INSERT OR REPLACE INTO sync_written (name, inode, size) VALUES (?, ?, ?)",
      [.text(name), .integer(Int64(bitPattern: inode)), .integer(size)])
  }

  /// Forgets that this machine's phases are in its journal, so the next write puts each there
  /// again (with the same uid, which every machine merges once): the journal lost them.
  /// - Returns: how many phases will be written again.
  @discardableResult
  public func forgetJournaledPhases() throws(HistoryError) -> Int {
    try run("UPDATE phases SET uid = NULL WHERE machine = '' AND uid IS NOT NULL")
  }

  /// The other machines the history has phases or a journal from, by name.
  public func syncMachines() throws(HistoryError) -> [SyncMachine] {
    try query(
      """
      SELECT id, name, last_record_at,
        (SELECT count(*) FROM phases WHERE machine = sync_machines.id)
      FROM sync_machines ORDER BY name, id
      """
    ) { row in
      SyncMachine(
        id: row.text(0) ?? "", name: row.text(1) ?? "",
        lastRecordAt: row.isNull(2) ? nil : Date(timeIntervalSince1970: row.double(2)),
        phases: row.int(3))
    }
  }
}
