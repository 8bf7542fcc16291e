import FoundationEssentials
import GrowCore

/// One state as GNOME Pomodoro 0.22.1 shows it: the `State`, `StateDuration`, `Elapsed` and
/// `IsPaused` properties, and the dictionary `StateChanged` carries (`name`, `duration`,
/// `elapsed`, `timestamp`).
struct PomodoroState: Equatable {
  /// `pomodoro`, `short-break`, `long-break`, or `null` while nothing runs.
  var name: String
  /// Planned seconds of the state; 0 for `null`.
  var duration: Double
  /// When the state began, in seconds since 1970 (`StateChanged`'s `timestamp`).
  var timestamp: Double
  var isPaused: Bool
  /// Seconds counted at `mark`; the count goes on from there while the state runs.
  var elapsedAtMark: Double
  var mark: Date
  /// Grow's phase behind it had not begun: it waits for the person (shown paused).
  var waiting: Bool

  static let idleName = "null"

  static func idle(at now: Date) -> PomodoroState {
    PomodoroState(
      name: idleName, duration: 0, timestamp: now.timeIntervalSince1970, isPaused: false,
      elapsedAtMark: 0, mark: now, waiting: false)
  }

  var isRunning: Bool { name != Self.idleName && !isPaused }

  /// Seconds counted so far.
  func elapsed(at now: Date) -> Double {
    isRunning ? elapsedAtMark + max(0, now.timeIntervalSince(mark)) : elapsedAtMark
  }
}

extension PhaseKind {
  /// GNOME Pomodoro's name for a phase of this kind.
  var pomodoroName: String {
    switch self {
    case .focus: "pomodoro"
    case .shortBreak: "short-break"
    case .longBreak: "long-break"
    }
  }
}

/// What a GNOME Pomodoro client is told when Grow's timer changes.
enum PomodoroChange: Equatable {
  /// `StateChanged(state, previous_state)`, then `PropertiesChanged` for `properties`.
  case stateChanged(
    PomodoroState, previous: PomodoroState, elapsedBefore: Double, properties: [String])
  /// `PropertiesChanged` for these properties only (a pause, a phase made longer).
  case propertiesChanged([String])
}

/// Grow's timer seen through GNOME Pomodoro 0.22.1's D-Bus model (docs/gnome-pomodoro.md):
/// focus is `pomodoro`, idle is `null`, a phase that waits for the person is that phase,
/// paused, at 0 s. Fed every status the timer publishes; says what GNOME Pomodoro would have
/// announced for the same change, which the plugin sends.
struct PomodoroModel {
  private(set) var state: PomodoroState

  init(status: TimerStatus, deck: CardDeck, now: Date) {
    state = .idle(at: now)
    state = Self.state(of: status, deck: deck, now: now, before: state)
  }

  /// The state `status` shows. A phase that goes on (the same start) keeps its timestamp, and
  /// so does a waiting phase that the person now starts: in GNOME Pomodoro's eyes a paused
  /// state resumed.
  static func state(of status: TimerStatus, deck: CardDeck, now: Date, before: PomodoroState)
    -> PomodoroState
  {
    switch status.state {
    case .idle:
      return before.name == PomodoroState.idleName ? before : .idle(at: now)
    case .waiting:
      let next = status.next ?? .focus
      let name = next.pomodoroName
      if before.waiting, before.name == name { return before }
      let card = try? deck.card(named: status.card)
      return PomodoroState(
        name: name, duration: card?.length(of: next) ?? status.duration,
        timestamp: now.timeIntervalSince1970, isPaused: true, elapsedAtMark: 0, mark: now,
        waiting: true)
    case .focus, .shortBreak, .longBreak:
      let name = status.state.phaseKind?.pomodoroName ?? PomodoroState.idleName
      let started = status.startedAt?.timeIntervalSince1970 ?? now.timeIntervalSince1970
      let goesOn =
        before.name == name
        && (before.waiting || abs(before.timestamp - started) < 0.001)
      return PomodoroState(
        name: name, duration: status.duration,
        timestamp: goesOn ? before.timestamp : started, isPaused: status.paused,
        elapsedAtMark: status.elapsed, mark: now, waiting: false)
    }
  }

  /// Takes the timer's new status; returns what to announce, in order.
  mutating func update(to status: TimerStatus, deck: CardDeck, now: Date) -> [PomodoroChange] {
    let before = state
    let after = Self.state(of: status, deck: deck, now: now, before: before)
    state = after
    let sameState =
      after.name == before.name && after.timestamp == before.timestamp
    guard sameState else {
      var properties = ["State", "Elapsed", "StateDuration"]
      if after.isPaused != before.isPaused { properties.append("IsPaused") }
      return [
        .stateChanged(
          after, previous: before, elapsedBefore: before.elapsed(at: now), properties: properties)
      ]
    }
    var properties: [String] = []
    if after.isPaused != before.isPaused { properties.append("IsPaused") }
    if after.duration != before.duration { properties += ["Elapsed", "StateDuration"] }
    return properties.isEmpty ? [] : [.propertiesChanged(properties)]
  }

  /// `Skip` or `Reset` while nothing runs: GNOME Pomodoro begins a new `null` state all the
  /// same, and says so.
  mutating func restartIdle(now: Date) -> PomodoroChange? {
    guard state.name == PomodoroState.idleName else { return nil }
    let before = state
    state = .idle(at: now)
    return .stateChanged(
      state, previous: before, elapsedBefore: 0, properties: ["State", "Elapsed", "StateDuration"])
  }

  /// When `Elapsed` next reaches a whole second (GNOME Pomodoro announces it then, once a
  /// second while a state runs); nil while idle, paused or waiting.
  func nextTick(after now: Date) -> Date? {
    guard state.isRunning else { return nil }
    let elapsed = state.elapsed(at: now)
    let next = (elapsed + 1e-6).rounded(.down) + 1
    return now.addingTimeInterval(next - elapsed)
  }
}
