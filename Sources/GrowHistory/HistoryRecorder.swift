import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowPluginKit
import Synchronization

/// Published after a phase was written to the history, with the streak as it now is.
public struct HistoryRecorded: GrowEvent {
  public static let eventName = "history-recorded"
  public let phase: PhaseRecord
  public let streak: Streak
}

/// Writes one history row per ended phase, from the timer's events.
///
/// Pauses are counted from `PhasePaused`; the intention comes from `PhaseStarted`, since the
/// ended phase does not carry it. Lives on the event loop that owns the bus, and never waits
/// for SQLite there: a `HistoryWriter` on its own queue writes. Every ended phase is kept in
/// `PendingPhases` (a file beside the saved session) until it is safely in the database file,
/// so a locked database, a full disk or a `kill -9` delays a phase but loses none; the next
/// daemon writes what this one could not.
public final class HistoryRecorder {
  /// The streak now: kept up to date as phases are recorded and days pass (O(1)); read from
  /// the history, off the loop, at start and after edits, deletes or a new daily goal.
  public var streak: Streak {
    figures.roll(to: LocalDay(time.now, in: time.zone))
    askAgainIfTheGoalChanged()
    return figures.streak
  }
  /// Called (on the writer's queue) when the writer has news; the loop then calls
  /// `deliverReports()`. Nothing is delivered until it is set.
  public var wake: (@Sendable () -> Void)? {
    didSet { mailbox.wake = wake }
  }
  private let writer: HistoryWriter
  private let mailbox = Mailbox()
  private let pending: PendingPhases
  private let events: EventBus
  /// Where and when the person is now: the daemon's loop (tests pass a manual one).
  private let time: any TimeSource
  private let dailyGoal: () -> TimeInterval?
  private let log: (Logger.Level, String) -> Void
  private var intention: String?
  /// The task the running focus is for (`PhaseStarted.task`).
  private var task: Int64?
  private var pauseCount = 0
  /// When the phase now running started; distractions that began before it belong to the
  /// phase recorded last (a distraction ends just after the focus phase it happened in).
  private var phaseStartedAt: Date?
  /// The UTC offset when the running phase started, taken then: asked at its end, the zone
  /// may have changed (the person travelled) and would give the end's offset for both.
  private var startOffset: Int?
  private var lastRecorded: PendingPhase?
  /// Distractions and away time of the running phase, from the `x11` plugin's events.
  private var distractions: [DistractionEnded] = []
  private var awaySeconds: TimeInterval = 0
  /// Phases kept by an earlier daemon, queued by `startWriting()`.
  private var keptAtStart: [PendingPhase]
  /// Today's focus and the runs of days before it (HistoryStore.todayAndStreak), updated per
  /// recorded phase.
  private var figures: TodayAndStreak
  /// The goal a reread was last asked for because the daily goal changed.
  private var rereadForGoal: TimeInterval??
  /// What waits for an `access` to come back, by request number.
  private var accessWaiting: [Int: (any Sendable) -> Void] = [:]
  private var accessRequests = 0

  /// Runs `body` on the history's own queue (never on the loop), behind the phases queued
  /// before it, and hands what it gave to `then` on the loop; an unopenable history gives
  /// that error.
  public func access<T: Sendable>(
    _ body: @escaping @Sendable (HistoryStore) -> Result<T, any Error>,
    then: @escaping (Result<T, any Error>) -> Void
  ) {
    accessRequests += 1
    accessWaiting[accessRequests] = { result in
      if let result = result as? Result<T, any Error> {
        then(result)
      } else if let failed = result as? Result<Never, HistoryError>,
        case .failure(let error) = failed
      {
        then(.failure(error))
      }
    }
    writer.access(request: accessRequests) { store in body(store) }
  }

  /// Called on the loop once `reread()` has read today's figures again.
  public var todayChanged: (() -> Void)?
  /// How many rereads were asked for; each phase recorded since is tagged with the count
  /// then, so a reread's figures get the phases it could not see (recorded after it was
  /// asked for) and no phase twice.
  private var rereadRequests = 0
  private var recordedDuringRereads: [(request: Int, phase: PhaseRecord)] = []

  /// - Parameters:
  ///   - path: the history database.
  ///   - pendingPath: where phases not yet in the history are kept (nil: in memory only).
  ///   - dailyGoal: the default card's daily goal now (the config can be reloaded).
  ///   - time: where and when the person is now: the daemon's loop (tests pass a manual one).
  ///   - log: what the daemon should log (a write that has to wait, a lost write-ahead log).
  public init(
    path: String, pendingPath: String?, events: EventBus,
    dailyGoal: @escaping () -> TimeInterval?,
    time: any TimeSource, log: @escaping (Logger.Level, String) -> Void
  ) {
    self.time = time
    self.events = events
    self.dailyGoal = dailyGoal
    self.log = log
    figures = TodayAndStreak(today: LocalDay(time.now, in: time.zone), goal: dailyGoal())
    writer = HistoryWriter(path: path) { [mailbox] report in mailbox.post(report) }
    // A damaged journal is moved aside and a new one started: never memory only.
    pending = PendingPhases.open(path: pendingPath, log: log)
    keptAtStart = pending.phases
    events.subscribe(PhaseStarted.self, as: "history") { [weak self] event in
      self?.intention = event.phase.kind == .focus ? event.intention : nil
      self?.task = event.phase.kind == .focus ? event.task : nil
      self?.pauseCount = 0
      self?.phaseStartedAt = event.phase.startedAt
      self?.startOffset = self?.time.zone.secondsFromGMT(for: event.phase.startedAt)
      self?.distractions = []
      self?.awaySeconds = 0
    }
    events.subscribe(DistractionEnded.self, as: "history") { [weak self] event in
      self?.distractionEnded(event)
    }
    events.subscribe(AwayResumed.self, as: "history") { [weak self] event in
      self?.awaySeconds += event.awaySeconds
    }
    // Time asleep during focus is a pause of its own (not focus), and time away.
    events.subscribe(SystemSlept.self, as: "history") { [weak self] event in
      guard event.effect == .focusPaused else { return }
      self?.pauseCount += 1
      self?.awaySeconds += event.asleepDuringPhase
    }
    events.subscribe(PhasePaused.self, as: "history") { [weak self] _ in
      self?.pauseCount += 1
    }
    events.subscribe(TaskDone.self, as: "history") { [weak self] event in
      self?.writer.markTaskDone(event.task, at: event.at)
    }
    events.subscribe(PhaseEnded.self, as: "history") { [weak self] event in
      self?.record(event.phase, outcome: event.outcome, at: event.endedAt)
    }
    readAtStart()
  }

  /// The history's path.
  public var path: String { writer.path }

  /// Phases ended but not yet safely in the history.
  public var pendingPhases: [PendingPhase] { pending.phases }

  /// Today's focus so far: what the history had at start or at the last reread, the kept
  /// phases it lacks, and every phase recorded since.
  public var todayActivity: DayActivity {
    figures.roll(to: LocalDay(time.now, in: time.zone))
    return figures.activity
  }

  /// Hands the writer the phases an earlier daemon kept, after `FocusTimer.restore` has asked
  /// `recordedEnd` (which reads at once, and must not wait behind a write), then has the
  /// streak read behind them (every day's row: off the loop, and after start-up, so that
  /// neither waits for it).
  public func startWriting() {
    let kept = takeKeptAtStart()
    if !kept.isEmpty { writer.submit(kept) }
    reread()
  }

  private func takeKeptAtStart() -> [PendingPhase] {
    guard !keptAtStart.isEmpty else { return [] }
    log(
      .info,
      "writing \(keptAtStart.count) phase(s) kept in \(pending.path ?? "memory") to the history")
    defer { keptAtStart = [] }
    return keptAtStart
  }
  /// Takes up the phase a killed daemon left running, restored from the saved session, as if
  /// this recorder had seen it start: its row gets the card's intention.
  public func resume(_ phase: Phase?, intention: String?, task: Int64? = nil) {
    guard let phase else { return }
    self.intention = phase.kind == .focus ? intention : nil
    self.task = phase.kind == .focus ? task : nil
    phaseStartedAt = phase.startedAt
    startOffset = time.zone.secondsFromGMT(for: phase.startedAt)
  }

  /// How the history says `phase` ended, if it has it (for `FocusTimer.restore`): `stopped`
  /// for a phase that ended its session, stopped or abandoned.
  /// A phase kept for the history counts as recorded: it is written later.
  public func recordedEnd(of phase: Phase) -> FocusTimer.RecordedEnd? {
    let key = PhaseRecord.Key(kind: phase.kind, startedAt: phase.startedAt.timeIntervalSince1970)
    let end: (outcome: HistoryOutcome, endedAt: Date)?
    if let kept = pending.pending(key) {
      end = (kept.phase.outcome, kept.phase.endedAt)
    } else {
      switch writer.readNow({ store throws(HistoryError) in
        try store.recordedEnd(of: phase.kind, startedAt: phase.startedAt)
      }) {
      case .success(let found): end = found
      case .failure(let error):
        log(.error, "\(error); cannot tell whether the saved phase was already recorded")
        end = nil
      }
    }
    guard let end else { return nil }
    return (end.outcome, end.endedAt)
  }

  /// Records `phase` as abandoned: the daemon is exiting while it runs.
  public func recordCutShort(_ phase: Phase?) {
    guard let phase else { return }
    record(phase, outcome: .abandoned, at: time.now)
  }

  /// Reads today's figures and the streak again on the writer's queue (another program
  /// changed the history); `todayChanged` hears the result on the loop.
  public func reread() { reread(adding: []) }

  private func reread(adding extra: [PhaseRecord]) {
    rereadRequests += 1
    writer.reread(
      request: rereadRequests, goal: dailyGoal(), today: LocalDay(time.now, in: time.zone),
      adding: extra)
  }

  private func rereadDone(_ read: TodayAndStreak, request: Int) {
    var fresh = read
    fresh.roll(to: LocalDay(time.now, in: time.zone))
    var anotherDay = false
    for (tag, phase) in recordedDuringRereads where tag >= request && !fresh.add(phase) {
      anotherDay = true
    }
    recordedDuringRereads.removeAll { $0.request < request || request == rereadRequests }
    figures = fresh
    todayChanged?()
    if anotherDay { reread() }
  }

  /// A new daily goal (the config was reloaded) judges every day anew: read again, once.
  private func askAgainIfTheGoalChanged() {
    let goal = dailyGoal()
    guard goal != figures.goal, rereadForGoal != .some(goal) else { return }
    rereadForGoal = .some(goal)
    reread()
  }

  /// Waits up to `seconds` for the kept phases to be written (at shutdown); the rest stay
  /// kept for the next daemon.
  public func finishWriting(within seconds: TimeInterval) {
    writer.finish(within: seconds)
    deliverReports()
  }

  /// Waits until the writer is idle and takes in what it said (tests: the daemon's loop is
  /// woken by `wake` instead).
  public func waitForWrites() {
    writer.waitUntilIdle()
    deliverReports()
  }

  /// Takes in what the writer has done since last time: written phases are announced
  /// (`HistoryRecorded`) and the streak refreshed, phases in the database file are let go.
  public func deliverReports() {
    let reports = mailbox.take()
    for report in reports {
      switch report {
      case .written(let phases, let ids, let added):
        pending.confirm(Set(phases.map(\.key)))
        // Once per row: a phase written again (a late distraction, a retry after a kill) was
        // announced when its row was added.
        for ((phase, id), isNew) in zip(zip(phases, ids), added) where isNew {
          var recorded = phase.phase
          recorded.id = id
          events.publish(HistoryRecorded(phase: recorded, streak: streak))
        }
      case .settled(let revisions):
        pending.settle(revisions)
      case .failing(let error, let waiting):
        log(
          .error,
          "\(error); \(waiting) phase(s) wait for the history"
            + (pending.path.map { ", kept in \($0)," } ?? "")
            + " and are written, in order, once it can be (tried again at most "
            + "\(Int(HistoryWriter.longestRetry))s apart)")
      case .recovered:
        log(.info, "the history \(writer.path) can be written again; the waiting phases are in it")
      case .lost(let count, let reason):
        log(
          .warning,
          "the history \(writer.path) lost \(count) phase(s) it had recorded: \(reason); "
            + "writing them again from \(pending.path ?? "memory")")
      case .reread(let daily, let request):
        rereadDone(daily, request: request)
      case .rereadFailed(let error, let request):
        if request == rereadRequests { recordedDuringRereads = [] }
        log(.warning, "\(error); today's figures stay as they were until the next change")
      case .accessed(let request, let result):
        accessWaiting.removeValue(forKey: request)?(result)
      case .taskNotMarked(let id, let reason):
        log(
          .warning,
          "task \(id) could not be marked done (\(reason)); 'grow task done \(id)' does it")
      }
    }
  }

  private func record(_ phase: Phase, outcome: HistoryOutcome, at end: Date) {
    let pausedNow = phase.pausedAt.map { max(0, end.timeIntervalSince($0)) } ?? 0
    var record = PhaseRecord(
      card: phase.card, kind: phase.kind, plannedSeconds: phase.duration,
      actualSeconds: phase.elapsed(at: end), startedAt: phase.startedAt, endedAt: end,
      outcome: outcome, pauseCount: pauseCount, pausedSeconds: phase.pausedTotal + pausedNow,
      awaySeconds: awaySeconds, intention: phase.kind == .focus ? intention : nil,
      timeZone: time.zone)
    if let startOffset, phaseStartedAt == phase.startedAt { record.startOffset = startOffset }
    if phase.kind == .focus { record.taskID = task }
    pauseCount = 0
    phaseStartedAt = nil
    startOffset = nil
    if rereadRequests > 0 { recordedDuringRereads.append((rereadRequests, record)) }
    figures.roll(to: LocalDay(time.now, in: time.zone))
    // A phase of another day (ended just after midnight, say) needs the runs read again.
    if !figures.add(record) { reread() }
    askAgainIfTheGoalChanged()
    let ended = distractions.map(row(for:))
    distractions = []
    awaySeconds = 0
    keep(PendingPhase(phase: record, distractions: ended))
  }

  /// Keeps `phase` on disk first (one journal line), then has it written: a `kill -9` between
  /// the two finds it kept, and writing it again is harmless.
  private func keep(_ phase: PendingPhase) {
    let kept = pending.keep(phase)
    lastRecorded = kept
    // The phases an earlier daemon kept go first (a phase the restore ends comes after them).
    writer.submit(takeKeptAtStart() + [kept])
  }

  private func distractionEnded(_ event: DistractionEnded) {
    if let phaseStartedAt, event.when >= phaseStartedAt {
      distractions.append(event)
      return
    }
    // It belongs to the phase recorded last: that phase is written again with it, which
    // adds only the distraction.
    guard let last = lastRecorded else { return }
    var phase = pending.pending(last.key) ?? last
    phase.distractions.append(row(for: event))
    keep(phase)
  }

  /// The history row: the title only when the person opted in (`record-titles`).
  private func row(for event: DistractionEnded) -> Distraction {
    Distraction(
      phaseID: 0, appClass: event.app, seconds: event.duration,
      title: event.recordTitle ? event.title : nil, site: event.site)
  }

  /// Today's figures from the history and the kept phases it lacks (one row, so start-up
  /// does not grow with the history); notices kept phases the history confirmed once and no
  /// longer has (a lost write-ahead log). The streak is read off the loop once the daemon
  /// owns its name (`startWriting`), and announced with today's figures when it is in.
  private func readAtStart() {
    let kept = pending.phases
    let today = LocalDay(time.now, in: time.zone)
    let found = writer.readNow { store throws(HistoryError) in
      var missing: [PendingPhase] = []
      for phase in kept
      where !(try store.contains(phase.phase.kind, startedAt: phase.phase.startedAt)) {
        missing.append(phase)
      }
      return (today: try store.activity(on: today), missing: missing)
    }
    var activity: DayActivity
    var missing: [PendingPhase]
    switch found {
    case .success(let result):
      (activity, missing) = result
      let lost = missing.filter(\.confirmed)
      // Reported here; written again as phases never written, so not reported twice.
      let lostKeys = Set(lost.map(\.key))
      keptAtStart = keptAtStart.map { phase in
        var again = phase
        if lostKeys.contains(phase.key) { again.confirmed = false }
        return again
      }
      if !lost.isEmpty {
        log(
          .warning,
          "the history \(writer.path) lost \(lost.count) phase(s) it had recorded (its "
            + "write-ahead log \(writer.path)-wal was lost, deleted perhaps, before they reached "
            + "the database file); writing them again from \(pending.path ?? "memory")")
      }
    case .failure(let error):
      log(
        .error,
        "\(error); the timer runs, and every phase that ends is kept in "
          + "\(pending.path ?? "memory") and written to the history once it can be")
      (activity, missing) = (DayActivity(), kept)
    }
    for phase in missing where phase.phase.kind == .focus && phase.phase.day == today {
      activity.add(phase.phase)
    }
    figures = TodayAndStreak(today: today, activity: activity, goal: dailyGoal())
  }
}

/// The writer's reports, handed from its queue to the loop.
private final class Mailbox: @unchecked Sendable {
  private let lock = Mutex(())
  private var reports: [HistoryWriter.Report] = []
  private var _wake: (@Sendable () -> Void)?

  var wake: (@Sendable () -> Void)? {
    get { lock.withLock { _ in _wake } }
    set {
      lock.withLock { _ in _wake = newValue }
      if newValue != nil && lock.withLock({ _ in !reports.isEmpty }) { newValue?() }
    }
  }

  func post(_ report: HistoryWriter.Report) {
    let wake = lock.withLock { _ in
      reports.append(report)
      return _wake
    }
    wake?()
  }

  func take() -> [HistoryWriter.Report] {
    lock.withLock { _ in
      defer { reports = [] }
      return reports
    }
  }
}

@_spi(GrowHost) extension HistoryRecorder: TodayKeeper {
  public var todayTotals: TodayTotals {
    let today = todayActivity
    return TodayTotals(
      completed: today.completedFocus, focusSeconds: today.focusSeconds,
      cutShortSeconds: today.cutShortSeconds)
  }
}
