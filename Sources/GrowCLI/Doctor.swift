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

  var line: String {
    "\(status.mark) \(check): \(message)" + (fix.map { "; fix: \($0)" } ?? "")
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
        id, "the browsers' host manifests name \(script), which is missing or not executable",
        fix: "run 'grow install --user --browser' again")
    case (_, false):
      return .ok(
        id,
        "\(installed.count) \(installed.count == 1 ? "browser" : "browsers") can start "
          + "'grow browser-host' for Grow's extension (\(installed.map(\.path).joined(separator: ", ")))"
      )
    case (true, true):
      return .warning(
        id, "cards list sites, but no browser can reach Grow to block or flag them",
        fix: "run 'grow install --user --browser' and add the extension (docs/browser.md)")
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
        id, "scripts calling org.gnome.Pomodoro reach Grow, and start it if needed (\(file))")
    case (true, false):
      return .ok(
        id,
        "org.gnome.Pomodoro is Grow's while the daemon runs; when it does not, a call starts "
          + "GNOME Pomodoro if installed: no service file for the name unless asked "
          + "('grow install --user --gnome-pomodoro')")
    case (false, true):
      return .warning(
        id, "\(file) starts Grow for org.gnome.Pomodoro, but the gnome-pomodoro plugin is off",
        fix: "turn it on ([plugin.gnome-pomodoro] enabled = true) or remove the file "
          + "('grow install --user --remove')")
    case (false, false):
      return nil
    }
  }

  // MARK: Session bus and daemon

  private mutating func checkBus() -> DoctorCheck {
    do {
      bus = try BusConnection.session(attachToLoop: false)
      return .ok("session bus", "reachable")
    } catch {
      // The bus error's own advice comes after "; ", and the fix below says it.
      let why = error.message.components(separatedBy: "; ").first ?? error.message
      return .failed(
        "session bus", why,
        fix: "run grow inside your desktop session (or under dbus-run-session)")
    }
  }

  private mutating func checkDaemon() -> DoctorCheck {
    guard let bus else {
      return .failed("daemon", "cannot be reached without a session bus", fix: "see session bus")
    }
    if hasOwner(GrowBusAPI.busName) {
      daemonRuns = true
      let pid = bus.processID(ofOwner: GrowBusAPI.busName).map { " (pid \($0))" } ?? ""
      return .ok("daemon", "running\(pid)")
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
        "daemon", "not running; \(serviceFile) would start \(executable), which is not there",
        fix: "run 'grow install --user' again from the grow you use now")
    }
    if isActivatable(GrowBusAPI.busName) {
      if let problems = configurationProblems(environment: environment) {
        return .failed(
          "daemon",
          "not running; D-Bus activation would start it, but it would exit at once: the config "
            + "has problems: \(problems.replacing("\n", with: "; "))",
          fix: "edit \(GrowConfig.defaultPath(environment: environment)); 'grow config check' "
            + "lists every problem")
      }
      let how = executable.map { " (\($0) daemon, from \(serviceFile))" } ?? ""
      return .ok("daemon", "not running; D-Bus activation starts it on first use\(how)")
    }
    if executable != nil {
      return .warning(
        "daemon", "not running; \(serviceFile) exists, but this session bus does not read it",
        fix: "start grow at login instead ('grow install --user --autostart'), or give the "
          + "bus the standard session service directories")
    }
    return .warning(
      "daemon", "not running, and nothing starts it",
      fix: "run 'grow install --user' so it starts by itself, or start it with 'grow daemon &'")
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
      return .failed(check, "cannot be checked without a session bus", fix: "see session bus")
    }
    guard hasOwner(Self.notificationsName) else {
      if isActivatable(Self.notificationsName) {
        return .ok(check, "no server yet; D-Bus starts one on the first notification")
      }
      return .failed(
        check, "no notification server on the session bus",
        fix: "start one (dunst, mako, swaync, xfce4-notifyd) from your session startup")
    }
    let path = "/org/freedesktop/Notifications"
    guard
      let info = call(Self.notificationsName, path, Self.notificationsName, "GetServerInformation"),
      info.count == 4
    else {
      return .failed(
        check, "the server that owns \(Self.notificationsName) does not answer",
        fix: "restart your notification server")
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
      "\(fields[0]) \(fields[2]) by \(fields[1]), spec \(fields[3]); capabilities: "
        + capabilities.joined(separator: ", "))
  }

  private func checkDoNotDisturb() -> DoctorCheck {
    let check = "do not disturb"
    let result = checkDoNotDisturbBackend()
    guard result.status == .ok, result.message.hasPrefix("backend mako ") else { return result }
    return checkMakoMode(result)
  }

  /// mako's do-not-disturb mode is what the person's config makes it: without `invisible=1`
  /// Grow switches a mode that hides nothing.
  private func checkMakoMode(_ result: DoctorCheck) -> DoctorCheck {
    let config = MakoConfig(environment: environment)
    let file = config.path ?? XDGDirectories(environment: environment).configHome + "/mako/config"
    guard config.modeHidesNotifications else {
      return .warning(
        result.check,
        "backend mako, but \(file) gives its do-not-disturb mode no 'invisible=1', so that "
          + "mode hides nothing and notifications still show while you focus",
        fix: "add the two lines '[mode=do-not-disturb]' and 'invisible=1' to \(file), then run "
          + "'makoctl reload'")
    }
    guard config.modeShowsCritical else { return result }
    let backend = result.message.prefix { $0 != ";" }
    return .ok(
      result.check,
      backend + "; during focus Grow's own notifications go as critical, which \(file) shows "
        + "in mako's do-not-disturb mode")
  }

  private func checkDoNotDisturbBackend() -> DoctorCheck {
    let check = "do not disturb"
    if daemonRuns,
      let reply = call(
        GrowBusAPI.busName, GrowBusAPI.objectPath, "org.freedesktop.DBus.Properties", "Get",
        [.string(GrowBusAPI.doNotDisturbInterface), .string("Backend")]),
      let backend = reply.first?.unwrapped.stringValue
    {
      return .ok(check, "backend \(backend) (from the dnd plugin)" + duringFocus(backend))
    }
    guard let serverName else {
      return .warning(
        check, "no backend: there is no notification server to silence",
        fix: "see notifications")
    }
    guard let backend = DoNotDisturbBackend(serverName: serverName)?.rawValue else {
      return .warning(
        check, "no backend for \(serverName); its notifications still show while you focus",
        fix: "use dunst, mako, swaync, xfce4-notifyd, GNOME Shell or KDE Plasma for DND")
    }
    return .ok(
      check, "backend \(backend) (implied by the notification server)" + duringFocus(backend))
  }

  /// What becomes of Grow's own notifications during focus with this backend.
  private func duringFocus(_ backend: String) -> String {
    if DoNotDisturbBackend(rawValue: backend)?.passesCritical == true {
      return "; during focus Grow's own notifications go as critical, which its "
        + "Do-Not-Disturb lets through"
    }
    let server = backend == "dunst" && !serverVersion.isEmpty ? "dunst \(serverVersion)" : backend
    switch backend {
    case "dunst", "mako":
      return "; \(server) paused for focus would queue Grow's own notifications to show them "
        + "late, so during focus Grow sends it none: a distraction shows in the status bar only"
    default:
      return ""
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
        check, "DISPLAY is not set; idle detection and the active window need X",
        fix: "run grow in your X session; for a daemon started by systemd or D-Bus, run "
          + "'dbus-update-activation-environment --systemd DISPLAY XAUTHORITY' at login")
    }
    guard let socket = DisplaySocket(display: display) else {
      return .warning(
        check, "DISPLAY=\(display) is not a local display; grow cannot check it",
        fix: "use a local display (:0) for idle detection and the active window")
    }
    guard socket.answers() else {
      return .failed(
        check, "DISPLAY=\(display), but no X server listens on \(socket.path)",
        fix: "start the X server, or set DISPLAY to the one your session uses")
    }
    return .ok(check, "DISPLAY=\(display); the X server answers on \(socket.path)")
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
        check, "WAYLAND_DISPLAY=\(name), but XDG_RUNTIME_DIR is not set to find it in",
        fix: "run grow in your Wayland session, which sets XDG_RUNTIME_DIR")
    }
    guard socket.answers() else {
      return .failed(
        check, "WAYLAND_DISPLAY=\(name), but no compositor listens on \(socket.path)",
        fix: "start grow from the running session, or set WAYLAND_DISPLAY to its socket")
    }
    return .ok(
      check,
      "Wayland (WAYLAND_DISPLAY=\(name), \(socket.path) answers); the wayland plugin watches it "
        + "(compositor and what works: plugin wayland below)")
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
    let fix =
      "start PulseAudio or PipeWire's pulse server (systemctl --user start pipewire-pulse), "
      + "or turn the sound plugin off: [plugin.sound] enabled = false"
    let server = environment["PULSE_SERVER"] ?? ""
    let path: String
    if server.hasPrefix("unix:") {
      path = String(server.dropFirst(5))
    } else if server.hasPrefix("/") {
      path = server
    } else if !server.isEmpty {
      return .ok(check, "PULSE_SERVER=\(server) is not a local socket; grow cannot check it")
    } else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
      path = runtime + "/pulse/native"
    } else {
      let why = "XDG_RUNTIME_DIR is not set, so no sound server can be found"
      return .warning(check, why + "; phase ends are silent", fix: fix)
    }
    guard DisplaySocket(path: path).answers() else {
      return .warning(
        check, "no sound server answers on \(path); phase ends are silent", fix: fix)
    }
    return .ok(check, "a sound server answers on \(path); phase ends are heard")
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
        fix: "edit \(path); 'grow config check' lists every problem")
    case .success(let config):
      let problems = PluginHost.configurationProblems(in: config, directories: directories)
      guard problems.isEmpty else {
        return .failed(
          check, problems.joined(separator: "; "),
          fix: "edit \(path); 'grow config check' lists every problem")
      }
      let cards = "cards: " + config.deck.names.joined(separator: ", ")
      return .ok(
        check,
        config.path == nil
          ? "no file at \(path); the defaults (\(cards))" : "\(path): ok (\(cards))")
    }
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
        check, "\(existing) is not writable, so the history cannot be kept",
        fix: "chown \(userName()) \(existing) && chmod u+rwx \(existing)")
    }
    return .ok(
      check,
      existing == directory
        ? "\(directory) is writable" : "\(directory) will be created (\(existing) is writable)")
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
          "others": others.isEmpty ? "none yet" : others.joined(separator: ", "),
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
          "plugins", "none found in \(searched)",
          fix: "install grow with 'make install', or set GROW_PLUGIN_PATH")
      ]
    }
    return probes.map { probe in
      let check = "plugin \(probe.id)"
      if !probe.enabled { return .ok(check, Self.offText(probe.id)) }
      if let problem = probe.problem {
        return .failed(check, problem, fix: "fix what it says, then start the daemon")
      }
      return .ok(check, "loads (\(probe.source.kind) \(probe.source.location))")
    }
  }

  /// Why a plugin does not run although it is there: the config says so, or it is one that
  /// runs only when asked for (the tray icon).
  static func offText(_ id: String) -> String {
    PluginHost.offByDefault.contains(id)
      ? "off unless asked for; [plugin.\(id)] enabled = true turns it on"
      : "disabled in the config"
  }

  /// The daemon's own view: what it loaded, and why not.
  private func daemonPlugins() -> [DoctorCheck]? {
    guard
      case .array(_, let items)? = call(
        GrowBusAPI.busName, GrowBusAPI.objectPath, GrowBusAPI.pluginsInterface, "List")?.first
    else { return nil }
    return items.compactMap(\.vardictEntries).map(PluginReport.init).map { plugin in
      let check = "plugin \(plugin.id)"
      let reason = plugin.error ?? "no reason given"
      let reload = "then 'grow plugins reload \(plugin.id)'"
      switch plugin.state {
      case "running":
        let detail =
          "running (\(plugin.source) \(plugin.location))" + (plugin.note.map { "; \($0)" } ?? "")
        // The x11 plugin's note says what the X session lacks in capitals ("NO XSync …").
        if plugin.id == "x11", plugin.note?.contains("NO ") == true {
          return .warning(
            check, detail,
            fix: "use a window manager that follows EWMH (openbox, i3, xfwm4, kwin, mutter) "
              + "and an X server with the SYNC extension")
        }
        // On GNOME and KDE, or a compositor without an idle protocol, the wayland plugin's note
        // says what it cannot do there.
        if plugin.id == "wayland",
          let note = plugin.note,
          note.contains("are not flagged") || note.contains("away detection is off")
        {
          return .warning(
            check, detail,
            fix: "nothing to fix in Grow: this compositor does not tell plain clients that; "
              + "the timer, away pause (where noted) and Do-Not-Disturb still work")
        }
        return .ok(check, detail)
      case "disabled": return .ok(check, Self.offText(plugin.id))
      // The x11 and wayland plugins each stand down in the other kind of session: as it should.
      case "unavailable"
      where (plugin.id == "x11" && reason.hasPrefix("this is a Wayland session"))
        || (plugin.id == "wayland" && reason.hasPrefix("not a Wayland session")):
        return .ok(check, "stands down: \(reason)")
      // GNOME: no layer shell, so no break screen; the plugin notifies instead.
      case "unavailable" where plugin.id == "breakscreen" && reason.contains("no layer shell"):
        return .warning(
          check, "unavailable: \(reason)",
          fix: "nothing to fix in Grow: this compositor lets no client cover its outputs; "
            + "sway, Hyprland, river, labwc and KDE do")
      case "unavailable":
        return .warning(check, "unavailable: \(reason)", fix: "provide what it needs, \(reload)")
      default:
        guard let lastOutput = plugin.lastOutput, let last = lastOutput.last else {
          return .failed(check, "\(plugin.state): \(reason)", fix: "fix what it says, \(reload)")
        }
        // An external program that exits: what it said last is usually why.
        return .failed(
          check, "\(plugin.state): \(reason); its last output: \(last)",
          fix: "fix what '\(plugin.location)' reports ('\(last)'), \(reload); "
            + "'grow logs --plugin \(plugin.id)' shows all it wrote")
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
