import FoundationEssentials
import GrowCore
import GrowDBus
internal import GrowMessages

/// One field of the timer's status: its D-Bus name and type, whether `PropertiesChanged`
/// announces it, its docs, its `grow status --json` key, and how to read it from a
/// `TimerStatus` and write it back into one.
///
/// `TimerStatus.fields` is the one list of them. Everything that carries the status is made
/// from it: the `org.grow.Grow1.Timer` properties with their annotations and docs (and so the
/// introspection XML and `grow generate dbus-interface`), `GetStatus`, the CLI's decoding of
/// it, `grow status --json` and its schema in `grow help status`, the status bar plugin's
/// `status.json` and the plugin protocol's status object. A field added there appears in all.
@_spi(GrowHost) public struct TimerStatusField: Sendable {
  /// How the value travels.
  public enum Kind: Sendable {
    /// `s`; JSON: a string, `null` when empty.
    case text
    /// `b`; JSON: a boolean.
    case flag
    /// `u`; JSON: an integer.
    case count
    /// `u`, whole seconds; JSON: whole seconds (milliseconds in the plugin protocol).
    case seconds
    /// `u`, seconds rounded up, as every countdown shows them (`DurationText.clock`), so a
    /// paused phase shows what the same phase running shows.
    case countdown
    /// `u`, whole seconds, 0 for none; JSON: `null` for none. (Written as seconds, 0 for
    /// none, in the table.)
    case optionalSeconds
    /// `x`, µs since 1970, 0 for none; JSON: ISO 8601 in UTC, `null` for none.
    case instant

    /// The D-Bus signature.
    public var signature: String {
      switch self {
      case .text: "s"
      case .flag: "b"
      case .count, .seconds, .countdown, .optionalSeconds: "u"
      case .instant: "x"
      }
    }
  }

  /// Where the D-Bus API serves the field.
  public enum Served: Sendable {
    /// A property of `org.grow.Grow1.Timer`, in `PropertiesChanged` whenever it changes.
    case announced
    /// A property that changes with the clock (or at midnight) without a signal
    /// (`EmitsChangedSignal` false): clients read it, or count down from `EndsAt`.
    case silent
    /// In `GetStatus` only: the card's settings.
    case getStatusOnly
  }

  /// The D-Bus name (a property and a `GetStatus` key).
  public let name: String
  /// The key in `grow status --json`, `status.json` and the plugin protocol.
  public let jsonKey: String
  public let kind: Kind
  public let served: Served
  /// The property's doc (`org.gtk.GDBus.DocString`).
  public let doc: String
  /// What `grow help status` says of the JSON key, its type first, in English (the man page).
  public var schema: String { schemaWords.english }
  /// The same in the reader's language (`grow help status`).
  public var schemaInReadersLanguage: String { schemaWords.render() }
  let schemaWords: Message
  let read: @Sendable (TimerStatus) -> Value
  /// nil for a field worked out from the others.
  let write: (@Sendable (inout TimerStatus, Value) -> Void)?

  /// The value as the table's closures hand it over.
  enum Value {
    case text(String)
    case flag(Bool)
    case count(Int)
    case seconds(TimeInterval)
    case instant(Date?)

    /// The value as `T`, when it is one (`Date?` for an instant, nil included).
    func `as`<T>(_: T.Type) -> T? {
      switch self {
      case .text(let text): text as? T
      case .flag(let flag): flag as? T
      case .count(let count): count as? T
      case .seconds(let seconds): seconds as? T
      case .instant(let date): date as? T
      }
    }
  }

  /// A field read with `get` and written back with `set` (none for a field worked out from
  /// the others); `kind` says how it travels when the Swift type alone does not.
  init<T: StatusFieldValue>(
    _ name: String, json: String, _ served: Served, kind: Kind? = nil, doc: String,
    schema: Message, get: @escaping @Sendable (TimerStatus) -> T,
    set: (@Sendable (inout TimerStatus, T) -> Void)? = nil
  ) {
    self.name = name
    self.jsonKey = json
    self.kind = kind ?? T.kind
    self.served = served
    self.doc = doc
    self.schemaWords = schema
    read = { get($0).fieldValue }
    guard let set else {
      write = nil
      return
    }
    write = { status, value in
      if let value = value.as(T.self) { set(&status, value) }
    }
  }

  /// A field stored as it travels.
  init<T: StatusFieldValue>(
    _ name: String, json: String, _ served: Served, kind: Kind? = nil, doc: String,
    schema: Message, _ path: WritableKeyPath<TimerStatus, T> & Sendable
  ) {
    self.init(
      name, json: json, served, kind: kind, doc: doc, schema: schema,
      get: { $0[keyPath: path] }, set: { $0[keyPath: path] = $1 })
  }

  public var signature: String { kind.signature }
}

extension TimerStatus {
  /// Every field of the status, in the order the D-Bus properties are listed.
  @_spi(GrowHost) public static let fields: [TimerStatusField] = [
    TimerStatusField(
      "State", json: "state", .announced,
      doc: "idle, waiting (a phase waits for Resume; Next names it), focus, short-break or "
        + "long-break.",
      schema: Message("string: idle, waiting, focus, short-break, long-break"),
      get: { $0.state.rawValue }, set: { $0.state = State(rawValue: $1) ?? .idle }),
    TimerStatusField(
      "Paused", json: "paused", .announced, doc: "The running phase is paused.",
      schema: Message("boolean"), \.paused),
    TimerStatusField(
      "Card", json: "card", .announced, doc: "The session's card; empty when idle.",
      schema: Message("string, null when idle"), \.card),
    TimerStatusField(
      "Duration", json: "duration", .announced,
      doc: "Planned seconds of the phase, extensions included.",
      schema: Message("integer seconds planned (0 without a phase)"),
      \.duration),
    TimerStatusField(
      "Remaining", json: "remaining", .silent, kind: .countdown,
      doc: "Seconds left; changes every second without a signal: count down from EndsAt.",
      schema: Message(
        "integer seconds left, rounded up as the countdown shows them (0 without a phase)"),
      \.remaining),
    TimerStatusField(
      "Elapsed", json: "elapsed", .silent,
      doc: "Seconds of the phase so far, pauses excluded; changes without a signal.",
      schema: Message("integer seconds run, pauses excluded"),
      \.elapsed),
    TimerStatusField(
      "StartedAt", json: "started_at", .announced,
      doc: "When the phase started (µs since 1970); 0 without one.",
      schema: Message("string ISO 8601 UTC, null without a phase"),
      \.startedAt),
    TimerStatusField(
      "EndsAt", json: "ends_at", .announced,
      doc: "When the phase ends (µs since 1970); 0 while paused or idle.",
      schema: Message("string ISO 8601 UTC, null while paused or without a phase"),
      \.endsAt),
    TimerStatusField(
      "Cycle", json: "cycle", .announced,
      doc: "The focus number within the set before a long break.",
      schema: Message("integer focus number in the set (0 idle)"), \.cycle),
    TimerStatusField(
      "CompletedToday", json: "completed_today", .silent,
      doc: "Focus phases completed today; goes back to 0 at midnight without a signal.",
      schema: Message("integer focus phases completed today"),
      \.completedToday),
    TimerStatusField(
      "FocusToday", json: "focus_today", .silent,
      doc: "Seconds of focus time today, toward the daily goal: focus phases completed "
        + "today (a running one counts once it completes); back to 0 at midnight without a "
        + "signal.",
      schema: Message(
        "integer seconds of focus time today: focus phases completed today (what the "
          + "goal counts; a running focus counts once done)"),
      \.focusToday),
    TimerStatusField(
      "CutShortToday", json: "cut_short_today", .silent,
      doc: "Seconds of focus today in phases skipped, stopped or abandoned; not toward the "
        + "goal. Goes back to 0 at midnight without a signal.",
      schema: Message("integer seconds of focus today skipped, stopped or abandoned"),
      \.cutShortToday),
    TimerStatusField(
      "Next", json: "next", .announced,
      doc: "The phase waiting for Resume (state waiting); empty otherwise.",
      schema: Message("string, the phase waiting for grow resume; null unless state is waiting"),
      get: { $0.next?.rawValue ?? "" }, set: { $0.next = PhaseKind(rawValue: $1) }),
    TimerStatusField(
      "NextPhase", json: "next_phase", .announced,
      doc: "The phase that comes next: the one waiting for Resume, or the one that follows the "
        + "running phase when it runs its course (focus, short-break or long-break); empty "
        + "when idle.",
      schema: Message(
        "string, the phase that comes next: the waiting one, or the one after the "
          + "running phase if it runs its course; null when idle"),
      get: { $0.nextPhase?.rawValue ?? "" }),
    TimerStatusField(
      "Intention", json: "intention", .announced, doc: "What the session is for; empty for none.",
      schema: Message("string, null without one"),
      get: { $0.intention ?? "" }, set: { $0.intention = $1.isEmpty ? nil : $1 }),
    TimerStatusField(
      "LongBreakAfter", json: "long_break_after", .getStatusOnly, doc: "",
      schema: Message("integer (0 idle)"), \.longBreakAfter),
    TimerStatusField(
      "DailyGoal", json: "daily_goal", .getStatusOnly, kind: .optionalSeconds, doc: "",
      schema: Message("integer seconds, null without a goal"),
      get: { $0.dailyGoal ?? 0 }, set: { $0.dailyGoal = $1 > 0 ? $1 : nil }),
  ]
}

// MARK: The Swift types of fields

/// A Swift type a status field has, and how it becomes a `TimerStatusField.Value`.
protocol StatusFieldValue: Sendable {
  static var kind: TimerStatusField.Kind { get }
  var fieldValue: TimerStatusField.Value { get }
}

extension String: StatusFieldValue {
  static var kind: TimerStatusField.Kind { .text }
  var fieldValue: TimerStatusField.Value { .text(self) }
}

extension Bool: StatusFieldValue {
  static var kind: TimerStatusField.Kind { .flag }
  var fieldValue: TimerStatusField.Value { .flag(self) }
}

extension Int: StatusFieldValue {
  static var kind: TimerStatusField.Kind { .count }
  var fieldValue: TimerStatusField.Value { .count(self) }
}

extension Double: StatusFieldValue {
  static var kind: TimerStatusField.Kind { .seconds }
  var fieldValue: TimerStatusField.Value { .seconds(self) }
}

extension Optional: StatusFieldValue where Wrapped == Date {
  static var kind: TimerStatusField.Kind { .instant }
  var fieldValue: TimerStatusField.Value { .instant(self) }
}

// MARK: D-Bus

extension TimerStatusField {
  /// How the property announces its changes (its `EmitsChangedSignal` annotation); nil for a
  /// field that is no property (`GetStatus` only).
  public var propertyChanges: BusInterface.Property.ChangeSignal? {
    switch served {
    case .announced: .emits
    case .silent: .silent
    case .getStatusOnly: nil
    }
  }

  /// A countdown's seconds as they travel: rounded up, as every countdown shows them.
  static func countdownSeconds(_ seconds: TimeInterval) -> UInt32 {
    UInt32(clamping: Int64(max(0, seconds).rounded(.up)))
  }

  /// The field's value in `status` as the D-Bus API carries it (`BusEncoding`). Out-of-range
  /// numbers are clamped, never a crash on the daemon's loop.
  public func busValue(of status: TimerStatus) -> BusValue {
    switch read(status) {
    case .text(let text): .string(text)
    case .flag(let flag): .bool(flag)
    case .count(let count): .uint32(UInt32(clamping: count))
    case .seconds(let seconds) where kind == .countdown: .uint32(Self.countdownSeconds(seconds))
    case .seconds(let seconds): .uint32(BusEncoding.seconds(seconds))
    case .instant(let date): .int64(BusEncoding.microseconds(date))
    }
  }

  /// Reads the field's value from `values` (0, "" or false when it is missing).
  func value(in values: [String: BusValue]) -> Value {
    let value = values[name]?.unwrapped
    switch kind {
    case .text: return .text(value?.stringValue ?? "")
    case .flag: return .flag(value?.boolValue ?? false)
    case .count: return .count(Int(value?.integerValue ?? 0))
    case .seconds, .countdown, .optionalSeconds:
      return .seconds(TimeInterval(value?.integerValue ?? 0))
    case .instant:
      let micros = value?.integerValue ?? 0
      return .instant(micros > 0 ? Date(timeIntervalSince1970: Double(micros) / 1_000_000) : nil)
    }
  }
}

extension TimerStatus {
  /// The status as `GetStatus` returns it: every field of `fields`, the properties and the
  /// card's `LongBreakAfter` and `DailyGoal`.
  public var busValues: [String: BusValue] {
    Dictionary(uniqueKeysWithValues: Self.fields.map { ($0.name, $0.busValue(of: self)) })
  }

  /// The status with the values that change with the clock, `remaining` and `elapsed`,
  /// rounded to the whole seconds `busValues` carries: two statuses with equal keys have equal
  /// `busValues` (every other field is compared as it is), so a reply encoded for one serves
  /// the other (`GetStatus` between state changes and second boundaries).
  @_spi(GrowHost) public var busKey: TimerStatus {
    var key = self
    key.remaining = TimeInterval(TimerStatusField.countdownSeconds(remaining))
    key.elapsed = TimeInterval(BusEncoding.seconds(elapsed))
    return key
  }

  /// Reads the status from the D-Bus API: `GetStatus`'s dictionary, or the `Timer`
  /// interface's properties (which lack `LongBreakAfter` and `DailyGoal`; those stay 0/nil).
  public init(busValues values: [String: BusValue]) {
    // The memberwise initialiser is internal to GrowCore; start from idle and fill in.
    self = .idle
    for field in Self.fields {
      field.write?(&self, field.value(in: values))
    }
  }
}

// MARK: JSON

extension TimerStatusField {
  /// The two JSON shapes of the status.
  public enum JSONStyle: Sendable {
    /// `grow status --json` and `status.json`: whole seconds, times to the second.
    case wholeSeconds
    /// The plugin protocol: seconds and times with milliseconds, as its events carry them.
    case milliseconds
  }

  /// The field's value in `status` as JSON: `null`, never an empty string or a made-up 0,
  /// where it does not apply.
  public func json(of status: TimerStatus, _ style: JSONStyle) -> JSONValue {
    switch (read(status), style) {
    case (.text(let text), _): return .string(text.isEmpty ? nil : text)
    case (.flag(let flag), _): return .bool(flag)
    case (.count(let count), _): return .int(count)
    case (.seconds(let seconds), .milliseconds):
      return kind == .optionalSeconds && seconds <= 0 ? .null : .seconds(seconds)
    case (.seconds(let seconds), .wholeSeconds):
      let whole = Int(max(0, seconds).rounded(kind == .countdown ? .up : .toNearestOrAwayFromZero))
      return kind == .optionalSeconds && whole <= 0 ? .null : .int(whole)
    case (.instant(let date), .milliseconds): return .time(date)
    case (.instant(let date), .wholeSeconds):
      return date.map { .string(TimerStatusJSON.isoText($0)) } ?? .null
    }
  }
}

extension TimerStatus {
  /// Every field as JSON, keyed by `jsonKey`.
  @_spi(GrowHost) public func jsonFields(_ style: TimerStatusField.JSONStyle) -> [String: JSONValue]
  {
    Dictionary(uniqueKeysWithValues: Self.fields.map { ($0.jsonKey, $0.json(of: self, style)) })
  }
}
