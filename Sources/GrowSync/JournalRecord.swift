import FoundationEssentials
@_spi(GrowHost) import GrowCore
import GrowHistory

/// One line of a sync journal: a JSON object with the format's version `v` and its `type`.
///
/// - `journal`: the first line, naming the machine that writes the file (`machine`, `name`).
/// - `phase`: an ended phase with its `uid` and everything the history keeps about it.
/// - `edit`: a phase's new `card` and/or `outcome`, made `at` a time on `machine`.
/// - `delete`: a phase deleted `at` a time on `machine`.
///
/// A reader skips keys it does not know (a later Grow may add some); a record of a higher `v`
/// is where an older Grow stops reading that journal, until it is updated.
struct JournalRecord: Codable, Equatable {
  static let version = 1

  var v: Int
  var type: String
  var machine: String?
  var name: String?
  var uid: String?
  var card: String?
  var kind: String?
  var planned: Double?
  var actual: Double?
  var started: Double?
  var startOffset: Int?
  var ended: Double?
  var endOffset: Int?
  var outcome: String?
  var pauses: Int?
  var paused: Double?
  var away: Double?
  var intention: String?
  var distractions: [JournalDistraction]?
  var at: Double?

  enum CodingKeys: String, CodingKey {
    case v, type, machine, name, uid, card, kind, planned, actual, started
    case startOffset = "start_offset"
    case ended
    case endOffset = "end_offset"
    case outcome, pauses, paused, away, intention, distractions, at
  }

  init(type: String, machine: String? = nil) {
    v = Self.version
    self.type = type
    self.machine = machine
  }

  static func header(_ identity: MachineIdentity) -> JournalRecord {
    var record = JournalRecord(type: "journal", machine: identity.id)
    record.name = identity.name
    return record
  }

  /// The record of one ended phase of `machine`, known as `uid`.
  static func phase(
    _ phase: PhaseRecord, distractions: [Distraction], uid: String, machine: String
  ) -> JournalRecord {
    var record = JournalRecord(type: "phase", machine: machine)
    record.uid = uid
    record.card = phase.card
    record.kind = phase.kind.rawValue
    record.planned = phase.plannedSeconds
    record.actual = phase.actualSeconds
    record.started = phase.startedAt.timeIntervalSince1970
    record.startOffset = phase.startOffset
    record.ended = phase.endedAt.timeIntervalSince1970
    record.endOffset = phase.endOffset
    record.outcome = phase.outcome.rawValue
    record.pauses = phase.pauseCount
    record.paused = phase.pausedSeconds
    record.away = phase.awaySeconds
    record.intention = phase.intention
    record.distractions = distractions.map {
      JournalDistraction(app: $0.appClass, seconds: $0.seconds, title: $0.title, site: $0.site)
    }
    return record
  }

  static func change(uid: String, _ changes: [SyncChange], stamp: SyncStamp) -> JournalRecord {
    let deleted = changes.contains(.deleted)
    var record = JournalRecord(type: deleted ? "delete" : "edit", machine: stamp.machine)
    record.uid = uid
    record.at = stamp.at
    for change in changes {
      switch change {
      case .card(let card): record.card = card
      case .outcome(let outcome): record.outcome = outcome.rawValue
      case .deleted: break
      }
    }
    return record
  }

  /// A phase's uid: its machine, kind and start in milliseconds. The same phase always gets the
  /// same one, so a line written twice (a crash between writing and noting it) merges once.
  static func uid(machine: String, kind: PhaseKind, startedAt: Date) -> String {
    "\(machine)-\(kind.rawValue)-\(Int64((startedAt.timeIntervalSince1970 * 1000).rounded()))"
  }

  /// One line, keys sorted, ending in a newline.
  func line() -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    var bytes = [UInt8]((try? encoder.encode(self)) ?? Data())
    bytes.append(0x0A)
    return bytes
  }

  /// What a line means for the history, or why it means nothing.
  enum Meaning: Equatable {
    case header(machine: String, name: String)
    case items([SyncItem])
    /// Written by a newer Grow: reading stops before it.
    case newer(version: Int)
    case invalid(reason: String)
  }

  static func read(_ bytes: ArraySlice<UInt8>, decoder: JSONDecoder = JSONDecoder()) -> Meaning {
    guard let record = try? decoder.decode(JournalRecord.self, from: Data(bytes)) else {
      if let versioned = try? decoder.decode(Versioned.self, from: Data(bytes)),
        versioned.v > version
      {
        return .newer(version: versioned.v)
      }
      return .invalid(reason: "not a journal record (JSON with v and type)")
    }
    guard record.v <= version else { return .newer(version: record.v) }
    guard record.v >= 1 else { return .invalid(reason: "version \(record.v) is not one") }
    return record.meaning()
  }

  private struct Versioned: Decodable { var v: Int }

  private func meaning() -> Meaning {
    switch type {
    case "journal":
      guard let machine, MachineIdentity.isValidID(machine) else {
        return .invalid(reason: "the journal line names no machine id")
      }
      return .header(machine: machine, name: name ?? machine)
    case "phase": return phaseItems()
    case "edit", "delete": return changeItems()
    default: return .invalid(reason: "unknown record type '\(type)'")
    }
  }

  private func phaseItems() -> Meaning {
    guard let uid, !uid.isEmpty, let machine, MachineIdentity.isValidID(machine),
      let card, !card.isEmpty, let kindText = kind, let kind = PhaseKind(rawValue: kindText),
      let outcomeText = outcome, let outcome = HistoryOutcome(rawValue: outcomeText),
      let started, let ended, started.isFinite, ended.isFinite, ended >= started
    else {
      return .invalid(
        reason: "a phase record without a valid uid, machine, card, kind, outcome, start or end")
    }
    let finite = [planned, actual, paused, away].allSatisfy { $0.map(\.isFinite) ?? true }
    guard finite else {
      return .invalid(reason: "a phase record with a length that is not a number")
    }
    var phase = PhaseRecord(
      card: card, kind: kind, plannedSeconds: max(0, planned ?? 0),
      actualSeconds: max(0, actual ?? 0), startedAt: Date(timeIntervalSince1970: started),
      endedAt: Date(timeIntervalSince1970: ended), outcome: outcome,
      pauseCount: max(0, pauses ?? 0), pausedSeconds: max(0, paused ?? 0),
      awaySeconds: max(0, away ?? 0), intention: intention, timeZone: .utc)
    // Offsets beyond ±18 h are damage; UTC then.
    phase.startOffset = abs(startOffset ?? 0) <= 64_800 ? startOffset ?? 0 : 0
    phase.endOffset = abs(endOffset ?? 0) <= 64_800 ? endOffset ?? 0 : 0
    phase.uid = uid
    phase.machine = machine
    let rows = (distractions ?? []).filter { $0.seconds.isFinite && $0.seconds >= 0 }.map {
      Distraction(
        phaseID: 0, appClass: $0.app, seconds: $0.seconds, title: $0.title, site: $0.site)
    }
    return .items([.phase(phase, rows)])
  }

  private func changeItems() -> Meaning {
    guard let uid, !uid.isEmpty, let machine, MachineIdentity.isValidID(machine), let at,
      at.isFinite
    else {
      return .invalid(reason: "an \(type) record without a valid uid, machine and time")
    }
    let stamp = SyncStamp(at: at, machine: machine)
    if type == "delete" { return .items([.change(uid: uid, .deleted, stamp)]) }
    var items: [SyncItem] = []
    if let card {
      guard !card.isEmpty else { return .invalid(reason: "an edit to an empty card") }
      items.append(.change(uid: uid, .card(card), stamp))
    }
    if let outcome {
      guard let known = HistoryOutcome(rawValue: outcome) else {
        return .invalid(reason: "an edit to an unknown outcome '\(outcome)'")
      }
      items.append(.change(uid: uid, .outcome(known), stamp))
    }
    guard !items.isEmpty else { return .invalid(reason: "an edit that changes nothing") }
    return .items(items)
  }
}

struct JournalDistraction: Codable, Equatable {
  var app: String
  var seconds: Double
  var title: String?
  /// The website, when the browser extension reported one.
  var site: String?
}
