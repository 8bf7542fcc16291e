import FoundationEssentials
import Glibc
import GrowCore

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
  }

  public var key: Key { Key(kind: kind, startedAt: startedAt.timeIntervalSince1970) }
}

/// The phases not yet safely in the history, oldest first, kept in a file beside the saved
/// session (`$XDG_STATE_HOME/grow/pending-history.json`), so that neither a locked or full
/// database nor a `kill -9` loses one: the next daemon writes them.
///
/// The file is replaced whole on every change (one per phase end, rarely more; synced off the loop),
/// and removed when nothing is pending. It lives with the session and not with the database:
/// a full disk under the history is why phases wait here in the first place.
public struct PendingPhases {
  /// nil keeps them in memory only (the demo daemon, which saves no session either).
  public let path: String?
  public private(set) var phases: [PendingPhase] = []

  /// `pending-history.json` in the directory of `sessionPath`.
  public static func path(besideSession sessionPath: String) -> String {
    PathText.directory(of: sessionPath) + "/pending-history.json"
  }

  public enum LoadError: Error, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    public var description: String {
      switch self {
      case .unreadable(let path, let reason):
        "the phases kept for the history in \(path) cannot be read (\(reason)); they are not "
          + "in the history. Move the file aside to stop this message"
      }
    }
  }

  /// The kept phases in `path` (none when there is no file).
  public init(path: String?) throws(LoadError) {
    self.path = path
    guard let path, FileManager.default.fileExists(atPath: path) else { return }
    do {
      let data = try Data(contentsOf: URL(fileURLWithPath: path))
      phases = try JSONDecoder().decode([PendingPhase].self, from: data)
    } catch {
      throw .unreadable(path: path, reason: "\(error)")
    }
  }

  /// An empty list for `path` (after the file could not be read: it is left as it is).
  public init(emptyAt path: String?) { self.path = path }

  public var isEmpty: Bool { phases.isEmpty }

  public func pending(_ key: PhaseRecord.Key) -> PendingPhase? { phases.first { $0.key == key } }

  /// Adds `phase` at the end, or replaces the one with its key (a new revision).
  @discardableResult
  public mutating func keep(_ phase: PendingPhase) -> PendingPhase {
    var kept = phase
    if let index = phases.firstIndex(where: { $0.key == phase.key }) {
      kept.revision = phases[index].revision + 1
      phases[index] = kept
    } else {
      phases.append(kept)
    }
    return kept
  }

  /// Marks the phases of `keys` as written.
  public mutating func confirm(_ keys: Set<PhaseRecord.Key>) {
    for index in phases.indices where keys.contains(phases[index].key) {
      phases[index].confirmed = true
    }
  }

  /// Lets go of the phases now safely in the database file, unless they changed since.
  public mutating func settle(_ revisions: [PhaseRecord.Key: Int]) {
    phases.removeAll { revisions[$0.key] == $0.revision }
  }

  /// Puts the list on disk (atomically, synced), or removes the file when it is empty.
  public func save() throws(PrivateFileError) {
    guard let path else { return }
    guard !phases.isEmpty else {
      if unlink(path) != 0 && errno != ENOENT { throw PrivateFileError(path: path, code: errno) }
      return
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    // Encoding plain values cannot fail.
    let data = (try? encoder.encode(phases)) ?? Data("[]".utf8)
    // Whole on disk for every process at the rename; the sync waits off the loop.
    try PrivateFiles.replace(path, with: data, flush: false)
    PrivateFiles.flushInBackground(path) { _ in }
  }
}

// The file keeps instants as Unix seconds, the same Doubles the database stores, so a kept
// phase is found again by its start (PhaseRecord.Key) after a round trip through the file.
extension PhaseRecord: Codable {
  enum CodingKeys: String, CodingKey {
    case card, kind, outcome, intention
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
  }
}

extension Distraction: Codable {
  enum CodingKeys: String, CodingKey {
    case appClass = "app_class"
    case seconds, title
  }

  public init(from decoder: any Decoder) throws {
    let values = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      phaseID: 0, appClass: try values.decode(String.self, forKey: .appClass),
      seconds: try values.decode(Double.self, forKey: .seconds),
      title: try values.decodeIfPresent(String.self, forKey: .title))
  }

  public func encode(to encoder: any Encoder) throws {
    var values = encoder.container(keyedBy: CodingKeys.self)
    try values.encode(appClass, forKey: .appClass)
    try values.encode(seconds, forKey: .seconds)
    try values.encodeIfPresent(title, forKey: .title)
  }
}
