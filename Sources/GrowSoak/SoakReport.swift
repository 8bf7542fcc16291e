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

  /// What a run draws from unless told otherwise (`--kinds` picks others): every kind.
  public static let standard = allCases

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
    }
  }

  public var killsDaemon: Bool {
    self == .daemonKill || self == .daemonKillAtPhaseEnd || self == .daemonKillMidCommand
  }

  public var crashesPlugin: Bool { self == .pluginKill || self == .pluginExit }
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

  /// Every invariant of issue 9's "Nothing lost" promise holds.
  public var passed: Bool {
    (audit?.isClean ?? false) && integrityCheck == "ok" && dndLeftOn == 0
      && daemonRestartsRight == daemonRestarts && pluginRestarts == pluginCrashes
      && statusMismatches == 0 && dndOffDuringFocus == 0 && dndOnOutsideFocus == 0
      && todayCountRight && rowsMatchCommands && leftoverFiles.isEmpty && problems.isEmpty
  }

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
