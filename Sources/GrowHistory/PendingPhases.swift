import Dispatch
import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowMessages
import GrowPluginKit
import Synchronization

/// An ended phase the history does not safely have yet, with the distractions that belong to
/// it. It is kept (in `PendingPhases`) from the moment the phase ends until the phase is in
/// the database file itself, not just in its write-ahead log.
public struct PendingPhase: Sendable, Equatable, Codable {
  public var phase: PhaseRecord
  /// Their `phaseID` is 0: the row id is only known once the phase is written.
  public var distractions: [Distraction]
  /// The history confirmed a write of this phase (it may still be only in the write-ahead
  /// log). A confirmed phase that the database turns out not to have was lost with that log.
  public var confirmed = false
  /// Counts changes (a distraction added), so that news about an older version of the phase
  /// does not let a newer one go.
  public var revision = 0

  public init(phase: PhaseRecord, distractions: [Distraction] = []) {
    self.phase = phase
    self.distractions = distractions
  }

  /// What the history knows the phase by: its kind and start (the phases_by_start index).
  public var key: PhaseRecord.Key { phase.key }
}

extension PhaseRecord {
  /// A phase's identity in the history: no two rows have the same kind and start.
  public struct Key: Sendable, Hashable {
    public var kind: PhaseKind
    /// Unix seconds, exactly as stored in `started_at`.
    public var startedAt: Double

    public init(kind: PhaseKind, startedAt: Double) {
      self.kind = kind
      self.startedAt = startedAt
    }
  }

  public var key: Key { Key(kind: kind, startedAt: startedAt.timeIntervalSince1970) }
}

/// The phases not yet safely in the history, oldest first, kept in a journal beside the saved
/// session (`$XDG_STATE_HOME/grow/pending-history.json`), so that neither a locked or full
/// database nor a `kill -9` loses one: the next daemon writes them. It lives with the session
/// and not with the database: a full disk under the history is why phases wait here at all.
///
/// The journal is append-only, one JSON object a line: a header, then `{"keep": phase}` when
/// a phase ends or changes, `{"confirm": [keys]}` when the history wrote phases, and
/// `{"settle": [keys]}` when they reached its database file. A change costs one line, written
/// on the caller's thread (a `kill -9` right after finds it) and synced on a queue of its own;
/// rewriting the whole list at every phase end stalled the loop for half a second with 20,000
/// kept phases. Once most lines are dead the file is rewritten with only the kept phases, off
/// the caller's thread; it is removed when nothing is kept.
///
/// A journal that cannot be read whole (garbage, cut short, a symbolic link, not a regular
/// file) is neither followed nor trusted: the daemon (`open`) moves it aside as
/// `pending-history.json.damaged-<UTC time>`, keeps every phase it could read from it, says so
/// (its log, `grow doctor`, `grow status`), and starts a new journal in its place, never
/// falling back to memory. The whole-file JSON array of earlier versions is read once and
/// converted.
///
/// At most `capacity` phases are kept in the file (100,000 by default: years of phases); past
/// that, phases are kept in memory only and written to the history when it can be, which the
/// log, `grow doctor` and `grow status` say (the `.full` marker beside the journal).
public final class PendingPhases {
  /// nil keeps them in memory only (the demo daemon, which saves no session either).
  public let path: String?
  /// The most phases the journal keeps; see the type's documentation.
  public let capacity: Int
  public static let defaultCapacity = 100_000
  /// A longer line is damage (a phase with its distractions takes a few KiB at most).
  static let longestLine = 1 << 20
  /// Start-up reads at most this much; the rest of a longer file is damage.
  static let largestFile = 256 << 20
  static let header = #"{"grow_pending_journal":1}"#
  /// Keys in one confirm or settle line: about 64 KiB, far below `longestLine`.
  static let keysPerLine = 1000

  /// Kept phases in order; a let-go one leaves a nil until the list is tidied.
  private var entries: [PendingPhase?] = []
  private var slot: [PhaseRecord.Key: Int] = [:]
  /// Kept in memory only: they came while the journal was at its capacity.
  private var memoryOnly: Set<PhaseRecord.Key> = []
  private let log: (Logger.Level, String) -> Void
  /// The journal open for appending; -1 when there is none (nothing kept, or in memory only).
  private var descriptor: Int32 = -1
  private var bytes = 0
  /// Lines after the header: what a compaction would drop is `records - count`.
  private var records = 0
  private var writeFailing = false
  private var compaction: Compaction?
  /// Where the journal was moved aside to, when `open` found it damaged.
  public private(set) var movedAside: String?

  /// `pending-history.json` in the directory of `sessionPath`.
  public static func path(besideSession sessionPath: String) -> String {
    PathText.directory(of: sessionPath) + "/pending-history.json"
  }

  public enum LoadError: Error, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    public var description: String {
      switch self {
      case .unreadable(let path, let reason):
        "the phases kept for the history in \(path) cannot be read (\(reason)); the daemon "
          + "moves the file aside when it starts and keeps what it can read of it"
      }
    }
  }

  /// The kept phases in `path` (none when there is no file), for readers (`grow history`,
  /// tests): the file is only read, and a damaged one is an error.
  public init(path: String?) throws(LoadError) {
    self.path = path
    capacity = Self.defaultCapacity
    log = { _, _ in }
    guard let path else { return }
    let reading = read(path)
    if let damage = reading.damage { throw .unreadable(path: path, reason: damage) }
  }

  /// An empty list for `path`, in memory until something is kept.
  public init(emptyAt path: String?, capacity: Int = PendingPhases.defaultCapacity) {
    self.path = path
    self.capacity = capacity
    log = { _, _ in }
  }

  private init(
    path: String?, capacity: Int, log: @escaping (Logger.Level, String) -> Void
  ) {
    self.path = path
    self.capacity = capacity
    self.log = log
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
  }

  /// The daemon's journal at `path`: what it keeps is read (linear in the file, at most
  /// `largestFile` bytes), a damaged file is moved aside (what can be read of it is kept), an
  /// old-format one is converted, and further changes are appended. Never fails: a journal that
  /// cannot be written says so through `log` at each kind of failure, and phases stay kept in
  /// memory for the history meanwhile.
  public static func open(
    path: String?, capacity: Int = PendingPhases.defaultCapacity,
    log: @escaping (Logger.Level, String) -> Void
  ) -> PendingPhases {
    let journal = PendingPhases(path: path, capacity: capacity, log: log)
    guard let path else { return journal }
    let reading = journal.read(path)
    if let damage = reading.damage {
      journal.moveAside(path, because: damage)
    } else if reading.legacy {
      log(.info, "converting the phases kept for the history in \(path) to the journal format")
    }
    // Only the phases still kept, in a file of the current format: after damage (its place is
    // free now), for the old format, or when most lines are dead.
    if reading.damage != nil || reading.legacy || journal.records > journal.count + 16 {
      journal.rewrite()
    } else if journal.count == 0 {
      if reading.exists { unlink(path) }
    } else {
      journal.openForAppending(path)
    }
    journal.checkCapacity()
    return journal
  }

  public var isEmpty: Bool { slot.isEmpty }
  public var count: Int { slot.count }

  /// Oldest first. O(n): for start-up and tests, not per phase.
  public var phases: [PendingPhase] { entries.compactMap { $0 } }

  public func pending(_ key: PhaseRecord.Key) -> PendingPhase? {
    slot[key].flatMap { entries[$0] }
  }

  /// Adds `phase` at the end, or replaces the one with its key (a new revision), and appends it
  /// to the journal.
  @discardableResult
  public func keep(_ phase: PendingPhase) -> PendingPhase {
    var kept = phase
    if let index = slot[phase.key] {
      kept.revision = (entries[index]?.revision ?? 0) + 1
      entries[index] = kept
    } else {
      slot[phase.key] = entries.count
      entries.append(kept)
      if count - memoryOnly.count > capacity { memoryOnly.insert(kept.key) }
    }
    if !memoryOnly.contains(kept.key) { append(Line(keep: kept)) }
    checkCapacity()
    return kept
  }

  /// Marks the phases of `keys` as written.
  public func confirm(_ keys: Set<PhaseRecord.Key>) {
    var confirmed: [LineKey] = []
    for key in keys {
      guard let index = slot[key], var phase = entries[index] else { continue }
      phase.confirmed = true
      entries[index] = phase
      if !memoryOnly.contains(key) { confirmed.append(LineKey(key, revision: nil)) }
    }
    for start in stride(from: 0, to: confirmed.count, by: Self.keysPerLine) {
      append(
        Line(confirm: Array(confirmed[start..<min(confirmed.count, start + Self.keysPerLine)])))
    }
  }

  /// Lets go of the phases now safely in the database file, unless they changed since.
  public func settle(_ revisions: [PhaseRecord.Key: Int]) {
    var settled: [LineKey] = []
    for (key, revision) in revisions {
      guard let index = slot[key], let phase = entries[index], phase.revision == revision
      else { continue }
      entries[index] = nil
      slot[key] = nil
      if memoryOnly.remove(key) == nil { settled.append(LineKey(key, revision: revision)) }
    }
    tidy()
    if count == 0, let path {
      // Nothing kept: no file (what `grow history` and the soak look for).
      closeJournal()
      if unlink(path) != 0, errno != ENOENT {
        log(.warning, "cannot remove \(path): \(String(cString: strerror(errno)))")
      }
    } else {
      for start in stride(from: 0, to: settled.count, by: Self.keysPerLine) {
        append(Line(settle: Array(settled[start..<min(settled.count, start + Self.keysPerLine)])))
      }
    }
    checkCapacity()
  }

  /// Drops the nils once they outnumber the phases, so each let-go phase is moved O(1) times.
  private func tidy() {
    guard entries.count > 2 * slot.count + 64 else { return }
    entries = entries.filter { $0 != nil }
    slot = [:]
    for (index, phase) in entries.enumerated() {
      if let phase { slot[phase.key] = index }
    }
  }

  // MARK: Capacity

  /// The marker beside the journal while it is at its capacity (for `grow doctor`).
  static func fullMarker(_ path: String) -> String { path + ".full" }

  private var full = false

  /// Says it, loudly and once, when the journal reaches its capacity; journals what waited in
  /// memory, oldest first, as soon as there is room again.
  private func checkCapacity() {
    guard let path else { return }
    if !memoryOnly.isEmpty, count - memoryOnly.count < capacity {
      var room = capacity - (count - memoryOnly.count)
      for phase in entries.compactMap({ $0 }) where room > 0 && memoryOnly.contains(phase.key) {
        memoryOnly.remove(phase.key)
        room -= 1
        append(Line(keep: phase))
        if phase.confirmed { append(Line(confirm: [LineKey(phase.key, revision: nil)])) }
      }
    }
    let atCapacity = count >= capacity
    if atCapacity && !full {
      full = true
      let message =
        "\(count) phases wait for the history in \(path), the most Grow keeps there "
        + "(\(capacity)): phases that end from now on are kept in memory only, and a crash "
        + "before the history can be written would lose them. Make the history writable again "
        + "('grow doctor' says what is wrong with it)"
      log(.error, message)
      try? PrivateFiles.replace(Self.fullMarker(path), with: Data((message + "\n").utf8))
    } else if !atCapacity && full {
      full = false
      unlink(Self.fullMarker(path))
      log(.info, "the phases waiting for the history fit in \(path) again")
    }
  }

  // MARK: The file

  /// One journal line. Exactly one of the fields is set (the header has `grow_pending_journal`).
  struct Line: Codable {
    var version: Int?
    var keep: PendingPhase?
    var confirm: [LineKey]?
    var settle: [LineKey]?

    enum CodingKeys: String, CodingKey {
      case version = "grow_pending_journal"
      case keep, confirm, settle
    }

    init(keep: PendingPhase) { self.keep = keep }
    init(confirm: [LineKey]) { self.confirm = confirm }
    init(settle: [LineKey]) { self.settle = settle }
  }

  struct LineKey: Codable {
    var kind: PhaseKind
    var startedAt: Double
    var revision: Int?

    enum CodingKeys: String, CodingKey {
      case kind, revision
      case startedAt = "started_at"
    }

    init(_ key: PhaseRecord.Key, revision: Int?) {
      kind = key.kind
      startedAt = key.startedAt
      self.revision = revision
    }

    var key: PhaseRecord.Key { PhaseRecord.Key(kind: kind, startedAt: startedAt) }
  }

  struct Reading {
    var exists = false
    var legacy = false
    /// Why the file cannot be trusted whole; nil when it can.
    var damage: String?
  }

  /// Reads the journal at `path` into this list, without following a symbolic link or
  /// changing anything: one pass over the bytes, a line decoded at a time, what decodes kept
  /// whatever else the file holds.
  private func read(_ path: String) -> Reading {
    var reading = Reading()
    let file = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    guard file >= 0 else {
      switch errno {
      case ENOENT: return reading
      case ELOOP:
        reading.exists = true
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
        reading.damage = "it is a symbolic link to \(target), which Grow does not follow"
      default:
        reading.exists = true
        reading.damage = "cannot open it: \(String(cString: strerror(errno)))"
      }
      return reading
    }
    defer { close(file) }
    reading.exists = true
    var info = stat()
    guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
      reading.damage = "it is not a regular file"
      return reading
    }
    var content: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while content.count <= Self.largestFile {
      let got = chunk.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
      if got < 0, errno == EINTR { continue }
      if got < 0 {
        reading.damage = "cannot read it: \(String(cString: strerror(errno)))"
        return reading
      }
      if got == 0 { break }
      content.append(contentsOf: chunk[0..<got])
    }
    if content.count > Self.largestFile {
      content.removeSubrange(Self.largestFile...)
      reading.damage = "it is longer than \(Self.largestFile >> 20) MiB; the rest was not read"
    }
    let decoder = JSONDecoder()
    if content.first(where: { !Self.isSpace($0) }) == UInt8(ascii: "[") {
      reading.legacy = true
      do {
        for phase in try decoder.decode([PendingPhase].self, from: Data(content)) {
          apply(Line(keep: phase))
        }
      } catch {
        reading.damage = "it is not a whole list of phases (cut short, or damaged)"
      }
      records = entries.count
      return reading
    }
    var bad = 0
    var sawHeader = false
    // The lines, then decoded a few thousand at a time as one JSON array (a decoder per line
    // took twice as long as the old whole-file read); a batch that fails is decoded line by
    // line, so one damaged line costs only itself.
    var lines: [Range<Int>] = []
    content.withUnsafeBufferPointer { bytes in
      guard let base = bytes.baseAddress else { return }
      var start = 0
      while start < bytes.count {
        // memchr: a byte-at-a-time scan in Swift was most of start-up in a debug build.
        var end = bytes.count
        if let found = memchr(UnsafeRawPointer(base + start), 0x0A, bytes.count - start) {
          end = UnsafeRawPointer(found) - UnsafeRawPointer(base)
        }
        let range = start..<end
        start = end + 1
        if bytes[range].allSatisfy(Self.isSpace) { continue }
        guard range.count <= Self.longestLine else {
          bad += 1
          continue
        }
        lines.append(range)
      }
    }
    let cutShort = content.last.map { $0 != UInt8(ascii: "\n") } ?? false
    func take(_ line: Line) {
      if line.version != nil {
        sawHeader = true
      } else {
        apply(line)
        records += 1
      }
    }
    for batchStart in stride(from: 0, to: lines.count, by: 4096) {
      let batch = lines[batchStart..<min(lines.count, batchStart + 4096)]
      var joined: [UInt8] = [UInt8(ascii: "[")]
      for (index, range) in batch.enumerated() {
        if index > 0 { joined.append(UInt8(ascii: ",")) }
        joined += content[range]
      }
      joined.append(UInt8(ascii: "]"))
      if let decoded = try? decoder.decode([Line].self, from: Data(joined)),
        decoded.count == batch.count
      {
        decoded.forEach(take)
        continue
      }
      for range in batch {
        guard let line = try? decoder.decode(Line.self, from: Data(content[range])) else {
          bad += 1
          if range.upperBound == content.count && cutShort {
            reading.damage = "it ends in the middle of a line (cut short)"
          }
          continue
        }
        take(line)
      }
    }
    if bad > 0 {
      reading.damage = reading.damage ?? "\(bad) line(s) of it are not phases (damaged)"
    } else if !sawHeader && records > 0 {
      reading.damage = "it has no journal header"
    } else if !sawHeader && !content.isEmpty {
      reading.damage = "it is not a journal of phases"
    }
    tidy()
    return reading
  }

  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }

  /// One line read back: the same change as when it was written.
  private func apply(_ line: Line) {
    if let phase = line.keep {
      if let index = slot[phase.key] {
        entries[index] = phase
      } else {
        slot[phase.key] = entries.count
        entries.append(phase)
      }
    }
    for key in line.confirm ?? [] {
      guard let index = slot[key.key] else { continue }
      entries[index]?.confirmed = true
    }
    for key in line.settle ?? [] {
      guard let index = slot[key.key], entries[index]?.revision == key.revision else { continue }
      entries[index] = nil
      slot[key.key] = nil
    }
  }

  /// Renames the damaged journal (the link itself, for a symbolic link: rename does not follow
  /// it) to a name of its own beside it, and says so once, loudly.
  private func moveAside(_ path: String, because damage: String) {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    var buffer = [CChar](repeating: 0, count: 32)
    let length = strftime(&buffer, buffer.count, "%Y%m%dT%H%M%SZ", &parts)
    let stamp = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var aside = path + ".damaged-" + stamp
    var suffix = 1
    var existing = stat()
    while lstat(aside, &existing) == 0 {
      suffix += 1
      aside = path + ".damaged-" + stamp + "-\(suffix)"
    }
    let recovered =
      count == 0
      ? "no phase could be read from it"
      : "the \(count) phase(s) that could be read from it are kept in a new journal and "
        + "written to the history"
    guard rename(path, aside) == 0 else {
      log(
        .error,
        "the phases kept for the history in \(path) cannot be read (\(damage)), and it cannot be "
          + "moved aside (\(String(cString: strerror(errno)))); \(recovered). Move it away "
          + "yourself: Grow starts a new journal in its place")
      return
    }
    movedAside = aside
    log(
      .error,
      "the phases kept for the history in \(path) could not be trusted (\(damage)): moved it "
        + "aside to \(aside); \(recovered). Nothing else is lost from now on; look at \(aside) "
        + "if you miss a phase, then delete it ('grow doctor' reports it until then)")
  }

  private static let encoder = JSONEncoder()

  private static func encoded(_ line: Line) -> [UInt8] {
    // Encoding plain values cannot fail.
    var bytes = Array((try? encoder.encode(line)) ?? Data())
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  private static var headerLine: [UInt8] { Array((header + "\n").utf8) }

  /// Opens the journal at `path` for appending; a new one gets its header. A symbolic link put
  /// in its place is damage: moved aside, and a new journal started.
  private func openForAppending(_ path: String) {
    for _ in 0..<2 {
      try? PrivateFiles.makeDirectory(PathText.directory(of: path))
      let file = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
      if file < 0, errno == ELOOP || errno == ENXIO {
        moveAside(path, because: "a symbolic link was put in its place, which Grow does not follow")
        continue
      }
      guard file >= 0 else {
        failed("cannot open it: \(String(cString: strerror(errno)))")
        return
      }
      var info = stat()
      guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        close(file)
        moveAside(path, because: "it is not a regular file")
        continue
      }
      descriptor = file
      bytes = Int(info.st_size)
      if bytes == 0 {
        records = 0
        guard write(Self.headerLine) else { return }
      }
      return
    }
  }

  private func closeJournal() {
    if descriptor >= 0 { close(descriptor) }
    descriptor = -1
    bytes = 0
    records = 0
    if let compaction {
      compaction.abandon()
      self.compaction = nil
    }
  }

  /// Writes `content` at the end of the open journal, whole or not at all (a short write is cut
  /// back, so the next line never lands glued to half of one); synced on a queue of its own.
  @discardableResult
  private func write(_ content: [UInt8]) -> Bool {
    let failure = Self.writeAll(descriptor, content)
    guard failure == 0 else {
      if ftruncate(descriptor, off_t(bytes)) != 0 {
        // Cannot cut it back: the next change rewrites the whole file instead.
        closeJournal()
      }
      failed(String(cString: strerror(failure)))
      return false
    }
    bytes += content.count
    if writeFailing, let path {
      writeFailing = false
      log(.info, "the phases waiting for the history are kept in \(path) again")
    }
    let copy = dup(descriptor)
    if copy >= 0 {
      Self.syncQueue.async {
        fdatasync(copy)
        close(copy)
      }
    }
    return true
  }

  /// 0, or the errno of the write that failed.
  private static func writeAll(_ file: Int32, _ content: [UInt8]) -> Int32 {
    content.withUnsafeBytes { buffer in
      guard let start = buffer.baseAddress else { return 0 }
      var offset = 0
      while offset < buffer.count {
        let written = Glibc.write(file, start + offset, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return errno
        }
        offset += written
      }
      return 0
    }
  }

  private static let syncQueue = DispatchQueue(label: "grow.pending-journal.sync", qos: .utility)

  private func failed(_ reason: String) {
    guard !writeFailing, let path else { return }
    writeFailing = true
    log(
      .error,
      "cannot keep the phases waiting for the history in \(path): \(reason); they are written "
        + "if this daemon can, but a crash now would lose them")
  }

  /// Appends one change; when most of the file is dead lines, has it compacted.
  private func append(_ line: Line) {
    guard let path else { return }
    finishCompaction()
    if descriptor < 0 {
      // Nothing on file yet (or it could not be written): the whole list, then this change.
      if count > 1 || writeFailing {
        rewrite()
        return
      }
      openForAppending(path)
      guard descriptor >= 0 else { return }
    }
    let content = Self.encoded(line)
    guard write(content) else { return }
    records += 1
    compaction?.tail.append(contentsOf: content)
    compaction?.tailRecords += 1
    if compaction == nil, records > 4 * count + 1024 { startCompaction(path) }
  }

  /// Replaces the journal with one holding only the phases kept now (at start, and after a
  /// failed write): on the caller's thread, once.
  private func rewrite() {
    guard let path else { return }
    closeJournal()
    guard count > 0 else {
      unlink(path)
      return
    }
    let journaled = entries.compactMap { $0 }.filter { !memoryOnly.contains($0.key) }
    var content = Self.headerLine
    for phase in journaled { content += Self.encoded(Line(keep: phase)) }
    do {
      try PrivateFiles.replace(path, with: Data(content))
    } catch {
      failed(error.reason)
      return
    }
    openForAppending(path)
    records = journaled.count
  }

  // MARK: Compaction off the caller's thread

  /// A rewrite with only the kept phases, encoded and synced to a temporary file on a queue of
  /// its own; the lines appended meanwhile are added to it and it is renamed over the journal
  /// at the next change after it is done (`finishCompaction`).
  private final class Compaction: @unchecked Sendable {
    let temporary: String
    let records: Int
    /// Appended since the snapshot (only touched on the journal's thread).
    var tail: [UInt8] = []
    var tailRecords = 0
    private let state = Mutex<(done: Bool, bytes: Int, error: Int32, abandoned: Bool)>(
      (false, 0, 0, false))

    init(temporary: String, records: Int) {
      self.temporary = temporary
      self.records = records
    }

    var result: (bytes: Int, error: Int32)? {
      state.withLock { $0.done ? ($0.bytes, $0.error) : nil }
    }
    var abandoned: Bool { state.withLock { $0.abandoned } }

    func finish(bytes: Int, error: Int32) {
      state.withLock { $0 = (true, bytes, error, $0.abandoned) }
    }

    func abandon() { state.withLock { $0.abandoned = true } }
  }

  private func startCompaction(_ path: String) {
    let snapshot = entries.compactMap { $0 }.filter { !memoryOnly.contains($0.key) }
    let job = Compaction(
      temporary: PathText.directory(of: path) + "/." + PathText.name(of: path) + ".compact",
      records: snapshot.count)
    compaction = job
    Self.compactionQueue.async {
      guard !job.abandoned else { return }
      var content = Self.headerLine
      let encoder = JSONEncoder()
      for phase in snapshot {
        content += Array((try? encoder.encode(Line(keep: phase))) ?? Data())
        content.append(UInt8(ascii: "\n"))
      }
      unlink(job.temporary)
      do throws(PrivateFileError) {
        try PrivateFiles.replace(job.temporary, with: Data(content))
        job.finish(bytes: content.count, error: 0)
      } catch {
        job.finish(bytes: 0, error: error.code)
      }
    }
  }

  private static let compactionQueue = DispatchQueue(
    label: "grow.pending-journal.compaction", qos: .utility)

  /// Puts a finished compaction in place: the lines appended since it began, then the rename.
  private func finishCompaction() {
    guard let job = compaction, let path, let result = job.result else { return }
    compaction = nil
    guard result.error == 0 else {
      unlink(job.temporary)
      return
    }
    let file = Glibc.open(job.temporary, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
    guard file >= 0 else { return }
    guard Self.writeAll(file, job.tail) == 0, rename(job.temporary, path) == 0 else {
      close(file)
      unlink(job.temporary)
      return
    }
    if descriptor >= 0 { close(descriptor) }
    descriptor = file
    bytes = result.bytes + job.tail.count
    records = job.records + job.tailRecords
    PrivateFiles.flushInBackground(path) { _ in }
  }

  // MARK: What grow doctor and grow status say

  /// What is wrong with the journal at `path`, for people: a damaged journal moved aside
  /// (until its copy is deleted) and a journal at its capacity. Each with what to do.
  public static func problems(at path: String) -> [(problem: String, fix: String)] {
    var found: [(problem: String, fix: String)] = []
    let directory = PathText.directory(of: path)
    let name = PathText.name(of: path) + ".damaged-"
    let aside = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
      .filter { $0.hasPrefix(name) }.sorted()
    for copy in aside {
      found.append(
        (
          Message(
            "the phases kept for the history were found damaged and moved aside to {copy}; "
              + "what could be read of it was kept, and a new journal started"
          ).render(["copy": "\(directory)/\(copy)"]),
          Message("look at {copy} if a phase is missing from 'grow history', then delete it")
            .render(["copy": "\(directory)/\(copy)"])
        ))
    }
    // The marker holds the daemon's English line (also in its log): its count, worded here.
    if let message = try? String(contentsOfFile: fullMarker(path), encoding: .utf8) {
      let line = message.split(separator: "\n").first.map(String.init) ?? message
      let problem = Int(line.prefix { $0.isNumber }).map { count in
        Message(
          one: "{count} phase waits for the history in {path}, the most Grow keeps there: "
            + "phases that end from now on are kept in memory only, and a crash before the "
            + "history can be written would lose them",
          other: "{count} phases wait for the history in {path}, the most Grow keeps there: "
            + "phases that end from now on are kept in memory only, and a crash before the "
            + "history can be written would lose them",
          countedBy: "count"
        ).render(["count": count, "path": path])
      }
      found.append(
        (
          problem ?? line,
          Message("make the history writable again: 'grow doctor' checks its directory")
            .render()
        ))
    }
    return found
  }
}

// The file keeps instants as Unix seconds, the same Doubles the database stores, so a kept
// phase is found again by its start (PhaseRecord.Key) after a round trip through the file.
extension PhaseRecord: Codable {
  enum CodingKeys: String, CodingKey {
    case card, kind, outcome, intention
    case taskID = "task_id"
    case plannedSeconds = "planned_seconds"
    case actualSeconds = "actual_seconds"
    case startedAt = "started_at"
    case startOffset = "start_offset"
    case endedAt = "ended_at"
    case endOffset = "end_offset"
    case pauseCount = "pause_count"
    case pausedSeconds = "paused_seconds"
    case awaySeconds = "away_seconds"
  }

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      card: try values.decode(String.self, forKey: .card),
      kind: try values.decode(PhaseKind.self, forKey: .kind),
      plannedSeconds: try values.decode(Double.self, forKey: .plannedSeconds),
      actualSeconds: try values.decode(Double.self, forKey: .actualSeconds),
      startedAt: Date(timeIntervalSince1970: try values.decode(Double.self, forKey: .startedAt)),
      endedAt: Date(timeIntervalSince1970: try values.decode(Double.self, forKey: .endedAt)),
      outcome: try values.decode(HistoryOutcome.self, forKey: .outcome),
      pauseCount: try values.decode(Int.self, forKey: .pauseCount),
      pausedSeconds: try values.decode(Double.self, forKey: .pausedSeconds),
      awaySeconds: try values.decode(Double.self, forKey: .awaySeconds),
      intention: try values.decodeIfPresent(String.self, forKey: .intention))
    startOffset = try values.decode(Int.self, forKey: .startOffset)
    endOffset = try values.decode(Int.self, forKey: .endOffset)
    taskID = try values.decodeIfPresent(Int64.self, forKey: .taskID)
  }

  public func encode(to encoder: any Encoder) throws {
    var values = encoder.container(keyedBy: CodingKeys.self)
    try values.encode(card, forKey: .card)
    try values.encode(kind, forKey: .kind)
    try values.encode(plannedSeconds, forKey: .plannedSeconds)
    try values.encode(actualSeconds, forKey: .actualSeconds)
    try values.encode(startedAt.timeIntervalSince1970, forKey: .startedAt)
    try values.encode(startOffset, forKey: .startOffset)
    try values.encode(endedAt.timeIntervalSince1970, forKey: .endedAt)
    try values.encode(endOffset, forKey: .endOffset)
    try values.encode(outcome, forKey: .outcome)
    try values.encode(pauseCount, forKey: .pauseCount)
    try values.encode(pausedSeconds, forKey: .pausedSeconds)
    try values.encode(awaySeconds, forKey: .awaySeconds)
    try values.encodeIfPresent(intention, forKey: .intention)
    try values.encodeIfPresent(taskID, forKey: .taskID)
  }
}

extension Distraction: Codable {
  enum CodingKeys: String, CodingKey {
    case appClass = "app_class"
    case seconds, title, site
  }

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      phaseID: 0, appClass: try values.decode(String.self, forKey: .appClass),
      seconds: try values.decode(Double.self, forKey: .seconds),
      title: try values.decodeIfPresent(String.self, forKey: .title),
      site: try values.decodeIfPresent(String.self, forKey: .site))
  }

  public func encode(to encoder: any Encoder) throws {
    var values = encoder.container(keyedBy: CodingKeys.self)
    try values.encode(appClass, forKey: .appClass)
    try values.encode(seconds, forKey: .seconds)
    try values.encodeIfPresent(title, forKey: .title)
    try values.encodeIfPresent(site, forKey: .site)
  }
}
