import Foundation
import GrowCore
import GrowHistory
import GrowSync
import GrowTestSupport

/// The sync faults (issue 29, docs/sync.md): the soak's daemon syncs its folder through a real
/// Syncthing with another machine's, and that other machine (the peer: a history and a journal
/// written by GrowSync's own writer, the code every Grow writes its journal with) grows phases
/// while the soak's Syncthing is stopped or hung, and has its journal cut short as a restore
/// from an older backup or a disk that lost its tail would. After each, every phase the peer
/// ever wrote must reach the soak's history exactly once, within `catchUpBound` seconds of
/// Syncthing running again, and the soak's own journal must reach the peer; the history audit
/// at the end counts the peer's rows apart from the soak's (`HistoryAudit.fromOtherMachines`).
final class SyncPeers {
  /// The name the soak's daemon syncs under (`[sync] name`).
  static let soakMachineName = "soak"
  /// Syncthing gets a minute to bring a change over (a restarted instance connects, compares
  /// indexes and pulls), the same as the two-machine tests give it.
  static let catchUpBound: TimeInterval = 90

  /// The soak daemon's sync folder (`[sync] folder`) and the Syncthing that syncs it.
  let folder: String
  let ownSyncthing: SyncthingPeer
  /// The other machine: its folder, Syncthing, history and journal writer.
  let peerSyncthing: SyncthingPeer
  let peerFolder: SyncFolder
  let peerHistory: HistoryStore
  /// Phases the peer has grown (and written into its journal) so far.
  var phasesGrown = 0
  /// Where the next phase of the peer starts: yesterday, so that the soak's own figures for
  /// today (which count every machine) never change under a check.
  var nextStart: Date

  /// - Parameters:
  ///   - home: the soak's home; the peer lives in `home/peer`.
  ///   - configHome: the soak's `$XDG_CONFIG_HOME`, where Grow finds Syncthing's config.xml.
  init(home: String, configHome: String) throws {
    folder = home + "/Sync/grow"
    ownSyncthing = try SyncthingPeer(
      directory: URL(fileURLWithPath: configHome), folder: folder)
    let peerHome = home + "/peer"
    peerSyncthing = try SyncthingPeer(
      directory: URL(fileURLWithPath: peerHome), folder: peerHome + "/Sync/grow")
    try ownSyncthing.share(with: [peerSyncthing])
    try peerSyncthing.share(with: [ownSyncthing])
    peerHistory = try HistoryStore(path: peerHome + "/history.sqlite")
    peerFolder = SyncFolder(
      path: peerSyncthing.folder, identity: MachineIdentity(id: "5ea1ed0ff1ce0001", name: "peer"))
    let yesterday = Date().addingTimeInterval(-86_400)
    nextStart = Date(
      timeIntervalSince1970: (yesterday.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
    try ownSyncthing.start()
    try peerSyncthing.start()
  }

  func stop() {
    ownSyncthing.stop()
    peerSyncthing.stop()
  }

  /// The peer grows `count` completed focus phases of 25 minutes and writes them into its
  /// journal, as its daemon would.
  func growPhases(_ count: Int) throws {
    for _ in 0..<count {
      let end = nextStart.addingTimeInterval(25 * 60)
      _ = try peerHistory.record(
        PhaseRecord(
          card: "work", kind: .focus, plannedSeconds: 25 * 60, actualSeconds: 25 * 60,
          startedAt: nextStart, endedAt: end, outcome: .completed, intention: "on the peer"))
      nextStart = end.addingTimeInterval(5 * 60)
    }
    phasesGrown += count
    // A journal cut short gets its lost phases again here, as the peer's daemon would.
    try peerFolder.writeNewPhases(from: peerHistory)
  }

  /// The soak machine's own journal in its folder (the one file there that is not the peer's).
  var ownJournal: String? {
    SyncFolder(path: folder, identity: peerFolder.identity).journals()
      .first { $0.hasPrefix("grow-\(Self.soakMachineName)-") }
  }

  static func size(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
  }
}

extension Soak {
  /// What the sync kinds need before the daemon first starts: both Syncthings running.
  func prepareSyncFaults() throws {
    guard options.uses(.syncthingStopped) || options.uses(.journalTruncated) else { return }
    syncPeers = try SyncPeers(
      home: harness.environment["HOME", default: ""],
      configHome: harness.environment["XDG_CONFIG_HOME", default: ""])
  }

  /// The `[sync]` section of the soak's config, when the sync kinds run.
  var syncSection: String? {
    syncPeers.map { "[sync]\nfolder = \($0.folder)\nname = \(SyncPeers.soakMachineName)\n" }
  }

  // MARK: Syncthing stopped

  /// The soak's Syncthing is killed (and started again) or hung (SIGSTOP, then SIGCONT) for
  /// one to four seconds while the peer grows phases and the soak's daemon keeps running its
  /// own; once it runs again, both sides catch up.
  func stopSyncthing() throws {
    guard let peers = syncPeers, let pid = peers.ownSyncthing.process?.pid else {
      problem("the soak's Syncthing is not running")
      return
    }
    try keepPhasesComing()
    let hang = random.chance(0.5)
    say("  \(hang ? "stopping (SIGSTOP)" : "killing") the soak's Syncthing")
    if hang { kill(pid, SIGSTOP) } else { peers.ownSyncthing.stop() }
    var resumed = false
    func resume() throws {
      guard !resumed else { return }
      resumed = true
      if hang { kill(pid, SIGCONT) } else { try peers.ownSyncthing.start() }
    }
    do {
      try peers.growPhases(Int.random(in: 1...4, using: &random))
      try dwell(random.seconds(1...4))
      try resume()
    } catch {
      try? resume()
      throw error
    }
    try waitForSyncCatchUp(peers, after: hang ? "a hung Syncthing" : "a restarted Syncthing")
  }

  // MARK: A journal cut short

  /// The peer's journal loses its tail (at a line's end, as a restore from an older backup
  /// leaves it, or in the middle of one, as a disk that lost its last block), Syncthing brings
  /// the shorter file over, and the peer grows more phases after it. The soak's daemon keeps
  /// every phase it had already merged, reads the new ones, and never stops.
  func truncatePeerJournal() throws {
    guard let peers = syncPeers else { return }
    try keepPhasesComing()
    if peers.phasesGrown == 0 { try peers.growPhases(2) }
    let path = peers.peerFolder.journalPath
    let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
    // Never into the first line: a journal is Grow's by its header (docs/sync.md), and no
    // restore of a journal predates its header.
    let header = (bytes.firstIndex(of: 0x0A) ?? bytes.count - 1) + 1
    guard bytes.count > header else { return }
    let lineEnds = bytes.indices.filter { bytes[$0] == 0x0A && $0 + 1 >= header }.map { $0 + 1 }
    let midLine = random.chance(0.5)
    let cut =
      midLine
      ? Int.random(in: header..<bytes.count, using: &random)
      : lineEnds.randomElement(using: &random) ?? header
    say("  cutting the peer's journal from \(bytes.count) to \(cut) bytes")
    guard truncate(path, off_t(cut)) == 0 else {
      problem("truncate \(path): \(String(cString: strerror(errno)))")
      return
    }
    report.journalsTruncated += 1
    try dwell(random.seconds(0.5...2))
    try peers.growPhases(Int.random(in: 1...3, using: &random))
    try waitForSyncCatchUp(peers, after: "a journal cut short")
    if harness.daemon?.exitStatus != nil { problem("the daemon died after a journal cut short") }
  }

  // MARK: Catching up

  /// Waits until every phase the peer wrote is in the soak's history once, and the soak's own
  /// journal as it is now has reached the peer's folder; the seconds it took are a figure.
  private func waitForSyncCatchUp(_ peers: SyncPeers, after what: String) throws {
    let since = Date()
    let ownJournal = peers.ownJournal
    let ownSize = ownJournal.map { SyncPeers.size(peers.folder + "/" + $0) } ?? 0
    var merged = 0
    var reachedPeer = false
    while Date().timeIntervalSince(since) < SyncPeers.catchUpBound {
      try dwell(0.2)
      let store = try history ?? HistoryStore(path: historyPath, create: false)
      history = store
      merged = try store.phases().filter { $0.machine == peers.peerFolder.identity.id }.count
      reachedPeer =
        ownJournal.map { SyncPeers.size(peers.peerSyncthing.folder + "/" + $0) >= ownSize } ?? true
      if merged == peers.phasesGrown, reachedPeer {
        report.syncCatchUpSeconds.append(Date().timeIntervalSince(since))
        return
      }
      if merged > peers.phasesGrown { break }
    }
    report.syncNeverCaughtUp += 1
    problem(
      "after \(what): the soak's history has \(merged) of the \(peers.phasesGrown) phases the "
        + "peer wrote" + (reachedPeer ? "" : ", and its own journal has not reached the peer")
        + " \(Int(Date().timeIntervalSince(since))) s later")
  }
}
