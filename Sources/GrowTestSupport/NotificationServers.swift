import Foundation

/// Real notification servers (and dbusmock stand-ins) on a harness's private session bus.
///
/// dunst and xfce4-notifyd are the real programs and need an X display (`DISPLAY`, which
/// `make test` provides through Xvfb); the dbusmock ones stand in for GNOME Shell and KDE
/// Plasma, which cannot run headless here.
public enum NotificationServers {
  /// True when a display is there for dunst and xfce4-notifyd.
  public static var haveDisplay: Bool {
    !(ProcessInfo.processInfo.environment["DISPLAY"] ?? "").isEmpty
  }

  /// Starts dunst on the harness's bus and waits until it owns the name.
  public static func dunst(_ harness: DaemonHarness) throws -> BackgroundProcess {
    let dunst = try BackgroundProcess("dunst", [], environment: harness.environment)
    try waitForName("org.freedesktop.Notifications", harness, process: dunst)
    return dunst
  }

  /// Starts xfconfd and xfce4-notifyd (both need no activation this way).
  public static func xfce(_ harness: DaemonHarness) throws -> [BackgroundProcess] {
    let library = "/usr/lib/x86_64-linux-gnu/xfce4"
    let xfconf = try BackgroundProcess(
      "\(library)/xfconf/xfconfd", [], environment: harness.environment)
    try waitForName("org.xfce.Xfconf", harness, process: xfconf)
    return [try xfceNotifyd(harness), xfconf]
  }

  /// Starts xfce4-notifyd alone (xfconfd, which keeps its settings, already runs).
  public static func xfceNotifyd(_ harness: DaemonHarness) throws -> BackgroundProcess {
    let notifyd = try BackgroundProcess(
      "/usr/lib/x86_64-linux-gnu/xfce4/notifyd/xfce4-notifyd", [],
      environment: harness.environment)
    try waitForName("org.freedesktop.Notifications", harness, process: notifyd)
    return notifyd
  }

  /// A mako config whose `do-not-disturb` mode hides everything, as Grow's DND asks mako users
  /// to write it (`grow doctor`); notifications never expire by themselves, so a screenshot
  /// still shows them.
  public static let makoConfig = "default-timeout=0\n\n[mode=do-not-disturb]\ninvisible=1\n"

  /// Starts mako 1.7 in a Wayland session, with `config` as its config file, and waits until it
  /// owns org.freedesktop.Notifications on the session's bus.
  public static func mako(_ session: WaylandSession, config: String = makoConfig) throws
    -> BackgroundProcess
  {
    try session.writeUserConfig("mako/config", config)
    let mako = try session.start("mako")
    try session.waitForBusName("org.freedesktop.Notifications", process: mako)
    return mako
  }

  /// Starts SwayNotificationCenter 0.7 in a Wayland session (its stock config) and waits until
  /// it owns both its control name and org.freedesktop.Notifications.
  public static func swaync(_ session: WaylandSession) throws -> BackgroundProcess {
    let swaync = try session.start("swaync")
    try session.waitForBusName("org.erikreider.swaync.cc", process: swaync)
    try session.waitForBusName("org.freedesktop.Notifications", process: swaync)
    return swaync
  }

  /// A dbusmock notification server that says it is `name` (GetServerInformation), with
  /// `extraMethods` as `(name, in, out, python code)` for AddMethods.
  public static func mock(
    _ harness: DaemonHarness, name: String, vendor: String,
    extraMethods: [(String, String, String, String)] = []
  ) throws -> BackgroundProcess {
    let mock = try BackgroundProcess(
      "/usr/bin/python3",
      [
        "-m", "dbusmock", "--session", "org.freedesktop.Notifications",
        "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
      ],
      environment: harness.environment)
    try waitForName("org.freedesktop.Notifications", harness, process: mock)
    let methods: [(String, String, String, String)] =
      [
        ("GetServerInformation", "", "ssss", "ret = ('\(name)', '\(vendor)', '1.0', '1.2')"),
        ("GetCapabilities", "", "as", "ret = ['body', 'actions']"),
        ("Notify", "susssasa{sv}i", "u", "ret = 7"),
        ("CloseNotification", "u", "", ""),
      ] + extraMethods
    for (method, inSignature, outSignature, code) in methods {
      let result = try harness.run(
        "gdbus",
        [
          "call", "--session", "-d", "org.freedesktop.Notifications", "-o",
          "/org/freedesktop/Notifications", "-m", "org.freedesktop.DBus.Mock.AddMethod",
          "org.freedesktop.Notifications", method, inSignature, outSignature, code,
        ])
      guard result.status == 0 else { throw HarnessError("AddMethod \(method): \(result)") }
    }
    return mock
  }

  /// The methods a dbusmock server was called with, one line per call (`Inhibit …`).
  public static func mockCalls(_ harness: DaemonHarness) throws -> String {
    try harness.run(
      "gdbus",
      [
        "call", "--session", "-d", "org.freedesktop.Notifications", "-o",
        "/org/freedesktop/Notifications", "-m", "org.freedesktop.DBus.Mock.GetCalls",
      ]
    ).stdout
  }

  public static func waitForName(
    _ name: String, _ harness: DaemonHarness, process: BackgroundProcess, timeout: TimeInterval = 30
  ) throws {
    try waitForName(name, environment: harness.environment, process: process, timeout: timeout)
  }

  /// Waits until `name` has an owner on the bus that `environment` names.
  public static func waitForName(
    _ name: String, environment: [String: String], process: BackgroundProcess,
    timeout: TimeInterval = 30
  ) throws {
    let owned = try process.waitUntil(timeout: timeout, interval: 0.1) {
      try Command.run(
        "dbus-send",
        [
          "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
          "org.freedesktop.DBus.NameHasOwner", "string:\(name)",
        ], environment: environment
      ).stdout.contains("boolean true")
    }
    guard owned else {
      throw HarnessError("\(process.commandLine) never took \(name); stderr:\n\(process.stderr)")
    }
  }
}

extension DaemonHarness {
  /// Waits until `condition` holds, checking every 50 ms; false after `timeout`.
  public func eventually(
    timeout: TimeInterval = 30, _ condition: () throws -> Bool
  ) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      if try condition() { return true }
      if Date() >= deadline { return false }
      Thread.sleep(forTimeInterval: 0.05)
    }
  }

  /// `dunstctl is-paused`, as dunst itself says it.
  public func dunstIsPaused() throws -> Bool? {
    switch try run("dunstctl", ["is-paused"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    {
    case "true": true
    case "false": false
    default: nil
    }
  }

  /// `dunstctl count displayed|waiting|history`: how many notifications dunst has there.
  public func dunstCount(_ which: String) throws -> Int {
    let text = try run("dunstctl", ["count", which]).stdout
    guard let count = Int(text.prefix { $0.isNumber }) else {
      throw HarnessError("unreadable dunstctl count \(which): \(text)")
    }
    return count
  }

  /// Closes everything dunst shows (so it moves to the history), then returns the history's
  /// notifications as `[field: text]`, newest first.
  public func dunstHistory() throws -> [[String: String]] {
    try run("dunstctl", ["close-all"])
    let text = try run("dunstctl", ["history"]).stdout
    guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
      let data = object["data"] as? [[[String: Any]]], let list = data.first
    else { throw HarnessError("unreadable dunstctl history: \(text)") }
    return list.map { entry in
      entry.compactMapValues { field in
        ((field as? [String: Any])?["data"]).map { "\($0)" }
      }
    }
  }

  /// `grow dnd status --json`, decoded.
  public func dndStatus() throws -> [String: Any] {
    let result = try grow("dnd", "status", "--json")
    guard result.status == 0,
      let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        as? [String: Any]
    else { throw HarnessError("grow dnd status --json failed: \(result)") }
    return object
  }

  /// GetStatus called with gdbus, which waits up to a minute: unlike `grow status` (5 s),
  /// it says how long a stuck daemon takes to answer. The state and the deadline only.
  public func statusOverBus() throws -> (state: String, endsAt: Date?) {
    let result = try run(
      "gdbus",
      [
        "call", "--session", "--timeout", "60", "--dest", "org.grow.Grow1", "--object-path",
        "/org/grow/Grow1", "--method", "org.grow.Grow1.Timer.GetStatus",
      ], timeout: 70)
    // `({'State': <'focus'>, 'EndsAt': <int64 1764590000000000>, …},)`
    guard result.status == 0,
      let state = result.stdout.firstMatch(of: /'State': <'([a-z-]+)'>/)?.output.1,
      let endsAt = result.stdout.firstMatch(of: /'EndsAt': <int64 (\d+)>/)?.output.1,
      let micros = Int64(endsAt)
    else { throw HarnessError("GetStatus over gdbus failed: \(result)") }
    return (
      String(state), micros == 0 ? nil : Date(timeIntervalSince1970: Double(micros) / 1e6)
    )
  }

  /// The daemon's log so far.
  public var daemonLog: String { daemon?.stderr ?? "" }
}
