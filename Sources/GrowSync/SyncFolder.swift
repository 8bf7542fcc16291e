import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowHistory

/// The folder a person syncs between machines (Syncthing, say) and the journals in it: one
/// per machine, written by that machine alone (`grow-NAME-ID.jsonl`), so the sync tool never
/// sees two writers of one file. The history database is never in it: each machine merges
/// the others' journals into its own.
public struct SyncFolder: Sendable {
  public let path: String
  public let identity: MachineIdentity

  public init(path: String, identity: MachineIdentity) {
    self.path = path
    self.identity = identity
  }

  /// The folder `[sync] folder` names: `~/` is the home directory, a relative path is taken
  /// from the home directory too (the daemon's working directory means nothing).
  public static func expand(_ folder: String, environment: [String: String]) -> String {
    let home = PathText.home(environment: environment)
    if folder == "~" { return home }
    if folder.hasPrefix("~/") { return PathText.join(home, String(folder.dropFirst(2))) }
    if folder.hasPrefix("/") { return PathText.normalized(folder) }
    return PathText.join(home, folder)
  }

  /// This machine's journal.
  public var journalPath: String { PathText.join(path, identity.journalName) }

  /// Whether a name in the folder is a journal to read: `*.jsonl`, Syncthing's conflict copies
  /// (`NAME.sync-conflict-DATE-TIME-DEVICE.jsonl`) included, since their records merge by id
  /// and count once; never a hidden or temporary file (`.syncthing.NAME.tmp`, `~syncthing~`).
  public static func isJournal(_ name: String) -> Bool {
    name.hasSuffix(".jsonl") && !name.hasPrefix(".") && !name.hasPrefix("~")
  }

  /// The journals in the folder, sorted; none when it is missing.
  public func journals() -> [String] {
    guard let directory = opendir(path) else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
      }
      if Self.isJournal(name) { names.append(name) }
    }
    return names.sorted()
  }

  /// Makes the folder (0700) when it is missing.
  public func create() throws(SyncError) {
    do {
      try PrivateFiles.makeDirectory(path)
    } catch {
      throw .cannotCreateDirectory(path: error.path, reason: error.reason)
    }
  }

  // MARK: Merging the journals

  /// What a merge did.
  public struct MergeReport: Sendable, Equatable {
    public var result = SyncMergeResult()
    public var problems: [JournalProblem] = []
    /// Journals read (the ones with something new).
    public var journalsRead = 0

    public init() {}
  }

  /// Reads what is new in every journal (`only`: those names, when given) and merges it into
  /// `store`, a batch of records per transaction, with the journal's position in the same
  /// transaction: a crash halfway reads the rest next time, and nothing twice.
  public func merge(into store: HistoryStore, only names: Set<String>? = nil) -> MergeReport {
    var report = MergeReport()
    for name in journals() where names?.contains(name) ?? true {
      let reader = JournalReader(path: PathText.join(path, name))
      do {
        let position = try store.journalPosition(name)
        let pass = try reader.read(from: position) { items, position in
          let merged = try store.merge(items, thisMachine: identity.id, journal: (name, position))
          report.result.add(merged)
        }
        if pass.position != position { report.journalsRead += 1 }
        report.problems += pass.problems
      } catch {
        report.problems.append(
          JournalProblem(path: reader.path, issue: .unreadable("\(error)")))
      }
    }
    return report
  }

  /// Reads every journal whole without merging (`grow doctor`): their problems, and the
  /// machines whose journals are there.
  public func check() -> (problems: [JournalProblem], machines: [(id: String, name: String)]) {
    var problems: [JournalProblem] = []
    var machines: [(id: String, name: String)] = []
    for name in journals() {
      let pass = JournalReader(path: PathText.join(path, name)).read(from: nil) { _, _ in }
      problems += pass.problems
      if let machine = pass.machine, !machines.contains(where: { $0.id == machine.id }) {
        machines.append(machine)
      }
    }
    return (problems, machines)
  }

  // MARK: This machine's journal

  /// Writes this machine's phases that are in no journal yet into its journal (all of them
  /// the first time: an existing history joins), and notes them in `store`. Holds the
  /// journal's lock throughout, so the daemon and `grow sync setup` never write a phase twice.
  ///
  /// A journal that lost what this machine wrote (shorter than after the last write, or
  /// another file: a restore from an older backup, a disk that lost its tail, a deletion) gets
  /// every phase again: their uids are the same, so each machine still counts each once.
  /// - Returns: how many phases were written.
  @discardableResult
  public func writeNewPhases(from store: HistoryStore) throws(SyncError) -> Int {
    let journal = try JournalFile(path: journalPath, identity: identity)
    defer { journal.close() }
    let name = identity.journalName
    do {
      let now = journal.state()
      if let before = try store.journalWritten(name),
        before.inode != now.inode || now.size < before.size
      {
        try store.forgetJournaledPhases()
      }
    } catch {
      throw .history(error)
    }
    var written = 0
    defer {
      let after = journal.state()
      try? store.setJournalWritten(name, inode: after.inode, size: after.size)
    }
    while true {
      let phases: [(PhaseRecord, [Distraction])]
      do {
        phases = try store.unjournaledPhases()
      } catch {
        throw .history(error)
      }
      guard !phases.isEmpty else { return written }
      var lines: [UInt8] = []
      var noted: [(id: Int64, uid: String)] = []
      for (phase, distractions) in phases {
        let uid = JournalRecord.uid(
          machine: identity.id, kind: phase.kind, startedAt: phase.startedAt)
        lines += JournalRecord.phase(
          phase, distractions: distractions, uid: uid, machine: identity.id
        )
        .line()
        noted.append((phase.id, uid))
      }
      // Written and synced before the history notes them: a crash between the two writes the
      // same lines again (the same uids), which merge once.
      try journal.append(lines)
      do {
        try store.journaled(noted)
      } catch {
        throw .history(error)
      }
      written += phases.count
    }
  }

  /// Keeps edits or deletes made on this machine (`grow history`) and writes them to its
  /// journal, one record per phase. A phase that is in no journal needs none: its line,
  /// written later, has it as it is then.
  public func recordChanges(
    _ changes: [(uid: String, changes: [SyncChange])], at: Date, in store: HistoryStore
  ) throws(SyncError) {
    guard !changes.isEmpty else { return }
    let stamp = SyncStamp(at: at.timeIntervalSince1970, machine: identity.id)
    var lines: [UInt8] = []
    do {
      try store.keepLocalChanges(
        changes.flatMap { uid, made in made.map { (uid, $0) } }, stamp: stamp)
      for (uid, made) in changes {
        lines += JournalRecord.change(uid: uid, made, stamp: stamp).line()
      }
    } catch {
      throw .history(error)
    }
    let journal = try JournalFile(path: journalPath, identity: identity)
    defer { journal.close() }
    try journal.append(lines)
  }

  /// `recordChanges` for one phase.
  public func recordChange(
    _ changes: [SyncChange], uid: String, at: Date, in store: HistoryStore
  ) throws(SyncError) {
    try recordChanges([(uid, changes)], at: at, in: store)
  }
}

/// This machine's journal, open for appending under an exclusive lock (flock): the daemon and
/// the command line both write it, one at a time. Made with its first line when missing.
final class JournalFile {
  let path: String
  private var descriptor: Int32

  init(path: String, identity: MachineIdentity) throws(SyncError) {
    self.path = path
    descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else {
      if errno == ELOOP { throw .notARegularFile(path: path) }
      throw .cannotWrite(path: path, reason: String(cString: strerror(errno)))
    }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
      Glibc.close(descriptor)
      throw .notARegularFile(path: path)
    }
    while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
    if fstat(descriptor, &info) == 0, info.st_size == 0 {
      try append(JournalRecord.header(identity).line())
    }
  }

  /// Appends whole lines and syncs them. A journal whose last line was cut off (a crash
  /// mid-write, a full disk) gets a newline first, so the new line is whole on its own.
  func append(_ bytes: [UInt8]) throws(SyncError) {
    var info = stat()
    var data = bytes
    if fstat(descriptor, &info) == 0, info.st_size > 0 {
      var last: UInt8 = 0
      if pread(descriptor, &last, 1, info.st_size - 1) == 1, last != 0x0A {
        data.insert(0x0A, at: 0)
      }
    }
    var written = 0
    while written < data.count {
      let count = data[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw .cannotWrite(path: path, reason: String(cString: strerror(errno)))
      }
      written += count
    }
    guard fsync(descriptor) == 0 else {
      throw .cannotWrite(path: path, reason: String(cString: strerror(errno)))
    }
  }

  /// Its file (inode) and size now.
  func state() -> (inode: UInt64, size: Int64) {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return (0, 0) }
    return (UInt64(info.st_ino), Int64(info.st_size))
  }

  func close() {
    guard descriptor >= 0 else { return }
    Glibc.close(descriptor)
    descriptor = -1
  }

  deinit { close() }
}
