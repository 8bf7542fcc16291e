import GrowDaemon
import GrowPluginKit

/// The files that make the desktop start Grow: the D-Bus activation file, the systemd user
/// unit and desktop entries. One place for their text, used by `make install` (through the
/// hidden `grow generate`) and by `grow install --user`.
enum DesktopFiles {
  /// The first line of every file `grow install --user` writes: `--remove` deletes only files
  /// that carry it, so it never deletes something the person wrote.
  static let userMarker =
    "# Written by 'grow install --user'; 'grow install --user --remove' deletes it."

  static let unitName = "grow.service"
  static let dbusServiceFileName = "\(GrowBusAPI.busName).service"

  /// `[D-BUS Service]` for `org.grow.Grow1`. With `systemd`, activation goes through the user
  /// unit, so a daemon started by a D-Bus call is the same one systemd supervises.
  static func dbusService(executable: String, systemd: Bool, marker: String? = nil) -> String {
    lines(
      marker,
      "[D-BUS Service]",
      "Name=\(GrowBusAPI.busName)",
      "Exec=\(quotedForExec(executable)) daemon",
      systemd ? "SystemdService=\(unitName)" : nil)
  }

  /// The D-Bus service file for GNOME Pomodoro's name (`grow install --user --gnome-pomodoro`):
  /// a script that calls org.gnome.Pomodoro starts Grow's daemon, whose gnome-pomodoro plugin
  /// takes the name. In the user's own service directory it comes before GNOME Pomodoro's.
  static let gnomePomodoroServiceFileName = "org.gnome.Pomodoro.service"

  static func gnomePomodoroService(executable: String, systemd: Bool, marker: String? = nil)
    -> String
  {
    lines(
      marker,
      "[D-BUS Service]",
      "Name=org.gnome.Pomodoro",
      "Exec=\(quotedForExec(executable)) daemon",
      systemd ? "SystemdService=\(unitName)" : nil)
  }

  /// The systemd user unit. Type=dbus: the unit is up once the daemon owns its bus name.
  /// ExecStopPost= puts the DND back that the daemon left (`grow dnd restore`).
  static func systemdUnit(executable: String, marker: String? = nil) -> String {
    lines(
      marker,
      "[Unit]",
      "Description=Grow focus timer",
      "PartOf=graphical-session.target",
      "After=graphical-session.target",
      "",
      "[Service]",
      "Type=dbus",
      "BusName=\(GrowBusAPI.busName)",
      "ExecStart=\(quotedForExec(executable)) daemon",
      "ExecReload=/bin/kill -HUP $MAINPID",
      // However the daemon ended (a SIGTERM while the notification server did not answer, a
      // crash, SIGKILL), put back the Do-Not-Disturb it could not: a person who logs out must
      // not keep silenced notifications. '-': a server that still does not answer is logged,
      // and the unit does not count as failed for it (the record waits for the next start).
      "ExecStopPost=-\(quotedForExec(executable)) dnd restore",
      "Restart=on-failure",
      "",
      "[Install]",
      "WantedBy=graphical-session.target")
  }

  /// The menu entry. It runs `grow start`, not the daemon: from a menu, what a person wants is
  /// to start focusing; D-Bus activation brings the daemon up for that first call, and a
  /// launcher that ran `grow daemon` would show nothing and race the session's own start.
  static func applicationEntry(executable: String) -> String {
    let exec = quotedForExec(executable)
    return lines(
      "[Desktop Entry]",
      "Type=Application",
      "Name=Grow",
      "GenericName=Focus Timer",
      "Comment=Start a focus session on your default card",
      "Exec=\(exec) start",
      "TryExec=\(exec)",
      "Icon=appointment-soon",
      "Terminal=false",
      "Categories=Utility;",
      "Keywords=pomodoro;focus;timer;",
      "Actions=toggle;skip;stop;",
      "",
      "[Desktop Action toggle]",
      "Name=Pause or Resume",
      "Exec=\(exec) toggle",
      "",
      "[Desktop Action skip]",
      "Name=Skip This Phase",
      "Exec=\(exec) skip",
      "",
      "[Desktop Action stop]",
      "Name=Stop",
      "Exec=\(exec) stop")
  }

  /// The XDG autostart entry: starts the daemon at login. `Hidden=false` is the portable
  /// switch (set it to true to disable the entry); GNOME's X-GNOME-Autostart-enabled is not
  /// honoured by systemd's autostart generator or dex.
  static func autostartEntry(executable: String, marker: String? = nil) -> String {
    lines(
      marker,
      "[Desktop Entry]",
      "Type=Application",
      "Name=Grow",
      "Comment=Grow focus timer daemon",
      "Exec=\(quotedForExec(executable)) daemon",
      "TryExec=\(quotedForExec(executable))",
      "NoDisplay=true",
      "Hidden=false",
      "Terminal=false")
  }

  private static func lines(_ lines: String?...) -> String {
    lines.compactMap { $0 }.joined(separator: "\n") + "\n"
  }

  /// A program path as Exec= lines take it: as it is when it is plain, double-quoted (with
  /// `"`, `` ` ``, `$` and `\` escaped) when it holds spaces or other reserved characters.
  /// The desktop-entry, D-Bus and systemd rules agree on this subset.
  static func quotedForExec(_ path: String) -> String {
    let plain = path.allSatisfy { $0.isLetter || $0.isNumber || "/._-+@".contains($0) }
    guard !plain else { return path }
    var quoted = "\""
    for character in path {
      if "\"`$\\".contains(character) { quoted.append("\\") }
      quoted.append(character)
    }
    return quoted + "\""
  }
}

extension Commands {
  /// `grow generate KIND --exec PATH`: what `make install` writes, for PATH as the installed
  /// binary (without DESTDIR).
  static func runGenerate(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, values: ["exec"], usage: "generate")
    try expect(arguments, atMost: 1, "generate")
    if arguments.positionals.first == "dbus-interface" {
      return sayExactly(GrowBusInterfaceFiles.timer)
    }
    guard let executable = arguments.value("exec"), executable.hasPrefix("/") else {
      throw .usage("grow generate needs --exec with the absolute path of the installed grow")
    }
    switch arguments.positionals.first {
    case "dbus-service":
      sayExactly(DesktopFiles.dbusService(executable: executable, systemd: true))
    case "systemd-unit": sayExactly(DesktopFiles.systemdUnit(executable: executable))
    case "desktop-entry": sayExactly(DesktopFiles.applicationEntry(executable: executable))
    // System-wide browser host files (a package's): the script runs --exec; the manifests
    // name the script as --exec, since the manifest's program is the script.
    case "browser-host":
      sayExactly(BrowserFiles.hostScript(executable: executable, user: false))
    case "chromium-host-manifest", "firefox-host-manifest":
      let firefox = arguments.positionals.first == "firefox-host-manifest"
      sayExactly(BrowserFiles.manifest(script: executable, firefox: firefox, user: false))
    default:
      throw .usage(
        "usage: grow generate dbus-service|systemd-unit|desktop-entry|browser-host"
          + "|chromium-host-manifest|firefox-host-manifest --exec PATH | dbus-interface")
    }
  }
}
