import Foundation
import GrowTestSupport

/// What the break screen costs the daemon: a private Xvfb with two RandR monitors and
/// openbox, a private bus, a real `grow daemon` with the breakscreen plugin. The daemon's
/// context switches (all threads) and CPU time are read from /proc over three windows: focus
/// running with the plugin loaded (no screen), the screen up on both monitors, and after the
/// break was skipped. The screen redraws once a second, when its clock changes. With
/// `onSway`, the same on headless sway with two 1920x1080 outputs (the layer-shell screen).
struct BreakScreenBenchmark {
  struct Window: Encodable {
    let seconds: Double
    let contextSwitches: Int
    let cpuMilliseconds: Double
  }
  struct Sample: Encodable {
    let display: String
    let monitors: Int
    let focusNoScreen: Window
    let screenShown: Window
    let afterTheBreak: Window
  }

  let seconds: TimeInterval
  var onSway = false

  func run() throws -> Sample {
    var display: PrivateDisplay?
    var session: WaylandSession?
    let environment: [String: String]
    if onSway {
      let sway = try WaylandSession(width: 1920, height: 1080)
      try sway.swaymsg("create_output")
      try sway.swaymsg("output HEADLESS-1 position 0 0")
      try sway.swaymsg("output HEADLESS-2 resolution 1920x1080 position 1920 0")
      session = sway
      environment = sway.environment
    } else {
      let xvfb = try PrivateDisplay(screenSize: "3840x1080")
      try xvfb.setMonitors(["1920x1080+0+0", "1920x1080+1920+0"])
      display = xvfb
      environment = xvfb.environment
    }
    defer { session?.stop() }
    let harness = try DaemonHarness(startDaemon: false, environment: environment)
    defer { harness.daemon?.kill() }
    try harness.writeConfig(
      """
      [timer]
      focus = 1h
      short-break = 1h
      break-screen = all

      [plugins]
      enable = breakscreen
      """)
    try harness.start()
    guard let pid = harness.daemon?.pid else { throw HarnessError("no daemon") }
    let running = try harness.daemon?.waitUntil(timeout: 30) {
      try harness.plugins()["breakscreen"]?["state"] == "running"
    }
    guard running == true else { throw HarnessError("breakscreen not running") }
    guard try harness.grow("start").status == 0 else { throw HarnessError("grow start failed") }
    Thread.sleep(forTimeInterval: 1)
    let focus = measure(pid)

    // Skipping the focus starts the break, and with it the screen.
    guard try harness.grow("skip").status == 0 else { throw HarnessError("grow skip failed") }
    // X11: the windows of class Grow; sway: the screen's log line (layer surfaces are no
    // windows to search for).
    let covers = { () -> Int in
      guard let display else {
        return harness.daemon?.stderr.contains("break screen shown on 2 monitor(s)") == true
          ? 2 : 0
      }
      let found = try? Command.run(
        "xdotool", ["search", "--class", "^Grow$"], environment: display.environment)
      return (found?.stdout ?? "").split(separator: "\n").count
    }
    guard harness.daemon?.waitUntil(timeout: 30, { covers() == 2 }) == true else {
      throw HarnessError("no break screen: \(harness.daemon?.stderr ?? "")")
    }
    Thread.sleep(forTimeInterval: 1)
    let shown = measure(pid)

    guard try harness.grow("skip").status == 0 else { throw HarnessError("grow skip failed") }
    let gone = {
      display == nil
        ? (try? harness.status())?["state"] as? String != "short-break" : covers() == 0
    }
    guard harness.daemon?.waitUntil(timeout: 30, gone) == true else {
      throw HarnessError("the break screen stayed")
    }
    Thread.sleep(forTimeInterval: 1)
    let after = measure(pid)
    return Sample(
      display: onSway ? "headless sway 1.7, 2 outputs" : "Xvfb, 2 monitors", monitors: 2,
      focusNoScreen: focus, screenShown: shown, afterTheBreak: after)
  }

  private func measure(_ pid: Int32) -> Window {
    let cpuBefore = Self.cpuTicks(pid)
    let start = Date()
    let (switches, _) = ContextSwitches.during(seconds: seconds, of: pid)
    let elapsed = Date().timeIntervalSince(start)
    let ticks = Double(Self.cpuTicks(pid) - cpuBefore)
    return Window(
      seconds: elapsed, contextSwitches: switches,
      cpuMilliseconds: ticks * 1000 / Double(sysconf(Int32(_SC_CLK_TCK))))
  }

  /// utime + stime of the whole process, in clock ticks (/proc/PID/stat fields 14 and 15).
  static func cpuTicks(_ pid: Int32) -> Int {
    guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/stat"),
      let data = try? handle.readToEnd()
    else { return 0 }
    try? handle.close()
    let text = String(decoding: data, as: UTF8.self)
    // The command name may hold spaces; the fields after its closing parenthesis do not.
    guard let close = text.lastIndex(of: ")") else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13 else { return 0 }
    return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
  }
}
