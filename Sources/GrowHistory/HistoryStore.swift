import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore

/// The phase history: a SQLite database, by default `$XDG_DATA_HOME/grow/history.sqlite`.
///
/// The file is private (0600, in a 0700 directory), in WAL mode with full syncs, and every
/// write is one transaction: a crash or `kill -9` loses at most the write in flight and never
/// damages what was committed. Use one store from one thread.
public final class HistoryStore {
  public let path: String
  private let database: SQLiteConnection
  /// Phases the daemon keeps for the history (PendingPhases) and may not have written yet.
  private let kept: [PhaseRecord]

  /// `$XDG_DATA_HOME/grow/history.sqlite`, or `~/.local/share/grow/history.sqlite` when
  /// XDG_DATA_HOME is unset, empty or relative (as the XDG spec says).
  public static func defaultPath(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    XDGDirectories(environment: environment).growData + "/history.sqlite"
  }

  /// Opens the database at `path`, creating it and its directory when missing, and brings
  /// its schema up to date.
  /// - Parameters:
  ///   - create: false to fail with `cannotOpen` when there is no database yet (for readers
  ///     such as `grow stats`, which should not leave an empty file behind).
  ///   - busyTimeout: milliseconds a statement waits for another program's lock.
  ///   - pendingPath: the daemon's kept phases (`PendingPhases`); the reads (`phases`,
  ///     `dailyActivity`, `activity`) count those the database does not have yet, so the CLI
  ///     shows what the timer counted even while the daemon waits to write (a locked database,
  ///     a full disk). An unreadable file is left to the daemon, which reports it.
  public init(
    path: String = HistoryStore.defaultPath(), create: Bool = true, busyTimeout: Int32 = 5000,
    pendingPath: String? = nil
  ) throws(HistoryError) {
    self.path = path
    kept = ((try? PendingPhases(path: pendingPath))?.phases ?? []).map { pending in
      var phase = pending.phase
      phase.distractionCount = pending.distractions.count
      phase.distractionSeconds = pending.distractions.reduce(0) { $0 + $1.seconds }
      for site in pending.distractions.compactMap(\.site)
      where !phase.distractionSites.contains(site) {
        phase.distractionSites.append(site)
      }
      return phase
    }
    if create {
      try Self.prepareFile(at: path)
    } else if !FileManager.default.fileExists(atPath: path) {
      throw .cannotOpen(path: path, reason: "no history yet (the daemon records every phase)")
    }
    database = try SQLiteConnection(path: path, create: create, busyTimeout: busyTimeout)
    try database.execute("PRAGMA foreign_keys = ON")
    // FULL: a committed phase survives a power cut too, not just a crash; one write per
    // phase makes the extra sync free.
    let mode = try database.query("PRAGMA journal_mode = WAL") { $0.text(0) }.first ?? nil
    guard mode == "wal" else {
      throw .sqlite(path: path, message: "cannot switch to WAL mode (got \(mode ?? "nothing"))")
    }
    try database.execute("PRAGMA synchronous = FULL")
    try migrate()
  }

  /// The schema version of the file (`PRAGMA user_version`).
  public func schemaVersion() throws(HistoryError) -> Int {
    try database.query("PRAGMA user_version") { $0.int(0) }.first ?? 0
  }

  public static var currentSchemaVersion: Int { Schema.currentVersion }

  /// SQLite's own check of the file: "ok" when intact.
  public func integrityCheck() throws(HistoryError) -> String {
    try database.query("PRAGMA integrity_check") { $0.text(0) ?? "" }.joined(separator: "\n")
  }

  // MARK: Writing

  /// Adds `phase` and returns its id. A phase already recorded (the same kind, starting at the
  /// same instant) is not added again: its row's id is returned.
  @discardableResult
  public func record(_ phase: PhaseRecord) throws(HistoryError) -> Int64 {
    try database.transaction { () throws(HistoryError) in try insert(phase).id }
  }

  /// Writes `phase` and its distractions in one transaction, leaving out what is there
  /// already: a phase is known by its kind and start (phases_by_start), a distraction by its
  /// phase, app and length. Writing the same again changes nothing, so a phase kept for a retry
  /// (HistoryWriter) can be written any number of times and is in the history once.
  /// - Returns: the phase's row id, and whether its row was added now.
  @discardableResult
  public func write(_ phase: PhaseRecord, distractions: [Distraction])
    throws(HistoryError) -> (id: Int64, added: Bool)
  {
    try database.transaction { () throws(HistoryError) in
      try writeRow(phase, distractions: distractions)
    }
  }

  /// `write(_:distractions:)` for each of `phases`, in order, in one transaction: all or none.
  /// One sync for the lot, where one transaction each cost a sync per phase (a drain of 20,000
  /// kept phases took tens of seconds).
  public func write(_ phases: [(PhaseRecord, [Distraction])])
    throws(HistoryError) -> [(id: Int64, added: Bool)]
  {
    try database.transaction { () throws(HistoryError) in
      var results: [(id: Int64, added: Bool)] = []
      results.reserveCapacity(phases.count)
      for (phase, distractions) in phases {
        results.append(try writeRow(phase, distractions: distractions))
      }
      return results
    }
  }

  func writeRow(_ phase: PhaseRecord, distractions: [Distraction])
    throws(HistoryError) -> (id: Int64, added: Bool)
  {
    let (id, added) = try insert(phase)
    for distraction in distractions {
      try database.run(
        """
        INSERT INTO distractions (phase_id, app_class, seconds, title, site)
        SELECT ?1, ?2, ?3, ?4, ?5 WHERE NOT EXISTS (
          SELECT 1 FROM distractions WHERE phase_id = ?1 AND app_class = ?2 AND seconds = ?3)
        """,
        [
          .integer(id), .text(distraction.appClass), .real(distraction.seconds),
          distraction.title.map(SQLValue.text) ?? .null,
          distraction.site.map(SQLValue.text) ?? .null,
        ])
    }
    return (id, added)
  }

  /// Whether the history has the phase of `kind` that started at `startedAt`.
  public func contains(_ kind: PhaseKind, startedAt: Date) throws(HistoryError) -> Bool {
    try recordedEnd(of: kind, startedAt: startedAt) != nil
  }

  /// Copies what the write-ahead log holds into the database file and syncs it (a passive
  /// checkpoint: it waits for nobody). True when everything committed so far is now in the
  /// database file itself, so that losing the `-wal` file (deleted, say) loses none of it;
  /// false when a reader still needs older frames.
  public func checkpoint() throws(HistoryError) -> Bool {
    let result = try database.query("PRAGMA wal_checkpoint(PASSIVE)") {
      (busy: $0.int(0), frames: $0.int(1), copied: $0.int(2))
    }.first
    guard let result else { return false }
    return result.busy == 0 && result.frames == result.copied
  }

  /// The write-ahead log file (`path-wal`) as it is on disk now: nil when there is none. An
  /// open connection keeps writing to the file it opened, so one that changed or vanished while
  /// the store is open was deleted behind its back.
  public var writeAheadLog: FileIdentity? { FileIdentity(path: path + "-wal") }

  /// How `kind` starting at `startedAt` ended, if the history has it.
  public func recordedEnd(of kind: PhaseKind, startedAt: Date)
    throws(HistoryError) -> (outcome: HistoryOutcome, endedAt: Date)?
  {
    try database.query(
      "SELECT outcome, ended_at FROM phases WHERE started_at = ? AND kind = ? AND machine = ''",
      [.real(startedAt.timeIntervalSince1970), .text(kind.rawValue)]
    ) { row in
      (
        HistoryOutcome(rawValue: row.text(0) ?? "") ?? .completed,
        Date(timeIntervalSince1970: row.double(1))
      )
    }.first
  }

  /// Adds many phases in one transaction (imports, benchmarks, tests); ones already recorded
  /// are left as they are.
  public func record(all phases: [PhaseRecord]) throws(HistoryError) {
    try database.transaction { () throws(HistoryError) in
      for phase in phases { try insert(phase) }
    }
  }

  public func record(_ distraction: Distraction) throws(HistoryError) {
    try database.transaction { () throws(HistoryError) in
      try database.run(
        """
        INSERT INTO distractions (phase_id, app_class, seconds, title, site)
        VALUES (?, ?, ?, ?, ?)
        """,
        [
          .integer(distraction.phaseID), .text(distraction.appClass),
          .real(distraction.seconds), distraction.title.map(SQLValue.text) ?? .null,
          distraction.site.map(SQLValue.text) ?? .null,
        ])
    }
  }

  /// Deletes the phases that count for the days in `days` (and their distractions); returns
  /// how many phases went.
  public func delete(days: ClosedRange<LocalDay>) throws(HistoryError) -> Int {
    try database.transaction { () throws(HistoryError) in
      try database.run(
        "DELETE FROM phases WHERE day BETWEEN ? AND ?",
        [.integer(Int64(days.lowerBound.number)), .integer(Int64(days.upperBound.number))])
    }
  }

  /// How many recorded phases count for the days in `days` (what `delete(days:)` would remove).
  public func count(days: ClosedRange<LocalDay>) throws(HistoryError) -> Int {
    try database.query(
      "SELECT count(*) FROM phases WHERE day BETWEEN ? AND ?",
      [.integer(Int64(days.lowerBound.number)), .integer(Int64(days.upperBound.number))]
    ) { row in row.int(0) }.first ?? 0
  }

  /// Deletes the phases with these ids (and their distractions), all or none: an id that is
  /// not there throws `noSuchPhase` and leaves every phase where it was.
  public func delete(ids: [Int64]) throws(HistoryError) {
    try database.transaction { () throws(HistoryError) in
      for id in Set(ids).sorted() {
        guard try database.run("DELETE FROM phases WHERE id = ?", [.integer(id)]) == 1 else {
          throw .noSuchPhase(id: id)
        }
      }
    }
  }

  /// Changes a phase's card or outcome (people fix a phase started on the wrong card).
  public func edit(id: Int64, card: String? = nil, outcome: HistoryOutcome? = nil)
    throws(HistoryError)
  {
    guard card != nil || outcome != nil else { throw .noChange }
    try database.transaction { () throws(HistoryError) in
      let changed = try database.run(
        "UPDATE phases SET card = coalesce(?, card), outcome = coalesce(?, outcome) WHERE id = ?",
        [
          card.map(SQLValue.text) ?? .null, outcome.map { .text($0.rawValue) } ?? .null,
          .integer(id),
        ])
      guard changed == 1 else { throw .noSuchPhase(id: id) }
    }
  }

  // MARK: Reading

  /// The phases that count for `days` (every phase when nil), oldest first; only `card`'s
  /// when given.
  /// - Parameter machine: only the phases grown on this machine id ('' for this machine).
  public func phases(
    days: ClosedRange<LocalDay>? = nil, card: String? = nil, machine: String? = nil
  )
    throws(HistoryError) -> [PhaseRecord]
  {
    var phases: [PhaseRecord] = []
    try eachPhase(days: days, card: card, machine: machine) { phases.append($0) }
    return phases
  }

  /// Hands `body` the phases `phases(days:card:)` returns, one at a time as SQLite reads them,
  /// so that an export of the whole history takes no more memory than one of a day. The kept
  /// phases the database lacks (`pendingPath`) come in their place in the order.
  public func eachPhase(
    days: ClosedRange<LocalDay>? = nil, card: String? = nil, machine: String? = nil,
    _ body: (PhaseRecord) -> Void
  ) throws(HistoryError) {
    var (filter, values) = Self.filter(days: days, card: card)
    if let machine {
      filter += (filter.isEmpty ? "WHERE " : " AND ") + "machine = ?"
      values.append(.text(machine))
    }
    // The kept phases are this machine's own.
    let keptCount = machine.map(\.isEmpty) ?? true
    var waiting = try (keptCount ? keptButNotRecorded() : []).filter { phase in
      days.map { $0.contains(phase.day) } ?? true && card.map { $0 == phase.card } ?? true
    }.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }[...]
    try database.forEachRow(
      """
      SELECT id, card, kind, planned_seconds, actual_seconds, started_at, start_offset,
        ended_at, end_offset, outcome, pause_count, paused_seconds, away_seconds, intention,
        (SELECT count(*) FROM distractions WHERE phase_id = phases.id),
        (SELECT total(seconds) FROM distractions WHERE phase_id = phases.id), uid, machine,
        (SELECT name FROM sync_machines WHERE id = phases.machine),
        (SELECT group_concat(site, char(10)) FROM distractions AS first
          WHERE phase_id = phases.id AND site IS NOT NULL AND id = (
            SELECT min(id) FROM distractions WHERE phase_id = phases.id AND site = first.site))
      FROM phases \(filter) ORDER BY started_at, id
      """, values
    ) { row in
      var phase = Self.readPhase(row)
      phase.distractionSites = row.text(19)?.split(separator: "\n").map(String.init) ?? []
      while let kept = waiting.first, (kept.startedAt, kept.id) < (phase.startedAt, phase.id) {
        body(kept)
        waiting.removeFirst()
      }
      body(phase)
    }
    for kept in waiting { body(kept) }
  }

  // MARK: For the other tables' extensions (Goals.swift, HistorySync.swift)

  func transactionForSync<T>(_ body: () throws(HistoryError) -> T) throws(HistoryError) -> T {
    try database.transaction(body)
  }

  /// The phases `filter` (a WHERE clause) selects, oldest first, without the kept ones.
  func recordedPhases(_ filter: String, _ values: [SQLValue]) throws(HistoryError)
    -> [PhaseRecord]
  {
    try database.query(
      """
      SELECT id, card, kind, planned_seconds, actual_seconds, started_at, start_offset,
        ended_at, end_offset, outcome, pause_count, paused_seconds, away_seconds, intention,
        (SELECT count(*) FROM distractions WHERE phase_id = phases.id),
        (SELECT total(seconds) FROM distractions WHERE phase_id = phases.id), uid, machine,
        (SELECT name FROM sync_machines WHERE id = phases.machine)
      FROM phases \(filter)
      """, values, Self.readPhase)
  }

  @discardableResult
  func run(_ sql: String, _ values: [SQLValue] = []) throws(HistoryError) -> Int {
    try database.run(sql, values)
  }

  func query<T>(_ sql: String, _ values: [SQLValue] = [], _ read: (SQLRow) -> T)
    throws(HistoryError) -> [T]
  {
    try database.query(sql, values, read)
  }

  /// The kept phases the database does not have yet that are completed focus.
  func keptCompletedFocus() throws(HistoryError) -> [PhaseRecord] {
    try keptButNotRecorded().filter { $0.kind == .focus && $0.outcome == .completed }
  }

  private func keptButNotRecorded() throws(HistoryError) -> [PhaseRecord] {
    var waiting: [PhaseRecord] = []
    for phase in kept where !(try contains(phase.kind, startedAt: phase.startedAt)) {
      waiting.append(phase)
    }
    return waiting
  }

  /// Phase ids and their distractions within `days`, for `card` when given.
  public func distractions(days: ClosedRange<LocalDay>? = nil, card: String? = nil)
    throws(HistoryError) -> [Distraction]
  {
    let (filter, values) = Self.filter(days: days, card: card, table: "phases.")
    return try database.query(
      """
      SELECT distractions.phase_id, app_class, seconds, title, site
      FROM distractions JOIN phases ON phases.id = distractions.phase_id \(filter)
      ORDER BY distractions.id
      """, values
    ) { row in
      Distraction(
        phaseID: row.integer(0), appClass: row.text(1) ?? "", seconds: row.double(2),
        title: row.text(3), site: row.text(4))
    }
  }

  /// Focus per local day over the whole history (one row per day of `focus_days`).
  public func dailyActivity() throws(HistoryError) -> [LocalDay: DayActivity] {
    var daily: [LocalDay: DayActivity] = [:]
    try database.forEachRow(
      "SELECT day, completed_seconds, completed, cut_short_seconds FROM focus_days"
    ) { row in daily[LocalDay(number: row.int(0))] = Self.readDay(row) }
    for phase in try keptButNotRecorded() where phase.kind == .focus {
      daily[phase.day, default: DayActivity()].add(phase)
    }
    return daily
  }

  /// Focus on one day (for seeding the timer's "today" after a restart): one row.
  public func activity(on day: LocalDay) throws(HistoryError) -> DayActivity {
    var activity =
      try database.query(
        """
        SELECT day, completed_seconds, completed, cut_short_seconds FROM focus_days
        WHERE day = ?
        """, [.integer(Int64(day.number))], Self.readDay
      ).first ?? DayActivity()
    for phase in try keptButNotRecorded() where phase.kind == .focus && phase.day == day {
      activity.add(phase)
    }
    return activity
  }

  /// Today's focus and the runs of days before it that met `goal`, from one row per day in
  /// day order (`focus_days`: no phase is read, nothing is grouped), with `extra` (phases
  /// not written yet) and the kept phases the database lacks counted in.
  public func todayAndStreak(
    goal: TimeInterval?, today: LocalDay, adding extra: [PhaseRecord] = []
  ) throws(HistoryError) -> TodayAndStreak {
    var waiting: [LocalDay: DayActivity] = [:]
    for phase in try keptButNotRecorded() + extra where phase.kind == .focus {
      waiting[phase.day, default: DayActivity()].add(phase)
    }
    var waitingDays = waiting.keys.filter { $0 < today }.sorted()[...]
    var runs = StreakRuns(goal: goal, before: today)
    try database.forEachRow(
      """
      SELECT day, completed_seconds, completed, cut_short_seconds FROM focus_days
      WHERE day < ? ORDER BY day
      """, [.integer(Int64(today.number))]
    ) { row in
      let day = LocalDay(number: row.int(0))
      while let next = waitingDays.first, next < day {
        runs.add(next, waiting[next] ?? DayActivity())
        waitingDays.removeFirst()
      }
      var activity = Self.readDay(row)
      if waitingDays.first == day {
        activity.add(waiting[day] ?? DayActivity())
        waitingDays.removeFirst()
      }
      runs.add(day, activity)
    }
    for day in waitingDays { runs.add(day, waiting[day] ?? DayActivity()) }
    var todays =
      try database.query(
        """
        SELECT day, completed_seconds, completed, cut_short_seconds FROM focus_days
        WHERE day = ?
        """, [.integer(Int64(today.number))], Self.readDay
      ).first ?? DayActivity()
    todays.add(waiting[today] ?? DayActivity())
    return TodayAndStreak(
      today: today, activity: todays, runBeforeToday: runs.runBefore,
      longestBeforeToday: runs.longest, goal: goal)
  }

  private static func readDay(_ row: SQLRow) -> DayActivity {
    DayActivity(
      focusSeconds: row.double(1), completedFocus: row.int(2), cutShortSeconds: row.double(3))
  }

  // MARK: Internals

  /// Inserts `phase` unless it is there already (phases_by_start); returns its row's id and
  /// whether it was added now.
  @discardableResult
  private func insert(_ phase: PhaseRecord) throws(HistoryError) -> (id: Int64, added: Bool) {
    let added = try database.run(
      """
      INSERT INTO phases (card, kind, planned_seconds, actual_seconds, started_at, start_offset,
        ended_at, end_offset, outcome, pause_count, paused_seconds, away_seconds, intention, day,
        task_id, uid, machine)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
        (SELECT id FROM tasks WHERE id = ?), ?, ?)
      ON CONFLICT DO NOTHING
      """,
      [
        .text(phase.card), .text(phase.kind.rawValue), .real(phase.plannedSeconds),
        .real(phase.actualSeconds), .real(phase.startedAt.timeIntervalSince1970),
        .integer(Int64(phase.startOffset)), .real(phase.endedAt.timeIntervalSince1970),
        .integer(Int64(phase.endOffset)), .text(phase.outcome.rawValue),
        .integer(Int64(phase.pauseCount)), .real(phase.pausedSeconds), .real(phase.awaySeconds),
        phase.intention.map(SQLValue.text) ?? .null, .integer(Int64(phase.day.number)),
        // A task removed since the phase started leaves the phase without one.
        phase.taskID.map(SQLValue.integer) ?? .null,
        phase.uid.map(SQLValue.text) ?? .null, .text(phase.machine ?? ""),
      ])
    guard added == 0 else { return (database.lastInsertedRowID, true) }
    let id =
      try database.query(
        "SELECT id FROM phases WHERE started_at = ? AND kind = ? AND machine = ?",
        [
          .real(phase.startedAt.timeIntervalSince1970), .text(phase.kind.rawValue),
          .text(phase.machine ?? ""),
        ]
      ) { $0.integer(0) }.first ?? 0
    return (id, false)
  }

  private static func readPhase(_ row: SQLRow) -> PhaseRecord {
    var phase = PhaseRecord(
      id: row.integer(0), card: row.text(1) ?? "",
      kind: PhaseKind(rawValue: row.text(2) ?? "") ?? .focus,
      plannedSeconds: row.double(3), actualSeconds: row.double(4),
      startedAt: Date(timeIntervalSince1970: row.double(5)),
      endedAt: Date(timeIntervalSince1970: row.double(7)),
      outcome: HistoryOutcome(rawValue: row.text(9) ?? "") ?? .completed,
      pauseCount: row.int(10), pausedSeconds: row.double(11), awaySeconds: row.double(12),
      // The offsets are the row's own (below): asking the machine's zone for them would
      // cost two stats of /etc/localtime per row (tzset), most of an export's time.
      intention: row.text(13), timeZone: .utc)
    phase.startOffset = row.int(6)
    phase.endOffset = row.int(8)
    phase.distractionCount = row.int(14)
    phase.distractionSeconds = row.double(15)
    phase.uid = row.text(16)
    let machine = row.text(17) ?? ""
    phase.machine = machine.isEmpty ? nil : machine
    phase.machineName = row.text(18)
    return phase
  }

  private static func filter(
    days: ClosedRange<LocalDay>?, card: String?, table: String = ""
  ) -> (String, [SQLValue]) {
    var conditions: [String] = []
    var values: [SQLValue] = []
    if let days {
      conditions.append("\(table)day BETWEEN ? AND ?")
      values += [.integer(Int64(days.lowerBound.number)), .integer(Int64(days.upperBound.number))]
    }
    if let card {
      conditions.append("\(table)card = ?")
      values.append(.text(card))
    }
    return (conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "), values)
  }

  private func migrate() throws(HistoryError) {
    let found = try schemaVersion()
    guard found <= Schema.currentVersion else {
      throw .newerSchema(path: path, found: found, supported: Schema.currentVersion)
    }
    for version in found..<Schema.currentVersion {
      try database.transaction { () throws(HistoryError) in
        try database.execute(Schema.migrations[version])
        try database.execute("PRAGMA user_version = \(version + 1)")
      }
    }
  }

  /// Makes the directory (0700) and an empty file (0600) before SQLite does, so that neither
  /// is ever readable by others, whatever the umask. SQLite gives the -wal and -shm files the
  /// database's mode.
  private static func prepareFile(at path: String) throws(HistoryError) {
    let directory = PathText.directory(of: path)
    var found = stat()
    if stat(directory, &found) == 0 {
      guard found.st_mode & S_IFMT == S_IFDIR else {
        throw .cannotCreateDirectory(
          path: directory, reason: "a file is in the way; move it aside so Grow can keep history")
      }
    } else {
      do {
        try PrivateFiles.makeDirectory(directory)
      } catch {
        throw .cannotCreateDirectory(path: error.path, reason: error.reason)
      }
    }
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      let code = errno
      if code == EROFS || code == EACCES || code == EPERM { throw .readOnly(path: path) }
      if code == ENOSPC { throw .diskFull(path: path) }
      throw .cannotOpen(path: path, reason: String(cString: strerror(code)))
    }
    close(descriptor)
  }
}

/// Which file a path names now: its device and inode.
public struct FileIdentity: Sendable, Equatable {
  public let device: UInt64
  public let inode: UInt64

  /// nil when nothing is at `path`.
  public init?(path: String) {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
  }
}
