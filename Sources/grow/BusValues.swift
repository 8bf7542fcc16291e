import CFrontDBus
import Glibc
import GrowBasics

// The values the front reads from the daemon's replies and signals (GetStatus's dictionary,
// a property, PropertiesChanged), read as grow-cli reads them.

/// A basic value of a message.
enum Wire {
  case text(String)
  case flag(Bool)
  case number(Int64)
}

/// The basic value at `iterator`, looking through a variant; nil for any other type.
func wire(_ iterator: inout DBusMessageIter) -> Wire? {
  switch dbus_message_iter_get_arg_type(&iterator) {
  case CFRONT_TYPE_VARIANT:
    var inner = DBusMessageIter()
    dbus_message_iter_recurse(&iterator, &inner)
    return wire(&inner)
  case CFRONT_TYPE_STRING:
    var value: UnsafePointer<CChar>?
    dbus_message_iter_get_basic(&iterator, &value)
    return value.map { .text(String(cString: $0)) }
  case CFRONT_TYPE_BOOLEAN:
    var value: UInt32 = 0
    dbus_message_iter_get_basic(&iterator, &value)
    return .flag(value != 0)
  case CFRONT_TYPE_UINT32:
    var value: UInt32 = 0
    dbus_message_iter_get_basic(&iterator, &value)
    return .number(Int64(value))
  case CFRONT_TYPE_INT32:
    var value: Int32 = 0
    dbus_message_iter_get_basic(&iterator, &value)
    return .number(Int64(value))
  case CFRONT_TYPE_INT64:
    var value: Int64 = 0
    dbus_message_iter_get_basic(&iterator, &value)
    return .number(value)
  default:
    return nil
  }
}

/// The `a{sv}` at `iterator`; nil when it is something else.
func dictionary(_ iterator: inout DBusMessageIter) -> [String: Wire]? {
  guard dbus_message_iter_get_arg_type(&iterator) == CFRONT_TYPE_ARRAY else { return nil }
  var values: [String: Wire] = [:]
  var entries = DBusMessageIter()
  dbus_message_iter_recurse(&iterator, &entries)
  while dbus_message_iter_get_arg_type(&entries) == CFRONT_TYPE_DICT_ENTRY {
    var entry = DBusMessageIter()
    dbus_message_iter_recurse(&entries, &entry)
    if dbus_message_iter_get_arg_type(&entry) == CFRONT_TYPE_STRING {
      var key: UnsafePointer<CChar>?
      dbus_message_iter_get_basic(&entry, &key)
      dbus_message_iter_next(&entry)
      if let key, let value = wire(&entry) { values[String(cString: key)] = value }
    }
    dbus_message_iter_next(&entries)
  }
  return values
}

/// The first argument of `message` as a dictionary.
func firstDictionary(of message: OpaquePointer) -> [String: Wire]? {
  var arguments = DBusMessageIter()
  guard dbus_message_iter_init(message, &arguments) != 0 else { return nil }
  return dictionary(&arguments)
}

/// The string arguments of `message` up to its first that is not one.
func leadingStrings(of message: OpaquePointer) -> [String] {
  var arguments = DBusMessageIter()
  guard dbus_message_iter_init(message, &arguments) != 0 else { return [] }
  var strings: [String] = []
  while dbus_message_iter_get_arg_type(&arguments) == CFRONT_TYPE_STRING {
    if case .text(let text)? = wire(&arguments) { strings.append(text) }
    guard dbus_message_iter_next(&arguments) != 0 else { break }
  }
  return strings
}

/// GetStatus's dictionary, read as `TimerStatus(busValues:)` reads it: a missing value is 0,
/// "" or false.
struct StatusReply {
  let values: [String: Wire]

  func text(_ name: String) -> String {
    if case .text(let text)? = values[name] { return text }
    return ""
  }
  func number(_ name: String) -> Int64 {
    if case .number(let number)? = values[name] { return number }
    return 0
  }
  func flag(_ name: String) -> Bool {
    if case .flag(let flag)? = values[name] { return flag }
    return false
  }
  func instant(_ name: String) -> Double? {
    let micros = number(name)
    return micros > 0 ? Double(micros) / 1_000_000 : nil
  }
  func phase(_ name: String) -> String? { PhaseWords.isPhase(text(name)) ? text(name) : nil }

  var facts: StatusFacts {
    let states = ["idle", "waiting", "focus", "short-break", "long-break"]
    return StatusFacts(
      state: states.contains(text("State")) ? text("State") : "idle",
      paused: flag("Paused"), card: text("Card"), duration: Double(number("Duration")),
      remaining: Double(number("Remaining")), elapsed: Double(number("Elapsed")),
      startedAt: instant("StartedAt"), endsAt: instant("EndsAt"),
      cycle: Int(number("Cycle")), longBreakAfter: Int(number("LongBreakAfter")),
      next: phase("Next"), nextPhase: phase("NextPhase"),
      completedToday: Int(number("CompletedToday")), focusToday: Double(number("FocusToday")),
      dailyGoal: number("DailyGoal") > 0 ? Double(number("DailyGoal")) : nil,
      intention: text("Intention").isEmpty ? nil : text("Intention"),
      cutShortToday: Double(number("CutShortToday")))
  }

  /// `[plugin.notify] warn-before` as the daemon serves it (`WarnBefore`, seconds); nil for
  /// none.
  var warnBefore: Double? {
    number(BusNames.warnBefore) > 0 ? Double(number(BusNames.warnBefore)) : nil
  }
}

/// Writes `text` whole to `descriptor`; false when the reader has gone away (EPIPE) or the
/// write fails otherwise.
@discardableResult
func writeAll(_ text: String, to descriptor: Int32) -> Bool {
  let bytes = Array(text.utf8)
  var offset = 0
  while offset < bytes.count {
    let written = bytes.withUnsafeBytes { buffer in
      write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
    }
    if written < 0, errno == EINTR { continue }
    guard written > 0 else { return false }
    offset += written
  }
  return true
}
