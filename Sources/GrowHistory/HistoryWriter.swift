import Dispatch
import FoundationEssentials
import Glibc
import GrowCore

/// The daemon's one connection to the history, on a serial queue of its own: the event loop
/// hands it phases and hears back through `report`, and never waits for SQLite. A phase that
/// cannot be written now (another program holds the lock, the disk is full, the file cannot
/// be opened) stays queued, in order, and is tried again with backoff; nothing after it is
/// written before it. Writing a phase twice changes nothing (`HistoryStore.write`), which is
/// what makes a retry, or the replay after a restart, leave each phase in the history once.
///
/// A written phase is held until a checkpoint has put it into the database file itself: if the
/// write-ahead log is deleted while the daemon runs (its inode changes or it vanishes), the
/// writer rescues what its connection still sees, opens the database again and writes the
/// held phases once more.
///
/// Every stored property is touched only on `queue`.
final class HistoryWriter: @unchecked Sendable {
  /// What the writer tells the loop, in the order it happened.
  enum Report: Sendable {
    /// These phases are in the history now (with their row ids, and whether each row was added
    /// now or was there already), oldest first.
    case written([PendingPhase], ids: [Int64], added: [Bool])
    /// These revisions are in the database file itself: they need not be kept any longer.
    case settled([PhaseRecord.Key: Int])
    /// Writing stopped at the oldest phase; `waiting` phases are queued and tried again with
    /// backoff. Sent once per kind of failure, not per retry.
    case failing(HistoryError, waiting: Int)
    /// Writing works again after `failing`.
    case recovered
    /// Phases the history had confirmed were missing from it: the write-ahead log that held
    /// them was lost. They are being written again.
    case lost(count: Int, reason: String)
    /// Today's focus and the streak as the file has them now, read for `reread(request:)` (at
    /// start, after `grow history` changed the file), with the phases still waiting counted in.
    case reread(TodayAndStreak, request: Int)
    /// That read failed; the figures stay as they were.
    case rereadFailed(HistoryError, request: Int)
    /// A task could not be marked done (`markTaskDone`); the person can say so again with
    /// `grow task done`.
    case taskNotMarked(Int64, reason: String)
    /// What `access(request:_:)` gave.
    case accessed(request: Int, result: any Sendable)
  }

  let path: String
  private let queue = DispatchQueue(label: "grow.history.writer")
  private let report: @Sendable (Report) -> Void
  private var store: HistoryStore?
  /// The write-ahead log the open connection writes to.
  private var walIdentity: FileIdentity?
  /// Not yet written, oldest first (from `waitingHead` on: writing advances the head rather
  /// than removing from the front, which moved every phase behind it each time).
  private var waitingQueue: [PendingPhase] = []
  private var waitingHead = 0
  /// Where each waiting phase is in `waitingQueue`, so a new revision replaces it in O(1).
  private var waitingSlot: [PhaseRecord.Key: Int] = [:]
  /// Written, not yet in the database file (only in the write-ahead log).
  private var unsettled: [PendingPhase] = []
  private var unsettledKeys: Set<PhaseRecord.Key> = []
  /// At most this many phases go into one transaction (one sync): enough that a drain of
  /// thousands costs few syncs, few enough that a lock held meanwhile waits for little.
  static let batchSize = 256
  private var failure: HistoryError?
  private var retryDelay: TimeInterval = 0
  /// Counts scheduled retries; a retry whose number is no longer current was overtaken (by
  /// `finish(within:)`, which tries at once) and does nothing.
  private var retryGeneration = 0
  private var retryScheduled = false
  private var settleScheduled = false
  /// A retry after a failure other than a lock waits this long at first, doubling up to
  /// `longestRetry`. Short enough that the history catches up with the timer within about a
  /// second of the disk having room again (the soak's today check depends on it).
  static let firstRetry: TimeInterval = 0.1
  static let longestRetry: TimeInterval = 1
  /// A locked database is tried again this soon: each try already waits `busyTimeout` inside
  /// SQLite, which polls the lock, so the phases are written moments after the other program
  /// lets go. (Backing off to 4 s here let the history lag the timer by seconds.)
  static let lockedRetry: TimeInterval = 0.05
  /// How long one statement waits for another program's lock before the writer gives up and
  /// retries later. Short, so that `finish(within:)` at shutdown stays short too.
  static let busyTimeout: Int32 = 250

  init(path: String, report: @escaping @Sendable (Report) -> Void) {
    self.path = path
    self.report = report
  }

  /// Runs `body` on the writer's connection and waits for it. Only for the reads the daemon
  /// needs while it starts (today's totals, how a saved phase ended), before anything is
  /// queued, so nothing but the read itself is waited for; in WAL mode a read never waits for
  /// another program's write lock.
  func readNow<T>(_ body: (HistoryStore) throws(HistoryError) -> T) -> Result<T, HistoryError> {
    queue.sync {
      do throws(HistoryError) {
        return .success(try body(try openStore()))
      } catch {
        return .failure(error)
      }
    }
  }

  /// Queues `phase` (a new revision replaces the queued one) and writes what it can.
  func submit(_ phases: [PendingPhase]) {
    queue.async { [self] in
      var revised: Set<PhaseRecord.Key> = []
      for phase in phases {
        if unsettledKeys.contains(phase.key) { revised.insert(phase.key) }
        if let slot = waitingSlot[phase.key] {
          waitingQueue[slot] = phase
        } else {
          waitingSlot[phase.key] = waitingQueue.count
          waitingQueue.append(phase)
        }
      }
      // One pass for the batch, and only when a written phase changed again (rare).
      if !revised.isEmpty {
        unsettled.removeAll { revised.contains($0.key) }
        unsettledKeys.subtract(revised)
      }
      writeWaiting()
    }
  }

  /// Reads today's focus and the streak (judged on `goal`) behind everything queued before
  /// it, with `extra` and the phases still waiting counted in: at start, and after another
  /// program (`grow history delete`, `edit`) changed the file. One row per day, off the loop.
  func reread(request: Int, goal: TimeInterval?, today: LocalDay, adding extra: [PhaseRecord]) {
    queue.async { [self] in
      do throws(HistoryError) {
        let figures = try openStore().todayAndStreak(
          goal: goal, today: today, adding: extra + waiting.map(\.phase))
        report(.reread(figures, request: request))
      } catch {
        report(.rereadFailed(error, request: request))
      }
    }
  }

  /// Runs `body` on the writer's connection behind what was queued before it; its result comes
  /// back as `accessed` (D-Bus calls about goals and tasks, answered without waiting on the
  /// loop).
  func access(request: Int, _ body: @escaping @Sendable (HistoryStore) -> any Sendable) {
    queue.async { [self] in
      do throws(HistoryError) {
        report(.accessed(request: request, result: body(try openStore())))
      } catch {
        report(.accessed(request: request, result: Result<Never, HistoryError>.failure(error)))
      }
    }
  }

  /// Marks task `id` done (the person answered "Done" at the end of a focus on it), behind
  /// the phases queued before it.
  func markTaskDone(_ id: Int64, at: Date) {
    queue.async { [self] in
      do throws(TaskError) {
        let store: HistoryStore
        do throws(HistoryError) {
          store = try openStore()
        } catch {
          throw .history(error)
        }
        try store.setTask(id, done: true, at: at)
      } catch {
        report(.taskNotMarked(id, reason: "\(error)"))
      }
    }
  }

  /// Waits up to `seconds` for the queued phases to be written (at shutdown); what is not
  /// written by then stays kept for the next daemon.
  func finish(within seconds: TimeInterval) {
    let done = DispatchSemaphore(value: 0)
    queue.async { [self] in
      // At once, even while a retry is scheduled: the lock may be gone already, and waiting
      // out the backoff would leave the phases for the next daemon.
      if !waiting.isEmpty {
        cancelRetry()
        writeWaiting()
      }
      done.signal()
    }
    _ = done.wait(timeout: .now() + seconds)
  }

  /// Waits until the writer has done what it was given (tests).
  func waitUntilIdle() { queue.sync {} }

  // MARK: On the queue

  private func openStore() throws(HistoryError) -> HistoryStore {
    if let store { return store }
    let opened = try HistoryStore(path: path, busyTimeout: Self.busyTimeout)
    // What an earlier run left in the log (a new file's schema, say) goes into the file first,
    // so the file is whole on its own from here on.
    _ = try? opened.checkpoint()
    store = opened
    walIdentity = opened.writeAheadLog
    return opened
  }

  /// The phases not yet written, oldest first.
  private var waiting: ArraySlice<PendingPhase> { waitingQueue[waitingHead...] }

  /// Lets go of the first `count` waiting phases (written): O(count), and the written front
  /// of the queue is dropped once it is the larger half, so each phase is moved O(1) times.
  private func dropWaiting(_ count: Int) {
    for phase in waitingQueue[waitingHead..<(waitingHead + count)] {
      waitingSlot[phase.key] = nil
    }
    waitingHead += count
    guard waitingHead > waitingQueue.count / 2 else { return }
    waitingQueue.removeFirst(waitingHead)
    waitingHead = 0
    for (slot, phase) in waitingQueue.enumerated() { waitingSlot[phase.key] = slot }
  }

  /// Makes `phases` the waiting queue.
  private func setWaiting(_ phases: [PendingPhase]) {
    waitingQueue = phases
    waitingHead = 0
    waitingSlot = [:]
    for (slot, phase) in phases.enumerated() { waitingSlot[phase.key] = slot }
  }

  private func writeWaiting() {
    guard !retryScheduled else { return }
    do throws(HistoryError) {
      try noticeALostWriteAheadLog()
      let store = try openStore()
      var written: [PendingPhase] = []
      var ids: [Int64] = []
      var addedNow: [Bool] = []
      var rewritten = 0
      var failed: HistoryError?
      // A batch at a time, each one transaction: a failure leaves the whole batch waiting.
      while !waiting.isEmpty {
        let batch = Array(waiting.prefix(Self.batchSize))
        do throws(HistoryError) {
          let results = try store.write(batch.map { ($0.phase, $0.distractions) })
          dropWaiting(batch.count)
          for (phase, (id, added)) in zip(batch, results) {
            if added && phase.confirmed { rewritten += 1 }
            var confirmed = phase
            confirmed.confirmed = true
            written.append(confirmed)
            ids.append(id)
            addedNow.append(added)
          }
        } catch {
          failed = error
          break
        }
      }
      if !written.isEmpty {
        unsettled += written
        unsettledKeys.formUnion(written.map(\.key))
        report(.written(written, ids: ids, added: addedNow))
      }
      if rewritten > 0 {
        report(.lost(count: rewritten, reason: "the database did not have them"))
      }
      if let failed { throw failed }
      walIdentity = walIdentity ?? store.writeAheadLog
      if failure != nil {
        failure = nil
        retryDelay = 0
        report(.recovered)
      }
      settleWhatIsInTheFile(store)
    } catch {
      retryLater(after: error)
    }
  }

  /// Lets go of the written phases once a checkpoint has put them into the database file. A
  /// reader holding an old snapshot stops the checkpoint short: then it is tried again later,
  /// so the phases are let go even if no other phase ends meanwhile.
  private func settleWhatIsInTheFile(_ store: HistoryStore) {
    guard !unsettled.isEmpty else { return }
    guard (try? store.checkpoint()) == true else {
      guard !settleScheduled else { return }
      settleScheduled = true
      queue.asyncAfter(deadline: .now() + Self.longestRetry) { [weak self] in
        guard let self else { return }
        settleScheduled = false
        if let store = self.store { settleWhatIsInTheFile(store) }
      }
      return
    }
    report(.settled(Dictionary(unsettled.map { ($0.key, $0.revision) }) { _, last in last }))
    unsettled = []
    unsettledKeys = []
  }

  /// When the `-wal` file is not the one the connection opened, what was committed since the
  /// last checkpoint is only in a file nobody else can see, and goes with the process. The
  /// old connection still sees it: a checkpoint through it copies it into the database file.
  /// Then the connection is opened anew and the held phases are written again (a phase the
  /// rescue saved is not written twice).
  private func noticeALostWriteAheadLog() throws(HistoryError) {
    guard let store, let walIdentity, store.writeAheadLog != walIdentity else { return }
    let rescued = (try? store.checkpoint()) == true
    self.store = nil
    self.walIdentity = nil
    let held = unsettled.map { phase in
      var again = phase
      again.confirmed = !rescued
      return again
    }
    let heldKeys = Set(held.map(\.key))
    setWaiting(held + waiting.filter { !heldKeys.contains($0.key) })
    unsettled = []
    unsettledKeys = []
    report(
      .lost(
        count: held.count,
        reason: "its write-ahead log \(path)-wal was deleted or replaced while Grow ran"
          + (rescued ? "; copied into the database before reopening it" : "")))
  }

  private func retryLater(after error: HistoryError) {
    if case .locked = error {
      retryDelay = Self.lockedRetry
    } else {
      retryDelay = min(Self.longestRetry, max(Self.firstRetry, retryDelay * 2))
    }
    if failure != error {
      failure = error
      report(.failing(error, waiting: waiting.count))
    }
    retryScheduled = true
    retryGeneration += 1
    let generation = retryGeneration
    // Weak: a writer given up (a test's) stops retrying.
    queue.asyncAfter(deadline: .now() + retryDelay) { [weak self] in
      guard let self, generation == retryGeneration else { return }
      retryScheduled = false
      writeWaiting()
    }
  }

  private func cancelRetry() {
    retryGeneration += 1
    retryScheduled = false
  }
}
