import FoundationEssentials
import Glibc
@_spi(GrowBuiltIn) import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowDBus
import GrowDaemon
import GrowHistory
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit
import GrowSync

/// One line of `grow doctor`.
struct DoctorCheck: Encodable, Equatable {
  enum Status: String, Encodable {
    case ok
    /// Works, with limits (say, no daemon yet, or a plugin that waits for X).
    case warning
    case failed

    var mark: String {
      switch self {
      case .ok: "✔"
      case .warning: "!"
      case .failed: "✘"
      }
    }
  }

  var check: String
  var status: Status
  var message: String
  /// What to do about it; every warning and failure has one.
  var fix: String?

  static func ok(_ check: String, _ message: String) -> DoctorCheck {
    DoctorCheck(check: check, status: .ok, message: message, fix: nil)
  }

  static func warning(_ check: String, _ message: String, fix: String) -> DoctorCheck {
    DoctorCheck(check: check, status: .warning, message: message, fix: fix)
  }

  static func failed(_ check: String, _ message: String, fix: String) -> DoctorCheck {
    DoctorCheck(check: check, status: .failed, message: message, fix: fix)
  }

  /// The check's name stays as `--json` names it; its message and fix are in the reader's
  /// language.
  var line: String {
    guard let fix else {
      return Message("{mark} {check}: {message}").render([
        "mark": status.mark, "check": check, "message": message,
      ])
    }
    return Message("{mark} {check}: {message}; fix: {fix}").render([
      "mark": status.mark, "check": check, "message": message, "fix": fix,
    ])
  }
}

/// `grow doctor`: checks the desktop Grow runs in, each problem with what to do about it.
///
/// Reads only: it asks the bus who owns which name (never calling a name nobody owns, which
/// could auto-start a service), reads the daemon's properties, and probes the X socket.
@MainActor
struct Doctor {
  static let notificationsName = "org.freedesktop.Notifications"

  let environment: [String: String]
  private var bus: BusConnection?
  private var daemonRuns = false
  private var serverName: String?
  private var serverVersion = ""

  init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.environment = environment
  }

  mutating func run() -> [DoctorCheck] {
    var checks = [checkBus()]
    checks.append(checkDaemon())
    checks.append(checkNotifications())
    checks.append(checkDoNotDisturb())
    checks.append(checkDisplay())
    if let sound = checkSoundServer() { checks.append(sound) }
    checks.append(checkConfig())
    if case .success(let config) = loadConfig(), let note = warnBeforeNote(config) {
      checks.append(.ok("warn-before", note))
    }
    checks.append(checkDataDirectory())
    checks += checkKeptPhases()
    checks += checkSync()
    checks += checkPlugins()
    if let gnomePomodoro = checkGnomePomodoro() { checks.append(gnomePomodoro) }
    if let browser = checkBrowser() { checks.append(browser) }
    return checks
  }

  /// Whether a browser can reach Grow for the cards' `site:` patterns: said when a card lists
  /// sites or `grow install --user --browser` wrote its manifests.
  private func checkBrowser() -> DoctorCheck? {
    let id = "browser"
    let config = (try? loadConfig().get()) ?? .defaults
    let listsSites = config.deck.cards.contains { card in
      card.distractions.contains { $0.lowercased().hasPrefix("site:") }
    }
    let paths = UserInstallPaths(environment: environment)
    let installed = paths.browserManifests.filter {
      FileManager.default.fileExists(atPath: $0.path)
    }
    let script = paths.browserHostScript
    switch (listsSites, installed.isEmpty) {
    case (_, false) where !FileManager.default.isExecutableFile(atPath: script):
      return .failed(
        id,
        Message("the browsers' host manifests name {path}, which is missing or not executable")
          .render(["path": script]),
        fix: Message("run 'grow install --user --browser' again").render())
    case (_, false):
      return .ok(
        id,
        Message(
          one: "{count} browser can start 'grow browser-host' for Grow's extension ({files})",
          other: "{count} browsers can start 'grow browser-host' for Grow's extension ({files})",
          countedBy: "count"
        ).render([
          "count": installed.count, "files": installed.map(\.path).joined(separator: ", "),
        ]))
    case (true, true):
      return .warning(
        id,
        Message("cards list sites, but no browser can reach Grow to block or flag them").render(),
        fix: Message("run 'grow install --user --browser' and add the extension (docs/browser.md)")
          .render())
    case (false, true):
      return nil
    }
  }

  /// Whether scripts written for GNOME Pomodoro reach Grow, and how: only said when the
  /// gnome-pomodoro plugin is on or `grow install --user --gnome-pomodoro` wrote its file.
  private func checkGnomePomodoro() -> DoctorCheck? {
    let id = "gnome-pomodoro"
    let config = (try? loadConfig().get()) ?? .defaults
    let enabled =
      config.enabledPlugins?.contains(id)
      ?? ((try? config.pluginSections[id]?.bool("enabled", default: false)) == true)
    let file = UserInstallPaths(environment: environment).gnomePomodoroService
    let ours =
      (try? String(contentsOfFile: file, encoding: .utf8))?.hasPrefix(DesktopFiles.userMarker)
      == true
    switch (enabled, ours) {
    case (true, true):
      return .ok(
        id,
        Message("scripts calling org.gnome.Pomodoro reach Grow, and start it if needed ({file})")
          .render(["file": file]))
    case (true, false):
      return .ok(
        id,
        Message(
          "org.gnome.Pomodoro is Grow's while the daemon runs; when it does not, a call starts "
            + "GNOME Pomodoro if installed: no service file for the name unless asked "
            + "('grow install --user --gnome-pomodoro')"
        ).render())
    case (false, true):
      return .warning(
        id,
        Message("{file} starts Grow for org.gnome.Pomodoro, but the gnome-pomodoro plugin is off")
          .render(["file": file]),
        fix: Message(
          "turn it on ([plugin.gnome-pomodoro] enabled = true) or remove the file "
            + "('grow install --user --remove')"
        ).render())
    case (false, false):
      return nil
    }
  }

  // MARK: Session bus and daemon

  private mutating func checkBus() -> DoctorCheck {
    do {
      bus = try BusConnection.session(attachToLoop: false)
      return .ok("session bus", Message("reachable").render())
    } catch {
      // The bus error's own advice comes after "; ", and the fix below says it.
      let why = error.message.components(separatedBy: "; ").first ?? error.message
      return .failed(
        "session bus", why,
        fix: Message("run grow inside your desktop session (or under dbus-run-session)").render())
    }
  }

  private mutating func checkDaemon() -> DoctorCheck {
    guard let bus else {
      return .failed(
        "daemon", Message("cannot be reached without a session bus").render(),
        fix: Message("see session bus").render())
    }
    if hasOwner(GrowBusAPI.busName) {
      daemonRuns = true
      guard let pid = bus.processID(ofOwner: GrowBusAPI.busName) else {
        return .ok("daemon", Message("running").render())
      }
      return .ok("daemon", Message("running (pid {pid})").render(["pid": pid]))
    }
    // The bus reads its service directories when it starts and when told to; one that began
    // before 'grow install --user' wrote the file (or before its directory existed) does not
    // list the name until then, yet would find it on the first call. Ask it to look again.
    _ = call(
      "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReloadConfig")
    let serviceFile = UserInstallPaths(environment: environment).dbusService
    let executable = Self.activationExecutable(serviceFile: serviceFile)
    if let executable, access(executable, X_OK) != 0 {
      return .failed(
        "daemon",
        Message("not running; {file} would start {program}, which is not there").render([
          "file": serviceFile, "program": executable,
        ]),
        fix: Message("run 'grow install --user' again from the grow you use now").render())
    }
    if isActivatable(GrowBusAPI.busName) {
      if let problems = configurationProblems(environment: environment) {
        return .failed(
          "daemon",
          Message(
            "not running; D-Bus activation would start it, but it would exit at once: the config "
              + "has problems: {problems}"
          ).render(["problems": problems.replacing("\n", with: "; ")]),
          fix: Self.editConfigFix(GrowConfig.defaultPath(environment: environment)))
      }
      guard let executable else {
        return .ok(
          "daemon", Message("not running; D-Bus activation starts it on first use").render())
      }
      return .ok(
        "daemon",
        Message(
          "not running; D-Bus activation starts it on first use ({program} daemon, from {file})"
        )
        .render(["program": executable, "file": serviceFile]))
    }
    if executable != nil {
      return .warning(
        "daemon",
        Message("not running; {file} exists, but this session bus does not read it").render([
          "file": serviceFile
        ]),
        fix: Message(
          "start grow at login instead ('grow install --user --autostart'), or give the "
            + "bus the standard session service directories"
        ).render())
    }
    return .warning(
      "daemon", Message("not running, and nothing starts it").render(),
      fix: Message(
        "run 'grow install --user' so it starts by itself, or start it with 'grow daemon &'"
      )
      .render())
  }

  /// The program a D-Bus service file starts (its `Exec=` line's first word); nil without a
  /// readable file.
  static func activationExecutable(serviceFile: String) -> String? {
    guard let text = try? String(contentsOfFile: serviceFile, encoding: .utf8),
      let exec = text.split(separator: "\n").first(where: { $0.hasPrefix("Exec=") })
    else { return nil }
    let command = exec.dropFirst("Exec=".count)
    guard command.hasPrefix("\"") else {
      return command.split(separator: " ").first.map(String.init)
    }
    // Quoted as DesktopFiles.quotedForExec writes it: backslash escapes, up to the next quote.
    var path = ""
    var escaped = false
    for character in command.dropFirst() {
      if escaped {
        path.append(character)
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if character == "\"" {
        break
      } else {
        path.append(character)
      }
    }
    return path
  }

  // MARK: Notifications and do-not-disturb

  private mutating func checkNotifications() -> DoctorCheck {
    let check = "notifications"
    guard bus != nil else {
      return .failed(
        check, Message("cannot be checked without a session bus").render(),
        fix: Message("see session bus").render())
    }
    guard hasOwner(Self.notificationsName) else {
      if isActivatable(Self.notificationsName) {
        return .ok(
          check, Message("no server yet; D-Bus starts one on the first notification").render())
      }
      return .failed(
        check, Message("no notification server on the session bus").render(),
        fix: Message("start one (dunst, mako, swaync, xfce4-notifyd) from your session startup")
          .render())
    }
    let path = "/org/freedesktop/Notifications"
    guard
      let info = call(Self.notificationsName, path, Self.notificationsName, "GetServerInformation"),
      info.count == 4
    else {
      return .failed(
        check,
        Message("the server that owns {name} does not answer").render([
          "name": Self.notificationsName
        ]),
        fix: Message("restart your notification server").render())
    }
    let fields = info.map { $0.stringValue ?? "" }
    serverName = fields[0]
    serverVersion = fields[2]
    var capabilities: [String] = []
    if case .array(_, let items)? = call(
      Self.notificationsName, path, Self.notificationsName, "GetCapabilities")?.first
    {
      capabilities = items.compactMap(\.stringValue)
    }
    return .ok(
      check,
      Message("{server} {version} by {vendor}, spec {spec}; capabilities: {capabilities}")
        .render([
          "server": fields[0], "version": fields[2], "vendor": fields[1], "spec": fields[3],
          "capabilities": capabilities.joined(separator: ", "),
        ]))
  }

  private func checkDoNotDisturb() -> DoctorCheck {
    let (result, backend, source) = checkDoNotDisturbBackend()
    guard result.status == .ok, backend == "mako", let source else { return result }
    return checkMakoMode(result, source: source)
  }

  /// mako's do-not-disturb mode is what the person's config makes it: without `invisible=1`
  /// Grow switches a mode that hides nothing.
  private func checkMakoMode(_ result: DoctorCheck, source: BackendSource) -> DoctorCheck {
    let config = MakoConfig(environment: environment)
    let file = config.path ?? XDGDirectories(environment: environment).configHome + "/mako/config"
    guard config.modeHidesNotifications else {
      return .warning(
        result.check,
        Message(
          "backend mako, but {file} gives its do-not-disturb mode no 'invisible=1', so that "
            + "mode hides nothing and notifications still show while you focus"
        ).render(["file": file]),
        fix: Message(
          "add the two lines '[mode=do-not-disturb]' and 'invisible=1' to {file}, then run "
            + "'makoctl reload'"
        ).render(["file": file]))
    }
    guard config.modeShowsCritical else { return result }
    let during = Message(
      "during focus Grow's own notifications go as critical, which {file} shows in mako's "
        + "do-not-disturb mode"
    ).render(["file": file])
    return .ok(result.check, Self.backendText("mako", source: source, during: during))
  }

  /// Where the backend's name came from.
  enum BackendSource { case plugin, server }

  /// "backend dunst (from the dnd plugin); …": the backend, where Grow learnt it, and what
  /// becomes of Grow's own notifications during focus (nil: nothing to say).
  static func backendText(_ backend: String, source: BackendSource, during: String?) -> String {
    let values = ["backend": backend, "during": during ?? ""]
    switch (source, during) {
    case (.plugin, nil): return Message("backend {backend} (from the dnd plugin)").render(values)
    case (.plugin, _):
      return Message("backend {backend} (from the dnd plugin); {during}").render(values)
    case (.server, nil):
      return Message("backend {backend} (implied by the notification server)").render(values)
    case (.server, _):
      return Message("backend {backend} (implied by the notification server); {during}")
        .render(values)
    }
  }

  private func checkDoNotDisturbBackend() -> (DoctorCheck, String?, BackendSource?) {
    let check = "do not disturb"
    if daemonRuns,
      let reply = call(
        GrowBusAPI.busName, GrowBusAPI.objectPath, "org.freedesktop.DBus.Properties", "Get",
        [.string(GrowBusAPI.doNotDisturbInterface), .string("Backend")]),
      let backend = reply.first?.unwrapped.stringValue
    {
      let text = Self.backendText(backend, source: .plugin, during: duringFocus(backend))
      return (.ok(check, text), backend, .plugin)
    }
    guard let serverName else {
      return (
        .warning(
          check, Message("no backend: there is no notification server to silence").render(),
          fix: Message("see notifications").render()), nil, nil
      )
    }
    guard let backend = DoNotDisturbBackend(serverName: serverName)?.rawValue else {
      return (
        .warning(
          check,
          Message("no backend for {server}; its notifications still show while you focus")
            .render(["server": serverName]),
          fix: Message("use dunst, mako, swaync, xfce4-notifyd, GNOME Shell or KDE Plasma for DND")
            .render()), nil, nil
      )
    }
    let text = Self.backendText(backend, source: .server, during: duringFocus(backend))
    return (.ok(check, text), backend, .server)
  }

  /// What becomes of Grow's own notifications during focus with this backend.
  private func duringFocus(_ backend: String) -> String? {
    if DoNotDisturbBackend(rawValue: backend)?.passesCritical == true {
      return Message(
        "during focus Grow's own notifications go as critical, which its Do-Not-Disturb lets "
          + "through"
      ).render()
    }
    let server = backend == "dunst" && !serverVersion.isEmpty ? "dunst \(serverVersion)" : backend
    switch backend {
    case "dunst", "mako":
      return Message(
        "{server} paused for focus would queue Grow's own notifications to show them late, so "
          + "during focus Grow sends it none: a distraction shows in the status bar only"
      ).render(["server": server])
    default:
      return nil
    }
  }

  // MARK: Display

  private func checkDisplay() -> DoctorCheck {
    let check = "display"
    if let wayland = environment["WAYLAND_DISPLAY"], !wayland.isEmpty {
      return checkWaylandDisplay(wayland)
    }
    guard let display = environment["DISPLAY"], !display.isEmpty else {
      return .failed(
        check, Message("DISPLAY is not set; idle detection and the active window need X").render(),
        fix: Message(
          "run grow in your X session; for a daemon started by systemd or D-Bus, run "
            + "'dbus-update-activation-environment --systemd DISPLAY XAUTHORITY' at login"
        ).render())
    }
    guard let socket = DisplaySocket(display: display) else {
      return .warning(
        check,
        Message("DISPLAY={display} is not a local display; grow cannot check it").render([
          "display": display
        ]),
        fix: Message("use a local display (:0) for idle detection and the active window").render())
    }
    guard socket.answers() else {
      return .failed(
        check,
        Message("DISPLAY={display}, but no X server listens on {path}").render([
          "display": display, "path": socket.path,
        ]),
        fix: Message("start the X server, or set DISPLAY to the one your session uses").render())
    }
    return .ok(
      check,
      Message("DISPLAY={display}; the X server answers on {path}").render([
        "display": display, "path": socket.path,
      ]))
  }

  /// A Wayland session: the socket answers; the wayland plugin's line says what the
  /// compositor gives it (Xwayland's DISPLAY is no view of the session).
  private func checkWaylandDisplay(_ name: String) -> DoctorCheck {
    let check = "display"
    guard
      let socket = DisplaySocket(
        waylandDisplay: name, runtimeDirectory: environment["XDG_RUNTIME_DIR"])
    else {
      return .failed(
        check,
        Message("WAYLAND_DISPLAY={display}, but XDG_RUNTIME_DIR is not set to find it in")
          .render(["display": name]),
        fix: Message("run grow in your Wayland session, which sets XDG_RUNTIME_DIR").render())
    }
    guard socket.answers() else {
      return .failed(
        check,
        Message("WAYLAND_DISPLAY={display}, but no compositor listens on {path}").render([
          "display": name, "path": socket.path,
        ]),
        fix: Message("start grow from the running session, or set WAYLAND_DISPLAY to its socket")
          .render())
    }
    return .ok(
      check,
      Message(
        "Wayland (WAYLAND_DISPLAY={display}, {path} answers); the wayland plugin watches it "
          + "(compositor and what works: plugin wayland below)"
      ).render(["display": name, "path": socket.path]))
  }

  // MARK: Sound

  /// Where the sound plugin's libcanberra would find PulseAudio (or PipeWire's pulse server),
  /// and whether something listens there; nil while the config turns the plugin off.
  private func checkSoundServer() -> DoctorCheck? {
    let check = "sound"
    let config = (try? loadConfig().get()) ?? .defaults
    guard PluginHost.willStart("sound", config: config, directories: directories) else {
      return nil
    }
    let fix = Message(
      "start PulseAudio or PipeWire's pulse server (systemctl --user start pipewire-pulse), "
        + "or turn the sound plugin off: [plugin.sound] enabled = false"
    ).render()
    let server = environment["PULSE_SERVER"] ?? ""
    let path: String
    if server.hasPrefix("unix:") {
      path = String(server.dropFirst(5))
    } else if server.hasPrefix("/") {
      path = server
    } else if !server.isEmpty {
      return .ok(
        check,
        Message("PULSE_SERVER={server} is not a local socket; grow cannot check it").render([
          "server": server
        ]))
    } else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
      path = runtime + "/pulse/native"
    } else {
      return .warning(
        check,
        Message(
          "XDG_RUNTIME_DIR is not set, so no sound server can be found; phase ends are silent"
        )
        .render(), fix: fix)
    }
    guard DisplaySocket(path: path).answers() else {
      return .warning(
        check,
        Message("no sound server answers on {path}; phase ends are silent").render(["path": path]),
        fix: fix)
    }
    return .ok(
      check,
      Message("a sound server answers on {path}; phase ends are heard").render(["path": path]))
  }

  // MARK: Config, data, plugins

  private func loadConfig() -> Result<GrowConfig, ConfigError> {
    Result { () throws(ConfigError) in
      try GrowConfig.load(
        environment: environment,
        pluginSettings: declaredPluginSettings(environment: environment))
    }
  }

  private func checkConfig() -> DoctorCheck {
    let check = "config"
    let path = GrowConfig.defaultPath(environment: environment)
    switch loadConfig() {
    case .failure(let error):
      return .failed(
        check, error.description.replacing("\n", with: "; "),
        fix: Self.editConfigFix(path))
    case .success(let config):
      let problems = PluginHost.configurationProblems(in: config, directories: directories)
      guard problems.isEmpty else {
        return .failed(
          check, problems.joined(separator: "; "),
          fix: Self.editConfigFix(path))
      }
      let cards = config.deck.names.joined(separator: ", ")
      return .ok(
        check,
        config.path == nil
          ? Message("no file at {path}; the defaults (cards: {cards})").render([
            "path": path, "cards": cards,
          ])
          : Message("{path}: ok (cards: {cards})").render(["path": path, "cards": cards]))
    }
  }

  static func editConfigFix(_ path: String) -> String {
    Message("edit {path}; 'grow config check' lists every problem").render(["path": path])
  }

  private func checkDataDirectory() -> DoctorCheck {
    let check = "data directory"
    let directory = XDGDirectories(environment: environment).growData
    var existing = directory
    while access(existing, F_OK) != 0, existing != "/" {
      existing = PathText.directory(of: existing)
    }
    guard access(existing, W_OK | X_OK) == 0 else {
      return .failed(
        check,
        Message("{path} is not writable, so the history cannot be kept").render(["path": existing]),
        fix: "chown \(userName()) \(existing) && chmod u+rwx \(existing)")
    }
    return .ok(
      check,
      existing == directory
        ? Message("{path} is writable").render(["path": directory])
        : Message("{path} will be created ({existing} is writable)").render([
          "path": directory, "existing": existing,
        ]))
  }

  /// The journal of phases kept for the history: a damaged one moved aside (until the person
  /// deletes the copy), a full one.
  private func checkKeptPhases() -> [DoctorCheck] {
    let journal = PendingPhases.path(
      besideSession: XDGDirectories(environment: environment).sessionFile)
    return PendingPhases.problems(at: journal).map { found in
      .warning("kept phases", found.problem, fix: found.fix)
    }
  }

  /// Sync (`[sync] folder`): the folder, the journals in it that cannot be read whole (by
  /// file and line), and whether Syncthing shares the folder with another machine.
  private func checkSync() -> [DoctorCheck] {
    guard case .success(let config) = loadConfig(), let folder = config.syncFolder else {
      return []
    }
    let check = "sync"
    let path = SyncFolder.expand(folder, environment: environment)
    // Read only, as every check here: the id is made by `grow sync setup` or the daemon.
    let identity: MachineIdentity
    do {
      guard let id = try MachineIdentity.read(MachineIdentity.defaultPath(environment: environment))
      else {
        return [
          .warning(
            check, Message("this machine has no sync id yet").render(),
            fix: "grow sync setup \(folder)")
        ]
      }
      identity = MachineIdentity(id: id, name: config.syncName ?? ThisMachine.name)
    } catch {
      return [.failed(check, error.description, fix: "grow sync setup \(folder)")]
    }
    var isDirectory = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory
    else {
      return [
        .failed(
          check, Message("the sync folder {path} is missing").render(["path": path]),
          fix: "grow sync setup \(folder)")
      ]
    }
    let sync = SyncFolder(path: path, identity: identity)
    let (problems, machines) = sync.check()
    let others = machines.filter { $0.id != identity.id }.map(\.name)
    var checks: [DoctorCheck] = [
      .ok(
        check,
        Message("{path}: this machine is {name}; others: {others}").render([
          "path": path, "name": identity.name,
          "others": others.isEmpty
            ? Message("none yet").render() : others.joined(separator: ", "),
        ]))
    ]
    for problem in problems {
      checks.append(.warning("sync journal", problem.description, fix: problem.fix))
    }
    let syncthing = SyncthingProbe.report(folder: path, environment: environment).summary
    checks.append(
      syncthing.ok
        ? .ok("syncthing", syncthing.text)
        : .warning("syncthing", syncthing.text, fix: syncthing.fix ?? ""))
    return checks
  }

  private var directories: PluginDirectories { .standard(environment: environment) }

  private func checkPlugins() -> [DoctorCheck] {
    if daemonRuns, let records = daemonPlugins() { return records }
    let config = (try? loadConfig().get()) ?? .defaults
    let probes = PluginHost.probe(
      config: config, directories: directories,
      quarantine: PluginQuarantine(environment: environment))
    guard !probes.isEmpty else {
      let searched = (directories.builtIn + directories.user).joined(separator: ", ")
      return [
        .warning(
          "plugins", Message("none found in {paths}").render(["paths": searched]),
          fix: Message("install grow with 'make install', or set GROW_PLUGIN_PATH").render())
      ]
    }
    return probes.map { probe in
      let check = "plugin \(probe.id)"
      if !probe.enabled { return .ok(check, Self.offText(probe.id)) }
      if let problem = probe.problem {
        return .failed(
          check, problem, fix: Message("fix what it says, then start the daemon").render())
      }
      return .ok(
        check,
        Message("loads ({kind} {location})").render([
          "kind": probe.source.kind, "location": probe.source.location,
        ]))
    }
  }

  /// Why a plugin does not run although it is there: the config says so, or it is one that
  /// runs only when asked for (the tray icon).
  static func offText(_ id: String) -> String {
    PluginHost.offByDefault.contains(id)
      ? Message("off unless asked for; [plugin.{id}] enabled = true turns it on").render(["id": id])
      : Message("disabled in the config").render()
  }

  /// The daemon's own view: what it loaded, and why not.
  private func daemonPlugins() -> [DoctorCheck]? {
    guard
      case .array(_, let items)? = call(
        GrowBusAPI.busName, GrowBusAPI.objectPath, GrowBusAPI.pluginsInterface, "List")?.first
    else { return nil }
    return items.compactMap(\.vardictEntries).map(PluginReport.init).map { plugin in
      let check = "plugin \(plugin.id)"
      let reason = plugin.error ?? Message("no reason given").render()
      let limit = plugin.limit.flatMap(PluginLimit.init(rawValue:))
      switch plugin.state {
      case "running":
        let detail =
          plugin.note.map {
            Message("running ({source} {location}); {note}").render([
              "source": plugin.source, "location": plugin.location, "note": $0,
            ])
          }
          ?? Message("running ({source} {location})").render([
            "source": plugin.source, "location": plugin.location,
          ])
        // What the plugin says it works around (the X session lacks the SYNC extension, or
        // the compositor does not tell which windows are which), by its kind, not its words.
        if limit == .desktopLacks {
          return .warning(
            check, detail,
            fix: Message(
              "use a window manager that follows EWMH (openbox, i3, xfwm4, kwin, mutter) "
                + "and an X server with the SYNC extension"
            ).render())
        }
        if limit == .compositorWithholds {
          return .warning(
            check, detail,
            fix: Message(
              "nothing to fix in Grow: this compositor does not tell plain clients that; "
                + "the timer, away pause (where noted) and Do-Not-Disturb still work"
            ).render())
        }
        return .ok(check, detail)
      case "disabled": return .ok(check, Self.offText(plugin.id))
      // The x11 and wayland plugins each stand down in the other kind of session: as it should.
      case "unavailable" where limit == .otherSession:
        return .ok(check, Message("stands down: {reason}").render(["reason": reason]))
      // GNOME: no layer shell, so no break screen; the plugin notifies instead.
      case "unavailable" where limit == .compositorWithholds && plugin.id == "breakscreen":
        return .warning(
          check, Message("unavailable: {reason}").render(["reason": reason]),
          fix: Message(
            "nothing to fix in Grow: this compositor lets no client cover its outputs; "
              + "sway, Hyprland, river, labwc and KDE do"
          ).render())
      case "unavailable":
        return .warning(
          check, Message("unavailable: {reason}").render(["reason": reason]),
          fix: Message("provide what it needs, then 'grow plugins reload {id}'").render([
            "id": plugin.id
          ]))
      default:
        guard let lastOutput = plugin.lastOutput, let last = lastOutput.last else {
          return .failed(
            check, "\(plugin.state): \(reason)",
            fix: Message("fix what it says, then 'grow plugins reload {id}'").render([
              "id": plugin.id
            ]))
        }
        // An external program that exits: what it said last is usually why.
        return .failed(
          check,
          Message("{state}: {reason}; its last output: {last}").render([
            "state": plugin.state, "reason": reason, "last": last,
          ]),
          fix: Message(
            "fix what '{location}' reports ('{last}'), then 'grow plugins reload {id}'; "
              + "'grow logs --plugin {id}' shows all it wrote"
          ).render(["location": plugin.location, "last": last, "id": plugin.id]))
      }
    }
  }

  // MARK: Bus helpers

  private func call(
    _ destination: String, _ path: String, _ interface: String, _ member: String,
    _ arguments: [BusValue] = []
  ) -> [BusValue]? {
    guard let bus,
      let message = try? BusMessage.methodCall(
        destination: destination, path: path, interface: interface, member: member,
        arguments: arguments),
      let reply = try? bus.call(message, timeout: 2000)
    else { return nil }
    return reply.arguments
  }

  private func hasOwner(_ name: String) -> Bool {
    call(
      "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
      [.string(name)])?.first?.boolValue ?? false
  }

  private func isActivatable(_ name: String) -> Bool {
    guard
      case .array(_, let names)? = call(
        "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
        "ListActivatableNames")?.first
    else { return false }
    return names.contains(.string(name))
  }
}

/// The Unix socket of a local X display (`:0`, `:1.0`, `unix:0`) or a Wayland one
/// (`wayland-1` in XDG_RUNTIME_DIR, or an absolute path), checked by connecting to it: no
/// libX11 or libwayland in the command line tool.
/// A local stream socket the doctor knocks on: an X or Wayland display, the sound server.
struct DisplaySocket {
  let path: String

  init(path: String) {
    self.path = path
  }

  init?(waylandDisplay name: String, runtimeDirectory: String?) {
    if name.hasPrefix("/") {
      path = name
    } else if let runtimeDirectory, !runtimeDirectory.isEmpty {
      path = runtimeDirectory + "/" + name
    } else {
      return nil
    }
  }

  init?(display: String) {
    var text = Substring(display)
    if text.hasPrefix("unix:") {
      text = text.dropFirst(4)
    } else if text.hasPrefix("/") {
      // launchd-style /path/to/socket:0 displays are not used on Linux.
      return nil
    }
    guard text.hasPrefix(":"), let number = Int(text.dropFirst().prefix { $0.isNumber }) else {
      return nil
    }
    path = "/tmp/.X11-unix/X\(number)"
  }

  /// Whether something accepts connections on the socket (the path, or the abstract name
  /// Xorg also listens on).
  func answers() -> Bool { connects(abstract: false) || connects(abstract: true) }

  private func connects(abstract: Bool) -> Bool {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let offset = abstract ? 1 : 0
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard bytes.count + offset < capacity else { return false }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      for (index, byte) in bytes.enumerated() { buffer[index + offset] = byte }
    }
    let length = MemoryLayout<sa_family_t>.size + bytes.count + offset + (abstract ? 0 : 1)
    return withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(length)) == 0
      }
    }
  }
}

extension Commands {
  static func runDoctor(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["json"], usage: "doctor")
    try expect(arguments, atMost: 0, "doctor")
    var doctor = Doctor()
    let checks = doctor.run()
    let healthy = !checks.contains { $0.status == .failed }
    if arguments.flag("json") {
      struct Report: Encodable {
        var ok: Bool
        var checks: [DoctorCheck]
      }
      say(jsonText(Report(ok: healthy, checks: checks)))
    } else {
      say(checks.map(\.line).joined(separator: "\n"))
    }
    // The lines say what is wrong; exit 1 so scripts can tell too, without another message.
    if !healthy { throw .silentFailure }
  }
}

/// The login name of the user running Grow, for commands Doctor suggests.
private func userName() -> String {
  guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return "$USER" }
  return String(cString: name)
}
