import Foundation
import GrowCore
import GrowDBus
import GrowHistory

/// Serves the timer as `org.grow.Grow1.Timer` on `/org/grow/Grow1`.
///
/// Methods drive the `FocusTimer`; properties read its status; `PhaseStarted`/`PhaseEnded`
/// and `PropertiesChanged` follow the events on the bus. Nothing is sent per second: clients
/// compute the countdown from `EndsAt`.
@MainActor
final class TimerService {
  private let timer: FocusTimer
  private let object: BusObject
  private let streak: () -> Streak
  private var lastSent: [String: BusValue] = [:]

  /// - Parameter streak: the current and best streak from the history.
  init(timer: FocusTimer, bus: EventBus, object: BusObject, streak: @escaping () -> Streak) {
    self.timer = timer
    self.object = object
    self.streak = streak
    object.add(makeInterface())
    lastSent = object.propertyValues(of: GrowBusAPI.timerInterface)
    bus.subscribe(PhaseStarted.self, as: "dbus") { [weak self] event in
      self?.object.emit(
        "PhaseStarted", on: GrowBusAPI.timerInterface,
        [
          .string(event.phase.kind.rawValue), .string(event.phase.card),
          .uint32(seconds(event.phase.duration)),
        ])
    }
    bus.subscribe(PhaseEnded.self, as: "dbus") { [weak self] event in
      self?.object.emit(
        "PhaseEnded", on: GrowBusAPI.timerInterface,
        [
          .string(event.phase.kind.rawValue), .string(event.phase.card),
          .string(event.outcome.rawValue),
        ])
    }
    // Streak and BestStreak need no subscription of their own: a phase is recorded while its
    // PhaseEnded is delivered, and the timer's TimerChanged always follows, so they go out
    // in the same PropertiesChanged as the state change instead of one more signal.
    bus.subscribe(TimerChanged.self, as: "dbus") { [weak self] _ in self?.announceChanges() }
  }

  /// Sends `PropertiesChanged` for the properties whose value differs from the last one sent.
  /// Remaining and Elapsed change every instant, so they go along with any other change but
  /// never cause one.
  private func announceChanges() {
    let current = object.propertyValues(of: GrowBusAPI.timerInterface)
    let clockDriven: Set<String> = ["Remaining", "Elapsed"]
    let changed = current.keys.filter { !clockDriven.contains($0) && current[$0] != lastSent[$0] }
    guard !changed.isEmpty else { return }
    lastSent = current
    object.propertiesChanged(changed + clockDriven, on: GrowBusAPI.timerInterface)
  }

  private func makeInterface() -> BusInterface {
    typealias Arg = BusInterface.Argument
    let command = { (name: String, action: @escaping () throws(TimerError) -> Void) in
      BusInterface.Method(name) { _, _ throws(BusError) in
        try Self.translate(action)
        return []
      }
    }
    return BusInterface(
      name: GrowBusAPI.timerInterface,
      methods: [
        .init("Start", inputs: [Arg("card", "s")]) { [timer] arguments, _ throws(BusError) in
          try Self.translate { () throws(TimerError) in
            try timer.start(card: arguments[0].stringValue)
          }
          return []
        },
        .init("StartWith", inputs: [Arg("card", "s"), Arg("options", "a{sv}")]) {
          [timer] arguments, _ throws(BusError) in
          let overrides = try Self.overrides(from: arguments[1].vardictEntries ?? [:])
          try Self.translate { () throws(TimerError) in
            try timer.start(card: arguments[0].stringValue, overrides: overrides)
          }
          return []
        },
        command("Pause") { [timer] () throws(TimerError) in try timer.pause() },
        command("Resume") { [timer] () throws(TimerError) in try timer.resume() },
        command("Toggle") { [timer] () throws(TimerError) in try timer.toggle() },
        command("Skip") { [timer] () throws(TimerError) in try timer.skip() },
        command("Stop") { [timer] () throws(TimerError) in try timer.stop() },
        .init("Extend", inputs: [Arg("seconds", "u")]) { [timer] arguments, _ throws(BusError) in
          let seconds = TimeInterval(arguments[0].integerValue ?? 0)
          try Self.translate { () throws(TimerError) in try timer.extend(by: seconds) }
          return []
        },
        .init("GetStatus", outputs: [Arg("status", "a{sv}")]) { [timer] _, _ in
          [Self.encode(timer.status)]
        },
        .init("ListCards", outputs: [Arg("cards", "aa{sv}")]) { [timer] _, _ in
          [
            .array(
              element: "a{sv}",
              timer.deck.cards.map {
                Self.encode($0, isDefault: $0.name == timer.deck.defaultCardName)
              })
          ]
        },
      ],
      properties: [
        .init("State", "s") { [timer] in .string(timer.status.state.rawValue) },
        .init("Paused", "b") { [timer] in .bool(timer.status.paused) },
        .init("Card", "s") { [timer] in .string(timer.status.card) },
        .init("Duration", "u") { [timer] in .uint32(seconds(timer.status.duration)) },
        .init("Remaining", "u") { [timer] in .uint32(seconds(timer.status.remaining)) },
        .init("Elapsed", "u") { [timer] in .uint32(seconds(timer.status.elapsed)) },
        .init("StartedAt", "x") { [timer] in .int64(microseconds(timer.status.startedAt)) },
        .init("EndsAt", "x") { [timer] in .int64(microseconds(timer.status.endsAt)) },
        .init("Cycle", "u") { [timer] in .uint32(UInt32(max(0, timer.status.cycle))) },
        .init("CompletedToday", "u") { [timer] in .uint32(UInt32(timer.status.completedToday)) },
        .init("FocusToday", "u") { [timer] in .uint32(seconds(timer.status.focusToday)) },
        .init("Next", "s") { [timer] in .string(timer.status.next?.rawValue ?? "") },
        .init("Intention", "s") { [timer] in .string(timer.status.intention ?? "") },
        .init("Streak", "u") { [streak] in .uint32(UInt32(clamping: streak().current)) },
        .init("BestStreak", "u") { [streak] in .uint32(UInt32(clamping: streak().longest)) },
      ],
      signals: [
        .init("PhaseStarted", [Arg("state", "s"), Arg("card", "s"), Arg("duration", "u")]),
        .init("PhaseEnded", [Arg("state", "s"), Arg("card", "s"), Arg("outcome", "s")]),
      ])
  }

  // MARK: Encoding

  /// The status as `GetStatus` returns it: every property plus the card's goal and cycle size.
  static func encode(_ status: TimerStatus) -> BusValue {
    .vardict([
      "State": .string(status.state.rawValue),
      "Paused": .bool(status.paused),
      "Card": .string(status.card),
      "Duration": .uint32(seconds(status.duration)),
      "Remaining": .uint32(seconds(status.remaining)),
      "Elapsed": .uint32(seconds(status.elapsed)),
      "StartedAt": .int64(microseconds(status.startedAt)),
      "EndsAt": .int64(microseconds(status.endsAt)),
      "Cycle": .uint32(UInt32(max(0, status.cycle))),
      "LongBreakAfter": .uint32(UInt32(max(0, status.longBreakAfter))),
      "Next": .string(status.next?.rawValue ?? ""),
      "CompletedToday": .uint32(UInt32(status.completedToday)),
      "FocusToday": .uint32(seconds(status.focusToday)),
      "DailyGoal": .uint32(seconds(status.dailyGoal ?? 0)),
      "Intention": .string(status.intention ?? ""),
    ])
  }

  static func encode(_ card: FocusCard, isDefault: Bool) -> BusValue {
    .vardict([
      "Name": .string(card.name),
      "Default": .bool(isDefault),
      "Focus": .uint32(seconds(card.focus)),
      "ShortBreak": .uint32(seconds(card.shortBreak)),
      "LongBreak": .uint32(seconds(card.longBreak)),
      "LongBreakAfter": .uint32(UInt32(card.longBreakAfter)),
      "AutoStartBreaks": .bool(card.autoStartBreaks),
      "AutoStartFocus": .bool(card.autoStartFocus),
      "DailyGoal": .uint32(seconds(card.dailyGoal ?? 0)),
      "Intention": .string(card.intention ?? ""),
    ])
  }

  /// Reads `StartWith` options: `focus`, `short-break`, `long-break` (u seconds), `intention`.
  static func overrides(from options: [String: BusValue]) throws(BusError) -> SessionOverrides {
    var overrides = SessionOverrides()
    for (key, value) in options {
      switch (key, value) {
      case ("focus", .uint32(let v)): overrides.focus = TimeInterval(v)
      case ("short-break", .uint32(let v)): overrides.shortBreak = TimeInterval(v)
      case ("long-break", .uint32(let v)): overrides.longBreak = TimeInterval(v)
      case ("intention", .string(let v)): overrides.intention = v
      default:
        throw BusError(
          name: GrowBusAPI.ErrorName.invalidArgument,
          message: "unknown start option '\(shown(key))' of type '\(value.signature)'; "
            + "known: focus (u), short-break (u), long-break (u), intention (s)")
      }
    }
    return overrides
  }

  static func translate(_ action: () throws(TimerError) -> Void) throws(BusError) {
    do {
      try action()
    } catch {
      let name =
        switch error {
        case .unknownCard: GrowBusAPI.ErrorName.unknownCard
        case .invalidState: GrowBusAPI.ErrorName.invalidState
        case .invalidArgument: GrowBusAPI.ErrorName.invalidArgument
        }
      throw BusError(name: name, message: error.description)
    }
  }
}

private func seconds(_ interval: TimeInterval) -> UInt32 {
  UInt32(clamping: Int64(max(0, interval).rounded()))
}

private func microseconds(_ date: Date?) -> Int64 {
  guard let date else { return 0 }
  return Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
}
