import FoundationEssentials
import Glibc
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowDBus
import GrowDaemon
import GrowMessages
import GrowPluginKit

/// A plugin as `grow plugins` shows it.
struct PluginReport: Encodable {
  var id: String
  var source: String
  var location: String
  var state: String
  var error: String?
  var summary: String?
  var note: String?
  /// The kind of the note or of the reason it is unavailable (`PluginLimit`'s raw value), when
  /// the plugin gave one.
  var limit: String?
  /// An external plugin's last lines on stderr.
  var lastOutput: [String]?

  enum CodingKeys: String, CodingKey {
    case id, source, location, state, error, summary, note, limit
    case lastOutput = "last_output"
  }

  init(_ values: [String: BusValue]) {
    func text(_ key: String) -> String { values[key]?.stringValue ?? "" }
    id = text("Id")
    source = text("Source")
    location = text("Location")
    state = text("State")
    error = text("Error").isEmpty ? nil : text("Error")
    summary = text("Summary").isEmpty ? nil : text("Summary")
    note = text("Note").isEmpty ? nil : text("Note")
    limit = text("Limit").isEmpty ? nil : text("Limit")
    if case .array(_, let lines)? = values["LastOutput"], !lines.isEmpty {
      lastOutput = lines.compactMap(\.stringValue)
    }
  }
}

extension Commands {
  static func runPlugins(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["json"], usage: "plugins")
    if arguments.positionals.first == "enable" { return try releasePlugin(arguments) }
    let client = try GrowClient()
    if arguments.positionals.first == "reload" {
      try expect(arguments, atMost: 2, "plugins")
      guard arguments.positionals.count == 2 else {
        throw .usage(
          Message("usage: grow {command} {synopsis}").render([
            "command": "plugins", "synopsis": "reload ID",
          ]))
      }
      // The plugin's settings as the file has them now; a reload that restarted or started it
      // already needs no second restart.
      let id = arguments.positionals[1]
      var changes: [String] = []
      do {
        changes = try reloadConfiguration(client)
      } catch .refused {
        // A daemon without a config file (grow demo): only the restart.
      }
      // A hand-over (DaemonImage) starts every plugin anew in the daemon that took over.
      let done = changes.contains { PluginHost.reportStarted(id, in: $0) }
      if !done { try restartPlugin(id, client) }
    } else {
      try expect(arguments, atMost: 0, "plugins")
    }
    let reply = try client.call("List", interface: GrowBusAPI.pluginsInterface)
    guard case .array(_, let items)? = reply.first else { return }
    let plugins = items.compactMap(\.vardictEntries).map(PluginReport.init)
    if arguments.flag("json") { return say(jsonText(plugins)) }
    let idWidth = plugins.map(\.id.count).max() ?? 0
    let stateWidth = plugins.map { stateInWords($0.state).count }.max() ?? 0
    for plugin in plugins {
      var line =
        plugin.id.fitted(toWidth: idWidth) + "  "
        + stateInWords(plugin.state).fitted(toWidth: stateWidth) + "  "
        + sourceInWords(plugin.source)
      if !plugin.location.isEmpty { line += " " + plugin.location }
      say(line)
      if let summary = plugin.summary { say("    \(summary)") }
      if let note = plugin.note { say("    " + Message("note: {note}").render(["note": note])) }
      if let error = plugin.error {
        say(
          "    "
            + (plugin.state == "failed"
              ? Message("error: {reason}").render(["reason": error])
              : Message("why: {reason}").render(["reason": error])))
      }
      if let lastOutput = plugin.lastOutput, plugin.state != "running" {
        say("    " + Message("its last output (stderr):").render())
        for line in lastOutput { say("      \(line)") }
      }
    }
  }

  /// A plugin's state as `grow plugins` words it (`--json` keeps the value itself).
  static func stateInWords(_ state: String) -> String {
    switch state {
    case "running": Message("running").render()
    case "disabled": Message("disabled").render()
    case "unavailable": Message("unavailable").render()
    case "failed": Message("failed").render()
    case "restarting": Message("restarting").render()
    default: state
    }
  }

  /// Where a plugin comes from, in words (`--json` keeps the value itself).
  static func sourceInWords(_ source: String) -> String {
    switch source {
    case "built-in": Message("built-in").render()
    case "library": Message("library").render()
    case "executable": Message("executable").render()
    case "unknown": Message("unknown").render()
    default: source
    }
  }
}

extension Commands {
  /// `grow plugins enable ID`: lets a quarantined plugin (one that took the daemon down while
  /// it was being started) load again, and has a running daemon start it now.
  private static func releasePlugin(_ arguments: Arguments) throws(CLIError) {
    try expect(arguments, atMost: 2, "plugins")
    guard arguments.positionals.count == 2 else {
      throw .usage(
        Message("usage: grow {command} {synopsis}").render([
          "command": "plugins", "synopsis": "enable ID",
        ]))
    }
    let id = arguments.positionals[1]
    guard PluginQuarantine().release(id) else {
      throw .failed(
        Message("plugin '{id}' is not quarantined; 'grow plugins' lists each one's state")
          .render(["id": shown(id)]))
    }
    guard let client = try? GrowClient() else {
      return say(
        Message("released plugin '{id}' from quarantine; the daemon loads it when it starts")
          .render(["id": id]))
    }
    say(
      Message("released plugin '{id}' from quarantine; starting it in the running daemon")
        .render(["id": id]))
    try restartPlugin(id, client)
  }

  /// Has the daemon stop plugin `id` and start it again; returns once the new instance has
  /// started (the old one may take a few seconds to stop), so `List` then shows how it went.
  static func restartPlugin(_ id: String, _ client: GrowClient) throws(CLIError) {
    try client.call(
      "Reload", [.string(id)], interface: GrowBusAPI.pluginsInterface,
      timeout: Int32(reloadWait * 1000))
  }
}

/// What `grow plugin new --json` prints.
struct ScaffoldReport: Encodable {
  var id: String
  var language: String
  var directory: String
  var files: [String]
  /// The commands that follow, as docs/writing-plugins.md gives them.
  var next: [String]
}

/// What `grow plugin install --json` prints.
struct InstallReport: Encodable {
  var id: String
  var kind: String
  var source: String
  var installed: String
  var replaced: Bool
  /// The plugin of the other kind with this id that the install removed.
  var removed: String?
  /// What was done about config.ini, or what to do.
  var config: String
  /// Whether config.ini was changed.
  var configChanged: Bool
  var daemonRunning: Bool
  /// What the running daemon did (`grow reload`'s lines) and the plugin's state there.
  var daemonChanges: [String]
  var state: String?
  var error: String?

  enum CodingKeys: String, CodingKey {
    case id, kind, source, installed, replaced, removed, config, state, error
    case configChanged = "config_changed"
    case daemonRunning = "daemon_running"
    case daemonChanges = "daemon_changes"
  }
}

extension Commands {
  /// `grow plugin new NAME [--swift | --python | --shell]` and `grow plugin install PATH`.
  static func runPlugin(_ words: [String]) throws(CLIError) {
    let arguments = try parse(
      words, flags: Set(["json"] + PluginLanguage.allCases.map(\.rawValue)), usage: "plugin")
    guard let action = arguments.positionals.first else {
      throw .usage(
        Message("grow plugin needs an action: grow plugin new NAME | install PATH").render())
    }
    switch action {
    case "new": try newPlugin(arguments)
    case "install": try installPlugin(arguments)
    case checkLibraryAction: checkLibrary(arguments)
    default:
      throw .usage(
        Message("grow plugin: no action '{action}'; usage: grow plugin new NAME | install PATH")
          .render(["action": shown(action)]))
    }
  }

  /// PREFIX/lib/grow of the running grow (PREFIX/bin/grow): where `make install` put the SDK,
  /// beside the built-in plugins' PREFIX/lib/grow/plugins.
  static var installedSDK: String {
    let installedPlugins =
      PluginDirectories.standard().builtIn.last ?? "/usr/local/lib/grow/plugins"
    return PathText.directory(of: installedPlugins)
  }

  private static func newPlugin(_ arguments: Arguments) throws(CLIError) {
    try expect(arguments, atMost: 2, "plugin")
    guard arguments.positionals.count == 2 else {
      throw .usage(
        Message("usage: grow {command} {synopsis}").render([
          "command": "plugin new", "synopsis": "NAME [--swift | --python | --shell]",
        ]))
    }
    let chosen = PluginLanguage.allCases.filter { arguments.flag($0.rawValue) }
    guard chosen.count <= 1 else {
      throw .usage(Message("grow plugin new: pick one of --swift, --python, --shell").render())
    }
    let language = chosen.first ?? .swift
    let name = arguments.positionals[1]
    // The directory is named after the plugin; its last component is the id.
    let id = PathText.name(of: name)
    guard PluginScaffold.isValidID(id) else {
      throw .usage("grow plugin new: \(PluginScaffoldError.invalidName(id).message)")
    }
    let sdk = installedSDK
    if language == .swift,
      !FileManager.default.fileExists(atPath: sdk + "/swift/GrowPluginKit.swiftinterface")
    {
      throw .failed(PluginScaffoldError.noSDK(searched: sdk + "/swift").message)
    }
    let scaffold = PluginScaffold(id: id, language: language, sdk: sdk)
    do {
      try scaffold.write(to: name)
    } catch {
      throw .failed(error.message)
    }
    let next =
      (language == .swift ? ["swift build --package-path \(name)"] : ["\(name)/test-plugin"])
      + ["grow plugin install \(name)"]
    let files = scaffold.files.map(\.path)
    if arguments.flag("json") {
      return say(
        jsonText(
          ScaffoldReport(
            id: id, language: language.rawValue, directory: name, files: files, next: next)))
    }
    if language == .swift {
      say(
        Message(
          "wrote {directory}/, the plugin '{id}' (a Swift plugin against the SDK in {sdk}):"
        ).render(["directory": name, "id": id, "sdk": sdk]))
    } else {
      say(
        Message("wrote {directory}/, the plugin '{id}' (a {language} program):").render([
          "directory": name, "id": id, "language": language.rawValue,
        ]))
    }
    for file in files { say("  \(name)/\(file)") }
    say(Message("next:").render())
    for command in next { say("  \(command)") }
  }

  private static func installPlugin(_ arguments: Arguments) throws(CLIError) {
    try expect(arguments, atMost: 2, "plugin")
    guard arguments.positionals.count == 2 else {
      throw .usage(
        Message("usage: grow {command} {synopsis}").render([
          "command": "plugin install", "synopsis": "PATH",
        ]))
    }
    let environment = ProcessInfo.processInfo.environment
    let directory = XDGDirectories(environment: environment).growData + "/plugins"
    let installation: PluginInstallation
    do {
      installation = try PluginInstaller.install(
        arguments.positionals[1], into: directory, checkLibrary: checkLibraryInChild)
    } catch {
      throw .failed(
        Message("grow plugin install: {problem}; nothing was installed").render([
          "problem": error.message
        ]))
    }
    let id = installation.id
    // A new version: whatever took the daemon down before gets its chance again.
    if PluginQuarantine().release(id) {
      say(Message("released plugin '{id}' from quarantine").render(["id": id]))
    }
    let (configText, configChanged) = enable(id)
    var report = InstallReport(
      id: id, kind: installation.kind.rawValue, source: installation.source,
      installed: installation.destination, replaced: installation.replaced,
      removed: installation.replacedOther, config: configText,
      configChanged: configChanged, daemonRunning: false, daemonChanges: [])
    try tellDaemon(about: installation, report: &report)
    if arguments.flag("json") { return say(jsonText(report)) }
    let kind = installation.kind.rawValue
    let path = installation.destination
    say(
      installation.replaced
        ? Message("replaced plugin '{id}' ({kind}): {path}").render([
          "id": id, "kind": kind, "path": path,
        ])
        : Message("installed plugin '{id}' ({kind}): {path}").render([
          "id": id, "kind": kind, "path": path,
        ]))
    say("  " + Message("from {source}").render(["source": installation.source]))
    if let other = installation.replacedOther {
      say(
        "  "
          + (installation.kind == .library
            ? Message("replacing the program plugin '{id}' it removed: {other}").render([
              "id": id, "other": other,
            ])
            : Message("replacing the library plugin '{id}' it removed: {other}").render([
              "id": id, "other": other,
            ])))
    }
    say(Message("config: {text}").render(["text": configText]))
    guard report.daemonRunning else {
      return say(
        Message("daemon: not running; it starts '{id}' when it starts ('grow start' starts it)")
          .render(["id": id]))
    }
    for change in report.daemonChanges {
      say(Message("daemon: {change}").render(["change": change]))
    }
    let state = report.state.map(stateInWords) ?? Message("not listed").render()
    say(
      report.error.map {
        Message("daemon: '{id}' is {state}: {problem}").render([
          "id": id, "state": state, "problem": $0,
        ])
      } ?? Message("daemon: '{id}' is {state}").render(["id": id, "state": state]))
  }

  /// Hidden: `grow plugin check-library PATH ID`, what `checkLibraryInChild` runs.
  private static let checkLibraryAction = "check-library"

  /// Opens the library in a `grow` of its own: its constructors and entry point run there, and
  /// one that crashes is refused with the signal instead of killing the installer.
  private static func checkLibraryInChild(_ path: String, _ id: String) -> PluginInstallError? {
    let grow =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    guard
      let result = Subprocess.capture(
        ["grow", "plugin", checkLibraryAction, path, id], executable: grow,
        stream: STDERR_FILENO)
    else {
      return PluginInstaller.check(library: path, id: id).map(PluginInstallError.wouldNotLoad)
    }
    switch result.exit {
    case .exited(0): return nil
    case .killed(let signal): return .crashedWhenOpened(path: path, signal: signal)
    case .exited:
      let problem = String(result.output.reversed().drop { $0 == "\n" }.reversed())
      return .refusedByCheck(
        problem.isEmpty
          ? Message("{path} ended the check without saying why").render(["path": path]) : problem)
    }
  }

  /// The child's side of `checkLibraryInChild`: says what is wrong on stderr, and exits.
  private static func checkLibrary(_ arguments: Arguments) -> Never {
    let words = arguments.positionals
    guard words.count == 3 else { exit(2) }
    if let problem = PluginInstaller.check(library: words[1], id: words[2]) {
      // In the person's language: the installer shows it as it is (refusedByCheck).
      _ = writeAll(problem.message + "\n", to: STDERR_FILENO)
      exit(1)
    }
    exit(0)
  }

  /// Makes config.ini start plugin `id`: without a `[plugins] enable` line every plugin found
  /// starts, so nothing changes; a list without `id` gets it added. An explicit
  /// `[plugin.ID] enabled = false` is the person's choice and stays; the text says how to undo
  /// it. Returns what was done or what to do, and whether the file changed.
  static func enable(_ id: String) -> (String, Bool) {
    let path = GrowConfig.defaultPath()
    let config: GrowConfig
    do {
      config = try GrowConfig.load(path: nil)
    } catch {
      return (
        Message(
          "{path} has problems ('grow config check' lists them), so it was left alone; "
            + "add '{id}' to [plugins] enable there if it has that line"
        ).render(["path": path, "id": id]), false
      )
    }
    if let section = config.pluginSections[id], let entry = section["enabled"],
      (try? section.bool("enabled", default: true)) == false
    {
      return (
        Message(
          "{path}:{line}: [plugin.{id}] enabled = {value} keeps it off; "
            + "remove that line and run 'grow reload'"
        ).render(["path": path, "line": entry.line, "id": id, "value": entry.value]), false
      )
    }
    guard let enabled = config.enabledPlugins, let line = config.enabledPluginsLine else {
      return (
        config.path == nil
          ? Message("enabled (no config.ini: every plugin found starts)").render()
          : Message("enabled ({path} has no [plugins] enable line: every plugin found starts)")
            .render(["path": path]),
        false
      )
    }
    if enabled.contains(id) {
      return (
        Message("enabled already ([plugins] enable lists '{id}')").render(["id": id]), false
      )
    }
    do {
      try appendToLine(line, of: path, ", \(id)")
    } catch {
      return (
        Message(
          "could not add '{id}' to [plugins] enable in {path}:{line} ({error}); "
            + "add it there yourself and run 'grow reload'"
        ).render(["id": id, "path": path, "line": line, "error": "\(error)"]), false
      )
    }
    return (
      Message("added '{id}' to [plugins] enable in {path}:{line}").render([
        "id": id, "path": path, "line": line,
      ]), true
    )
  }

  /// Appends `text` to line `number` of the file (before an inline ` ;` comment), written
  /// atomically with the file's permissions kept, through a symbolic link.
  private static func appendToLine(_ number: Int, of path: String, _ text: String) throws {
    let contents = try String(contentsOfFile: path, encoding: .utf8)
    var lines = contents.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard number >= 1, number <= lines.count else { throw CocoaError(.fileReadCorruptFile) }
    var line = lines[number - 1]
    let comment = line.firstRange(of: " ;")?.lowerBound ?? line.endIndex
    var value = String(line[..<comment])
    while value.last == " " || value.last == "\t" || value.last == "\r" { value.removeLast() }
    line = value + text + line[comment...].replacing("\r", with: "")
    lines[number - 1] = line
    // A config.ini kept with the person's dotfiles is a link: the file it leads to is the
    // one replaced (in its own directory, so the rename stays atomic), the link stays.
    guard let resolved = realpath(path, nil) else {
      throw PrivateFileError(path: path, code: errno)
    }
    let target = String(cString: resolved)
    free(resolved)
    var info = stat()
    guard stat(target, &info) == 0 else { throw PrivateFileError(path: target, code: errno) }
    try PrivateFiles.replace(
      target, with: Data(lines.joined(separator: "\n").utf8), mode: info.st_mode & 0o7777)
  }

  /// A running daemon reads config.ini again (finding the new plugin, as `grow reload` does)
  /// and, when the plugin was running already, restarts it with the new file.
  private static func tellDaemon(
    about installation: PluginInstallation, report: inout InstallReport
  ) throws(CLIError) {
    // No session bus, or no daemon on it: it finds the plugin when it starts.
    guard let client = try? GrowClient(), client.daemonIsRunning() else { return }
    report.daemonRunning = true
    let id = installation.id
    report.daemonChanges = try reloadConfiguration(client)
    // A hand-over (DaemonImage) starts every plugin anew in the daemon that took over.
    if !report.daemonChanges.contains(where: { PluginHost.reportStarted(id, in: $0) }) {
      try restartPlugin(id, client)
      report.daemonChanges.append(
        Message("restarted plugin '{id}' with the installed file").render(["id": id]))
    }
    let reply = try client.call("List", interface: GrowBusAPI.pluginsInterface)
    guard case .array(_, let items)? = reply.first else { return }
    let plugin = items.compactMap(\.vardictEntries).map(PluginReport.init).first { $0.id == id }
    report.state = plugin?.state
    report.error = plugin?.error
  }
}
