import FoundationEssentials
import Glibc
import GrowBasics
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowDBus
import GrowDaemon
import GrowHistory
import GrowMessages
@_spi(GrowBuiltIn) @_spi(GrowHost) import GrowPluginKit

/// One `grow` subcommand. The table of these is the single source of truth for dispatch,
/// `grow help`, the man page (`grow manpage 1`) and the shell completions.
struct Command {
  let name: String
  /// Arguments after the name, as shown in usage lines.
  let synopsis: String
  /// One line; `grow help` says it in the reader's language, the man page and the
  /// completions in English.
  let summary: Message
  /// Longer help: options and behaviour; `grow help COMMAND` says it in the reader's
  /// language, the man page in English.
  let details: Message?
  /// What follows the details: machine output's keys (the JSON schema of `grow status --json`,
  /// its words the fields' own docs), in English (true: the man page and completions) or in
  /// the reader's language (false: `grow help`); the keys themselves stay as they are.
  var appendix: (_ english: Bool) -> String = { _ in "" }
  /// Plumbing for `make install` (man pages, generated files): runs, but is not listed by
  /// `grow help`, the man page or the completions.
  var hidden = false
  let run: @MainActor (_ words: [String]) throws(CLIError) -> Void
}

@MainActor
enum Commands {
  static let all: [Command] = [
    Command(
      name: "daemon", synopsis: "[--config PATH]",
      summary: Message("run the focus timer in the foreground (for autostart and systemd)"),
      details: Message(
        """
        Owns org.grow.Grow1 on the session bus until SIGTERM or SIGINT; SIGHUP reloads the
        config. Logs go to standard error, and where that is not the journal also to
        $XDG_STATE_HOME/grow/grow.log ('grow logs'); GROW_LOG=debug shows more.
          --config PATH   read this config file instead of $XDG_CONFIG_HOME/grow/config.ini
        """), run: runDaemon),
    Command(
      name: "start", synopsis: "[CARD] [--focus DURATION] [--intention TEXT] [--task ID|TEXT]",
      summary: Message("start a focus session on CARD (the default card if none)"),
      details: Message(
        """
        While a break or focus is waiting to be started, starts it.
          --focus D, --short-break D, --long-break D   change the lengths for this session only
          --intention TEXT                             what this session is for (one line)
          --task ID|TEXT                               a task of 'grow tasks' (its id or the
                                                       start of its text): its card, its text
                                                       as the intention, and each focus
                                                       recorded toward it
        Durations read like 25m, 90s or 1h30m.
        """), run: runStart),
    simple(
      "pause", Message("pause the running phase; the remaining time is kept exactly"), "Pause"),
    simple(
      "resume", Message("continue a paused phase, or start the one that is waiting"), "Resume"),
    simple(
      "toggle", Message("pause, resume, or start: whatever fits (for a single key binding)"),
      "Toggle"),
    simple("skip", Message("end the running phase early and move on"), "Skip"),
    simple("stop", Message("end the session; a running focus is recorded as stopped"), "Stop"),
    Command(
      name: "extend", synopsis: "DURATION",
      summary: Message("add time to the running phase (grow extend 5m)"),
      details: Message("DURATION reads like 5m, 90s or 1h."), run: runExtend),
    Command(
      name: "shorten", synopsis: "DURATION",
      summary: Message(
        "take time off the running phase; it keeps its last minute (grow shorten 5m)"),
      details: Message("DURATION reads like 5m, 90s or 1h. 'grow skip' ends the phase instead."),
      run: runShorten),
    Command(
      name: "status",
      synopsis: "[--json | --format FORMAT] [--template TEXT] [--icons SET] [--follow]",
      summary: Message(
        "show what the timer is doing (once, or one line per change for status bars)"),
      details: Message(
        """
          --json            one JSON object, every key always present (null when it does
                            not apply), keys sorted; the status bar plugin's status.json is
                            the same object (its keys are listed below)
          --format FORMAT   one line in a status bar's protocol: plain (tmux, lemonbar, xmobar,
                            scripts), i3blocks, polybar, waybar (return-type json), i3bar
          --template TEXT   what the line shows, made of the fields listed below (default:
                            the first two)
          --icons SET       the glyphs of the icon field: unicode (default; fonts-dejavu-core
                            has them), ascii, or nerd (for a bar set in a Nerd Font)
          --follow          keep printing one line per change (for bars that read a
                            never-ending script); shows 'off' while no daemon runs
        Clicks (i3bar on stdin, i3blocks BLOCK_BUTTON, polybar action tags): left toggles,
        middle stops, right skips, scroll up extends by 1m, scroll down shortens by 1m (a
        phase always keeps its last minute, so a stray scroll never ends one).
        The template's fields, then the keys of --json:
        """),
      appendix: { english in
        "\n  {icon} {remaining} {state} {card} {remaining_min} {progress} {cycle} {today}"
          + " {goal} {dnd} {distraction} {intention}\n" + StatusReport.jsonSchema(english: english)
      },
      run: runStatus),
    Command(
      name: "cards", synopsis: "[--json]",
      summary: Message("list the focus cards (* marks the default)"),
      details: Message("  --json   a JSON array of cards, lengths in seconds"), run: runCards),
    Command(
      name: "config", synopsis: "check [PATH] | cards",
      summary: Message("check a config file without starting anything, or list its card names"),
      details: Message(
        """
          check [PATH]   prints every problem as FILE:LINE: message and exits 1 if there is any
          cards          prints the card names of config.ini, one a line (no daemon needed; for
                         shell completion and scripts)
        """),
      run: runConfig),
    Command(
      name: "plugins", synopsis: "[--json] | reload ID | enable ID",
      summary: Message("list the plugins with their source and state, or reload one"),
      details: Message(
        """
        Shows every known plugin: where it comes from (built-in, library, executable), whether
        it is running, disabled, unavailable or failed, and why.
          --json      a JSON array: id, source, location, state, error, summary, note,
                      last_output (an external plugin's last lines on stderr)
          reload ID   read config.ini again (see grow reload), then stop the plugin and
                      start it again with its settings (after its server came back)
          enable ID   let a quarantined plugin load again: one that took the daemon down
                      while it was being started is not loaded until then
        """), run: runPlugins),
    Command(
      name: "plugin", synopsis: "new NAME [--swift | --python | --shell] | install PATH [--json]",
      summary: Message("write a new plugin project, or install a plugin where the daemon finds it"),
      details: Message(
        """
        From nothing to a plugin running in the daemon is three commands: new, a build,
        install (docs/writing-plugins.md).
          new NAME        a new directory NAME: a Swift package that builds against this
                          grow's installed SDK (--swift, the default) with one event handler,
                          a test on the plugin test kit and a README; or a program (--python,
                          --shell) with a test script and a README
          install PATH    a built plugin (a Swift package directory, libgrow-plugin-ID.so, or
                          a program grow-plugin-ID[.py|.sh] or the directory holding it),
                          checked as the daemon checks it at load, copied to
                          $XDG_DATA_HOME/grow/plugins; adds it to [plugins] enable when that
                          line would leave it out, and a running daemon starts it
          --json          what was written or installed, as one JSON object
        """), run: runPlugin),
    Command(
      name: "logs", synopsis: "[-f] [--plugin ID] [-n N]",
      summary: Message("show the daemon's log (and follow it with -f)"),
      details: Message(
        """
        A daemon run by systemd logs to the journal, and this runs journalctl for it; any other
        (started by D-Bus activation, autostart or by hand) writes
        $XDG_STATE_HOME/grow/grow.log, owner-only, kept under 1 MiB with one older file
        (grow.log.1).
          -f, --follow        keep printing lines as they come
          --plugin ID         only the lines of one plugin (grow[ID])
          -n N, --lines N     only the last N lines (10 with --follow)
        """), run: runLogs),
    Command(
      name: "dnd",
      synopsis:
        "on [--for DURATION] | off | toggle | status [--json] | restore [--json] [--timeout D]",
      summary: Message("Do-Not-Disturb: silence the notification server now, or see its state"),
      details: Message(
        """
        Needs the dnd plugin. Grow puts the server back as it was when DND ends.
          on [--for D]   silence notifications (until 'grow dnd off', or for D: 30m, 1h)
          off            end Do-Not-Disturb
          toggle         whichever of the two fits
          status         on or off, until when, and which server is switched (--json)
          restore        no daemon needed: put the server back from
                         $XDG_STATE_HOME/grow/dnd-restore.json, which a daemon that could not
                         (killed, or stopped while the server did not answer) leaves. The
                         systemd unit of 'grow install --user' runs it after the daemon exits
                         (ExecStopPost=); every daemon start does it before loading plugins
                         (unless a saved session goes on: the dnd plugin takes it up then).
                         Safe to run again: without a record it says there is nothing to
                         restore. Each call to the server waits --timeout D (default 2s).
                         Exit 0: restored, already back, or nothing to restore; 1: not put
                         back (the server did not answer: the record is kept, run it again;
                         or the daemon is running and does it itself); 2: usage. --json: one
                         object with outcome (restored, already-back, nothing-to-restore,
                         released, damaged, failed, daemon-running), backend, record,
                         record_kept and message.
        """), run: runDoNotDisturb),
    Command(
      name: "stats",
      synopsis: "[--day|--week|--month|--year|--from DATE --to DATE] [--card NAME] [--json|--csv]",
      summary: Message("focus per day and per card, streaks and today's goal, from the history"),
      details: Message(
        """
        Reads the history directly; no daemon needed. The range ends today: --day, --week
        (the default: 7 days), --month (30), --year (365), or --from/--to (local dates,
        YYYY-MM-DD, both included). A day counts toward the streak when its focus meets the
        default card's daily goal, or without a goal when it has a completed focus phase.
        Focus time is the focus of phases that ran their course (completed); a running focus
        counts once it completes. Focus skipped, stopped or abandoned (Grow exited while it
        ran) is shown apart as cut short. grow status, stats, history, garden, report, the
        D-Bus API and the exports all count and word it so.
          --card NAME   only this card's phases
          --json        everything as one JSON object (seconds, dates as YYYY-MM-DD)
          --csv         one row per day and card: date, card, focus_seconds,
                        cut_short_seconds, completed, skipped, stopped, abandoned
        """), run: runStats),
    Command(
      name: "history",
      synopsis:
        "[--from DATE --to DATE|--all] [--card NAME] [--machine NAME] [--json|--csv] | delete "
        + "| edit",
      summary: Message("list, delete or fix the recorded phases"),
      details: Message(
        """
        Every ended phase is kept in $XDG_DATA_HOME/grow/history.sqlite; nothing leaves the
        machine. Without a range, the last 7 days.
          --json, --csv                      the raw phases for scripts and spreadsheets
                                             (machine: where each phase was grown)
          --machine NAME                     only the phases grown on that machine (grow sync)
          delete ID [ID…]                    deletes those phases (all or none)
          delete --from DATE --to DATE       deletes those days' phases; asks on a terminal,
                                             and from a script needs --yes
          edit ID --card NAME                moves a phase to another card of config.ini
          edit ID --outcome OUTCOME          completed, skipped, stopped or abandoned
        Outcomes: completed (ran its course), skipped (grow skip), stopped (grow stop),
        abandoned (Grow exited while it ran).
        """), run: runHistory),
    Command(
      name: "sync", synopsis: "setup [FOLDER] | status [--json]",
      summary: Message("one history on every machine you use, through a folder Syncthing syncs"),
      details: Message(
        """
        Each machine writes its phases, edits and deletes into its own journal in the folder
        and merges the others' (docs/sync.md); the history database itself is never synced.
          setup [FOLDER]    sets [sync] folder in config.ini (default ~/Sync/grow), writes
                            this machine's history into its journal, merges what is there
          status [--json]   the folder, this machine, the others with their latest phase,
                            and any damaged journal by file and line
        """), run: runSync),
    Command(
      name: "goal",
      synopsis: "add NAME [--under GOAL] [--hours N] [--card CARD] [--by DATE] | list [--json] "
        + "| edit NAME [--name NEW] [--under GOAL|--top] [--hours N] [--card CARD] [--by DATE] "
        + "| done NAME [--undo] | remove NAME",
      summary: Message(
        "name what you want and break it into steps, each reached through a card's focus"),
      details: Message(
        """
        A goal's progress is the completed focus on its card since the goal was added, plus
        its steps' (subgoals, added with --under); without --hours, the tasks done on its
        card ('grow task'). Kept in the history database, on this machine only.
          add NAME        --hours N: the focus it takes; --card CARD: whose focus counts;
                          --under GOAL: a step of that goal; --by DATE: when you aim to be
                          there (YYYY-MM-DD)
          list [--json]   every goal and step with where it stands (JSON: one object each,
                          flat, with its parent; every key always present)
          edit NAME       changes it: --name NEW, --under GOAL (or --top: a goal of its
                          own), --hours, --card, --by
          done NAME       marks it reached (--undo opens it again)
          remove NAME     removes it and its steps; the focus stays in the history
        """), run: runGoal),
    Command(
      name: "task", synopsis: "add CARD TEXT | done ID [--undo] | remove ID",
      summary: Message("the to-do list on a card: what a focus is for"),
      details: Message(
        """
          add CARD TEXT   a task on CARD ("Chapter 3, exercises 1–10")
          done ID         marks it done (--undo opens it again)
          remove ID       removes it; the focus spent on it stays in the history
        'grow start --task ID' focuses on one; 'grow tasks' lists them.
        """), run: runTask),
    Command(
      name: "tasks", synopsis: "[CARD] [--all] [--json]",
      summary: Message("the open tasks (on CARD), with the focus spent on each"),
      details: Message(
        """
          --all    done tasks too
          --json   one object per task: id, card, text, done, focus_seconds, focus_count,
                   created_at, done_at (every key always present)
        """), run: runTasks),
    Command(
      name: "journey", synopsis: "[GOAL] [--json]",
      summary: Message(
        "the way to each goal: its steps, what is done, what is left, when at your pace"),
      details: Message(
        """
        The first half of the way is shown as what you have done, the second as what is left
        (in focus sessions of the card), with the day you get there at your pace of the last
        14 days.
          --json   each goal with its steps nested (subgoals), every key always present
        """), run: runJourney),
    Command(
      name: "garden", synopsis: "[--week] [--svg FILE]",
      summary: Message("what you grew today (or this week): a plant for every completed focus"),
      details: Message(
        """
        One row per card: 🌱 a completed focus under 20m, 🌿 20m to 45m, 🌳 45m or more, 🥀 a
        focus stopped or abandoned; now and then a focus of 20m or more grows a 🌻 instead
        (picked by when it started: the same history always grows the same garden).
          --week       the last 7 days instead of today
          --svg FILE   the garden drawn as a picture (no emoji fonts needed), to keep or share
        """), run: runGarden),
    Command(
      name: "report", synopsis: "--svg FILE [--week]",
      summary: Message(
        "draw today (or the week) as an SVG picture: focus per day and card, and the garden"),
      details: Message("  --week   the last 7 days instead of today"), run: runReport),
    Command(
      name: "install",
      synopsis: "--user [--autostart | --systemd] [--gnome-pomodoro] [--browser] [--remove]",
      summary: Message("make the daemon start by itself: on first use (D-Bus) and at login"),
      details: Message(
        """
        Needs no root. Writes a D-Bus activation file, so the first 'grow start' (or any app
        calling org.grow.Grow1) starts the daemon, and one way to start it at login:
          --systemd     a systemd user unit (the default when a user systemd instance runs)
          --autostart   an XDG autostart entry (the default otherwise)
          --gnome-pomodoro  also a D-Bus activation file for org.gnome.Pomodoro, so scripts
                        written for GNOME Pomodoro start Grow (docs/gnome-pomodoro.md); not
                        written unless asked, as the name is GNOME Pomodoro's
          --browser     also the native messaging host manifests Chromium, Chrome and Firefox
                        read, so Grow's browser extension can reach the daemon
                        (docs/browser.md)
          --remove      delete what 'grow install --user' wrote, and nothing else
        Prints every file it writes, the command that enables the unit, and the lines i3 users
        add to their config. 'make install' installs Grow itself.
        """), run: runInstall),
    Command(
      name: "doctor", synopsis: "[--json]",
      summary: Message(
        "check the desktop Grow runs in; one line per check, with a fix for each problem"),
      details: Message(
        """
        Checks the session bus, the daemon, the notification server and its capabilities, the
        do-not-disturb backend, DISPLAY, the config, the data directory and the plugins.
        ✔ fine, ! works with limits, ✘ a problem; exits 1 when any check fails.
          --json   {"ok": BOOL, "checks": [{"check", "status", "message", "fix"}]} for scripts
        """), run: runDoctor),
    Command(
      name: "completions", synopsis: "bash|zsh|fish",
      summary: Message(
        "print a shell completion script (commands, options, card names, plugin ids)"),
      details: Message(
        """
        make install puts them where each shell looks. By hand:
          bash   grow completions bash > ~/.local/share/bash-completion/completions/grow
          zsh    grow completions zsh > ~/.zfunc/_grow   (with ~/.zfunc on $fpath)
          fish   grow completions fish > ~/.config/fish/completions/grow.fish
        """), run: runCompletions),
    Command(
      name: "reload", synopsis: "",
      summary: Message(
        "make the daemon read config.ini again (as SIGHUP does) and say what changed"),
      details: Message(
        """
        Cards take effect at once (a running phase keeps its length). Plugins whose [plugin.ID]
        settings changed are restarted with them, added ones start, removed or disabled ones
        stop; the others keep running untouched. A file with problems is not applied: they are
        printed and the old config is kept (exit status 1).
        """), run: runReload),
    Command(
      name: "manpage", synopsis: "1|5",
      summary: Message("print the man page grow(1) or grow.ini(5)"),
      details: Message("Roff, generated from this command table and the config schema."),
      hidden: true,
      run: runManpage),
    Command(
      name: "generate",
      synopsis: "dbus-service|systemd-unit|desktop-entry --exec PATH | dbus-interface",
      summary: Message("print a file make install ships, for the grow binary at PATH"),
      details: nil, hidden: true, run: runGenerate),
    Command(
      name: "browser-host", synopsis: "[ORIGIN]",
      summary: Message("the browser extension's messenger to the daemon (the browser starts it)"),
      details: Message(
        """
        Grow's browser extension (browser/ in the sources; docs/browser.md) reports the page in
        front of you through this native messaging host, and hears what to block. Browsers find
        it through the manifests 'grow install --user --browser' writes; it is not for typing.
        """), hidden: true,
      run: { _ throws(CLIError) in try BrowserHost().run() }),
    Command(
      name: "demo", synopsis: "",
      summary: Message("run a short, real focus → break → focus → long break cycle (seconds long)"),
      details: Message("Runs its own timer on the session bus and prints every step live."),
      run: runDemo),
    Command(
      name: "version", synopsis: "", summary: Message("print the version"),
      details: nil, run: { _ throws(CLIError) in say("grow \(growVersion)") }),
    Command(
      name: "help", synopsis: "[COMMAND]", summary: Message("show help for grow or one command"),
      details: nil, run: runHelp),
  ]

  private static func simple(_ name: String, _ summary: Message, _ method: String) -> Command {
    Command(name: name, synopsis: "", summary: summary, details: nil) { words throws(CLIError) in
      try noArguments(words, name)
      try GrowClient().call(method)
      try printStatusLine()
    }
  }

  // MARK: Timer commands

  private static func runStart(_ words: [String]) throws(CLIError) {
    let arguments = try parse(
      words, values: ["focus", "short-break", "long-break", "intention", "task"], usage: "start")
    try expect(arguments, atMost: 1, "start")
    var options: [String: BusValue] = [:]
    var card = arguments.positionals.first ?? ""
    if let words = arguments.value("task") {
      let task = try withTasks { store throws(TaskError) in
        try store.task(matching: words, card: card.isEmpty ? nil : card)
      }
      guard !task.isDone else {
        throw .refused(
          Message("task {id} is done; 'grow task done {id} --undo' opens it again")
            .render(["id": task.id]))
      }
      card = task.card
      options["task"] = .int64(task.id)
      options["intention"] = .string(task.text)
    }
    for key in ["focus", "short-break", "long-break"] {
      if let text = arguments.value(key) { options[key] = .uint32(try duration(text, for: key)) }
    }
    if let intention = arguments.value("intention") { options["intention"] = .string(intention) }
    let client = try GrowClient()
    if options.isEmpty {
      try client.call("Start", [.string(card)])
    } else {
      try client.call("StartWith", [.string(card), .vardict(options)])
    }
    try printStatusLine(client)
  }

  private static func runExtend(_ words: [String]) throws(CLIError) {
    try changeLength(words, command: "extend", method: "Extend")
  }

  private static func runShorten(_ words: [String]) throws(CLIError) {
    try changeLength(words, command: "shorten", method: "Shorten")
  }

  /// `grow extend` and `grow shorten`: one duration, sent to `method`.
  private static func changeLength(_ words: [String], command: String, method: String)
    throws(CLIError)
  {
    let arguments = try parse(words, usage: command)
    try expect(arguments, atMost: 1, command)
    guard let text = arguments.positionals.first else {
      throw .usage(
        Message("{command} needs a duration, like 'grow {command} 5m'")
          .render(["command": command]))
    }
    let client = try GrowClient()
    try client.call(method, [.uint32(try duration(text, for: command))])
    try printStatusLine(client)
  }

  private static func runStatus(_ words: [String]) throws(CLIError) {
    let arguments = try parse(
      words, values: ["format", "template", "icons"], flags: ["json", "follow"], usage: "status")
    try expect(arguments, atMost: 0, "status")
    let wantsBar =
      arguments.flag("follow") || arguments.value("format") != nil
      || arguments.value("template") != nil || arguments.value("icons") != nil
    if arguments.flag("json"), wantsBar {
      throw .usage(
        Message(
          "grow status: --json cannot be combined with --format, --template, --icons or --follow"
        ).render())
    }
    guard wantsBar else {
      let report = StatusReport(try GrowClient().status())
      guard !arguments.flag("json") else { return say(report.jsonText) }
      // Problems with the phases kept for the history: a person must hear of them once.
      let journal = PendingPhases.path(besideSession: XDGDirectories().sessionFile)
      let warnings = PendingPhases.problems(at: journal).map {
        "  ! " + Message("{problem}; 'grow doctor' says what to do").render(["problem": $0.problem])
      }
      return say(([report.humanText] + warnings).joined(separator: "\n"))
    }
    let renderer = try statusBarRenderer(arguments)
    if arguments.flag("follow") {
      // The front (Sources/grow/StatusFollower.swift) follows; it hands `--follow` over only
      // when it cannot reach the session bus, whose refusal GrowClient words.
      _ = try GrowClient()
      throw .failed(
        Message("'grow status --follow' runs in the front, {front}: run it through that")
          .render([
            "front": InstallLayout.joined(
              InstallLayout.binDirectoryOfRunningGrow ?? "PREFIX/bin", "grow")
          ]))
    }
    try printStatusBarOnce(renderer)
  }

  private static func statusBarRenderer(_ arguments: Arguments) throws(CLIError)
    -> StatusBarRenderer
  {
    let formatName = arguments.value("format") ?? StatusBarFormat.plain.rawValue
    guard let format = StatusBarFormat(rawValue: formatName) else {
      throw .usage(
        Message("grow status: unknown format '{format}'; formats: {formats}").render([
          "format": shown(formatName), "formats": StatusBarFormat.names,
        ]))
    }
    var template: BarTemplate
    do {
      template =
        try arguments.value("template").map { (source) throws(BarTemplateError) in
          try BarTemplate(source)
        } ?? .standard
    } catch {
      throw .usage(Message("grow status: {problem}").render(["problem": error.description]))
    }
    if let name = arguments.value("icons") {
      guard let icons = IconSet(rawValue: name) else {
        throw .usage(
          Message("grow status: unknown icon set '{name}'; icon sets: {sets}").render([
            "name": shown(name), "sets": IconSet.names,
          ]))
      }
      template.icons = icons.rawValue
    }
    return StatusBarRenderer(
      format: format, template: template, growCommand: growCommandLine,
      warnBefore: warnBeforeSetting())
  }

  /// `[plugin.notify] warn-before` when it is set and valid; nil otherwise. Read without
  /// opening any plugin: bars run this often.
  static func warnBeforeSetting() -> TimeInterval? {
    guard let config = try? GrowConfig.load(path: nil),
      let warn = try? config.pluginSections["notify"]?.duration("warn-before", default: 0),
      warn > 0
    else { return nil }
    return warn
  }

  /// One update for a bar that runs `grow` on an interval. A click reported by i3blocks
  /// (BLOCK_BUTTON) is acted on first, so the line shows its effect. Without a daemon the
  /// line says "off" and the exit status is 0: to a bar, any other status is an error.
  private static func printStatusBarOnce(_ renderer: StatusBarRenderer) throws(CLIError) {
    let client = try GrowClient()
    if renderer.format == .i3blocks,
      let button = ProcessInfo.processInfo.environment["BLOCK_BUTTON"].flatMap({ Int($0) }),
      let click = BarClick(button: button)
    {
      // Refused (say, skip while idle) or no daemon: the line below shows how things are.
      _ = try? client.call(click.call.method, click.call.arguments)
    }
    say(renderer.once(try client.snapshot(), at: Date()))
  }

  /// How a bar runs this `grow` again: the path it was started by, made absolute when it was
  /// relative, so polybar's click commands reach the same binary.
  private static var growCommandLine: String {
    let invoked = CommandLine.arguments.first ?? "grow"
    guard invoked.contains("/"), !invoked.hasPrefix("/") else { return invoked }
    return FileManager.default.currentDirectoryPath + "/" + invoked
  }

  private static func runCards(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["json"], usage: "cards")
    try expect(arguments, atMost: 0, "cards")
    let cards = try GrowClient().cards().map(CardReport.init)
    say(arguments.flag("json") ? jsonText(cards) : cards.map(\.humanText).joined(separator: "\n"))
  }

  private static func printStatusLine(_ existing: GrowClient? = nil) throws(CLIError) {
    let client: GrowClient
    if let existing { client = existing } else { client = try GrowClient() }
    say(StatusReport(try client.status()).humanText)
  }

  // MARK: Daemon, config, demo

  private static func runDaemon(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, values: ["config"], usage: "daemon")
    try expect(arguments, atMost: 0, "daemon")
    let log = Logger(label: "daemon", destination: .forDaemon())
    let configPath = arguments.value("config")
    // The static image checks the config itself, with the same words: it is chosen from the
    // file alone, before any plugin library is opened to check its settings (DaemonImage).
    if let plain = try? GrowConfig.load(path: configPath),
      case .linkedIn(let path) = DaemonImage.choose(config: plain)
    {
      log.info(DaemonImage.Choice.linkedIn(path: path).logLine)
      let code = DaemonImage.exec(path, configPath: configPath)
      log.error("cannot run \(path): \(String(cString: strerror(code))); running this one")
    }
    let config: GrowConfig
    do {
      config = try loadConfigurationOrExplain(configPath)
    } catch {
      // Handed over by the static image for a plugin library whose settings are wrong: go
      // back to the image, which keeps running without it, rather than leave no daemon.
      if let image = ProcessInfo.processInfo.environment[DaemonImage.handedOverVariable] {
        unsetenv(DaemonImage.handedOverVariable)
        unsetenv("GROW_DAEMON_IMAGE")
        log.error("\(error.description); going back to the static image \(image)")
        _ = DaemonImage.exec(image, configPath: configPath)
      }
      // Started by D-Bus activation, this stderr is the bus daemon's: the log is where
      // 'grow logs' (and a person) finds why. A terminal gets it once, from main.
      Logger(
        label: "daemon",
        destination: LogDestination(standardError: false, file: log.destination.file)
      )
      .error(error.description)
      throw error
    }
    // Why this daemon runs, not the static image.
    let image = DaemonImage.choose(config: config)
    if case .dynamic = image { log.info(image.logLine) }
    let daemon = Daemon(
      config: config, log: log,
      reloadConfig: { @Sendable () throws in try GrowConfig.load(path: configPath) })
    do {
      try daemon.run()
    } catch {
      throw .failed(error.description)
    }
  }

  /// `grow reload`: the daemon answers once it has read and applied the file.
  private static func runReload(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, usage: "reload")
    try expect(arguments, atMost: 0, "reload")
    say(try reloadConfiguration(GrowClient()).joined(separator: "\n"))
  }

  /// Has the daemon read config.ini again; returns what changed, or throws the file's problems.
  static func reloadConfiguration(_ client: GrowClient) throws(CLIError) -> [String] {
    let owner = client.daemonOwner()
    let answer: [BusValue]
    do {
      answer = try client.call(
        "Reload", interface: GrowBusAPI.configInterface,
        timeout: Int32(reloadWait * 1000))
    } catch .bus(let error) where error.name == BusError.noReply {
      throw .failed(
        Message(
          "the daemon did not finish reloading within {time}; 'grow logs' says what it is doing"
        ).render(["time": DurationText.format(reloadWait)]))
    }
    guard case .array(_, let lines)? = answer.first else {
      throw .failed(Message("the daemon gave no answer to Reload").render())
    }
    let changes = lines.compactMap(\.stringValue)
    if changes.first?.hasPrefix(DaemonImage.handOverReport) == true, let old = owner {
      try awaitNewDaemon(replacing: old, client)
    }
    return changes
  }

  /// Waits until the daemon a hand-over starts owns Grow's name and has started its plugins
  /// (it answers `List` once they are loaded), so what the caller asks next reaches it.
  private static func awaitNewDaemon(replacing old: String, _ client: GrowClient)
    throws(CLIError)
  {
    for _ in 0..<Int(reloadWait / 0.05) {
      if let owner = client.daemonOwner(), owner != old {
        _ = try? client.call("List", interface: GrowBusAPI.pluginsInterface)
        return
      }
      usleep(50_000)
    }
    throw .failed(
      Message(
        "the daemon did not come back within {time} after handing over; 'grow logs' says why"
      ).render(["time": DurationText.format(reloadWait)]))
  }

  /// How long `grow reload` waits for the daemon to read the file.
  static let reloadWait: TimeInterval = 15

  private static func runHelp(_ words: [String]) throws(CLIError) {
    guard let name = words.first else { return say(usageText) }
    guard let command = all.first(where: { $0.name == name }) else {
      throw .usage(
        Message("no command '{name}'").render(["name": shown(name)]) + suggestion(for: name))
    }
    say(
      Message("usage: grow {command} {synopsis}").render([
        "command": command.name, "synopsis": command.synopsis,
      ]) + "\n\n" + command.summary.render())
    if let details = command.details { say("\n" + details.render() + command.appendix(false)) }
  }

  static var usageText: String {
    let listed = all.filter { !$0.hidden }
    let width = listed.map(\.name.count).max() ?? 0
    let lines = listed.map {
      "  \($0.name.fitted(toWidth: width))  \($0.summary.render())"
    }
    return Message(
      """
      grow: a focus timer that gets out of the way

      usage: grow COMMAND [ARGS]

      commands:
      {commands}

      'grow help COMMAND' shows a command's options. Exit status: 0 done, 1 refused or
      failed, 2 wrong command line, 3 no daemon or session bus to talk to.
      """
    ).render(["commands": lines.joined(separator: "\n")])
  }

  static func suggestion(for name: String) -> String {
    let listed = all.filter { !$0.hidden }.map(\.name)
    return closestMatch(to: name, in: listed).map {
      Message("; did you mean '{command}'?").render(["command": $0])
    } ?? ""
  }

  // MARK: Helpers

  static func parse(
    _ words: [String], values: Set<String> = [], flags: Set<String> = [], usage: String
  ) throws(CLIError) -> Arguments {
    do {
      return try Arguments(words, valueOptions: values, flagOptions: flags)
    } catch {
      throw .usage(
        Message("grow {command}: {problem}").render([
          "command": usage, "problem": error.description,
        ]))
    }
  }

  static func expect(_ arguments: Arguments, atMost count: Int, _ name: String) throws(CLIError) {
    let synopsis = all.first { $0.name == name }?.synopsis ?? ""
    do {
      try arguments.expectPositionals(atMost: count, usage: "grow \(name) \(synopsis)")
    } catch {
      throw .usage(error.description)
    }
  }

  private static func noArguments(_ words: [String], _ name: String) throws(CLIError) {
    try expect(try parse(words, usage: name), atMost: 0, name)
  }

  private static func duration(_ text: String, for name: String) throws(CLIError) -> UInt32 {
    do {
      let seconds = try DurationText.parse(text)
      guard seconds >= 1 else {
        throw CLIError.usage(Message("{name} must be at least 1s").render(["name": name]))
      }
      return UInt32(seconds)
    } catch let error as DurationError {
      throw .usage(Message("{name}: {problem}").render(["name": name, "problem": error.message]))
    } catch let error as CLIError {
      throw error
    } catch {
      throw .usage(Message("{name}: {problem}").render(["name": name, "problem": "\(error)"]))
    }
  }
}
