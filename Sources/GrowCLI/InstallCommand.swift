import FoundationEssentials
import Glibc
import GrowBasics
@_spi(GrowHost) import GrowCore
import GrowMessages

/// Where `grow install --user` writes, from the XDG base directories of this environment.
struct UserInstallPaths {
  let dataHome: String
  let configHome: String
  let runtimeDirectory: String?
  let home: String

  init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    let directories = XDGDirectories(environment: environment)
    dataHome = directories.dataHome
    configHome = directories.configHome
    runtimeDirectory = directories.runtimeDirectory
    home = environment["HOME"] ?? ""
  }

  var browserHostScript: String { BrowserFiles.hostScriptPath(dataHome: dataHome) }
  var browserManifests: [(path: String, firefox: Bool)] {
    BrowserFiles.manifestPaths(configHome: configHome, home: home)
  }

  var dbusService: String { dataHome + "/dbus-1/services/" + DesktopFiles.dbusServiceFileName }
  var gnomePomodoroService: String {
    dataHome + "/dbus-1/services/" + DesktopFiles.gnomePomodoroServiceFileName
  }
  var systemdUnit: String { configHome + "/systemd/user/" + DesktopFiles.unitName }
  var autostartEntry: String { configHome + "/autostart/grow.desktop" }

  /// The user manager's private socket exists only while `systemd --user` runs; finding it
  /// needs no child process and no bus call.
  var userSystemdSocket: String? {
    runtimeDirectory.map { $0 + "/systemd/private" }
  }

  var userSystemdIsRunning: Bool {
    guard let socket = userSystemdSocket else { return false }
    var info = stat()
    return stat(socket, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
  }
}

/// Why `grow install --user` could not finish.
enum InstallError: Error, CustomStringConvertible {
  case cannotWrite(path: String, reason: String)
  case cannotRemove(path: String, reason: String)
  case unknownExecutable

  var description: String {
    switch self {
    case .cannotWrite(let path, let reason):
      Message("cannot write {path}: {reason}; check that you own its directory").render([
        "path": path, "reason": reason,
      ])
    case .cannotRemove(let path, let reason):
      Message("cannot remove {path}: {reason}").render(["path": path, "reason": reason])
    case .unknownExecutable:
      Message(
        "cannot tell where this grow binary is (/proc/self/exe is unreadable); run it by its "
          + "full path"
      ).render()
    }
  }
}

/// `grow install --user`: D-Bus activation plus one way to start at login.
@MainActor
struct UserInstaller {
  enum LoginStart { case systemd, autostart }

  let paths: UserInstallPaths
  let executable: String

  /// The running grow, so the files name the grow that was actually run (and a moved or
  /// reinstalled grow is fixed by running `grow install --user` again): the front
  /// (PREFIX/bin/grow) that execs this command line (InstallLayout).
  static func runningExecutable() throws(InstallError) -> String {
    guard let directory = InstallLayout.binDirectoryOfRunningGrow else { throw .unknownExecutable }
    return InstallLayout.joined(directory, "grow")
  }

  /// The browser extension's host: a script running this grow, and a manifest for it in
  /// each browser's place (docs/browser.md).
  func installBrowserHost() throws(InstallError) {
    try write(
      BrowserFiles.hostScript(executable: executable), to: paths.browserHostScript, mode: 0o755)
    for manifest in paths.browserManifests {
      try write(
        BrowserFiles.manifest(script: paths.browserHostScript, firefox: manifest.firefox),
        to: manifest.path)
    }
    say(
      "  "
        + Message(
          "Chromium, Chrome and Firefox can now start 'grow browser-host' for Grow's extension."
        )
        .render())
    let folder =
      BrowserFiles.installedExtension(executable: executable)
      ?? Message("browser/ in Grow's sources").render()
    say("  " + Message("Add the extension from {folder}:").render(["folder": folder]))
    say(
      "    "
        + Message(
          "Chromium, Chrome: chrome://extensions → Developer mode → Load unpacked → that folder"
        ).render())
    say(
      "    "
        + Message(
          "Firefox: about:debugging → This Firefox → Load Temporary Add-on → its manifest.json"
        ).render())
    say("  " + Message("docs/browser.md has the details.").render())
  }

  func install(_ choice: LoginStart?, gnomePomodoro: Bool = false) throws(InstallError) {
    let start: LoginStart
    if let choice {
      start = choice
      say(
        choice == .systemd
          ? Message("Starting at login with a systemd user unit (--systemd).").render()
          : Message("Starting at login with an XDG autostart entry (--autostart).").render())
    } else if paths.userSystemdIsRunning {
      start = .systemd
      say(
        Message(
          "Starting at login with a systemd user unit: a user systemd instance is running "
            + "({socket}). Use --autostart for an autostart entry instead."
        ).render(["socket": paths.userSystemdSocket ?? ""]))
    } else {
      start = .autostart
      say(
        Message(
          "Starting at login with an XDG autostart entry: no user systemd instance is running "
            + "(no {socket}). Desktops like GNOME, KDE and Xfce start these entries; use "
            + "--systemd for a unit instead."
        ).render(["socket": paths.userSystemdSocket ?? "$XDG_RUNTIME_DIR/systemd/private"]))
    }
    let marker = DesktopFiles.userMarker
    try write(
      DesktopFiles.dbusService(executable: executable, systemd: start == .systemd, marker: marker),
      to: paths.dbusService)
    say(
      "  "
        + (start == .systemd
        ? Message(
          "D-Bus activation: the first 'grow start', or any app calling org.grow.Grow1, "
            + "starts the daemon through grow.service.")
        : Message(
          "D-Bus activation: the first 'grow start', or any app calling org.grow.Grow1, "
            + "starts the daemon.")).render())
    if gnomePomodoro {
      try write(
        DesktopFiles.gnomePomodoroService(
          executable: executable, systemd: start == .systemd, marker: marker),
        to: paths.gnomePomodoroService)
      say(
        "  "
          + Message(
            "A script or bar module calling org.gnome.Pomodoro starts Grow, whose "
              + "gnome-pomodoro plugin serves it: turn the plugin on with "
              + "[plugin.gnome-pomodoro] enabled = true. This file comes before GNOME "
              + "Pomodoro's own; remove it to get GNOME Pomodoro back."
          ).render())
    }
    switch start {
    case .systemd:
      try write(
        DesktopFiles.systemdUnit(executable: executable, marker: marker), to: paths.systemdUnit)
      say(
        "  "
          + Message(
            "The unit starts with your graphical session and restarts the daemon if it fails."
          ).render())
      try removeOurs(paths.autostartEntry, because: Message("the unit replaces it").render())
      say(Message("Enable it (grow does not run systemctl for you):").render())
      say("  systemctl --user daemon-reload && systemctl --user enable --now grow.service")
    case .autostart:
      try write(
        DesktopFiles.autostartEntry(executable: executable, marker: marker),
        to: paths.autostartEntry)
      say(
        "  "
          + Message("Your desktop starts it at login; set Hidden=true in it to switch it off.")
          .render())
      try removeOurs(
        paths.systemdUnit, because: Message("the autostart entry replaces it").render())
    }
    say(
      Message(
        "i3 does not start autostart entries or graphical-session.target; add to "
          + "~/.config/i3/config:"
      ).render())
    say("  exec --no-startup-id dbus-update-activation-environment --systemd DISPLAY XAUTHORITY")
    switch start {
    case .systemd: say("  exec --no-startup-id systemctl --user start grow.service")
    case .autostart: say("  exec --no-startup-id \(DesktopFiles.quotedForExec(executable)) daemon")
    }
    say(Message("The first line gives a daemon started by D-Bus or systemd your DISPLAY.").render())
    say(
      Message("Check the result with 'grow doctor'; undo it with 'grow install --user --remove'.")
        .render())
  }

  func remove() throws(InstallError) {
    var removed = 0
    var removedUnit = false
    for path in [
      paths.dbusService, paths.gnomePomodoroService, paths.systemdUnit, paths.autostartEntry,
      paths.browserHostScript,
    ] + paths.browserManifests.map(\.path) {
      guard try removeOurs(path, because: nil) else { continue }
      removed += 1
      if path == paths.systemdUnit { removedUnit = true }
    }
    if removed == 0 {
      say(Message("Nothing to remove: grow install --user has written nothing here.").render())
    }
    // Only a unit can have been enabled; after an autostart entry there is nothing to disable.
    if removedUnit {
      say(
        Message(
          "A unit you enabled stays enabled until: systemctl --user disable --now grow.service"
        ).render())
    }
  }

  private func write(_ text: String, to path: String, mode: mode_t = 0o644) throws(InstallError) {
    do {
      // 0700 for directories we create, as the base-directory spec asks; the file 0644 whatever
      // the umask: under umask 000 anyone could otherwise change what the session runs.
      try PrivateFiles.replace(path, with: Data(text.utf8), mode: mode)
    } catch {
      throw .cannotWrite(path: path, reason: error.reason)
    }
    say(Message("wrote {path}").render(["path": path]))
  }

  /// Removes `path` if `grow install --user` wrote it; says what it did. Returns whether it
  /// removed something.
  @discardableResult
  private func removeOurs(_ path: String, because reason: String?) throws(InstallError) -> Bool {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
    // The marker leads our unit and desktop files; a script has it after its #! line, a
    // browser's host manifest (JSON) in its description.
    guard text.hasPrefix(DesktopFiles.userMarker) || text.contains(BrowserFiles.marker) else {
      say(Message("left {path} alone: grow install --user did not write it").render(["path": path]))
      return false
    }
    do {
      try FileManager.default.removeItem(atPath: path)
    } catch {
      throw .cannotRemove(path: path, reason: failureReason(error))
    }
    say(
      reason.map { Message("removed {path} ({reason})").render(["path": path, "reason": $0]) }
        ?? Message("removed {path}").render(["path": path]))
    return true
  }
}

extension Commands {
  static func runInstall(_ words: [String]) throws(CLIError) {
    let arguments = try parse(
      words, flags: ["user", "autostart", "systemd", "remove", "gnome-pomodoro", "browser"],
      usage: "install")
    try expect(arguments, atMost: 0, "install")
    guard arguments.flag("user") else {
      throw .usage(
        Message(
          "grow install sets up your user account only: run 'grow install --user' (to install "
            + "grow itself, run 'make install' from the source tree)"
        ).render())
    }
    if arguments.flag("autostart"), arguments.flag("systemd") {
      throw .usage(Message("grow install: choose one of --autostart and --systemd").render())
    }
    do {
      if arguments.flag("remove") {
        if arguments.flag("autostart") || arguments.flag("systemd")
          || arguments.flag("gnome-pomodoro") || arguments.flag("browser")
        {
          throw CLIError.usage(
            Message(
              "grow install --remove removes everything it wrote; drop "
                + "--autostart/--systemd/--gnome-pomodoro/--browser"
            ).render())
        }
        try UserInstaller(paths: UserInstallPaths(), executable: "").remove()
        return
      }
      let choice: UserInstaller.LoginStart? =
        arguments.flag("systemd") ? .systemd : arguments.flag("autostart") ? .autostart : nil
      let installer = UserInstaller(
        paths: UserInstallPaths(), executable: try UserInstaller.runningExecutable())
      try installer.install(choice, gnomePomodoro: arguments.flag("gnome-pomodoro"))
      if arguments.flag("browser") { try installer.installBrowserHost() }
    } catch let error as InstallError {
      throw .failed(error.description)
    } catch let error as CLIError {
      throw error
    } catch {
      throw .failed("\(error)")
    }
  }
}
