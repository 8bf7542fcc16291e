import FoundationEssentials
import Glibc
import GrowCore

/// How a recorded phase ended: the core's one vocabulary (`PhaseOutcome`), under the name
/// the history's code has always used.
public typealias HistoryOutcome = PhaseOutcome

/// One phase as the history keeps it.
public struct PhaseRecord: Sendable, Equatable {
  /// The row id; 0 until recorded.
  public var id: Int64
  public var card: String
  public var kind: PhaseKind
  /// Seconds planned, extensions included.
  public var plannedSeconds: Double
  /// Seconds that ran, pauses excluded.
  public var actualSeconds: Double
  public var startedAt: Date
  /// Seconds east of UTC on the wall clock when the phase started.
  public var startOffset: Int
  public var endedAt: Date
  public var endOffset: Int
  public var outcome: HistoryOutcome
  public var pauseCount: Int
  public var pausedSeconds: Double
  /// Seconds away from the computer during the phase (filled in by the X11 monitor).
  public var awaySeconds: Double
  public var intention: String?
  /// The task the focus was for (`grow start --task`): a row of the tasks table.
  public var taskID: Int64?
  /// The distractions recorded for the phase (rows of the distractions table), and their
  /// seconds in all; filled in by `HistoryStore.phases`, not written by `record`.
  public var distractionCount = 0
  public var distractionSeconds: Double = 0
  /// The websites among them, each once, in the order first seen (`grow history --json`).
  public var distractionSites: [String] = []
  /// The id every synced machine knows the phase by (docs/sync.md); nil for a phase of this
  /// machine that is in no sync journal yet.
  public var uid: String?
  /// The id of the machine the phase was grown on; nil for this machine.
  public var machine: String?
  /// That machine's name (its host name), as its journal gives it; filled in by
  /// `HistoryStore.phases` for phases of other machines.
  public var machineName: String?

  /// - Parameter timeZone: gives the UTC offsets at the start and the end.
  public init(
    id: Int64 = 0, card: String, kind: PhaseKind, plannedSeconds: Double,
    actualSeconds: Double, startedAt: Date, endedAt: Date, outcome: HistoryOutcome,
    pauseCount: Int = 0, pausedSeconds: Double = 0, awaySeconds: Double = 0,
    intention: String? = nil, timeZone: LocalZone = .system
  ) {
    self.id = id
    self.card = card
    self.kind = kind
    self.plannedSeconds = plannedSeconds
    self.actualSeconds = actualSeconds
    self.startedAt = startedAt
    self.startOffset = timeZone.secondsFromGMT(for: startedAt)
    self.endedAt = endedAt
    self.endOffset = timeZone.secondsFromGMT(for: endedAt)
    self.outcome = outcome
    self.pauseCount = pauseCount
    self.pausedSeconds = pausedSeconds
    self.awaySeconds = awaySeconds
    self.intention = intention
  }

  /// The name of the machine the phase was grown on: `thisMachine` (the host name, or what
  /// `[sync] name` calls it), or the name the other machine's journal gives (its id when it
  /// gave none).
  public func grownOn(thisMachine: String = ThisMachine.name) -> String {
    machine == nil ? thisMachine : machineName ?? machine ?? ""
  }

  /// The day a phase counts for: the local day it ended on, as the timer's "today" counts.
  public var day: LocalDay { LocalDay(endedAt, offset: endOffset) }

  /// A focus phase that ended its session before running its course: stopped, or abandoned
  /// (Grow exited). It leaves a wilted plant in the garden.
  public var isAbandoned: Bool {
    kind == .focus && (outcome == .stopped || outcome == .abandoned)
  }

  /// A focus phase whose seconds are focus time (`PhaseOutcome.countsAsFocus`).
  public var isCompletedFocus: Bool { kind == .focus && outcome.countsAsFocus }
}

/// Time lost to another application during a phase (recorded by the X11 monitor).
public struct Distraction: Sendable, Equatable {
  public var phaseID: Int64
  /// The window's WM_CLASS, e.g. `firefox`.
  public var appClass: String
  public var seconds: Double
  /// The window title, only when the person opted in to keeping titles.
  public var title: String?
  /// The website in the browser (its host; the address with `record-urls`), for a site.
  public var site: String?

  public init(
    phaseID: Int64, appClass: String, seconds: Double, title: String? = nil, site: String? = nil
  ) {
    self.phaseID = phaseID
    self.appClass = appClass
    self.seconds = seconds
    self.title = title
    self.site = site
  }
}

/// Focus on one local day, over every card: what streaks and today's goal are judged on.
/// Only focus time counts toward them (`PhaseOutcome.countsAsFocus`); the rest is
/// `cutShortSeconds`, shown apart.
public struct DayActivity: Sendable, Equatable {
  /// Seconds of completed focus.
  public var focusSeconds: Double
  public var completedFocus: Int
  /// Seconds of focus in phases stopped, skipped or abandoned.
  public var cutShortSeconds: Double

  public init(focusSeconds: Double = 0, completedFocus: Int = 0, cutShortSeconds: Double = 0) {
    self.focusSeconds = focusSeconds
    self.completedFocus = completedFocus
    self.cutShortSeconds = cutShortSeconds
  }
}

extension DayActivity {
  /// Counts `other`'s focus in.
  mutating func add(_ other: DayActivity) {
    focusSeconds += other.focusSeconds
    completedFocus += other.completedFocus
    cutShortSeconds += other.cutShortSeconds
  }

  /// Counts focus `phase` in.
  mutating func add(_ phase: PhaseRecord) {
    if phase.outcome.countsAsFocus {
      focusSeconds += phase.actualSeconds
      completedFocus += 1
    } else {
      cutShortSeconds += phase.actualSeconds
    }
  }
}

/// The machine Grow runs on.
public enum ThisMachine {
  /// Its host name (`gethostname`), or "unknown"; read once.
  public static let name: String = {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
    let name = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? "unknown" : name
  }()
}
