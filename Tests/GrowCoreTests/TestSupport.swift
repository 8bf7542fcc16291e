import Foundation
import GrowCore
import GrowPluginTesting

/// A date from its parts, read in `timeZone`.
func date(
  _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0,
  in timeZone: TimeZone = .gmt
) -> Date {
  var calendar = Calendar(identifier: .gregorian)
  calendar.timeZone = timeZone
  let parts = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute)
  guard let date = calendar.date(from: parts) else { fatalError("no such date: \(parts)") }
  return date
}

let minute: TimeInterval = 60
let hour: TimeInterval = 3600

/// A card with short names for the settings the tests vary.
func card(
  _ name: String = "work", focus: TimeInterval = 25 * minute, short: TimeInterval = 5 * minute,
  long: TimeInterval = 15 * minute, longAfter: Int = 4, autoBreaks: Bool = true,
  autoFocus: Bool = false, intention: String? = nil
) -> FocusCard {
  FocusCard(
    name: name, focus: focus, shortBreak: short, longBreak: long, longBreakAfter: longAfter,
    autoStartBreaks: autoBreaks, autoStartFocus: autoFocus, intention: intention)
}

/// A timer on a manual clock, with every published event recorded.
final class Rig {
  let time: ManualTimeSource
  let bus = EventBus()
  let log: EventRecorder
  let timer: FocusTimer
  let origin: Date

  init(
    _ cards: [FocusCard] = [card()], defaultCard: String? = nil,
    now: Date = date(2026, 5, 4, 8), timeZone: TimeZone = .gmt
  ) {
    time = ManualTimeSource(now: now, timeZone: timeZone)
    origin = now
    log = EventRecorder(bus)
    let deck = CardDeck(cards: cards, defaultCardName: defaultCard ?? cards[0].name)
    timer = FocusTimer(deck: deck, bus: bus, time: time)
  }

  func advance(minutes: Double) { time.advance(by: minutes * minute) }

  /// Seconds since the rig was made.
  func offset(_ date: Date?) -> TimeInterval? { date.map { $0.timeIntervalSince(origin) } }

  /// Each started phase as "kind cycle @minutes-since-origin", e.g. "short-break 2 @55".
  var starts: [String] {
    log.of(PhaseStarted.self).map { started in
      let at = started.phase.startedAt.timeIntervalSince(origin) / minute
      return "\(started.phase.kind.rawValue) \(started.phase.cycle) @\(clean(at))"
    }
  }

  /// Each ended phase as "kind cycle outcome @minutes-since-origin".
  var ends: [String] {
    log.of(PhaseEnded.self).map { ended in
      let at = ended.endedAt.timeIntervalSince(origin) / minute
      let phase = ended.phase
      return "\(phase.kind.rawValue) \(phase.cycle) \(ended.outcome.rawValue) @\(clean(at))"
    }
  }

  private func clean(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }
}
