// The `grow` front (PREFIX/bin/grow): `grow status`, `grow status --json` and the status bar
// feeds (`grow status --follow`, `--format`, `--template`, `--icons`: StatusFollower) in a
// small static image, every other command, and every error, by `execv` of the whole command line
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
if arguments.first == "status", arguments != ["status"], arguments != ["status", "--json"] {
  guard let request = BarRequest(Array(arguments.dropFirst())) else { runWholeCommandLine() }
  StatusFollower(request).run()
}
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

guard let values = firstDictionary(of: reply) else { runWholeCommandLine() }
let facts = StatusReply(values: values).facts

// One write, as grow-cli's `say`; a reader gone away (EPIPE) is told nothing.
writeAll((wantsJSON ? StatusText.json(facts) : StatusText.human(facts)) + "\n", to: STDOUT_FILENO)
exit(0)
