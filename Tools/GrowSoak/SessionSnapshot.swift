import Foundation
import GrowCore

/// A phase as the soak names it: its kind and the instant it started, to the microsecond.
/// The daemon writes the same instant to `session.json` and to the history, so the key finds
/// one phase in both.
public struct PhaseKey: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
  public var kind: PhaseKind
  public var micros: Int64

  public init(kind: PhaseKind, startedAt: Double) {
    self.kind = kind
    micros = Int64((startedAt * 1_000_000).rounded())
  }

  public init(kind: PhaseKind, micros: Int64) {
    self.kind = kind
    self.micros = micros
  }

  public static func < (a: PhaseKey, b: PhaseKey) -> Bool {
    (a.micros, a.kind.rawValue) < (b.micros, b.kind.rawValue)
  }

  public var description: String {
    let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
    return "\(kind.rawValue) started \(Self.clock(date))"
  }

  /// `HH:MM:SS.mmm` UTC, for messages.
  static func clock(_ date: Date) -> String {
    let seconds = date.timeIntervalSince1970
    let whole = Int(seconds.rounded(.down))
    let millis = Int(((seconds - Double(whole)) * 1000).rounded(.down))
    let day = whole % 86_400
    return String(
      format: "%02d:%02d:%02d.%03d", day / 3600, day / 60 % 60, day % 60, millis)
  }
}

/// The running phase as `session.json` has it.
public struct PhaseSnapshot: Equatable, Sendable {
  public var kind: PhaseKind
  public var startedAt: Double
  public var duration: Double
  public var pausedTotal: Double
  public var pausedAt: Double?

  public init(
    kind: PhaseKind, startedAt: Double, duration: Double, pausedTotal: Double = 0,
    pausedAt: Double? = nil
  ) {
    self.kind = kind
    self.startedAt = startedAt
    self.duration = duration
    self.pausedTotal = pausedTotal
    self.pausedAt = pausedAt
  }

  public var key: PhaseKey { PhaseKey(kind: kind, startedAt: startedAt) }
  public var isPaused: Bool { pausedAt != nil }
  /// When it ends if nothing changes; nil while paused. The same sum the daemon computes.
  public var deadline: Double? {
    isPaused
      ? nil
      : Date(timeIntervalSince1970: startedAt).addingTimeInterval(duration + pausedTotal)
        .timeIntervalSince1970
  }
}

/// What the daemon persisted in `$XDG_STATE_HOME/grow/session.json`; nil when there is no file
/// (idle). Decoded with types of its own rather than the daemon's, so the soak checks the file
/// as any reader would see it. (JSONDecoder, not JSONSerialization: the latter turns long
/// numbers into NSDecimalNumber, whose doubleValue is off by a microsecond.)
public struct SessionSnapshot: Equatable, Sendable {
  public var phase: PhaseSnapshot?
  /// The phase waiting to be started (cards without auto-start).
  public var next: PhaseKind?
  public var focusSinceLongBreak: Int
  public var longBreakAfter: Int
  public var lengths: [PhaseKind: Double]

  public init(
    phase: PhaseSnapshot?, next: PhaseKind? = nil, focusSinceLongBreak: Int = 0,
    longBreakAfter: Int, lengths: [PhaseKind: Double]
  ) {
    self.phase = phase
    self.next = next
    self.focusSinceLongBreak = focusSinceLongBreak
    self.longBreakAfter = longBreakAfter
    self.lengths = lengths
  }

  public enum ReadError: Error, CustomStringConvertible {
    case unreadable(String, String)
    public var description: String {
      switch self {
      case .unreadable(let path, let why): "\(path) is not a saved session: \(why)"
      }
    }
  }

  private struct File: Decodable {
    struct Phase: Decodable {
      var kind: PhaseKind
      var startedAt: Double
      var duration: Double
      var pausedTotal: Double?
      var pausedAt: Double?
    }
    struct Session: Decodable {
      struct Card: Decodable {
        var focus: Double
        var shortBreak: Double
        var longBreak: Double
        var longBreakAfter: Int
      }
      var card: Card
      var focusSinceLongBreak: Int?
    }
    var session: Session
    var phase: Phase?
    var next: PhaseKind?
  }

  /// The session saved at `path`, nil without a file.
  public static func read(_ path: String) throws(ReadError) -> SessionSnapshot? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    let file: File
    do {
      file = try JSONDecoder().decode(File.self, from: data)
    } catch {
      throw .unreadable(path, "\(error): \(String(decoding: data.prefix(200), as: UTF8.self))")
    }
    return SessionSnapshot(
      phase: file.phase.map {
        PhaseSnapshot(
          kind: $0.kind, startedAt: $0.startedAt, duration: $0.duration,
          pausedTotal: $0.pausedTotal ?? 0, pausedAt: $0.pausedAt)
      },
      next: file.next, focusSinceLongBreak: file.session.focusSinceLongBreak ?? 0,
      longBreakAfter: file.session.card.longBreakAfter,
      lengths: [
        .focus: file.session.card.focus, .shortBreak: file.session.card.shortBreak,
        .longBreak: file.session.card.longBreak,
      ])
  }
}
