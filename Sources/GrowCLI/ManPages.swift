import GrowConfig
import GrowDaemon
@_spi(GrowHost) import GrowPluginKit

/// grow(1) and grow.ini(5) in roff (man(7) macros), generated from the command table and the
/// config schema so that `man grow` says exactly what `grow help` says.
@MainActor
enum ManPages {
  static func page(section: Int) -> String? {
    switch section {
    case 1: growPage
    case 5: configPage
    default: nil
    }
  }

  private static var growPage: String {
    var lines = [
      header("GROW", 1, "User Commands"),
      ".SH NAME", "grow \\- a focus timer that gets out of the way",
      ".SH SYNOPSIS", ".B grow", ".I COMMAND", ".RI [ ARGS ]",
      ".SH DESCRIPTION",
      text(
        "Grow runs focus cycles (focus, short break, focus, ..., long break) for a focus card. "
          + "A small daemon owns org.grow.Grow1 on the session bus; the grow command and other "
          + "programs drive it over D-Bus. Plugins add notifications, do-not-disturb, idle "
          + "detection and a status file."),
      ".SH COMMANDS",
    ]
    for command in Commands.all where !command.hidden {
      lines.append(".TP")
      let synopsis = command.synopsis.isEmpty ? "" : " " + escape(command.synopsis)
      lines.append("\\fBgrow \(escape(command.name))\\fR\(synopsis)")
      lines.append(text(command.summary.english))
      if let details = command.details {
        let detailLines = (details.english + command.appendix(true)).split(
          separator: "\n", omittingEmptySubsequences: false)
        lines += [".RS", ".nf"] + detailLines.map { escape(String($0)) } + [".fi", ".RE"]
      }
    }
    lines += [
      ".SH WAYLAND",
      text(
        "On sway and other wlroots compositors the dnd plugin drives SwayNotificationCenter "
          + "(SetDnd; its Subscribe signal tells of a change by hand) and mako (the "
          + "do-not-disturb mode, through ListModes and SetModes, keeping your other modes). "
          + "mako's mode hides nothing unless its config has it:"),
      ".RS", ".nf", "[mode=do-not-disturb]", "invisible=1", ".fi", ".RE",
      text(
        "grow doctor checks that. swaync still shows critical notifications in its "
          + "Do-Not-Disturb, so during focus Grow's own are sent as critical; mako in that mode "
          + "hides them too and shows them when it ends, so it is sent none during focus and a "
          + "distraction shows in the status bar only, unless a [mode=do-not-disturb "
          + "urgency=critical] section with invisible=0 lets critical ones through (then they "
          + "go as critical). For waybar, use a custom module with "
          + "\"exec\": \"exec grow status --follow --format waybar\" and "
          + "\"return-type\": \"json\"; its on-click, on-click-right, on-click-middle, "
          + "on-scroll-up and on-scroll-down can run grow toggle, skip, stop, extend 1m and "
          + "shorten 1m."),
      ".SH EXIT STATUS",
      ".TP", "0", "done", ".TP", "1", "refused or failed; the message says why",
      ".TP", "2", "wrong command line", ".TP", "3", "no daemon or no session bus to talk to",
      ".SH ENVIRONMENT",
      ".TP", ".B DBUS_SESSION_BUS_ADDRESS", "the session bus grow talks to",
      ".TP", ".B DISPLAY", "the X display the x11 plugin watches (idle time, active window)",
      ".TP", ".B WAYLAND_DISPLAY",
      text(
        "a Wayland session: the wayland plugin watches it and the x11 plugin stands down; "
          + "the active window comes from sway's or i3's IPC (SWAYSOCK, I3SOCK) or Hyprland's "
          + "(HYPRLAND_INSTANCE_SIGNATURE) or wlroots' zwlr_foreign_toplevel_manager_v1, idle from ext_idle_notifier_v1 or "
          + "org_kde_kwin_idle, on GNOME from org.gnome.Mutter.IdleMonitor; GNOME and KDE give "
          + "no active window, which grow doctor says"),
      ".TP", ".B XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_RUNTIME_DIR",
      text("where the config, the history and plugins, and the status files live"),
      ".TP", ".B GROW_PLUGIN_PATH", "colon-separated directories searched for plugin libraries",
      ".TP", ".B GROW_LOG", "debug: the daemon logs more",
      ".SH FILES",
      ".TP", ".I $XDG_CONFIG_HOME/grow/config.ini", "the configuration; see grow.ini(5)",
      ".TP", ".I $XDG_DATA_HOME/grow/history.sqlite", "every ended phase",
      ".TP", ".I $XDG_DATA_HOME/grow/plugins/", "plugin libraries of your own",
      ".TP", ".I $XDG_STATE_HOME/grow/dnd-restore.json",
      text(
        "what the dnd plugin changed on the notification server, while it is changed; "
          + "grow dnd restore, and every daemon start, put the server back from it"),
      ".SH SEE ALSO", "grow.ini(5), dbus-daemon(1), systemd.service(5)",
    ]
    return lines.joined(separator: "\n") + "\n"
  }

  private static var configPage: String {
    var lines = [
      header("GROW.INI", 5, "File Formats"),
      ".SH NAME", "grow.ini \\- configuration of the grow focus timer",
      ".SH SYNOPSIS", ".I $XDG_CONFIG_HOME/grow/config.ini",
      "(usually", ".IR ~/.config/grow/config.ini )",
      ".SH DESCRIPTION",
      text(
        "An INI file: [section] lines, key = value lines, and comments after ; or #. Without a "
          + "file grow runs one card with the defaults below. A card inherits every key it does "
          + "not set from [timer]. Durations read like 25m, 90s or 1h30m; a bare number is "
          + "minutes. Every problem is reported with file, line and key; check a file with "
          + "grow config check."),
    ]
    for section in ConfigSectionKind.allCases {
      lines.append(".SH [\(escape(section.rawValue))]")
      lines.append(text(sectionDescription(section)))
      for key in ConfigSchema.keys(in: section) {
        lines += entry(key.key, key.kind, key.defaultValue, key.help)
      }
      if section == .plugin {
        for setting in PluginSetting.hostSettings {
          lines += entry(setting.key, setting.kind, setting.defaultValue, setting.help)
        }
      }
    }
    // Each plugin's own keys, as the plugin declares them (GrowPlugin.settings).
    for id in builtInPluginIDs {
      guard let settings = PluginHost.declaredSettings(of: id, directories: .standard()),
        !settings.isEmpty
      else { continue }
      lines.append(".SH [plugin.\(escape(id))]")
      for setting in settings {
        lines += entry(setting.key, setting.kind, setting.defaultValue, setting.help)
      }
    }
    lines += [".SH WINDOW PATTERNS", text(windowPatterns)]
    lines += [
      ".SH EXAMPLE", ".nf",
      "[timer]", "default-card = work", "focus = 25m", "", "[card.math]", "focus = 50m",
      "daily-goal = 2h", "intention = Chapter 3 exercises", "", "[plugins]",
      "enable = notify, dnd, statusbar", "",
      "; status.txt for bars that read a file; icons = unicode | ascii | nerd",
      "[plugin.statusbar]", "template = {icon} {remaining_min}", "icons = ascii", ".fi",
      ".SH SEE ALSO", "grow(1)",
    ]
    return lines.joined(separator: "\n") + "\n"
  }

  /// How distractions and allow are written and matched; docs/distractions.md says the same.
  private static let windowPatterns =
    "A name (discord) matches the window's WM_CLASS instance or class, ignoring case. A title "
    + "regex, name:/regex/ or /regex/, ignores case and may use literals, ., classes [a-z] "
    + "[^...], \\d \\w \\s \\D \\W \\S, anchors ^ $ \\b \\B, alternation |, groups (...) (?:...), and "
    + "quantifiers * + ? {m} {m,} {m,n}. Backreferences and lookarounds are refused: grow "
    + "matches in time proportional to the title, which they do not allow. Only the first "
    + "\(TitleRegex.titleLimit) characters of a title are matched ($ does not match a longer "
    + "title's end). A pattern that still runs over its budget on one title (400000 steps "
    + "or 50 ms of CPU time) is switched off, and the log and grow plugins name its file and "
    + "line."

  private static func sectionDescription(_ section: ConfigSectionKind) -> String {
    switch section {
    case .timer: "The defaults of every card, and which card grow start uses."
    case .card: "One focus card named NAME (letters, digits, - and _)."
    case .plugins:
      "Which plugins run. Built-in: " + builtInPluginIDs.joined(separator: ", ")
        + ". Without enable, every plugin found runs."
    case .plugin:
      "Settings of plugin ID, checked against the keys the plugin declares (listed below for "
        + "each built-in plugin); a program's own keys (exec) are not checked. Every plugin knows:"
    case .sync:
      "One history over several machines: a folder a sync tool (Syncthing) keeps the same on "
        + "each; see grow sync."
    }
  }

  private static func entry(
    _ key: String, _ kind: ConfigValueKind, _ defaultValue: String, _ help: String
  ) -> [String] {
    let shownDefault = defaultValue.isEmpty ? "" : " (default: \(escape(defaultValue)))"
    return [
      ".TP", "\\fB\(escape(key))\\fR = \\fI\(valueName(kind))\\fR\(shownDefault)", text(help),
    ]
  }

  private static func valueName(_ kind: ConfigValueKind) -> String {
    switch kind {
    case .duration: "duration"
    case .goal: "duration or none"
    case .count(let range): "\(range.lowerBound)..\(range.upperBound)"
    case .bool: "bool"
    case .text: "text"
    case .name: "name"
    case .nameList: "name, name, ..."
    case .choice(let choices): choices.joined(separator: " | ")
    case .windowPatterns: "app, app:/title regex/, /title regex/, ..."
    case .textList: "text, text, ..."
    case .choiceList(let choices): choices.joined(separator: " | ") + ", ..."
    case .durationOr(let words, _): "duration | " + words.joined(separator: " | ")
    }
  }

  private static func header(_ title: String, _ section: Int, _ manual: String) -> String {
    // Left-adjusted: justified lines would stretch `grow stats` into `grow  stats`.
    ".TH \(title) \(section) \"\" \"grow \(growVersion)\" \"\(manual)\"\n.ad l"
  }

  /// A paragraph of running text.
  private static func text(_ paragraph: String) -> String { escape(paragraph) }

  /// Escapes what roff would read as markup: backslashes, dashes (so options render as
  /// minus signs and copy-paste correctly), and a leading dot or quote (a request). Non-ASCII
  /// characters become `\[uXXXX]`, so the page needs no preconv to render.
  static func escape(_ line: String) -> String {
    var escaped = ""
    for scalar in line.unicodeScalars {
      switch scalar {
      case "\\": escaped += "\\e"
      case "-": escaped += "\\-"
      case _ where scalar.isASCII: escaped.unicodeScalars.append(scalar)
      default:
        let hex = String(scalar.value, radix: 16, uppercase: true)
        escaped += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
      }
    }
    if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
    return escaped
  }
}

extension Commands {
  static func runManpage(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, usage: "manpage")
    try expect(arguments, atMost: 1, "manpage")
    guard let section = arguments.positionals.first.flatMap({ Int($0) }),
      let page = ManPages.page(section: section)
    else {
      throw .usage("usage: grow manpage 1|5 (grow(1) or grow.ini(5))")
    }
    sayExactly(page)
  }
}
