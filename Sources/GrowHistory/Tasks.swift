import FoundationEssentials
@_spi(GrowHost) import GrowCore

/// Why a line of text a person typed (a goal's name, a task) was not taken.
public enum LineError: Error, Equatable {
  case empty
  case tooLong(limit: Int)
  /// It holds a character that breaks the line (a control character, U+2028, U+2029).
  case notOneLine(Unicode.Scalar)

  /// `text` without spaces around it, if it is one line of at most `limit` characters.
  static func checked(_ text: String, limit: Int) throws(LineError) -> String {
    let trimmed = String(
      text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    guard !trimmed.isEmpty else { throw .empty }
    // Bytes too: one character can carry any number of combining marks.
    guard trimmed.utf8.count <= 4 * limit, trimmed.count <= limit else {
      throw .tooLong(limit: limit)
    }
    let breaking: Set<Unicode.GeneralCategory> = [.control, .lineSeparator, .paragraphSeparator]
    if let bad = trimmed.unicodeScalars.first(where: {
      breaking.contains($0.properties.generalCategory)
    }) {
      throw .notOneLine(bad)
    }
    return trimmed
  }
}

/// One thing to do on a card ("Chapter 3, exercises 1–10"): what a focus is for.
public struct FocusTask: Sendable, Equatable {
  public var id: Int64
  public var card: String
  public var text: String
  public var createdAt: Date
  public var doneAt: Date?
  /// Completed focus on it, and how many focus phases that was.
  public var focusSeconds: Double
  public var focusCount: Int

  public var isDone: Bool { doneAt != nil }
}

/// Why a task could not be added, found or changed.
public enum TaskError: Error, Equatable {
  case badText(LineError)
  case noSuchTask(Int64)
  /// No open task's text starts with the words given (on `card`, when one was named).
  case noMatch(String, card: String?)
  /// More than one open task starts so: their ids and texts, to pick one by id.
  case ambiguous(String, [FocusTask])
  case history(HistoryError)
}

extension HistoryStore {
  /// Longest task text accepted: it becomes the focus's intention, one line in a bar.
  public static let taskTextLimit = SessionOverrides.maximumIntentionLength

  public func addTask(card: String, text: String, at now: Date) throws(TaskError) -> FocusTask {
    let checked: String
    do throws(LineError) {
      checked = try LineError.checked(text, limit: Self.taskTextLimit)
    } catch {
      throw .badText(error)
    }
    let id = try tasksHistory { () throws(HistoryError) in
      try run(
        "INSERT INTO tasks (card, text, created_at) VALUES (?, ?, ?)",
        [.text(card), .text(checked), .real(now.timeIntervalSince1970)])
      return try query("SELECT last_insert_rowid()") { $0.integer(0) }.first ?? 0
    }
    return try task(id)
  }

  /// Tasks in the order they were added: open ones only unless `includeDone`, on `card` only
  /// when given.
  public func tasks(card: String? = nil, includeDone: Bool = false) throws(TaskError)
    -> [FocusTask]
  {
    var conditions: [String] = []
    var values: [SQLValue] = []
    if let card {
      conditions.append("t.card = ?")
      values.append(.text(card))
    }
    if !includeDone { conditions.append("t.done_at IS NULL") }
    let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    // The focus the daemon keeps and has not written yet (a locked database, a full disk)
    // counts toward its task as it will once written, as for goals.
    var kept: [Int64: (seconds: Double, count: Int)] = [:]
    for phase in try tasksHistory({ () throws(HistoryError) in try keptCompletedFocus() }) {
      guard let task = phase.taskID else { continue }
      kept[task, default: (0, 0)].seconds += phase.actualSeconds
      kept[task, default: (0, 0)].count += 1
    }
    return try tasksHistory { () throws(HistoryError) in
      try query(
        """
        SELECT t.id, t.card, t.text, t.created_at, t.done_at,
          (SELECT total(actual_seconds) FROM phases
            WHERE task_id = t.id AND kind = 'focus' AND outcome = 'completed'),
          (SELECT count(*) FROM phases
            WHERE task_id = t.id AND kind = 'focus' AND outcome = 'completed')
        FROM tasks AS t \(filter) ORDER BY t.id
        """, values
      ) { row in
        let id = row.integer(0)
        return FocusTask(
          id: id, card: row.text(1) ?? "", text: row.text(2) ?? "",
          createdAt: Date(timeIntervalSince1970: row.double(3)),
          doneAt: row.isNull(4) ? nil : Date(timeIntervalSince1970: row.double(4)),
          focusSeconds: row.double(5) + (kept[id]?.seconds ?? 0),
          focusCount: row.int(6) + (kept[id]?.count ?? 0))
      }
    }
  }

  public func task(_ id: Int64) throws(TaskError) -> FocusTask {
    guard let found = try tasks(includeDone: true).first(where: { $0.id == id }) else {
      throw .noSuchTask(id)
    }
    return found
  }

  /// The task `words` names: its id, or the start of the text of exactly one open task (on
  /// `card` when given), ignoring case.
  public func task(matching words: String, card: String? = nil) throws(TaskError) -> FocusTask {
    if let id = Int64(words) { return try task(id) }
    let wanted = words.lowercased()
    let matches = try tasks(card: card).filter { $0.text.lowercased().hasPrefix(wanted) }
    guard let first = matches.first else { throw .noMatch(words, card: card) }
    guard matches.count == 1 else { throw .ambiguous(words, matches) }
    return first
  }

  /// Completed focus per task within `days` (on `card` when given), most first.
  public func taskTotals(days: ClosedRange<LocalDay>, card: String? = nil) throws(HistoryError)
    -> [HistoryStatistics.TaskTotal]
  {
    var values: [SQLValue] = [
      .integer(Int64(days.lowerBound.number)), .integer(Int64(days.upperBound.number)),
    ]
    if let card { values.append(.text(card)) }
    return try query(
      """
      SELECT t.id, t.card, t.text, total(p.actual_seconds), count(*)
      FROM phases AS p JOIN tasks AS t ON t.id = p.task_id
      WHERE p.kind = 'focus' AND p.outcome = 'completed' AND p.day BETWEEN ? AND ?
        \(card == nil ? "" : "AND p.card = ?")
      GROUP BY t.id ORDER BY total(p.actual_seconds) DESC, t.id
      """, values
    ) { row in
      HistoryStatistics.TaskTotal(
        task: row.integer(0), card: row.text(1) ?? "", text: row.text(2) ?? "",
        focusSeconds: Int(row.double(3).rounded()), completed: row.int(4))
    }
  }

  public func setTask(_ id: Int64, done: Bool, at now: Date) throws(TaskError) {
    _ = try task(id)
    try tasksHistory { () throws(HistoryError) in
      // Done twice (the notification's button and D-Bus) keeps the first time.
      try run(
        done
          ? "UPDATE tasks SET done_at = coalesce(done_at, ?) WHERE id = ?"
          : "UPDATE tasks SET done_at = ? WHERE id = ?",
        [done ? .real(now.timeIntervalSince1970) : .null, .integer(id)])
    }
  }

  /// Removes a task; the focus spent on it stays in the history, without its task.
  public func removeTask(_ id: Int64) throws(TaskError) {
    _ = try task(id)
    try tasksHistory { () throws(HistoryError) in
      try run("DELETE FROM tasks WHERE id = ?", [.integer(id)])
    }
  }

  private func tasksHistory<T>(_ body: () throws(HistoryError) -> T) throws(TaskError) -> T {
    do {
      return try body()
    } catch {
      throw .history(error)
    }
  }
}

/// A task as `grow tasks --json` writes it; every key always present.
public struct TaskJSON: Encodable, Sendable {
  public var task: FocusTask

  enum CodingKeys: String, CodingKey {
    case id, card, text, done
    case focusSeconds = "focus_seconds"
    case focusCount = "focus_count"
    case createdAt = "created_at"
    case doneAt = "done_at"
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(task.id, forKey: .id)
    try container.encode(task.card, forKey: .card)
    try container.encode(task.text, forKey: .text)
    try container.encode(task.isDone, forKey: .done)
    try container.encode(Int(task.focusSeconds.rounded()), forKey: .focusSeconds)
    try container.encode(task.focusCount, forKey: .focusCount)
    try container.encode(
      Int(task.createdAt.timeIntervalSince1970.rounded(.down)), forKey: .createdAt)
    try container.encode(
      task.doneAt.map { Int($0.timeIntervalSince1970.rounded(.down)) }, forKey: .doneAt)
  }

  public static func encode(_ tasks: [FocusTask]) -> String {
    HistoryExport.encode(tasks.map(TaskJSON.init(task:)))
  }
}
