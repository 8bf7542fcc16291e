import Foundation

/// The kinds of fault the soak injects.
public enum FaultKind: String, CaseIterable, Codable, Sendable {
  case pauseResume = "pause/resume"
  case skip = "skip"
  case stopStart = "stop and start"
  case daemonKill = "daemon kill -9"
  case daemonKillAtPhaseEnd = "daemon kill -9 at a phase end"
  case daemonKillMidCommand = "daemon kill -9 mid-command"
  case pluginKill = "plugin kill -9"
  case pluginExit = "plugin exits mid-event"
  case dunstKill = "dunst kill -9"
  // The stress faults, "Trust under stress": peers that hang and resources that run out.
  case dunstStall = "dunst stopped"
  case xServerStall = "X server stopped"
  case titleFlood = "title flood"
  case historyLocked = "history locked"
  case dataDirectoryFull = "data directory full"
  case walDeleted = "WAL deleted"
  // The trust faults, "Trust, round two": hostile compositors, reloads, a crashing plugin, a
  // damaged journal, call bursts.
  case swayPeer = "hostile sway peer"
  case hyprlandPeer = "hostile Hyprland peer"
  case reloadStorm = "reload storm"
  case pluginCrashesInInit = "plugin crashes in init"
  case damagedJournal = "damaged journal"
  case callBurst = "call burst"
  // The sync faults (issue 29, SyncFaults.swift): the Syncthing between two machines stopped,
  // the other machine's journal cut short.
  case syncthingStopped = "Syncthing stopped"
  case journalTruncated = "sync journal cut short"

  /// What a run draws from unless told otherwise (`--kinds` picks others): every kind.
  public static let standard = allCases
  /// The classic kinds ("Nothing lost"): the daemon, plugins and dunst killed, commands.
  public static let classic: [FaultKind] = [
    .pauseResume, .skip, .stopStart, .daemonKill, .daemonKillAtPhaseEnd, .daemonKillMidCommand,
    .pluginKill, .pluginExit, .dunstKill,
  ]
  /// The stress kinds: stalled servers, a title flood, a locked history, a full disk, a
  /// deleted WAL. Each lasts seconds (`StressFaults.swift`), so they are drawn less often.
  public static let stress: [FaultKind] = [
    .dunstStall, .xServerStall, .titleFlood, .historyLocked, .dataDirectoryFull, .walDeleted,
  ]
  /// The trust kinds (`TrustFaults.swift`, `HostilePeers.swift`): each lasts seconds, some
  /// restart the daemon, so they too are drawn less often.
  public static let trust: [FaultKind] = [
    .swayPeer, .hyprlandPeer, .reloadStorm, .pluginCrashesInInit, .damagedJournal, .callBurst,
  ]
  /// The sync kinds (`SyncFaults.swift`): each waits for Syncthing to catch up, seconds.
  public static let sync: [FaultKind] = [.syncthingStopped, .journalTruncated]

  /// How often each is drawn, relative to the others.
  var weight: Int {
    switch self {
    case .pauseResume: 16
    case .skip: 14
    case .stopStart: 7
    case .daemonKill: 8
    case .daemonKillAtPhaseEnd: 7
    case .daemonKillMidCommand: 5
    case .pluginKill: 12
    case .pluginExit: 8
    case .dunstKill: 5
    case .dunstStall, .xServerStall, .titleFlood, .historyLocked, .dataDirectoryFull, .walDeleted:
      3
    case .swayPeer, .hyprlandPeer, .reloadStorm, .pluginCrashesInInit, .damagedJournal, .callBurst:
      3
    case .syncthingStopped, .journalTruncated: 2
    }
  }

  public var killsDaemon: Bool {
    self == .daemonKill || self == .daemonKillAtPhaseEnd || self == .daemonKillMidCommand
  }

  public var crashesPlugin: Bool { self == .pluginKill || self == .pluginExit }

  public var isStress: Bool { Self.stress.contains(self) }

  public var isTrust: Bool { Self.trust.contains(self) }

  public var isSync: Bool { Self.sync.contains(self) }

  /// The kinds that run the daemon with the wayland plugin against a stand-in compositor.
  public var needsWaylandPeer: Bool { self == .swayPeer || self == .hyprlandPeer }
}

/// What a soak run did and found; `table` is what `make soak` prints.
public struct SoakReport: Codable, Sendable {
  public var seed: UInt64 = 0
  public var faultsRequested = 0
  public var faults: [String: Int] = [:]
  public var wallSeconds = 0.0
  public var stoppedAtTimeLimit = false

  /// Daemon restarts after kill -9, and how many came back in the state that the saved
  /// session and the card say (the phase real time has reached, paused or not).
  public var daemonRestarts = 0
  public var daemonRestartsRight = 0
  /// External plugins that crashed, and how many the daemon started again.
  public var pluginCrashes = 0
  public var pluginRestarts = 0
  public var dunstRestarts = 0
  /// Consistency checks: `grow status` agrees with session.json, dunst is paused exactly
  /// while a focus phase runs.
  public var checks = 0
  public var statusMismatches = 0
  public var dndOffDuringFocus = 0
  public var dndOnOutsideFocus = 0
  /// `CompletedToday` against the completed focus phases the history has for today.
  public var todayCountRight = true

  public var skipsAnswered = 0
  public var stopsAnswered = 0
  /// Commands whose daemon was killed before it answered: they may or may not have happened.
  public var commandsUnanswered = 0
  /// The history has a skipped row per answered skip and a stopped row per answered stop (give
  /// or take the commands cut off), and no abandoned ones.
  public var rowsMatchCommands = false

  /// `GetStatus` latency per kind of fault (and between faults) and the daemon's memory.
  public var probe = StatusProbeFigures()
  /// The stress bounds: p99 latency during every fault, the daemon's resident set.
  public var latencyBoundMilliseconds = 100.0
  public var rssLimitKiB = 0
  /// Seconds from a stopped notification or X server answering again (SIGCONT) until dunst's
  /// pause is right for the phase, one per stall; `dndNeverRight` counts those where it was
  /// still wrong after `dndRecoveryBound` and a while more.
  public var dndRecoverySeconds: [Double] = []
  public var dndNeverRight = 0
  public var dndRecoveryBound = 5.0
  /// Titles the flooding client set, over all title floods.
  public var titlesFlooded = 0
  /// WAL deletions followed by a kill -9 of the daemon.
  public var walDeletionsThenKilled = 0
  /// The trust bound: the daemon's open descriptors may not pass this (0: no bound).
  public var descriptorLimit = 0
  /// Hostile-peer faults after which an external plugin had been cut off (a new process).
  public var pluginsCutOff = 0
  /// The most lines the daemon logged during one hostile-peer fault (a figure, not a bound).
  public var peerLogLinesMax = 0
  /// Reload storms, and the `grow reload` calls and SIGHUPs in them.
  public var reloadStorms = 0
  public var reloadsSent = 0
  /// Daemons a plugin crashing in `init` took down, and starts after that which crashed again.
  public var crashingPluginDeaths = 0
  public var crashedAgainAtStart = 0
  /// Journals damaged (truncated, garbage, a symlink) and what the daemon made of them.
  public var journalsDamaged = 0
  /// Calls pipelined in bursts, and how many got no answer.
  public var burstCalls = 0
  public var burstCallsUnanswered = 0

  /// Sync: phases the other machine wrote into its journal, its journals cut short, seconds
  /// until both sides had caught up after each sync fault, and faults after which they never
  /// did (within `SyncPeers.catchUpBound`).
  public var peerPhasesWritten = 0
  public var journalsTruncated = 0
  public var syncCatchUpSeconds: [Double] = []
  public var syncNeverCaughtUp = 0

  /// Every phase the other machine wrote is in the soak's history, once.
  public var peerPhasesMerged: Bool { (audit?.fromOtherMachines ?? 0) == peerPhasesWritten }

  /// The separate plugin-hang rounds: a built-in plugin's handler never returns, then SIGTERM.
  public var hangRounds = 0
  /// Seconds from SIGTERM to the daemon's exit, per round; nil when it had to be killed.
  public var hangExitSeconds: [Double?] = []
  public var hangExitBound = 3.0
  /// Rounds after which dunst was no longer paused (DND put back) once the daemon had gone.
  public var hangDNDPutBack = 0

  public var audit: HistoryAudit?
  public var integrityCheck = "not run"
  /// After the final stop and the daemon's exit: 1 if dunst is still paused.
  public var dndLeftOn = 0
  /// Files that must be gone after a clean stop: session.json, dnd-restore.json.
  public var leftoverFiles: [String] = []
  public var problems: [String] = []
  /// PASS or FAIL, as `passed` said when the run ended (for --json readers).
  public var result = "FAIL"

  public init() {}

  public var faultsInjected: Int { faults.values.reduce(0, +) }

  /// Every invariant of the "Nothing lost" promise holds, and the stress bounds: the loop
  /// answers in time during every fault, DND is right soon after a stalled server answers,
  /// memory stays bounded, and a hung plugin neither keeps the daemon from exiting nor
  /// leaves DND on.
  public var passed: Bool { failedChecks.isEmpty }

  /// The names of the invariants that do not hold, for a one-line verdict (`make test` shows
  /// this line where the whole table would be cut).
  public var failedChecks: [String] {
    let checks: [(String, Bool)] = [
      ("history audit", audit?.isClean ?? false), ("integrity check", integrityCheck == "ok"),
      ("DND left on", dndLeftOn == 0), ("daemon restarts", daemonRestartsRight == daemonRestarts),
      ("plugin restarts", pluginRestarts == pluginCrashes),
      ("status vs session.json", statusMismatches == 0),
      ("DND off during focus", dndOffDuringFocus == 0),
      ("DND on outside focus", dndOnOutsideFocus == 0), ("today's count", todayCountRight),
      ("rows match commands", rowsMatchCommands), ("leftover files", leftoverFiles.isEmpty),
      ("problems", problems.isEmpty), ("slow faults \(slowFaults)", slowFaults.isEmpty),
      ("DND recoveries late", dndRecoveriesLate == 0), ("RSS", rssWithinLimit),
      ("hangs handled", hangsHandled), ("descriptors", descriptorsWithinLimit),
      ("crashed again at start", crashedAgainAtStart == 0),
      ("sync caught up", syncNeverCaughtUp == 0), ("peer phases merged once", peerPhasesMerged),
    ]
    return checks.filter { !$0.1 }.map(\.0)
  }

  /// The labels whose p99 `GetStatus` latency is over the bound. The plugin hang is left
  /// out (an in-process handler that never returns holds the loop by definition), and so is
  /// the daemon's start-up after kill -9, which is no fault of the loop; so are labels with
  /// fewer than `latencySamplesNeeded` calls, whose p99 is just their slowest call (a short
  /// run on a busy machine: `make test`'s 30 faults).
  public var slowFaults: [String] {
    probe.byFault.filter { label, summary in
      Self.ungated(label) == false && summary.samples >= Self.latencySamplesNeeded
        && summary.p99 > latencyBoundMilliseconds
    }.map(\.key).sorted()
  }

  public static let latencySamplesNeeded = 100

  static func ungated(_ label: String) -> Bool {
    label == hangLabel || label == StatusProbe.starting
  }

  /// Stalls after which DND was not right within `dndRecoveryBound` seconds.
  public var dndRecoveriesLate: Int {
    dndNeverRight + dndRecoverySeconds.filter { $0 > dndRecoveryBound }.count
  }

  public var rssWithinLimit: Bool { rssLimitKiB == 0 || probe.rssMaxKiB <= rssLimitKiB }

  public var descriptorsWithinLimit: Bool {
    descriptorLimit == 0 || probe.descriptorsMax <= descriptorLimit
  }

  public var hangsHandled: Bool {
    hangExitSeconds.allSatisfy { ($0 ?? .infinity) <= hangExitBound }
      && hangDNDPutBack == hangRounds
  }

  /// The probe's label while a plugin hangs.
  public static let hangLabel = "plugin hangs"

  /// The table for people.
  public var table: String {
    var lines: [(String, String)] = []
    func row(_ label: String, _ value: Any) { lines.append((label, "\(value)")) }
    row("faults injected", faultsInjected)
    for kind in FaultKind.allCases { row("  " + kind.rawValue, faults[kind.rawValue] ?? 0) }
    row("recoveries", "")
    row("  daemon restarts in the right state", "\(daemonRestartsRight)/\(daemonRestarts)")
    row("  plugin restarts after a crash", "\(pluginRestarts)/\(pluginCrashes)")
    if faults[FaultKind.dunstKill.rawValue] != nil { row("  dunst restarts", dunstRestarts) }
    let audit =
      audit
      ?? HistoryAudit(
        rows: [], seen: [], rules: .init(lengths: [:], longBreakAfter: 1), intention: nil)
    row("phases recorded / expected", "\(audit.recorded)/\(audit.expected)")
    row("  lost", audit.lost)
    row("  duplicated", audit.duplicated)
    row("  unexpected (overlapping)", audit.unexpected)
    row("  wrong length or order", audit.wrongLength + audit.wrongOrder)
    row("  intention lost", audit.intentionLost)
    row("  seen running (each must be recorded)", audit.seen)
    let outcomes = ["completed", "skipped", "stopped", "abandoned"].map {
      "\(audit.outcomes[$0] ?? 0) \($0)"
    }
    row("  outcomes", outcomes.joined(separator: ", "))
    row(
      "  skipped / stopped rows for answered",
      "\(audit.outcomes["skipped"] ?? 0)/\(skipsAnswered), \(audit.outcomes["stopped"] ?? 0)/"
        + "\(stopsAnswered) (+\(commandsUnanswered) cut off by kill -9)")
    row(
      "GetStatus latency, ms",
      "p50 / p99 / max (calls, timed out, longest silence; daemon RSS, descriptors at most)")
    let labels =
      [StatusProbe.betweenFaults] + FaultKind.allCases.map(\.rawValue)
      + [Self.hangLabel, StatusProbe.starting]
    for label in labels {
      guard let summary = probe.byFault[label] else { continue }
      row(
        "  " + label,
        String(
          format: "%.1f / %.1f / %.1f (%d, %d, %.1f s; %.0f MiB, %d)%@", summary.p50, summary.p99,
          summary.max, summary.samples, summary.timeouts,
          summary.longestSilenceMilliseconds / 1000,
          Double(probe.rssMaxKiBByFault[label] ?? 0) / 1024,
          probe.descriptorsMaxByFault[label] ?? 0,
          slowFaults.contains(label)
            ? "  OVER"
            : summary.samples < Self.latencySamplesNeeded && !Self.ungated(label)
              ? "  (too few calls to judge)" : ""))
    }
    row("  bound (p99, all but the hang and start-up)", "\(Int(latencyBoundMilliseconds)) ms")
    row("  calls while no daemon ran", probe.callsWithoutDaemon)
    row(
      "daemon RSS, max (first)",
      String(
        format: "%.1f MiB (%.1f MiB)%@", Double(probe.rssMaxKiB) / 1024,
        Double(probe.rssFirstKiB) / 1024,
        rssLimitKiB > 0 ? String(format: ", limit %.0f MiB", Double(rssLimitKiB) / 1024) : ""))
    row(
      "daemon descriptors, max (first)",
      "\(probe.descriptorsMax) (\(probe.descriptorsFirst))"
        + (descriptorLimit > 0 ? ", limit \(descriptorLimit)" : ""))
    let stalls = dndRecoverySeconds.count + dndNeverRight
    if stalls > 0 {
      row(
        "DND right after a stall, a reload storm, a stop",
        String(
          format: "%d/%d within %.0f s (median %.2f s, slowest %@)",
          stalls - dndRecoveriesLate, stalls, dndRecoveryBound,
          LatencySummary.percentile(0.5, of: dndRecoverySeconds.sorted()),
          dndNeverRight > 0
            ? "never" : String(format: "%.2f s", dndRecoverySeconds.max() ?? 0)))
    }
    if faults[FaultKind.titleFlood.rawValue] != nil { row("titles flooded", titlesFlooded) }
    if faults[FaultKind.walDeleted.rawValue] != nil {
      row("WAL deletions followed by kill -9", walDeletionsThenKilled)
    }
    if faults[FaultKind.swayPeer.rawValue] != nil || faults[FaultKind.hyprlandPeer.rawValue] != nil
    {
      row("hostile peers that cut external plugins off", pluginsCutOff)
      row("  daemon log lines during one, at most", peerLogLinesMax)
    }
    if reloadStorms > 0 {
      row("reload storms (reloads and SIGHUPs)", "\(reloadStorms) (\(reloadsSent))")
    }
    if faults[FaultKind.pluginCrashesInInit.rawValue] != nil {
      row(
        "daemons a crashing plugin took down (crashed again at start)",
        "\(crashingPluginDeaths) (\(crashedAgainAtStart))")
    }
    if journalsDamaged > 0 { row("journals damaged, then kill -9", journalsDamaged) }
    if peerPhasesWritten > 0 {
      row(
        "phases from the other machine: written / in the history",
        "\(peerPhasesWritten) / \(audit.fromOtherMachines)")
      row("  its journal cut short", journalsTruncated)
      let sorted = syncCatchUpSeconds.sorted()
      row(
        "  caught up after a sync fault",
        String(
          format: "%d/%d (median %.1f s, slowest %.1f s)", sorted.count,
          sorted.count + syncNeverCaughtUp, LatencySummary.percentile(0.5, of: sorted),
          sorted.last ?? 0))
    }
    if burstCalls > 0 {
      row("calls pipelined in bursts (unanswered)", "\(burstCalls) (\(burstCallsUnanswered))")
    }
    if hangRounds > 0 {
      let inTime = hangExitSeconds.filter { ($0 ?? .infinity) <= hangExitBound }
      let slowest = hangExitSeconds.map { $0.map { String(format: "%.2f s", $0) } ?? "killed" }
      row("plugin hangs (separately)", hangRounds)
      row(
        "  SIGTERM exits within \(Int(hangExitBound)) s",
        "\(inTime.count)/\(hangRounds) (\(slowest.joined(separator: ", ")))")
      row("  DND put back", "\(hangDNDPutBack)/\(hangRounds)")
    }
    row("consistency checks", checks)
    row("  status differs from session.json", statusMismatches)
    row("  DND off during focus", dndOffDuringFocus)
    row("  DND on outside focus", dndOnOutsideFocus)
    row("  completed today matches history", todayCountRight ? "yes" : "NO")
    row("integrity check", integrityCheck)
    row("DND left on", dndLeftOn)
    row(
      "files left after stop",
      leftoverFiles.isEmpty ? "none" : leftoverFiles.joined(separator: ", "))
    row(
      "wall time",
      String(format: "%.0f s%@", wallSeconds, stoppedAtTimeLimit ? " (time limit)" : ""))
    row("seed", seed)
    row("result", passed ? "PASS" : "FAIL")
    let width = lines.map(\.0.count).max() ?? 0
    var text = lines.map { label, value in
      value.isEmpty
        ? label : label.padding(toLength: width + 2, withPad: " ", startingAt: 0) + value
    }.joined(separator: "\n")
    let details = problems + (audit.problems)
    if !details.isEmpty {
      text += "\n\nproblems:\n" + details.prefix(60).map { "  - " + $0 }.joined(separator: "\n")
    }
    return text
  }

  /// One JSON document, keys sorted.
  public var json: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
    guard let data = try? encoder.encode(self) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }
}
