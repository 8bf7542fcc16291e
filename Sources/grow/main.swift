// The `grow` front (PREFIX/bin/grow): `grow status` and `grow status --json` in a small static
// image, every other command, and every error, by `execv` of the whole command line
// (InstallLayout: PREFIX/lib/grow/grow-cli) with argv unchanged. What it prints is
// GrowBasics' `StatusText`, the same code grow-cli prints with, so the two cannot differ;
// what it does not know how to say (no bus, no daemon, a D-Bus error, phases waiting for the
// history, any other argument) it leaves to grow-cli, which asks again and words it.
import CFrontDBus
import Glibc
import GrowBasics

/// Runs grow-cli in this process with the same arguments; returns only if it cannot.
func runWholeCommandLine() -> Never {
  let front = InstallLayout.executable ?? CommandLine.arguments[0]
  let cli = InstallLayout.cli(forFront: front)
  var argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) } + [nil]
  execv(cli, &argv)
  let reason = String(cString: strerror(errno))
  let message = "grow: cannot run \(cli): \(reason); reinstall grow\n"
  _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
  exit(127)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments == ["status"] || arguments == ["status", "--json"] else { runWholeCommandLine() }
let wantsJSON = arguments.count == 2

/// `grow status` warns about phases the daemon could not yet put in the history, a journal of
/// them moved aside as damaged, or one full; grow-cli reads those files and words them. Where
/// GrowHistory's `PendingPhases` keeps them (XDGDirectories): `pending-history.json` and files
/// named after it.
func pendingJournalExists() -> Bool {
  let environment = { (name: String) in getenv(name).map { String(cString: $0) } }
  var stateHome: String
  if let given = environment("XDG_STATE_HOME"), given.hasPrefix("/") {
    stateHome = given
  } else {
    var home = environment("HOME") ?? ""
    if home.isEmpty {
      home = getpwuid(getuid())?.pointee.pw_dir.map { String(cString: $0) } ?? "/"
    }
    stateHome = InstallLayout.joined(home, ".local/state")
  }
  while stateHome.count > 1, stateHome.hasSuffix("/") { stateHome.removeLast() }
  guard let directory = opendir(stateHome + "/grow") else { return false }
  defer { closedir(directory) }
  let journal = Array("pending-history.json".utf8)
  while let entry = readdir(directory) {
    let named = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
      bytes.starts(with: journal)
    }
    if named { return true }
  }
  return false
}
if !wantsJSON, pendingJournalExists() { runWholeCommandLine() }

// One GetStatus on a private connection; anything but a reply goes to grow-cli.
var error = DBusError()
dbus_error_init(&error)
guard let connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error) else {
  runWholeCommandLine()
}
dbus_connection_set_exit_on_disconnect(connection, 0)
guard
  let call = dbus_message_new_method_call(
    BusNames.busName, BusNames.objectPath, BusNames.timerInterface, BusNames.getStatus),
  let reply = dbus_connection_send_with_reply_and_block(connection, call, 5000, &error)
else { runWholeCommandLine() }

/// A basic value of the reply.
enum Wire {
  case text(String)
  case flag(Bool)
  case number(Int64)
}

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

var values: [String: Wire] = [:]
var replyArguments = DBusMessageIter()
guard dbus_message_iter_init(reply, &replyArguments) != 0,
  dbus_message_iter_get_arg_type(&replyArguments) == CFRONT_TYPE_ARRAY
else { runWholeCommandLine() }
var entries = DBusMessageIter()
dbus_message_iter_recurse(&replyArguments, &entries)
while dbus_message_iter_get_arg_type(&entries) == CFRONT_TYPE_DICT_ENTRY {
  var entry = DBusMessageIter()
  dbus_message_iter_recurse(&entries, &entry)
  var key: UnsafePointer<CChar>?
  dbus_message_iter_get_basic(&entry, &key)
  dbus_message_iter_next(&entry)
  if let key, let value = wire(&entry) { values[String(cString: key)] = value }
  dbus_message_iter_next(&entries)
}

/// GetStatus's dictionary, read as `TimerStatus(busValues:)` reads it: a missing value is 0,
/// "" or false.
struct Reply {
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
}
let got = Reply(values: values)
let states = ["idle", "waiting", "focus", "short-break", "long-break"]

let facts = StatusFacts(
  state: states.contains(got.text("State")) ? got.text("State") : "idle",
  paused: got.flag("Paused"), card: got.text("Card"), duration: Double(got.number("Duration")),
  remaining: Double(got.number("Remaining")), elapsed: Double(got.number("Elapsed")),
  startedAt: got.instant("StartedAt"), endsAt: got.instant("EndsAt"),
  cycle: Int(got.number("Cycle")), longBreakAfter: Int(got.number("LongBreakAfter")),
  next: got.phase("Next"), nextPhase: got.phase("NextPhase"),
  completedToday: Int(got.number("CompletedToday")), focusToday: Double(got.number("FocusToday")),
  dailyGoal: got.number("DailyGoal") > 0 ? Double(got.number("DailyGoal")) : nil,
  intention: got.text("Intention").isEmpty ? nil : got.text("Intention"),
  cutShortToday: Double(got.number("CutShortToday")))

// One write, as grow-cli's `say`; a reader gone away (EPIPE) is told nothing.
let output = Array(((wantsJSON ? StatusText.json(facts) : StatusText.human(facts)) + "\n").utf8)
var offset = 0
while offset < output.count {
  let written = output.withUnsafeBytes { bytes in
    write(STDOUT_FILENO, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
  }
  if written < 0, errno == EINTR { continue }
  guard written > 0 else { break }
  offset += written
}
exit(0)
