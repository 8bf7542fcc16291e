import Foundation

/// A private X server (Xvfb) with a real window manager, for one test: tests run in
/// parallel, so each needs its own display. Torn down on deinit.
public final class PrivateDisplay: @unchecked Sendable {
  public enum WindowManager: String, Sendable {
    /// Honours minimise (iconify) and close requests (EWMH).
    case openbox
    /// Ignores iconify requests; minimises to its scratchpad when told over its IPC.
    case i3
    /// dwm 6.4: publishes `_NET_ACTIVE_WINDOW` but has no minimised state, and ignores
    /// iconify requests outright (no IPC either). It does not activate a window on request
    /// (`activate` waits in vain): the window opened last has the focus.
    case dwm
  }

  /// `:N`, as `DISPLAY` wants it.
  public let display: String
  /// `DISPLAY` for the daemon and the tools.
  public var environment: [String: String] { ["DISPLAY": display] }
  /// The X server's process id, to stop it (`kill -STOP`) as a hung server.
  public var serverPID: Int32 { server.pid }
  /// The window manager's process id, to stop it (`kill -STOP`) as a hung one.
  public var windowManagerPID: Int32 { windowManager?.pid ?? 0 }

  private var server: BackgroundProcess
  private var windowManager: BackgroundProcess?
  private let windowManagerKind: WindowManager
  private var windows: [BackgroundProcess] = []
  private let directory: URL
  private let timeout: TimeInterval
  private let i3Config: String
  private let windowManagerEnvironment: [String: String]
  private let screenSize: String

  /// - Parameter restartable: take a display number of its own from a high range, so that
  ///   `restartServer()` can start a server on the same display again after `killServer()`
  ///   without another test's Xvfb (which takes the lowest free one) getting there first.
  /// - Parameter i3Config: more lines for i3's config, such as a `bar { … }` block.
  /// - Parameter windowManagerEnvironment: more environment for the window manager and what
  ///   it starts (i3bar and its status command).
  /// - Parameter screenSize: the screen's `WIDTHxHEIGHT` (`setMonitors` splits it).
  public init(
    windowManager: WindowManager = .openbox, restartable: Bool = false,
    timeout: TimeInterval = 10, i3Config: String = "",
    windowManagerEnvironment: [String: String] = [:], screenSize: String = "1024x768"
  ) throws {
    self.i3Config = i3Config
    self.screenSize = screenSize
    self.windowManagerEnvironment = windowManagerEnvironment
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-x-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    windowManagerKind = windowManager
    self.timeout = timeout
    var started: (BackgroundProcess, Int)?
    if restartable {
      for _ in 0..<5 where started == nil {
        started = try? Self.startServer(
          number: Int.random(in: 1000...30000), size: screenSize, timeout: timeout)
      }
    } else {
      started = try Self.startServer(number: nil, size: screenSize, timeout: timeout)
    }
    guard let (server, number) = started else {
      throw HarnessError("Xvfb did not start on any of five random displays")
    }
    self.server = server
    display = ":\(number)"
    try startWindowManager(windowManager, timeout: timeout)
  }

  /// Starts Xvfb on display `number`, or on the lowest free one for nil, and waits until it
  /// accepts connections.
  private static func startServer(number: Int?, size: String, timeout: TimeInterval) throws
    -> (BackgroundProcess, Int)
  {
    // -displayfd 1: Xvfb writes the display's number to stdout once it accepts connections
    // (picking a free one when none is given). -s 0: its own screensaver would blank and count
    // as a state.
    let server = try BackgroundProcess(
      "Xvfb",
      (number.map { [":\($0)"] } ?? [])
        + ["-displayfd", "1", "-nolisten", "tcp", "-s", "0", "-screen", "0", size + "x24"])
    guard server.waitUntil(timeout: timeout, { server.stdout.contains("\n") }),
      let started = Int(server.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    else {
      server.kill()
      throw HarnessError("Xvfb did not start: \(server.stderr)")
    }
    return (server, started)
  }

  deinit {
    for window in windows { window.kill() }
    windowManager?.kill()
    server.kill()
    try? FileManager.default.removeItem(at: directory)
  }

  /// Starts the window manager; up to twice more if it could not connect (seen with i3, and
  /// with dwm, which gives up at once, while many servers start at once on a loaded machine).
  private func startWindowManager(_ kind: WindowManager, timeout: TimeInterval) throws {
    for attempt in 1...3 {
      do {
        return try startWindowManagerOnce(kind, timeout: timeout)
      } catch  where attempt < 3 {
        windowManager?.kill()
        Thread.sleep(forTimeInterval: 0.5 * Double(attempt))
      }
    }
  }

  private func startWindowManagerOnce(_ kind: WindowManager, timeout: TimeInterval) throws {
    // XDG_RUNTIME_DIR of its own: i3 puts its IPC socket there (`i3/ipc-socket.PID`) and a
    // killed i3 leaves it behind, so it must be a directory deinit removes, never the user's.
    let runtime = directory.appendingPathComponent("runtime")
    try FileManager.default.createDirectory(
      at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let home = [
      "HOME": directory.path, "XDG_CONFIG_HOME": directory.path + "/config",
      "XDG_RUNTIME_DIR": runtime.path,
    ]
    let environment = windowManagerEnvironment.merging(self.environment) { $1 }
    switch kind {
    case .openbox:
      windowManager = try BackgroundProcess(
        "openbox", ["--sm-disable"], environment: environment.merging(home) { $1 })
    case .i3:
      let config = directory.appendingPathComponent("i3.config")
      // The smallest config i3 accepts without starting its config wizard or a bar (unless
      // the test asks for one). Without the v4 line, a `bar` block makes i3 take the file
      // for a version 3 config.
      try "# i3 config file (v4)\nfont pango:monospace 8\nfocus_follows_mouse no\n\(i3Config)"
        .write(to: config, atomically: true, encoding: .utf8)
      windowManager = try BackgroundProcess(
        "i3", ["-c", config.path], environment: environment.merging(home) { $1 })
    case .dwm:
      windowManager = try BackgroundProcess(
        "dwm", [], environment: environment.merging(home) { $1 })
    }
    let ready = server.waitUntil(timeout: timeout, interval: 0.05) {
      (try? xprop("-root", "_NET_SUPPORTING_WM_CHECK"))?.contains("window id") == true
    }
    guard ready else {
      throw HarnessError(
        "\(kind.rawValue) did not come up on \(display): \(windowManager?.stderr ?? "")")
    }
  }

  /// Opens an xterm with this WM_CLASS class and title (no shell, so the title stays) and
  /// returns its window id once it is mapped.
  @discardableResult
  public func openWindow(class windowClass: String, title: String) throws -> String {
    let window = try BackgroundProcess(
      "xterm", ["-class", windowClass, "-T", title, "-e", "sleep", "600"],
      environment: environment)
    windows.append(window)
    let found = try xdotool("search", "--sync", "--limit", "1", "--class", windowClass)
    guard let id = found.split(separator: "\n").first.map(String.init) else {
      throw HarnessError("no window of class \(windowClass): \(window.stderr)")
    }
    return id
  }

  /// i3's IPC socket (what `$I3SOCK` names in an i3 session); nil under openbox or before
  /// i3 made it.
  public var i3Socket: String? {
    let directory = self.directory.appendingPathComponent("runtime/i3").path
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.first { $0.hasPrefix("ipc-socket.") }.map { directory + "/" + $0 }
  }

  /// Runs i3-msg against this display's i3; returns its stdout.
  @discardableResult
  public func i3msg(_ arguments: String...) throws -> String {
    guard let socket = i3Socket else { throw HarnessError("no i3 IPC socket on \(display)") }
    return try run("i3-msg", ["-s", socket] + arguments)
  }

  /// Whether `window` still exists (xprop can read it).
  public func windowExists(_ window: String) -> Bool {
    (try? xprop("-id", window, "WM_CLASS")) != nil
  }

  /// i3's tree (`i3-msg -t get_tree`), decoded.
  public func i3Tree() throws -> [String: Any] {
    let text = try i3msg("-t", "get_tree")
    guard let tree = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    else { throw HarnessError("unreadable i3 tree: \(text)") }
    return tree
  }

  /// Whether X window `window` (as xdotool prints it, in decimal) sits in i3's scratchpad: i3
  /// keeps scratchpad windows under its hidden `__i3_scratch` workspace.
  public func isInI3Scratchpad(_ window: String) throws -> Bool {
    func find(_ node: [String: Any], _ matches: ([String: Any]) -> Bool) -> [String: Any]? {
      if matches(node) { return node }
      let children =
        (node["nodes"] as? [[String: Any]] ?? [])
        + (node["floating_nodes"] as? [[String: Any]] ?? [])
      for child in children { if let found = find(child, matches) { return found } }
      return nil
    }
    guard let scratch = find(try i3Tree(), { $0["name"] as? String == "__i3_scratch" }) else {
      return false
    }
    return find(scratch) { ($0["window"] as? Int).map(String.init) == window } != nil
  }

  /// Gives `window` the focus and waits until the window manager says it has it.
  public func activate(_ window: String) throws {
    try xdotool("windowactivate", "--sync", window)
  }

  /// Runs xdotool on this display; returns its stdout.
  @discardableResult
  public func xdotool(_ arguments: String...) throws -> String {
    try run("xdotool", arguments)
  }

  /// Runs xprop on this display; returns its stdout.
  public func xprop(_ arguments: String...) throws -> String {
    try run("xprop", arguments)
  }

  /// The screen's pixels in the rectangle, as ImageMagick's `import` grabs them; also saved as
  /// a PNG at `pngPath` when given, for a person to look at.
  public func screenshot(
    x: Int = 0, y: Int = 0, width: Int, height: Int, savingPNGTo pngPath: String? = nil
  ) throws -> Screenshot {
    let ppm = directory.appendingPathComponent("screenshot-\(UUID().uuidString).ppm").path
    defer { try? FileManager.default.removeItem(atPath: ppm) }
    _ = try run(
      "import", ["-window", "root", "-crop", "\(width)x\(height)+\(x)+\(y)", "-depth", "8", ppm])
    if let pngPath {
      _ = try Command.run("/usr/bin/convert", [ppm, pngPath])
    }
    return try Screenshot(ppm: Data(contentsOf: URL(fileURLWithPath: ppm)))
  }

  /// Makes the screen these RandR monitors (`xrandr --setmonitor`), left to right as given,
  /// each `WIDTHxHEIGHT+X+Y`: the first takes the server's one output, the others none, so
  /// the output's own monitor goes and exactly these remain, as on a desk with two screens.
  public func setMonitors(_ rectangles: [String]) throws {
    for (index, rectangle) in rectangles.enumerated() {
      // WIDTH/MMxHEIGHT/MM+X+Y: the millimetres only matter for DPI.
      let parts = rectangle.split(whereSeparator: { $0 == "x" || $0 == "+" }).map(String.init)
      guard parts.count == 4 else { throw HarnessError("not WIDTHxHEIGHT+X+Y: \(rectangle)") }
      let geometry = "\(parts[0])/300x\(parts[1])/200+\(parts[2])+\(parts[3])"
      _ = try run(
        "xrandr", ["--setmonitor", "grow-\(index)", geometry, index == 0 ? "screen" : "none"])
    }
  }

  /// Runs xrandr on this display; returns its stdout.
  @discardableResult
  public func xrandr(_ arguments: String...) throws -> String {
    try run("xrandr", arguments)
  }

  /// Kills the X server, as when a session crashes.
  public func killServer() {
    windowManager?.kill()
    server.kill()
  }

  /// Stops the X server (SIGSTOP), as a hung server: its clients' requests go unanswered
  /// until `continueServer()`.
  public func stopServer() {
    Foundation.kill(server.pid, SIGSTOP)
  }

  public func continueServer() {
    Foundation.kill(server.pid, SIGCONT)
  }

  /// Starts an X server on the same display after `killServer()` (made `restartable`), with
  /// the same kind of window manager; the windows are gone.
  public func restartServer() throws {
    for window in windows { window.kill() }
    windows.removeAll()
    guard let number = Int(display.dropFirst()) else { throw HarnessError("display \(display)") }
    (server, _) = try Self.startServer(number: number, size: screenSize, timeout: timeout)
    try startWindowManager(windowManagerKind, timeout: timeout)
  }

  private func run(_ tool: String, _ arguments: [String]) throws -> String {
    let result = try Command.run(tool, arguments, environment: environment, timeout: 15)
    guard result.status == 0 else {
      throw HarnessError("\(tool) \(arguments.joined(separator: " ")): \(result.stderr)")
    }
    return result.stdout
  }
}

/// Pixels grabbed from a display (binary PPM, as ImageMagick writes it).
public struct Screenshot: Sendable, Equatable {
  public let width: Int
  public let height: Int
  /// Red, green, blue, a byte each, row by row.
  private let pixels: [UInt8]

  init(ppm: Data) throws {
    let bytes = [UInt8](ppm)
    // "P6", width, height, maximum value, then one whitespace byte and the pixels.
    var fields: [String] = []
    var index = 0
    while fields.count < 4, index < bytes.count {
      while index < bytes.count, bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index]) {
        index += 1
      }
      let start = index
      while index < bytes.count, bytes[index] > 0x20 { index += 1 }
      fields.append(String(decoding: bytes[start..<index], as: UTF8.self))
    }
    guard fields.count == 4, fields[0] == "P6", let width = Int(fields[1]),
      let height = Int(fields[2]), fields[3] == "255", bytes.count >= index + 1 + width * height * 3
    else { throw HarnessError("not a binary PPM with 8-bit channels: \(fields)") }
    self.width = width
    self.height = height
    pixels = Array(bytes[(index + 1)...].prefix(width * height * 3))
  }

  /// How many pixels are `color` (`#rrggbb`), each channel within `tolerance`: the fully
  /// covered pixels of text drawn in that colour, between its anti-aliased edges.
  public func count(of color: String, tolerance: Int = 12) -> Int {
    let wanted = Self.channels(color)
    return stride(from: 0, to: pixels.count, by: 3).count { matches($0, wanted, tolerance) }
  }

  /// The smallest rectangle holding every pixel of `color` in the columns `columns` (all by
  /// default), as x, y, width, height; nil when there is none.
  public func bounds(of color: String, columns: Range<Int>? = nil, tolerance: Int = 12)
    -> (x: Int, y: Int, width: Int, height: Int)?
  {
    let wanted = Self.channels(color)
    var box: (minX: Int, minY: Int, maxX: Int, maxY: Int)?
    for y in 0..<height {
      for x in columns ?? 0..<width where matches((y * width + x) * 3, wanted, tolerance) {
        box = (
          min(box?.minX ?? x, x), min(box?.minY ?? y, y), max(box?.maxX ?? x, x),
          max(box?.maxY ?? y, y)
        )
      }
    }
    return box.map { ($0.minX, $0.minY, $0.maxX - $0.minX + 1, $0.maxY - $0.minY + 1) }
  }

  /// `#rrggbb` as red, green, blue.
  private static func channels(_ color: String) -> [Int] {
    let hex = Int(color.dropFirst(), radix: 16) ?? 0
    return [(hex >> 16) & 0xFF, (hex >> 8) & 0xFF, hex & 0xFF]
  }

  private func matches(_ offset: Int, _ wanted: [Int], _ tolerance: Int) -> Bool {
    (0..<3).allSatisfy { abs(Int(pixels[offset + $0]) - wanted[$0]) <= tolerance }
  }
}
