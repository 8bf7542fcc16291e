import FoundationEssentials
@_spi(GrowHost) import GrowCore
import GrowHistory
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) @_spi(GrowHost) import GrowPluginKit
import GrowSync

/// The daemon's side of sync (docs/sync.md): writes each phase this machine records into its
/// journal in the sync folder, and merges what the other machines' journals bring into the
/// history as their files change.
///
/// The loop only hears about the folder (inotify through `DirectoryWatch`: nothing polls, and
/// an unchanged folder never wakes the daemon); reading journals and writing this machine's
/// happen on the history's own queue (`HistoryRecorder.access`), behind the phases queued
/// there, so neither a long journal nor a slow disk holds the loop.
@MainActor
final class SyncService {
  static let subscriber = "sync"
  let folder: SyncFolder
  private let history: HistoryRecorder
  private let events: EventBus
  private let log: Logger
  private var watch: DirectoryWatch?
  /// Journals that changed since the last merge started; `everything` reads them all.
  private var changed: Set<String> = []
  private var everything = true
  private var merging = false
  private var writeWanted = false
  private var writing = false
  /// Problems already logged, so a journal damaged for good is said once per daemon.
  private var reported: Set<JournalProblem> = []
  private var stopped = false

  init(folder: SyncFolder, history: HistoryRecorder, events: EventBus, log: Logger) {
    self.folder = folder
    self.history = history
    self.events = events
    self.log = log
  }

  /// Watches the folder (made when missing), writes the phases not yet in this machine's
  /// journal and reads every journal once.
  func start() {
    do {
      try folder.create()
    } catch {
      log.error("sync: \(error)")
    }
    do {
      watch = try DirectoryWatch(
        directory: folder.path, appeared: { [weak self] name in self?.journalChanged(name) },
        written: { [weak self] name in self?.journalChanged(name) })
    } catch {
      log.error("sync: \(error); other machines' phases are read when the daemon starts next")
    }
    _ = events.subscribe(HistoryRecorded.self, as: Self.subscriber) { [weak self] _ in
      self?.writeJournal()
    }
    log.info(
      "sync: this machine is \(folder.identity.name) (\(folder.identity.id)); its journal is "
        + folder.journalPath)
    writeJournal()
    mergeJournals()
  }

  func stop() {
    stopped = true
    watch?.cancel()
    watch = nil
    events.unsubscribeAll(of: Self.subscriber)
  }

  private func journalChanged(_ name: String) {
    guard SyncFolder.isJournal(name) else { return }
    changed.insert(name)
    mergeJournals()
  }

  /// Writes this machine's new phases into its journal, one write at a time.
  private func writeJournal() {
    guard !stopped else { return }
    writeWanted = true
    guard !writing else { return }
    writing = true
    writeWanted = false
    let folder = self.folder
    history.access(
      { store in Result { () throws(SyncError) in try folder.writeNewPhases(from: store) } },
      then: { [weak self] result in
        guard let self else { return }
        self.writing = false
        if case .failure(let error) = result { self.log.error("sync: \(error)") }
        if self.writeWanted { self.writeJournal() }
      })
  }

  /// Merges what is new in the journals that changed, one merge at a time; changes that come
  /// meanwhile make one more.
  private func mergeJournals() {
    guard !stopped, !merging, everything || !changed.isEmpty else { return }
    merging = true
    let names: Set<String>? = everything ? nil : changed
    everything = false
    changed = []
    let folder = self.folder
    history.access(
      { store in .success(folder.merge(into: store, only: names)) },
      then: { [weak self] (result: Result<SyncFolder.MergeReport, any Error>) in
        guard let self else { return }
        self.merging = false
        switch result {
        case .success(let report): self.took(report)
        case .failure(let error):
          self.log.error("sync: \(error); the journals are read again at their next change")
        }
        self.mergeJournals()
      })
  }

  private func took(_ report: SyncFolder.MergeReport) {
    if report.result.changedAnything {
      log.info(
        Message(
          "sync: merged {added} new phase(s) and {changed} edit(s) or delete(s) from other "
            + "machines"
        ).render(["added": report.result.added, "changed": report.result.changed]))
      // Today's figures, the goal and the streak count the other machines' phases.
      history.reread()
    }
    for problem in report.problems where reported.insert(problem).inserted {
      log.warning("sync: \(problem)")
    }
  }
}
