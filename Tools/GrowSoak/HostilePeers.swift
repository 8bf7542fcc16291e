import Foundation
import GrowTestSupport

/// Hostile compositors (the trust faults): the daemon is restarted (kill -9) with a sway or
/// Hyprland session's environment pointing at a stand-in the soak serves (GrowTestSupport's
/// `SwayStandIn`, `HyprlandStandIn`), so the wayland plugin reads it (and the x11 plugin
/// stands down); the stand-in attacks for one to four seconds; then the daemon goes back to
/// the X desktop. The probe times `GetStatus` and counts descriptors meanwhile; the external
/// plugins must keep their processes (none cut off for a full buffer).
extension Soak {
  /// Runs `attack` against the daemon restarted with `environment`, once `connected` says
  /// the wayland plugin reached the stand-in.
  func withCompositor(
    _ environment: [String: String], connected: () -> Bool, attack: () throws -> Void
  ) throws {
    try keepPhasesComing()
    try restartDaemon(environment: desktopEnvironment.merging(environment) { $1 })
    do {
      try attackConnected(connected, attack)
    } catch {
      try? restartDaemon(environment: desktopEnvironment)
      throw error
    }
    try restartDaemon(environment: desktopEnvironment)
  }

  private func attackConnected(_ connected: () -> Bool, _ attack: () throws -> Void) throws {
    guard harness.daemon?.waitUntil(timeout: 15, connected) == true else {
      let log = harness.daemonLog.split(separator: "\n").suffix(5)
      return problem(
        "the wayland plugin never connected to the stand-in: \(log.joined(separator: " | "))")
    }
    let pluginsBefore = Self.pluginIDs.map(pluginPID)
    let logLines = Self.lineCount(harness.daemonLog)
    try attack()
    try dwell(0.3, commands: false)
    try checkConsistency("the hostile peer")
    let logged = Self.lineCount(harness.daemonLog) - logLines
    report.peerLogLinesMax = max(report.peerLogLinesMax, logged)
    say("  the daemon logged \(logged) lines")
    let cutOff = zip(Self.pluginIDs, pluginsBefore).filter { id, before in
      before != nil && pluginPID(id) != before
    }.map(\.0)
    if !cutOff.isEmpty {
      report.pluginsCutOff += 1
      problem("the hostile peer cut external plugins off: \(cutOff.joined(separator: ", "))")
    }
  }

  static func lineCount(_ text: String) -> Int {
    text.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
  }

  /// Kills the daemon (-9) and starts it with `environment`, checked as after any kill -9
  /// (the restarted daemon is where the saved session and real time say). Not SIGTERM: that
  /// ends the session, which the audit would count as a phase abandoned.
  func restartDaemon(environment: [String: String]) throws {
    killDaemon()
    harness.environment = environment
    try restart()
  }

  // MARK: sway

  /// sway's IPC (`$SWAYSOCK`) sends a 4 MiB − 100 B event or GET_TREE reply (a JSON array
  /// of two million numbers), a flood of small `window::focus` events, or focus events with
  /// 300 KiB titles.
  func attackFromSway() throws {
    guard let sway = swayStandIn else { return }
    let seconds = random.seconds(1...4)
    let attack = Int.random(in: 0..<3, using: &random)
    try withCompositor(
      sway.sessionEnvironment, connected: { sway.clientCount > 0 },
      attack: {
        switch attack {
        case 0:
          let count = Int.random(in: 1...3, using: &random)
          say("  \(count) message(s) of 4 MiB - 100 B")
          for _ in 0..<count {
            if random.chance(0.5) {
              sway.emit(type: SwayStandIn.windowEvent, bytes: Self.hugeFocusEvent())
            } else {
              // A workspace event makes the plugin ask for the tree, which comes back huge.
              sway.treeReply(String(decoding: Self.hugeFocusEvent(), as: UTF8.self))
              sway.emit(type: SwayStandIn.workspaceEvent, #"{"change":"focus"}"#)
            }
            try dwell(seconds / Double(count), commands: false)
          }
          sway.treeReply(#"{"id":1,"type":"root","focused":false,"nodes":[]}"#)
        case 1:
          var events: [UInt8] = []
          for id in 1...500 {
            events += SwayStandIn.frame(type: SwayStandIn.windowEvent, Self.focusEvent(id: id))
          }
          var sent = 0
          let end = Date().addingTimeInterval(seconds)
          while Date() < end, sway.emit(frames: events) > 0 { sent += 500 }
          say("  \(sent) focus events")
        default:
          let title = String(repeating: "t", count: 300 * 1024)
          var sent = 0
          let end = Date().addingTimeInterval(seconds)
          while Date() < end {
            sway.emit(
              type: SwayStandIn.windowEvent, bytes: Self.focusEvent(id: 1 + sent % 2, title: title))
            sent += 1
            try dwell(0.25, commands: false)
          }
          say("  \(sent) focus events with 300 KiB titles")
        }
      })
  }

  static func focusEvent(id: Int, title: String = "soak") -> [UInt8] {
    Array(
      #"{"change":"focus","container":{"id":\#(id),"app_id":"soak","pid":1,"focused":true,"name":"\#(title)"}}"#
        .utf8)
  }

  /// A `window::focus` event of exactly 4 MiB − 100 B, made big by an array of zeros.
  static func hugeFocusEvent() -> [UInt8] {
    let head = Array(
      #"{"change":"focus","container":{"id":9,"app_id":"soak","focused":true,"marks":[0"#.utf8)
    let tail = Array("]}}".utf8)
    let size = 4 * 1024 * 1024 - 100
    let zeros = (size - head.count - tail.count) / 2
    var bytes = head
    bytes.reserveCapacity(size)
    for _ in 0..<zeros { bytes += [UInt8(ascii: ","), UInt8(ascii: "0")] }
    // An odd remainder: one more space, which JSON allows.
    if bytes.count + tail.count < size { bytes.append(UInt8(ascii: " ")) }
    return bytes + tail
  }

  // MARK: Hyprland

  /// Hyprland's event socket floods `activewindowv2` lines for windows it never heard of
  /// (each makes the plugin ask the request socket for a pid) or `windowtitlev2` lines, or
  /// drops the connection again and again; the request socket answers at once, slowly (half
  /// a second each), or never.
  func attackFromHyprland() throws {
    guard let hyprland = hyprlandStandIn else { return }
    let seconds = random.seconds(1...4)
    let attack = Int.random(in: 0..<3, using: &random)
    let requests = Int.random(in: 0..<3, using: &random)
    try withCompositor(
      hyprland.environment, connected: { hyprland.eventClientCount > 0 },
      attack: {
        hyprland.answerRequests(requests != 2, after: requests == 1 ? 0.5 : 0)
        defer { hyprland.answerRequests(true) }
        let answering = ["at once", "slowly", "never"][requests]
        let end = Date().addingTimeInterval(seconds)
        var lines = 0
        switch attack {
        case 0:
          while Date() < end {
            let batch = (0..<1000).map { "activewindowv2>>\(String(lines + $0, radix: 16))\n" }
            hyprland.emit(batch.joined())
            lines += batch.count
          }
          say("  \(lines) activewindowv2 lines for unknown windows; requests answered \(answering)")
        case 1:
          hyprland.emit("activewindow>>soak,soak\nactivewindowv2>>50a\n")
          while Date() < end {
            let batch = (0..<1000).map { "windowtitlev2>>50a,title \(lines + $0)\n" }
            hyprland.emit(batch.joined())
            lines += batch.count
          }
          say("  \(lines) windowtitlev2 lines; requests answered \(answering)")
        default:
          var drops = 0
          while Date() < end {
            hyprland.emit("activewindow>>soak,soak\nactivewindowv2>>\(drops)\n")
            hyprland.disconnectEventClients()
            drops += 1
            Thread.sleep(forTimeInterval: 0.05)
          }
          say("  \(drops) connections dropped; requests answered \(answering)")
        }
      })
  }
}
