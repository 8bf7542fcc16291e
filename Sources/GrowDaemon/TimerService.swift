import Dispatch
import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
@_spi(GrowHost) import GrowDBus
import GrowHistory
import GrowLoop
import GrowMessages
@_spi(GrowHost) import GrowPluginKit

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
  /// - Parameter warnBefore: `[plugin.notify] warn-before` of the config in force (0 for none),
  ///   served in GetStatus as `WarnBefore` so the bars follow a config reload.
  init(
    timer: FocusTimer, bus: EventBus, object: BusObject, streak: @escaping () -> Streak,
    warnBefore: @escaping () -> TimeInterval
  ) {
    self.timer = timer
    self.object = object
    self.streak = streak
    object.add(
      Self.interface(
        timer: timer, streak: streak,
        cards: CardsReply(timer: timer, connection: object.connection), warnBefore: warnBefore))
    lastSent = object.propertyValues(of: GrowBusAPI.timerInterface)
    bus.subscribe(PhaseStarted.self, as: "dbus") { [weak self] event in
      self?.object.emit(
        "PhaseStarted", on: GrowBusAPI.timerInterface,
        [
          .string(event.phase.kind.rawValue), .string(event.phase.card),
          .uint32(BusEncoding.seconds(event.phase.duration)),
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

  /// Sends today's figures and the streaks in a `PropertiesChanged` of their own: they are
  /// annotated as changing silently (at midnight), but a change of the history is news.
  func announceToday() {
    let names = ["CompletedToday", "FocusToday", "CutShortToday", "Streak", "BestStreak"]
    let current = object.propertyValues(of: GrowBusAPI.timerInterface)
    let changed = current.filter { names.contains($0.key) }
    for (name, value) in changed { lastSent[name] = value }
    object.emit(
      "PropertiesChanged", on: "org.freedesktop.DBus.Properties",
      [.string(GrowBusAPI.timerInterface), .vardict(changed), .array(element: "s", [])])
  }

  /// Sends `PropertiesChanged` with the properties whose value differs from the last one
  /// sent; the object leaves out those annotated as changing silently (with the clock).
  private func announceChanges() {
    let current = object.propertyValues(of: GrowBusAPI.timerInterface)
    let changed = current.keys.filter { current[$0] != lastSent[$0] }
    guard !changed.isEmpty else { return }
    lastSent = current
    object.propertiesChanged(changed.sorted(), on: GrowBusAPI.timerInterface)
  }

  /// `org.grow.Grow1.Timer`, served by the daemon and installed as
  /// `share/dbus-1/interfaces/org.grow.Grow1.Timer.xml` (`grow generate dbus-interface`).
  static func interface(
    timer: FocusTimer, streak: @escaping () -> Streak, cards: CardsReply,
    warnBefore: @escaping () -> TimeInterval = { 0 }
  ) -> BusInterface {
    typealias Arg = BusInterface.Argument
    let command = {
      (name: String, doc: String, action: @escaping () throws(TimerError) -> Void) in
      BusInterface.Method(name, doc: doc) { _, _ throws(BusError) in
        try Self.translate(action)
        return []
      }
    }
    // Changes at local midnight, or every second during focus, with no signal.
    let silent = BusInterface.Property.ChangeSignal.silent
    let status = StatusReply(timer: timer, warnBefore: warnBefore)
    let getStatus = BusInterface.Method(
      "GetStatus", outputs: [Arg("status", "a{sv}")],
      doc: "Every property at this instant, plus LongBreakAfter and DailyGoal (u, seconds; "
        + "0 for none) from the card, and WarnBefore (u, seconds; 0 for none): [plugin.notify] "
        + "warn-before, within which bars show a running focus as ending soon.",
      reply: { call throws(BusError) in try status.reply(call) })
    return BusInterface(
      name: GrowBusAPI.timerInterface,
      methods: [
        .init(
          "Start", inputs: [Arg("card", "s", doc: "A card's name; empty for the default card.")],
          doc: "Starts a focus session on the card; while a phase waits, starts that phase."
        ) { [timer] arguments, _ throws(BusError) in
          try Self.translate { () throws(TimerError) in
            try timer.start(card: arguments[0].stringValue)
          }
          return []
        },
        .init(
          "StartWith",
          inputs: [
            Arg("card", "s", doc: "A card's name; empty for the default card."),
            Arg(
              "options", "a{sv}",
              doc: "focus, short-break, long-break (u, seconds), intention (s) and task (x, the "
                + "id of a task of grow task add, recorded with each phase), each for this "
                + "session only."),
          ],
          doc: "Starts a session on the card with some of its settings replaced."
        ) { [timer] arguments, _ throws(BusError) in
          let overrides = try Self.overrides(from: arguments[1].vardictEntries ?? [:])
          try Self.translate { () throws(TimerError) in
            try timer.start(card: arguments[0].stringValue, overrides: overrides)
          }
          return []
        },
        command("Pause", "Pauses the running phase.") { [timer] () throws(TimerError) in
          try timer.pause()
        },
        command("Resume", "Continues a paused phase, or starts the waiting one.") {
          [timer] () throws(TimerError) in try timer.resume()
        },
        command("Toggle", "Pauses, resumes, or starts the waiting phase or a new session.") {
          [timer] () throws(TimerError) in try timer.toggle()
        },
        command("Skip", "Ends the running phase early and moves on to the next.") {
          [timer] () throws(TimerError) in try timer.skip()
        },
        command("Stop", "Ends the session; a running focus is recorded as stopped.") {
          [timer] () throws(TimerError) in try timer.stop()
        },
        .init(
          "Extend", inputs: [Arg("seconds", "u", doc: "How much longer, up to a day.")],
          doc: "Adds time to the running or paused phase."
        ) { [timer] arguments, _ throws(BusError) in
          let seconds = TimeInterval(arguments[0].integerValue ?? 0)
          try Self.translate { () throws(TimerError) in try timer.extend(by: seconds) }
          return []
        },
        .init(
          "Shorten", inputs: [Arg("seconds", "u", doc: "How much less.")],
          doc: "Takes time off the running or paused phase; it always keeps its last minute "
            + "(Skip ends it)."
        ) { [timer] arguments, _ throws(BusError) in
          let seconds = TimeInterval(arguments[0].integerValue ?? 0)
          try Self.translate { () throws(TimerError) in try timer.shorten(by: seconds) }
          return []
        },
        getStatus,
        .init(
          "ListCards", outputs: [Arg("cards", "aa{sv}")],
          doc: "The cards: Name, Default, Focus, ShortBreak, LongBreak (u, seconds), "
            + "LongBreakAfter, AutoStartBreaks, AutoStartFocus, DailyGoal, Intention.",
          answer: cards.answer),
      ],
      properties: statusProperties(timer) + [
        .init(
          "Streak", "u", changes: silent,
          doc: "Days in a row with focus, up to today; can end at midnight without a signal."
        ) { [streak] in .uint32(UInt32(clamping: streak().current)) },
        .init("BestStreak", "u", doc: "The longest streak of days with focus.") { [streak] in
          .uint32(UInt32(clamping: streak().longest))
        },
      ],
      signals: [
        .init(
          "PhaseStarted", [Arg("state", "s"), Arg("card", "s"), Arg("duration", "u")],
          doc: "A phase started: its kind (as State), card and planned seconds."),
        .init(
          "PhaseEnded", [Arg("state", "s"), Arg("card", "s"), Arg("outcome", "s")],
          doc: "A phase ended: its kind (as State), card, and outcome: completed, skipped or "
            + "stopped (abandoned is recorded in the history only, when Grow exits)."),
      ],
      doc: "Grow's focus timer. Nothing is sent per second: count down from EndsAt.")
  }

  /// The properties of `TimerStatus.fields` that D-Bus serves, each read from the timer.
  private static func statusProperties(_ timer: FocusTimer) -> [BusInterface.Property] {
    TimerStatus.fields.compactMap { field in
      guard let changes = field.propertyChanges else { return nil }
      return .init(field.name, field.signature, changes: changes, doc: field.doc) { [timer] in
        field.busValue(of: timer.status)
      }
    }
  }

  // MARK: Encoding

  nonisolated static func encode(_ card: FocusCard, isDefault: Bool) -> BusValue {
    .vardict([
      "Name": .string(card.name),
      "Default": .bool(isDefault),
      "Focus": .uint32(BusEncoding.seconds(card.focus)),
      "ShortBreak": .uint32(BusEncoding.seconds(card.shortBreak)),
      "LongBreak": .uint32(BusEncoding.seconds(card.longBreak)),
      "LongBreakAfter": .uint32(UInt32(card.longBreakAfter)),
      "AutoStartBreaks": .bool(card.autoStartBreaks),
      "AutoStartFocus": .bool(card.autoStartFocus),
      "DailyGoal": .uint32(BusEncoding.seconds(card.dailyGoal ?? 0)),
      "Intention": .string(card.intention ?? ""),
    ])
  }

  /// Reads `StartWith` options: `focus`, `short-break`, `long-break` (u seconds), `intention`
  /// (s), `task` (x: a task's id in the history, for the phase rows).
  static func overrides(from options: [String: BusValue]) throws(BusError) -> SessionOverrides {
    var overrides = SessionOverrides()
    let known = [
      "focus": "u", "short-break": "u", "long-break": "u", "intention": "s", "task": "x",
    ]
    for (key, value) in options {
      switch (key, value) {
      case ("focus", .uint32(let v)): overrides.focus = TimeInterval(v)
      case ("short-break", .uint32(let v)): overrides.shortBreak = TimeInterval(v)
      case ("long-break", .uint32(let v)): overrides.longBreak = TimeInterval(v)
      case ("intention", .string(let v)): overrides.intention = v
      case ("task", .int64(let v)) where v > 0: overrides.task = v
      default:
        if let wanted = known[key] {
          let what =
            wanted == "u" ? "seconds as a uint32" : wanted == "x" ? "a task id above 0" : "a string"
          throw BusError(
            name: GrowBusAPI.ErrorName.invalidArgument,
            message: "start option '\(key)' has the wrong type '\(value.signature)': it takes "
              + "\(what) ('\(wanted)')")
        }
        throw BusError(
          name: GrowBusAPI.ErrorName.invalidArgument,
          message: "unknown start option '\(shown(key))'; "
            + "known: focus (u), short-break (u), long-break (u), intention (s), task (x)")
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
        case .alreadyRunning, .alreadyPaused, .notPaused, .nothingRunning:
          GrowBusAPI.ErrorName.invalidState
        case .lengthOutOfRange, .extensionOutOfRange, .intentionTooLong, .intentionNotOneLine:
          GrowBusAPI.ErrorName.invalidArgument
        case .cannotShorten(let seconds, _):
          seconds >= 1 ? GrowBusAPI.ErrorName.invalidState : GrowBusAPI.ErrorName.invalidArgument
        // TimerError is not frozen (Sources/GrowKit/GrowCore/TimerError.swift).
        @unknown default: BusError.failed
        }
      throw BusError(name: name, message: error.message)
    }
  }
}

/// `GetStatus`'s reply: the status read at each call, its body encoded again only when what
/// it carries differs from the last one encoded (`TimerStatus.busKey`: a state change, a
/// countdown second passing, today's figures or a card changing; or `WarnBefore`, after a
/// config reload), else copied.
///
/// Nothing needs to invalidate it: every call reads the timer's status and compares it, so a
/// reply is never older than the call it answers.
@MainActor
final class StatusReply {
  private let timer: FocusTimer
  private let warnBefore: () -> TimeInterval
  private var encoded: (key: TimerStatus, warnBefore: UInt32, body: BusMessage)?

  init(timer: FocusTimer, warnBefore: @escaping () -> TimeInterval = { 0 }) {
    self.timer = timer
    self.warnBefore = warnBefore
  }

  func reply(_ call: BusMessage) throws(BusError) -> BusMessage {
    try call.reply(copying: body())
  }

  /// The body for the status now: the kept one while the status carries the same.
  func body() throws(BusError) -> BusMessage {
    let key = timer.status.busKey
    let warn = BusEncoding.seconds(warnBefore())
    if let encoded, encoded.key == key, encoded.warnBefore == warn { return encoded.body }
    var values = key.busValues
    values[BusNames.warnBefore] = .uint32(warn)
    let body = try BusMessage.replyTemplate([.vardict(values)])
    encoded = (key, warn, body)
    return body
  }
}

/// ListCards' answer. With tens of thousands of cards, encoding them took the loop more than a
/// second per call (CallBurstTests), so the reply's body is encoded once per deck, on
/// another thread, and each call gets a copy of it addressed to the caller. Calls that come
/// while it is being encoded wait for it; every other call is answered meanwhile.
@MainActor
final class CardsReply {
  private let timer: FocusTimer
  /// Where the replies go; nil for the interface file (no calls).
  private let connection: BusConnection?
  private var encoded: (generation: Int, body: BusMessage)?
  /// Calls whose reply waits for the ones before it to leave (`sendWhenRoom`).
  private var waitingForRoom: [(call: BusMessage, reply: PendingReply)] = []
  /// A reply is added when fewer bytes than this wait to be sent: one reply of 42,000 cards
  /// is 12 MB, and every reply queued after it (GetStatus) leaves after it; at most one such
  /// reply waits at a time, so the others wait for one, not for all a client asked for.
  static let sendQueueRoom = 1 << 20
  private var encoding: Int?
  private var waiting: [(call: BusMessage, reply: PendingReply)] = []

  init(timer: FocusTimer, connection: BusConnection?) {
    self.timer = timer
    self.connection = connection
  }

  func answer(_ call: BusMessage, _ reply: PendingReply) {
    if let encoded, encoded.generation == timer.deckGeneration {
      waitingForRoom.append((call, reply))
      return sendWhenRoom()
    }
    waiting.append((call, reply))
    encode(timer.deckGeneration)
  }

  private func encode(_ generation: Int) {
    guard encoding != generation else { return }
    encoding = generation
    let deck = timer.deck
    DispatchQueue.global(qos: .userInitiated).async {
      let body = Result { () throws(BusError) in try BusMessage.replyTemplate([Self.value(deck)]) }
      DispatchQueue.main.async {
        MainActor.assumeIsolated { self.encoded(body, generation: generation) }
      }
    }
  }

  /// Replies to the waiting calls one at a time, each once the one before it has nearly left.
  private func sendWhenRoom() {
    guard let encoded, !waitingForRoom.isEmpty else { return }
    guard let connection else {
      let calls = waitingForRoom
      waitingForRoom.removeAll()
      for (call, reply) in calls {
        reply.respond(Result { () throws(BusError) in try call.reply(copying: encoded.body) })
      }
      return
    }
    connection.whenSendQueueBelow(Self.sendQueueRoom) { [weak self] in
      guard let self, !self.waitingForRoom.isEmpty, let body = self.encoded?.body else { return }
      let (call, reply) = self.waitingForRoom.removeFirst()
      reply.respond(Result { () throws(BusError) in try call.reply(copying: body) })
      self.sendWhenRoom()
    }
  }

  nonisolated private static func value(_ deck: CardDeck) -> BusValue {
    .array(
      element: "a{sv}",
      deck.cards.map { TimerService.encode($0, isDefault: $0.name == deck.defaultCardName) })
  }

  private func encoded(_ body: Result<BusMessage, BusError>, generation: Int) {
    if encoding == generation { encoding = nil }
    // The deck was replaced meanwhile: the waiting calls get the newer cards.
    guard generation == timer.deckGeneration else { return encode(timer.deckGeneration) }
    let calls = waiting
    waiting.removeAll()
    switch body {
    case .success(let body):
      encoded = (generation, body)
      waitingForRoom += calls
      sendWhenRoom()
    case .failure(let error):
      for (_, reply) in calls { reply.fail(error) }
    }
  }
}

/// Grow's D-Bus interfaces as the files installed under `PREFIX/share/dbus-1/interfaces/`
/// (`grow generate dbus-interface`): the very description the daemon serves.
@MainActor
public enum GrowBusInterfaceFiles {
  /// `org.grow.Grow1.Timer.xml`. Built around a timer that never runs (so nothing is ever
  /// scheduled on its loop): only the names, types, annotations and docs are read.
  public static var timer: String {
    let idle = FocusTimer(deck: .standard, bus: EventBus(), time: MainLoop())
    return TimerService.interface(
      timer: idle, streak: { Streak(current: 0, longest: 0) },
      cards: CardsReply(timer: idle, connection: nil)
    ).interfaceFile
  }
}
