import Foundation
import GrowTestSupport

/// What the break screen costs the daemon: a private Xvfb with two RandR monitors and
/// openbox, a private bus, a real `grow daemon` with the breakscreen plugin. The daemon's
/// context switches (all threads) and CPU time are read from /proc over three windows: focus
/// running with the plugin loaded (no screen), the screen up on both monitors, and after the
/// break was skipped. The screen redraws once a second, when its clock changes.
struct BreakScreenBenchmark {
  struct Window: Encodable {
    let seconds: Double
    let contextSwitches: Int
    let cpuMilliseconds: Double
  }
  struct Sample: Encodable {
    let monitors: Int
    let focusNoScreen: Window
    let screenShown: Window
    let afterTheBreak: Window
  }

  let seconds: TimeInterval

  func run() throws -> Sample {
    let display = try PrivateDisplay(screenSize: "3840x1080")
    try display.setMonitors(["1920x1080+0+0", "1920x1080+1920+0"])
    let harness = try DaemonHarness(startDaemon: false, environment: display.environment)
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
    let covers = { () -> Int in
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
    guard harness.daemon?.waitUntil(timeout: 30, { covers() == 0 }) == true else {
      throw HarnessError("the break screen stayed")
    }
    Thread.sleep(forTimeInterval: 1)
    let after = measure(pid)
    return Sample(monitors: 2, focusNoScreen: focus, screenShown: shown, afterTheBreak: after)
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
