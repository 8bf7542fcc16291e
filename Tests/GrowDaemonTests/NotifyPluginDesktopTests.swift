import Foundation
import GrowTestSupport
import Testing

/// The notify plugin against a real dunst on each test's private bus (needs DISPLAY: `make test`
/// runs the suite under Xvfb).
// Serialized: each test runs its own dunst and daemon; in parallel they load a 2-core machine.
@Suite(.serialized, .enabled(if: NotificationServers.haveDisplay, "dunst needs an X display"))
struct NotifyPluginDesktopTests {
  static let shortCycle = """
    [timer]
    focus = 2s
    short-break = 2s
    auto-start-breaks = false
    auto-start-focus = false

    [plugin.notify]
    timeout = never
    """

  @Test func focusOverReachesDunstWithItsTextAndHints() throws {
    let harness = try DaemonHarness(config: Self.shortCycle, startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    // stdbuf: dbus-monitor's stdout is a file here, which stdio would buffer until exit.
    let monitor = try BackgroundProcess(
      "stdbuf",
      [
        "-oL", "dbus-monitor", "--session",
        "interface='org.freedesktop.Notifications',member='Notify'",
      ],
      environment: harness.environment)
    try harness.start()
    #expect(try harness.grow("start").status == 0)
    #expect(try harness.eventually { try harness.status()["next"] as? String == "short-break" })
    #expect(try harness.eventually { monitor.stdout.contains("grow-focus-over") })
    let history = try harness.dunstHistory()
    #expect(history.first?["summary"] == "Focus done")
    #expect(history.first?["body"] == "Your 2s short break is waiting. Stand up and stretch.")
    #expect(history.first?["appname"] == "Grow")
    #expect(history.first?["category"] == "x-grow.focus-over")
    // The Notify call as it went over the bus, whitespace folded.
    let call = monitor.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    for hint in [
      #"string "urgency" variant byte 1"#,
      #"string "category" variant string "x-grow.focus-over""#,
      #"string "desktop-entry" variant string "grow""#,
      #"string "x-dunst-stack-tag" variant string "grow-focus-over""#,
      #"string "x-canonical-private-synchronous" variant string "grow-focus-over""#,
      #"string "sound-name" variant string "complete""#,
    ] {
      #expect(call.contains(hint), "\(hint)")
    }
    // dunst lists "default" in its context menu: a named twin would list "Start break" twice.
    #expect(
      call.contains(
        #"array [ string "default" string "Start break" string "remind-5m" string "+5 min" ]"#),
      "\(call)")
    _ = dunst
  }

  /// The same focus ending for a French reader: LANGUAGE=fr and the shipped po/fr.po, compiled
  /// as `make install` compiles it. dunst shows the summary, the body (Grow's own suggestion
  /// included) and the buttons in French. C.UTF-8 is locale enough: glibc reads LANGUAGE under
  /// any locale but C (or POSIX), so no fr_FR locale needs generating.
  @Test func focusOverReachesDunstInFrench() throws {
    let catalogues = try Catalogues.compileShipped(["fr"])
    defer { try? FileManager.default.removeItem(at: catalogues) }
    let harness = try DaemonHarness(
      config: Self.shortCycle, startDaemon: false,
      environment: ["LC_ALL": "C.UTF-8", "LANGUAGE": "fr", "TEXTDOMAINDIR": catalogues.path])
    let dunst = try NotificationServers.dunst(harness)
    let monitor = try BackgroundProcess(
      "stdbuf",
      [
        "-oL", "dbus-monitor", "--session",
        "interface='org.freedesktop.Notifications',member='Notify'",
      ],
      environment: harness.environment)
    try harness.start()
    #expect(try harness.grow("start").status == 0)
    #expect(try harness.eventually { try harness.status()["next"] as? String == "short-break" })
    #expect(try harness.eventually { monitor.stdout.contains("grow-focus-over") })
    let history = try harness.dunstHistory()
    #expect(history.first?["summary"] == "Concentration terminée")
    #expect(
      history.first?["body"] == "Votre pause courte de 2s vous attend. Levez-vous et étirez-vous.")
    let call = monitor.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(
      call.contains(
        #"array [ string "default" string "Commencer la pause" string "remind-5m" string "+5 min" ]"#
      ), "\(call)")
    _ = dunst
  }

  /// A 20 s focus skipped and its 1 s break run: "Break over — Ready for focus?" is on screen.
  /// - Parameter dunstrc: dunst's config, when the test needs one of its own.
  func promptForFocus(timeout: String, dunstrc: String? = nil) throws -> (
    DaemonHarness, BackgroundProcess
  ) {
    let harness = try DaemonHarness(
      config: """
        [timer]
        focus = 20s
        short-break = 1s
        auto-start-breaks = false
        auto-start-focus = false

        [plugins]
        enable = notify, dnd

        [plugin.notify]
        timeout = \(timeout)
        """, startDaemon: false)
    if let dunstrc {
      let directory = harness.environment["XDG_CONFIG_HOME", default: ""] + "/dunst"
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      try dunstrc.write(toFile: directory + "/dunstrc", atomically: true, encoding: .utf8)
    }
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    try harness.grow("start")
    try harness.grow("skip")  // the focus: its break waits
    #expect(try harness.eventually { try harness.status()["next"] as? String == "short-break" })
    try harness.grow("resume")  // the break
    #expect(try harness.eventually { try harness.status()["next"] as? String == "focus" })
    #expect(
      try harness.eventually {
        try harness.dunstCount("displayed") == 1
      })
    return (harness, dunst)
  }

  /// A prompt that waits for the person does not expire while it waits, whatever `timeout`
  /// says.
  @Test func theWaitingPromptDoesNotExpire() throws {
    let (harness, dunst) = try promptForFocus(timeout: "1s")
    Thread.sleep(forTimeInterval: 2.5)
    #expect(
      try harness.dunstCount("displayed") == 1,
      "the prompt is still there after more than twice the timeout")
    #expect(try harness.dunstHistory().first?["summary"] == "Break over")
    _ = dunst
  }

  /// dunst restarted (here killed and started again) while the focus waits
  /// for the person. The prompt left with the old dunst; the new one is sent it again, so the
  /// person still has the button. Before, nothing came until the next phase ended.
  @Test func theWaitingPromptReachesARestartedServer() throws {
    var (harness, dunst) = try promptForFocus(timeout: "never")
    dunst.kill()
    dunst = try NotificationServers.dunst(harness)
    #expect(
      try harness.eventually(timeout: 20) { try harness.dunstCount("displayed") == 1 },
      "the new dunst shows the prompt")
    #expect(try harness.status()["next"] as? String == "focus", "the focus still waits")
    let history = try harness.dunstHistory()
    #expect(history.first?["summary"] == "Break over")
    #expect(history.first?["body"] == "Ready for 20s of focus on 'work'?")
    #expect(
      harness.daemonLog.contains(
        "grow[notify] info: sending the waiting prompt 'Break over' to the new notification server"
      ))
    _ = dunst
  }

  /// The second button of "Break over — Ready for focus?" was "Skip", which
  /// skipped the waiting focus and so started another break. It is now "+5 min": five more
  /// minutes of break, the focus still waiting and the prompt back in five minutes. Pressed
  /// through dunst's own context menu (its dmenu picks the button that is not "Start focus").
  @Test func theBreakOverPromptsSecondButtonKeepsTheFocusWaiting() throws {
    let pick = NSTemporaryDirectory() + "grow-pick-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: pick) }
    try "#!/bin/sh\ngrep -v 'Start focus' | head -n 1\n".write(
      toFile: pick, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: pick)
    let (harness, dunst) = try promptForFocus(
      timeout: "never", dunstrc: "[global]\n    dmenu = \(pick)\n")
    #expect(try harness.run("dunstctl", ["context"]).status == 0)
    #expect(
      harness.eventually(timeout: 20) {
        harness.daemonLog.contains("grow[notify] info: break-over notification: ")
      }, "\(harness.daemonLog)")
    #expect(
      harness.daemonLog.contains("grow[notify] info: break-over notification: 'remind-5m' done"),
      "\(harness.daemonLog)")
    let status = try harness.status()
    #expect(status["state"] as? String == "waiting", "no break started: \(status)")
    #expect(status["next"] as? String == "focus")
    _ = dunst
  }

  /// "Break over — Ready for focus?" answered by `grow resume`: it leaves the screen, and
  /// nothing of it waits in dunst's queue while the dnd plugin pauses dunst for the focus, to
  /// come back at the next break where clicking it does nothing.
  @Test func theWaitingPromptIsWithdrawnWhenThePhaseStarts() throws {
    let (harness, dunst) = try promptForFocus(timeout: "never")
    try harness.grow("resume")  // the focus, with dunst paused
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    #expect(
      try harness.eventually {
        try harness.dunstCount("displayed") == 0
          && harness.dunstCount("waiting") == 0
      }, "nothing of Grow's is left to surface at the next break")
    #expect(try harness.dunstHistory().first?["summary"] == "Break over")
    _ = dunst
  }

  /// The break's warning ("Short break ends in 2s") and its "Focus done" are about the break:
  /// when it ends they go, and only the prompt for the next focus is on screen.
  @Test func aPhasesNotificationsAreWithdrawnWhenItEnds() throws {
    let harness = try DaemonHarness(
      config: """
        [timer]
        focus = 2s
        short-break = 3s
        auto-start-breaks = true
        auto-start-focus = false

        [plugins]
        enable = notify

        [plugin.notify]
        timeout = never
        warn-before = 2s
        """, startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    try harness.grow("start")
    #expect(
      try harness.eventually {
        try harness.dunstCount("displayed") == 2
      }, "Focus done and the break's warning")
    #expect(
      try harness.eventually(timeout: 15) {
        try harness.status()["next"] as? String == "focus"
      })
    #expect(
      try harness.eventually {
        try harness.dunstCount("displayed") == 1
      })
    let summaries = try harness.dunstHistory().compactMap { $0["summary"] }
    #expect(summaries.first == "Break over")
    #expect(Set(summaries) == ["Break over", "Short break ends in 2s", "Focus done"])
    _ = dunst
  }

  @Test func anActionInvokedInDunstStartsTheBreak() throws {
    let harness = try DaemonHarness(config: Self.shortCycle, startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    try harness.grow("start")
    #expect(try harness.eventually { try harness.status()["next"] as? String == "short-break" })
    #expect(
      try harness.eventually {
        try harness.dunstCount("displayed") == 1
      })
    #expect(try harness.run("dunstctl", ["action", "0"]).status == 0)
    #expect(try harness.eventually { try harness.status()["state"] as? String == "short-break" })
    #expect(
      harness.daemonLog.contains("grow[notify] info: focus-over notification: 'start-break' done"))
    _ = dunst
  }

  /// A focus on a task ends with "Done with this task?" in dunst; its Done, pressed there,
  /// marks the task done in the history (grow tasks shows it).
  @Test func doneInDunstMarksTheTaskDone() throws {
    let harness = try DaemonHarness(
      config: """
        [timer]
        focus = 2s
        auto-start-breaks = false

        [plugins]
        enable = notify

        [plugin.notify]
        events = task-done
        """, startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    #expect(try harness.grow("task", "add", "work", "Write the intro").status == 0)
    #expect(try harness.grow("start", "--task", "write").status == 0)
    #expect(try harness.eventually { try harness.dunstCount("displayed") == 1 })
    #expect(try harness.run("dunstctl", ["action", "0"]).status == 0)
    #expect(
      try harness.eventually {
        try harness.grow("tasks", "--all").stdout.hasPrefix("1  ✔  work  Write the intro")
      })
    #expect(harness.daemonLog.contains("task-done notification: 'task-done' done"))
    let asked = try harness.dunstHistory().first
    #expect(asked?["summary"] == "Done with this task?")
    #expect(asked?["body"] == "Write the intro")
    _ = dunst
  }

  @Test func theWarningComesBeforeFocusEnds() throws {
    let harness = try DaemonHarness(
      config: """
        [timer]
        focus = 30s

        # Without the dnd plugin: a paused dunst would hold the warning until focus ends.
        [plugins]
        enable = notify

        [plugin.notify]
        timeout = never
        warn-before = 28s
        """, startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    try harness.grow("start")
    #expect(
      try harness.eventually {
        try harness.dunstCount("displayed") == 1
      })
    #expect(try harness.status()["state"] as? String == "focus")
    let warning = try harness.dunstHistory().first
    #expect(warning?["summary"] == "Focus ends in 28s")
    #expect(warning?["body"] == "Time to wrap up on 'work'.")
    _ = dunst
  }

  @Test func withoutAServerTheTimerRunsOnAndTheNotificationComesWhenOneStarts() throws {
    let harness = try DaemonHarness(config: Self.shortCycle)
    try harness.grow("start")
    #expect(try harness.eventually { try harness.status()["next"] as? String == "short-break" })
    let line =
      "grow[notify] warning: no notification server on the session bus"
    #expect(harness.eventually { harness.daemonLog.contains(line) })
    #expect(harness.daemonLog.components(separatedBy: line).count == 2, "one line only")
    let dunst = try NotificationServers.dunst(harness)
    #expect(
      try harness.eventually {
        try harness.dunstCount("displayed") == 1
      })
    #expect(try harness.dunstHistory().first?["summary"] == "Focus done")
    _ = dunst
  }

  @Test func afterTheServerIsKilledTheNextNotificationsReachItsSuccessor() throws {
    let harness = try DaemonHarness(
      config: """
        [timer]
        focus = 3s
        short-break = 1s
        auto-start-breaks = false
        auto-start-focus = false

        [plugins]
        enable = notify

        [plugin.notify]
        timeout = never
        warn-before = 2s
        """, startDaemon: false)
    var dunst = try NotificationServers.dunst(harness)
    try harness.start()
    try harness.grow("start")
    let endsAt = try harness.status()["ends_at"] as? String
    #expect(
      try harness.eventually { try harness.dunstHistory().first?["summary"] == "Focus ends in 2s" })

    // Killed mid-focus and started again: the focus-over notification reaches the new one.
    dunst.kill()
    dunst = try NotificationServers.dunst(harness)
    #expect(harness.daemon?.isRunning == true)
    #expect(try harness.status()["ends_at"] as? String == endsAt, "the timer kept its deadline")
    #expect(try harness.eventually { try harness.status()["next"] as? String == "short-break" })
    #expect(try harness.eventually { try harness.dunstHistory().first?["summary"] == "Focus done" })

    // Killed again and the break ends while none runs: shown once the next one starts.
    dunst.kill()
    try harness.grow("resume")
    #expect(try harness.eventually { try harness.status()["next"] as? String == "focus" })
    dunst = try NotificationServers.dunst(harness)
    #expect(try harness.eventually { try harness.dunstHistory().first?["summary"] == "Break over" })
    _ = dunst
  }

  /// dunst stopped (as it is while X stalls) across two phase ends: the two notifications
  /// those ends bring wait for an answer that never comes. The daemon must not: GetStatus
  /// answers at once throughout, and each phase ends at its deadline. libnotify's blocking
  /// show once held the loop 50 s here.
  @Test func aStoppedServerDelaysNeitherTheAPINorThePhaseEnds() throws {
    let harness = try DaemonHarness(
      config: """
        [timer]
        focus = 3s
        short-break = 3s
        auto-start-breaks = true
        auto-start-focus = false

        [plugins]
        enable = notify

        [plugin.notify]
        timeout = never
        """, startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    kill(dunst.pid, SIGSTOP)
    defer { kill(dunst.pid, SIGCONT) }
    try harness.grow("start")

    var slowest: TimeInterval = 0
    var focusEndsAt: Date?
    var breakEndsAt: Date?
    var breakSeenAt: Date?
    var waitingSeenAt: Date?
    let giveUp = Date().addingTimeInterval(90)
    while waitingSeenAt == nil, Date() < giveUp {
      let asked = Date()
      let status = try harness.statusOverBus()
      let answered = Date()
      slowest = max(slowest, answered.timeIntervalSince(asked))
      switch status.state {
      case "focus": focusEndsAt = status.endsAt
      case "short-break":
        breakEndsAt = status.endsAt
        if breakSeenAt == nil { breakSeenAt = asked }
      case "waiting" where breakSeenAt != nil:
        waitingSeenAt = asked
      default: break
      }
      Thread.sleep(forTimeInterval: 0.1)
    }
    func late(_ seen: Date?, _ deadline: Date?) -> TimeInterval {
      guard let seen, let deadline else { return .infinity }
      return seen.timeIntervalSince(deadline)
    }
    let focusLate = late(breakSeenAt, focusEndsAt)
    let breakLate = late(waitingSeenAt, breakEndsAt)
    print(
      "dunst stopped: slowest GetStatus \(Int(slowest * 1000)) ms; focus ended "
        + "\(focusLate * 1000) ms, the break \(breakLate * 1000) ms after the deadline")
    // The old blocking show held the loop for 50 s. A freeze, so generous deadlines that no
    // loaded machine reaches, not speeds: those are the figures printed above.
    #expect(slowest < 20, "GetStatus answers while dunst is stopped")
    #expect(focusLate < 20, "the focus ends without waiting for dunst")
    #expect(breakLate < 20, "the break ends without waiting for dunst")
    #expect(
      harness.eventually {
        harness.daemonLog.contains("grow[notify] warning: the notification server did not answer")
      })
    #expect(harness.daemon?.isRunning == true)

    // dunst runs again and shows what it was sent meanwhile; the late answers give the ids,
    // and "Take a 3s short break", which no longer applies, is closed. The prompt stays.
    kill(dunst.pid, SIGCONT)
    #expect(
      try harness.eventually {
        try harness.dunstCount("displayed") == 1 && harness.dunstCount("waiting") == 0
      })
    Thread.sleep(forTimeInterval: 0.5)
    #expect(try harness.dunstCount("displayed") == 1)
    #expect(try harness.dunstHistory().first?["summary"] == "Break over")
  }

  /// Focus with the warning due halfway, Grow's Do-Not-Disturb on.
  static let warnedFocusWithDND = """
    [timer]
    focus = 4s
    auto-start-breaks = false

    [plugins]
    enable = notify, dnd

    [plugin.notify]
    timeout = never
    warn-before = 2s
    """

  /// dunst 1.9 paused for focus queues everything, critical too: the warning would wait there
  /// and surface at the break, after the focus it warned about. So it is not sent at all, and
  /// nothing of Grow's waits in dunst's queue.
  @Test func duringFocusPausedDunstIsSentNothingToQueue() throws {
    let harness = try DaemonHarness(config: Self.warnedFocusWithDND, startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    try harness.start()
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dunstIsPaused() == true })
    var queuedDuringFocus = 0
    // A count read while focus still runs after it: "Focus done", sent the moment focus ends
    // while dunst is being unpaused, is not a notification queued during focus.
    while true {
      let waiting = try harness.dunstCount("waiting")
      guard try harness.status()["state"] as? String == "focus" else { break }
      queuedDuringFocus = max(queuedDuringFocus, waiting)
      Thread.sleep(forTimeInterval: 0.1)
    }
    #expect(queuedDuringFocus == 0, "nothing of Grow's waited in dunst's queue during focus")
    #expect(try harness.eventually { try harness.dunstIsPaused() == false })
    #expect(
      try harness.eventually {
        try harness.dunstCount("displayed") == 1
      })
    let summaries = try harness.dunstHistory().compactMap { $0["summary"] }
    #expect(summaries == ["Focus done"], "the warning never surfaced late")
    _ = dunst
  }

  /// xfce4-notifyd's Do-Not-Disturb lets critical notifications through: during Grow's own
  /// focus the warning is sent as critical and pops up at once.
  @Test func duringFocusXfce4NotifydShowsTheWarningAsCritical() throws {
    let harness = try DaemonHarness(config: Self.warnedFocusWithDND, startDaemon: false)
    let servers = try NotificationServers.xfce(harness)
    try harness.start()
    #expect(
      try harness.eventually {
        try harness.dndStatus()["backend"] as? String == "xfce4-notifyd"
      })
    try harness.grow("start")
    #expect(try harness.eventually { try harness.dndStatus()["enabled"] as? Bool == true })
    // xfce4-notifyd keeps one 10x10 leader window; each notification on screen is another.
    func popups() throws -> Int {
      try harness.run("xwininfo", ["-root", "-tree"]).stdout.split(separator: "\n")
        .filter { $0.contains("(\"xfce4-notifyd\"") && !$0.contains(" 10x10+") }.count
    }
    #expect(
      try harness.eventually(timeout: 4) {
        try popups() == 1 && harness.status()["state"] as? String == "focus"
      }, "the warning pops up during focus")
    _ = servers
  }

  /// Checked as [timer] is: the daemon does not start on it and says why, where
  /// before it ran with the plugin failed, seen only in `grow plugins`.
  @Test func anUnknownKeyIsReportedWithFileAndLine() throws {
    let harness = try DaemonHarness(
      config: "[plugin.notify]\nwarn_before = 1m\n", startDaemon: false)
    let daemon = try harness.grow("daemon")
    #expect(daemon.status == 1)
    #expect(
      daemon.stderr.contains(
        "\(harness.configPath):2: unknown key 'warn_before' in [plugin.notify]; "
          + "did you mean 'warn-before'?"))
  }
}
