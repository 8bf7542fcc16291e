import FoundationEssentials
import Glibc
import GrowCore
import GrowDBus
import GrowDaemon
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// `grow dnd`: the dnd plugin's org.grow.Grow1.DoNotDisturb interface from the command line.
extension Commands {
  static func runDoNotDisturb(_ words: [String]) throws(CLIError) {
    let usage =
      Message("usage: grow {command} {synopsis}").render([
        "command": "dnd",
        "synopsis": "on [--for DURATION] | off | toggle | status [--json] | restore [--json]",
      ])
    let arguments = try parse(words, values: ["for", "timeout"], flags: ["json"], usage: "dnd")
    try expect(arguments, atMost: 1, "dnd")
    if arguments.value("timeout") != nil, arguments.positionals.first != "restore" {
      throw .usage(Message("--timeout goes with 'grow dnd restore'").render())
    }
    // Needs no daemon: it is what runs after one died (systemd's ExecStopPost=).
    if arguments.positionals.first == "restore" {
      return try restoreDoNotDisturb(
        json: arguments.flag("json"), timeout: arguments.value("timeout"))
    }
    let client = try GrowClient()
    let interface = GrowBusAPI.doNotDisturbInterface
    let action = arguments.positionals.first ?? "status"
    if arguments.value("for") != nil, action != "on" {
      throw .usage(Message("--for goes with 'grow dnd on'").render())
    }
    do {
      switch action {
      case "on":
        var seconds: UInt32 = 0
        if let text = arguments.value("for") { seconds = try dndDuration(text) }
        try client.call("Enable", [.uint32(seconds)], interface: interface)
      case "off": try client.call("Disable", interface: interface)
      case "toggle": try client.call("Toggle", interface: interface)
      case "status": break
      default:
        throw CLIError.usage(
          Message("unknown 'grow dnd {action}'; {usage}").render([
            "action": action, "usage": usage,
          ]))
      }
    } catch let error as CLIError {
      throw dndError(error)
    } catch {
      throw .failed("\(error)")
    }
    // A switch is answered once the server confirmed it (or did not in a second), so this
    // is what the server says.
    let values: [String: BusValue]
    do {
      values =
        try client.call(
          "GetAll", [.string(interface)], interface: "org.freedesktop.DBus.Properties"
        )
        .first?.vardictEntries ?? [:]
    } catch {
      throw dndError(error)
    }
    let enabled = values["Enabled"]?.boolValue ?? false
    let backend = values["Backend"]?.stringValue ?? "none"
    let server = values["Server"]?.stringValue ?? ""
    // What the notification server itself says: "on", "off", "not answering" or "none".
    let serverState = values["ServerState"]?.stringValue ?? "none"
    let untilMicroseconds = values["Until"]?.integerValue ?? 0
    let until =
      untilMicroseconds > 0
      ? Date(timeIntervalSince1970: TimeInterval(untilMicroseconds) / 1_000_000) : nil
    if arguments.flag("json") {
      let object: [String: JSONValue] = [
        "enabled": .bool(enabled), "backend": .string(backend),
        "server": .string(server.isEmpty ? nil : server), "server_state": .string(serverState),
        "until": .string(until.map { $0.formatted(Date.ISO8601FormatStyle()) }),
      ]
      return say(JSONValue.object(object).text)
    }
    say(
      dndStatusLines(
        enabled: enabled, backend: backend, server: server, serverState: serverState, until: until))
  }

  /// `grow dnd status` (and on, off, toggle) in words: the state, then the backend.
  static func dndStatusLines(
    enabled: Bool, backend: String, server: String, serverState: String, until: Date?
  ) -> String {
    let on = Message("on").render()
    let off = Message("off").render()
    let wanted = enabled ? on : off
    // The server's word where there is one: that is what the person gets.
    let state: String
    switch serverState {
    case "none": state = wanted
    case "on": state = on
    case "off": state = off
    default: state = serverState
    }
    var line: String
    if serverState == "not answering" {
      line = Message(
        "Do-Not-Disturb: unknown: {backend} does not answer; Grow wants it {wanted} and keeps asking"
      ).render(["backend": backend, "wanted": wanted])
    } else if serverState == "on" || serverState == "off", state != wanted {
      line = Message("Do-Not-Disturb: {state}; Grow is switching it {wanted}").render([
        "state": state, "wanted": wanted,
      ])
    } else {
      line = Message("Do-Not-Disturb: {state}").render(["state": state])
    }
    if let until {
      line = Message("{status} until {time}").render([
        "status": line, "time": LocaleTime.clock(until),
      ])
    }
    let backendLine: String
    if backend != "none" {
      backendLine = Message("backend: {backend} ({server})").render([
        "backend": backend, "server": server,
      ])
    } else if server.isEmpty {
      backendLine = Message(
        "backend: none: no notification server is running; Grow holds back its own notifications"
      ).render()
    } else {
      backendLine = Message(
        "backend: none: Grow cannot switch '{server}'; Grow holds back its own notifications"
      ).render(["server": server])
    }
    return line + "\n" + backendLine
  }

  /// `grow dnd restore`: puts the notification server back from the DND restore record that a
  /// daemon which could not do it itself left (see `DoNotDisturbRestorer`). Exit 0 when the
  /// desktop is as the person had it (restored, already back, or nothing to restore), 1 when
  /// it could not be put back (the record is kept, except a damaged one), 2 for a usage error.
  private static func restoreDoNotDisturb(json: Bool, timeout text: String?) throws(CLIError) {
    var timeout = DoNotDisturbRestorer.defaultTimeout
    if let text {
      do {
        let seconds = try DurationText.parse(text)
        guard seconds > 0, seconds <= 60 else {
          throw CLIError.usage(Message("--timeout must be between 1s and 60s").render())
        }
        timeout = Int32(seconds * 1000)
      } catch let error as CLIError {
        throw error
      } catch {
        throw .usage(
          Message("{name}: {problem}").render(["name": "--timeout", "problem": "\(error)"]))
      }
    }
    let restorer = DoNotDisturbRestorer(
      environment: ProcessInfo.processInfo.environment, timeout: timeout)
    let path = restorer.file.path
    // A running daemon keeps the record itself and would read this as a change by hand.
    if case .record = restorer.file.read(), (try? GrowClient())?.daemonIsRunning() == true {
      return try reportRestore(
        json: json, outcome: "daemon-running", backend: nil, path: path, succeeded: false,
        message: Message(
          "the grow daemon is running and puts Do-Not-Disturb back itself when focus ends; "
            + "'grow dnd off' ends it now"
        ).render())
    }
    let outcome = restorer.run { try BusConnection.sessionBusAddress() }
    switch outcome {
    case .nothingToRestore:
      try reportRestore(
        json: json, outcome: "nothing-to-restore", backend: nil, path: path, succeeded: true,
        message: Message("nothing to restore: Grow left no Do-Not-Disturb on (no {path})")
          .render(["path": path]))
    case .restored(let backend):
      try reportRestore(
        json: json, outcome: "restored", backend: backend, path: path, succeeded: true,
        message: Message(
          "put {server}'s Do-Not-Disturb back as it was before Grow changed it"
        ).render(["server": backend]))
    case .alreadyBack(let backend):
      try reportRestore(
        json: json, outcome: "already-back", backend: backend, path: path, succeeded: true,
        message: Message(
          "{server}'s Do-Not-Disturb was already changed back (by hand, or the server "
            + "restarted); nothing to switch"
        ).render(["server": backend]))
    case .releasedWithConnection(let backend):
      try reportRestore(
        json: json, outcome: "released", backend: backend, path: path, succeeded: true,
        message: Message("{server} ended Grow's inhibition when the daemon's connection closed")
          .render(["server": backend]))
    case .damaged(let why):
      try reportRestore(
        json: json, outcome: "damaged", backend: nil, path: path, succeeded: false,
        message: why.text)
    case .failed(let backend, let reason):
      try reportRestore(
        json: json, outcome: "failed", backend: backend, path: path, succeeded: false,
        message: reason.text)
    }
  }

  private static func reportRestore(
    json: Bool, outcome: String, backend: String?, path: String, succeeded: Bool,
    message: String
  ) throws(CLIError) {
    if json {
      let kept = access(path, F_OK) == 0
      say(
        JSONValue.object([
          "outcome": .string(outcome), "backend": .string(backend), "record": .string(path),
          "record_kept": .bool(kept), "message": .string(message),
        ]).text)
      if !succeeded { throw .silentFailure }
      return
    }
    guard succeeded else {
      throw .failed(Message("grow dnd restore: {problem}").render(["problem": message]))
    }
    say(message)
  }

  private static func dndDuration(_ text: String) throws(CLIError) -> UInt32 {
    do {
      let seconds = try DurationText.parse(text)
      guard seconds >= 1 else {
        throw CLIError.usage(Message("{name} must be at least 1s").render(["name": "--for"]))
      }
      return UInt32(seconds)
    } catch let error as DurationError {
      throw .usage(
        Message("{name}: {problem}").render(["name": "--for", "problem": error.message]))
    } catch let error as CLIError {
      throw error
    } catch {
      throw .usage(Message("{name}: {problem}").render(["name": "--for", "problem": "\(error)"]))
    }
  }

  /// No such interface: the plugin is off, which the person can fix.
  private static func dndError(_ error: CLIError) -> CLIError {
    if case .bus(let busError) = error,
      busError.name == BusError.unknownInterface || busError.name == BusError.unknownMethod
    {
      return .failed(
        Message("Do-Not-Disturb needs the dnd plugin, which is not running; see 'grow plugins'")
          .render())
    }
    return error
  }
}
