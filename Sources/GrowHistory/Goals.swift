import FoundationEssentials
@_spi(GrowHost) import GrowCore

/// Something a person wants ("Pass the calculus exam"), perhaps under a bigger goal, reached
/// through focus on a card. Its progress is the completed focus on that card since the goal
/// was set, read from the phases (never stored), plus its subgoals' progress.
public struct Goal: Sendable, Equatable {
  public var id: Int64
  public var name: String
  /// The goal it is a step of.
  public var parent: String?
  public var card: String?
  public var targetSeconds: Double?
  public var due: LocalDay?
  public var createdAt: Date
  public var doneAt: Date?

  public init(
    id: Int64 = 0, name: String, parent: String? = nil, card: String? = nil,
    targetSeconds: Double? = nil, due: LocalDay? = nil, createdAt: Date, doneAt: Date? = nil
  ) {
    self.id = id
    self.name = name
    self.parent = parent
    self.card = card
    self.targetSeconds = targetSeconds
    self.due = due
    self.createdAt = createdAt
    self.doneAt = doneAt
  }
}

/// Why a goal could not be added or changed; each says what to do instead.
public enum GoalError: Error, Equatable {
  case badName(LineError)
  case alreadyExists(String)
  /// A goal cannot be a step of itself, or of one of its own steps.
  case circular(goal: String, under: String)
  case noSuchGoal(String, known: [String])
  case history(HistoryError)
}

/// A goal with what it has reached: its own card's focus and its subgoals'.
public struct GoalProgress: Sendable, Equatable {
  public var goal: Goal
  /// Completed focus toward it (its card since it was set, and its subgoals').
  public var doneSeconds: Double
  /// Its own target, or else the sum of its subgoals' when each has one (a reached subgoal
  /// counts with the focus it took).
  public var targetSeconds: Double?
  /// Completed focus toward it over the last `GoalProgress.paceDays` days.
  public var recentSeconds: Double
  public var subgoals: [GoalProgress]
  /// For a goal without hours whose card has tasks added since it was set: how many of them
  /// are done. Its progress is then counted in tasks.
  public var tasks: (done: Int, total: Int)?

  public static func == (a: GoalProgress, b: GoalProgress) -> Bool {
    a.goal == b.goal && a.doneSeconds == b.doneSeconds && a.targetSeconds == b.targetSeconds
      && a.recentSeconds == b.recentSeconds && a.subgoals == b.subgoals
      && a.tasks?.done == b.tasks?.done && a.tasks?.total == b.tasks?.total
  }

  public init(
    goal: Goal, doneSeconds: Double, targetSeconds: Double?, recentSeconds: Double,
    subgoals: [GoalProgress], tasks: (done: Int, total: Int)? = nil
  ) {
    self.goal = goal
    self.doneSeconds = doneSeconds
    self.targetSeconds = targetSeconds
    self.recentSeconds = recentSeconds
    self.subgoals = subgoals
    self.tasks = tasks
  }

  /// The recent pace: focus toward it per day.
  public var secondsPerDay: Double { recentSeconds / Double(Self.paceDays) }

  /// How many days the pace is taken over.
  public static let paceDays = 14

  /// 0…1 of the target; nil without one.
  public var fraction: Double? {
    if let target = targetSeconds, target > 0 { return min(1, doneSeconds / target) }
    if let tasks, tasks.total > 0 { return Double(tasks.done) / Double(tasks.total) }
    return nil
  }

  public var isReached: Bool {
    goal.doneAt != nil || (targetSeconds.map { $0 > 0 && doneSeconds >= $0 } ?? false)
      || (targetSeconds == nil && tasks.map { $0.total > 0 && $0.done == $0.total } ?? false)
  }

  /// Focus still to do; nil without a target.
  public var leftSeconds: Double? { targetSeconds.map { max(0, $0 - doneSeconds) } }

  /// The day the target is reached at the recent pace, counted from `today`; nil when
  /// reached, without a target or without recent focus.
  public func estimatedDay(from today: LocalDay) -> LocalDay? {
    guard !isReached, let left = leftSeconds, left > 0, secondsPerDay > 0 else { return nil }
    let days = (left / secondsPerDay).rounded(.up)
    guard days < 100_000 else { return nil }
    return today.advanced(by: Int(days))
  }
}

extension HistoryStore {
  /// Longest goal name accepted: one line a journey can show.
  public static let goalNameLimit = 120

  /// Adds a goal (under `parent`, when given) and returns it.
  public func addGoal(
    _ name: String, under parent: String? = nil, card: String? = nil,
    targetSeconds: Double? = nil, due: LocalDay? = nil, at now: Date
  ) throws(GoalError) -> Goal {
    let checked: String
    do throws(LineError) {
      checked = try LineError.checked(name, limit: Self.goalNameLimit)
    } catch {
      throw .badName(error)
    }
    let name = checked
    let all = try goals()
    guard !all.contains(where: { $0.name == name }) else { throw .alreadyExists(name) }
    let parentID = try parent.map { parent throws(GoalError) in
      try Self.goal(named: parent, in: all).id
    }
    try history { () throws(HistoryError) in
      try run(
        """
        INSERT INTO goals (name, parent_id, card, target_seconds, due_day, created_at)
        VALUES (?, ?, ?, ?, ?, ?)
        """,
        [
          .text(name), parentID.map(SQLValue.integer) ?? .null, card.map(SQLValue.text) ?? .null,
          targetSeconds.map(SQLValue.real) ?? .null,
          due.map { SQLValue.integer(Int64($0.number)) } ?? .null,
          .real(now.timeIntervalSince1970),
        ])
    }
    return try Self.goal(named: name, in: goals())
  }

  /// Every goal, parents before their subgoals, each level in the order they were added.
  public func goals() throws(GoalError) -> [Goal] {
    try history { () throws(HistoryError) in
      try query(
        """
        SELECT g.id, g.name, p.name, g.card, g.target_seconds, g.due_day, g.created_at,
          g.done_at
        FROM goals AS g LEFT JOIN goals AS p ON p.id = g.parent_id ORDER BY g.id
        """
      ) { row in
        Goal(
          id: row.integer(0), name: row.text(1) ?? "", parent: row.text(2), card: row.text(3),
          targetSeconds: row.isNull(4) ? nil : row.double(4),
          due: row.isNull(5) ? nil : LocalDay(number: row.int(5)),
          createdAt: Date(timeIntervalSince1970: row.double(6)),
          doneAt: row.isNull(7) ? nil : Date(timeIntervalSince1970: row.double(7)))
      }
    }
  }

  /// What `editGoal` changes; nil leaves a field as it is.
  public struct GoalChange: Sendable, Equatable {
    public var name: String?
    /// A new parent: `.some(nil)` makes it a goal of its own.
    public var parent: String??
    public var card: String?
    public var targetSeconds: Double?
    public var due: LocalDay?

    public init(
      name: String? = nil, parent: String?? = nil, card: String? = nil,
      targetSeconds: Double? = nil, due: LocalDay? = nil
    ) {
      self.name = name
      self.parent = parent
      self.card = card
      self.targetSeconds = targetSeconds
      self.due = due
    }
  }

  /// Changes a goal's name, parent, card, hours or date; its progress is read anew.
  public func editGoal(_ name: String, _ change: GoalChange) throws(GoalError) -> Goal {
    let all = try goals()
    var goal = try Self.goal(named: name, in: all)
    if let newName = change.name {
      do throws(LineError) {
        goal.name = try LineError.checked(newName, limit: Self.goalNameLimit)
      } catch {
        throw .badName(error)
      }
      if goal.name != name, all.contains(where: { $0.name == goal.name }) {
        throw .alreadyExists(goal.name)
      }
    }
    var parentID: Int64? = try goal.parent.map { parent throws(GoalError) in
      try Self.goal(named: parent, in: all).id
    }
    if let parent = change.parent {
      parentID = try parent.map { parent throws(GoalError) in
        let found = try Self.goal(named: parent, in: all)
        // Walk up from the new parent: meeting this goal would close a circle.
        var ancestor: Goal? = found
        while let step = ancestor {
          if step.id == goal.id { throw .circular(goal: name, under: parent) }
          ancestor = step.parent.flatMap { up in all.first { $0.name == up } }
        }
        return found.id
      }
    }
    if let card = change.card { goal.card = card }
    if let target = change.targetSeconds { goal.targetSeconds = target }
    if let due = change.due { goal.due = due }
    try history { () throws(HistoryError) in
      try run(
        """
        UPDATE goals SET name = ?, parent_id = ?, card = ?, target_seconds = ?, due_day = ?
        WHERE id = ?
        """,
        [
          .text(goal.name), parentID.map(SQLValue.integer) ?? .null,
          goal.card.map(SQLValue.text) ?? .null, goal.targetSeconds.map(SQLValue.real) ?? .null,
          goal.due.map { SQLValue.integer(Int64($0.number)) } ?? .null, .integer(goal.id),
        ])
    }
    return try Self.goal(named: goal.name, in: goals())
  }

  /// Marks a goal reached (or, with `done: false`, open again).
  public func setGoal(_ name: String, done: Bool, at now: Date) throws(GoalError) {
    let goal = try Self.goal(named: name, in: goals())
    try history { () throws(HistoryError) in
      try run(
        "UPDATE goals SET done_at = ? WHERE id = ?",
        [done ? .real(now.timeIntervalSince1970) : .null, .integer(goal.id)])
    }
  }

  /// Removes a goal and its subgoals; the focus that went into them stays in the history.
  public func removeGoal(_ name: String) throws(GoalError) {
    let goal = try Self.goal(named: name, in: goals())
    try history { () throws(HistoryError) in
      try run("DELETE FROM goals WHERE id = ?", [.integer(goal.id)])
    }
  }

  /// Each top-level goal (or only `name`) with its progress and its subgoals', as of `now`.
  public func journeys(_ name: String? = nil, now: Date, zone: LocalZone = .system)
    throws(GoalError) -> [GoalProgress]
  {
    let all = try goals()
    let roots =
      try name.map { name throws(GoalError) in [try Self.goal(named: name, in: all)] }
      ?? all.filter { $0.parent == nil }
    let paceFrom = LocalDay(now, in: zone).advanced(by: 1 - GoalProgress.paceDays).start(in: zone)
    // Read once for every goal: checking each kept phase against the file is a query apiece.
    let kept = try history { () throws(HistoryError) in try keptCompletedFocus() }
    var visited: Set<Int64> = []
    func progress(of goal: Goal) throws(GoalError) -> GoalProgress {
      visited.insert(goal.id)
      var subgoals: [GoalProgress] = []
      for child in all where child.parent == goal.name && !visited.contains(child.id) {
        subgoals.append(try progress(of: child))
      }
      let own =
        try goal.card.map { card throws(GoalError) in
          (
            try completedFocus(on: card, since: goal.createdAt, kept: kept),
            try completedFocus(on: card, since: max(goal.createdAt, paceFrom), kept: kept)
          )
        } ?? (0, 0)
      // A step marked reached took what it took: its focus stands for its target.
      let childTargets = subgoals.map { $0.isReached ? $0.doneSeconds : $0.targetSeconds }
      let target =
        goal.targetSeconds
        ?? (subgoals.isEmpty || childTargets.contains(nil)
          ? nil : childTargets.reduce(0) { $0 + ($1 ?? 0) })
      // Without hours, the tasks on its card added since it was set measure it.
      let tasks =
        try target == nil
        ? goal.card.map { card throws(GoalError) in
          try taskCount(on: card, since: goal.createdAt)
        } ?? nil : nil
      return GoalProgress(
        goal: goal, doneSeconds: own.0 + subgoals.reduce(0) { $0 + $1.doneSeconds },
        targetSeconds: target,
        recentSeconds: own.1 + subgoals.reduce(0) { $0 + $1.recentSeconds },
        subgoals: subgoals, tasks: tasks.flatMap { $0.total > 0 ? $0 : nil })
    }
    var result: [GoalProgress] = []
    for root in roots { result.append(try progress(of: root)) }
    return result
  }

  /// The tasks on `card` added at or after `since`, and how many of them are done.
  private func taskCount(on card: String, since: Date) throws(GoalError) -> (done: Int, total: Int)
  {
    try history { () throws(HistoryError) in
      try query(
        "SELECT count(done_at), count(*) FROM tasks WHERE card = ? AND created_at >= ?",
        [.text(card), .real(since.timeIntervalSince1970)]
      ) { ($0.int(0), $0.int(1)) }.first ?? (0, 0)
    }
  }

  /// Completed focus on `card` that ended at or after `since`, with the `kept` phases the
  /// file does not have yet. The day bound (a day early, for any zone) lets SQLite use
  /// phases_by_day instead of reading every phase of the history.
  private func completedFocus(on card: String, since: Date, kept: [PhaseRecord])
    throws(GoalError) -> Double
  {
    let written = try history { () throws(HistoryError) in
      try query(
        """
        SELECT total(actual_seconds) FROM phases
        WHERE day >= ? AND kind = 'focus' AND outcome = 'completed' AND card = ?
          AND ended_at >= ?
        """,
        [
          .integer(Int64(LocalDay(since, offset: 0).number - 1)), .text(card),
          .real(since.timeIntervalSince1970),
        ]
      ) { $0.double(0) }.first ?? 0
    }
    return kept.filter { $0.card == card && $0.endedAt >= since }
      .reduce(written) { $0 + $1.actualSeconds }
  }

  /// Runs `body`, its history errors as goal errors.
  private func history<T>(_ body: () throws(HistoryError) -> T) throws(GoalError) -> T {
    do {
      return try body()
    } catch {
      throw .history(error)
    }
  }

  private static func goal(named name: String, in all: [Goal]) throws(GoalError) -> Goal {
    guard let goal = all.first(where: { $0.name == name }) else {
      throw .noSuchGoal(name, known: all.map(\.name))
    }
    return goal
  }
}

/// A goal as `grow goal list --json` and `grow journey --json` write it: seconds as integers,
/// days as YYYY-MM-DD, instants as Unix seconds; subgoals nested in `journey`, flat (with
/// `parent`) in `goal list`.
public struct GoalJSON: Encodable, Sendable {
  public var name: String
  public var parent: String?
  public var card: String?
  public var targetSeconds: Int?
  public var doneSeconds: Int
  public var percent: Int?
  public var reached: Bool
  public var due: String?
  public var estimated: String?
  public var secondsPerDay: Int
  public var tasksDone: Int?
  public var tasksTotal: Int?
  public var createdAt: Int
  public var doneAt: Int?
  public var subgoals: [GoalJSON]?

  enum CodingKeys: String, CodingKey {
    case name, parent, card, percent, reached, due, estimated, subgoals
    case targetSeconds = "target_seconds"
    case doneSeconds = "done_seconds"
    case secondsPerDay = "seconds_per_day"
    case tasksDone = "tasks_done"
    case tasksTotal = "tasks_total"
    case createdAt = "created_at"
    case doneAt = "done_at"
  }

  /// Every key is written, `null` where it does not apply (JSONEncoder leaves nils out).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(name, forKey: .name)
    try container.encode(parent, forKey: .parent)
    try container.encode(card, forKey: .card)
    try container.encode(targetSeconds, forKey: .targetSeconds)
    try container.encode(doneSeconds, forKey: .doneSeconds)
    try container.encode(percent, forKey: .percent)
    try container.encode(reached, forKey: .reached)
    try container.encode(due, forKey: .due)
    try container.encode(estimated, forKey: .estimated)
    try container.encode(secondsPerDay, forKey: .secondsPerDay)
    try container.encode(tasksDone, forKey: .tasksDone)
    try container.encode(tasksTotal, forKey: .tasksTotal)
    try container.encode(createdAt, forKey: .createdAt)
    try container.encode(doneAt, forKey: .doneAt)
    if let subgoals { try container.encode(subgoals, forKey: .subgoals) }
  }

  public init(_ progress: GoalProgress, today: LocalDay, nested: Bool) {
    let goal = progress.goal
    name = goal.name
    parent = goal.parent
    card = goal.card
    targetSeconds = progress.targetSeconds.map { Int($0.rounded()) }
    doneSeconds = Int(progress.doneSeconds.rounded())
    percent = progress.fraction.map { Int(($0 * 100).rounded(.down)) }
    reached = progress.isReached
    due = goal.due?.text
    estimated = progress.estimatedDay(from: today)?.text
    secondsPerDay = Int(progress.secondsPerDay.rounded())
    tasksDone = progress.tasks?.done
    tasksTotal = progress.tasks?.total
    createdAt = Int(goal.createdAt.timeIntervalSince1970.rounded(.down))
    doneAt = goal.doneAt.map { Int($0.timeIntervalSince1970.rounded(.down)) }
    subgoals = nested ? progress.subgoals.map { GoalJSON($0, today: today, nested: true) } : nil
  }

  /// The goals of `journeys` and all their subgoals, parents first.
  public static func flat(_ journeys: [GoalProgress], today: LocalDay) -> [GoalJSON] {
    journeys.flatMap { journey in
      [GoalJSON(journey, today: today, nested: false)] + flat(journey.subgoals, today: today)
    }
  }

  public static func encode(_ goals: [GoalJSON]) -> String { HistoryExport.encode(goals) }
}
