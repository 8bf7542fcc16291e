import Foundation
import FoundationXML
import GrowTestSupport
import Testing

/// The org.grow.Grow1 D-Bus API, driven by the standard tools other apps and scripts use
/// (busctl, gdbus, dbus-monitor) against a real `grow daemon` on a private bus.
@Suite struct TimerServiceTests {
  static let destination = ["--dest", "org.grow.Grow1", "--object-path", "/org/grow/Grow1"]

  /// `gdbus call` of a Timer method; gdbus prints error names, which busctl does not.
  func gdbus(_ harness: DaemonHarness, _ method: String, _ arguments: String...) throws
    -> (status: Int32, stdout: String, stderr: String)
  {
    try harness.run(
      "gdbus",
      ["call", "--session"] + Self.destination + ["--method", "org.grow.Grow1.Timer.\(method)"]
        + arguments)
  }

  @Test func introspectionListsTheWholeInterface() throws {
    let harness = try DaemonHarness()
    let busctl = try harness.run(
      "busctl", ["--user", "introspect", "org.grow.Grow1", "/org/grow/Grow1"])
    #expect(busctl.status == 0)
    let members = [
      ".Start", ".StartWith", ".Pause", ".Resume", ".Toggle", ".Skip", ".Stop", ".Extend",
      ".GetStatus", ".ListCards", ".State", ".Paused", ".Card", ".Duration", ".Remaining",
      ".Elapsed", ".StartedAt", ".EndsAt", ".Cycle", ".CompletedToday", ".PhaseStarted",
      ".PhaseEnded", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable",
      "org.freedesktop.DBus.Peer",
    ]
    for member in members {
      #expect(busctl.stdout.contains("\n\(member) "), "busctl introspect shows \(member)")
    }
    #expect(busctl.stdout.contains(".EndsAt                             property  x"))

    let xml = try harness.run(
      "gdbus", ["introspect", "--session", "--xml"] + Self.destination)
    #expect(xml.status == 0)
    let document = try XMLDocument(xmlString: xml.stdout)
    let interfaces = try document.nodes(forXPath: "/node/interface/@name").compactMap(\.stringValue)
    #expect(interfaces.contains("org.grow.Grow1.Timer"))
    let access = try document.nodes(
      forXPath: "/node/interface[@name='org.grow.Grow1.Timer']/property[@name='State']/@access")
    #expect(access.first?.stringValue == "read")
  }

  @Test func propertiesFollowTheTimer() throws {
    let harness = try DaemonHarness()
    let get = { (name: String) throws -> String in
      try harness.run(
        "busctl",
        [
          "--user", "get-property", "org.grow.Grow1", "/org/grow/Grow1", "org.grow.Grow1.Timer",
          name,
        ]
      ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    #expect(try get("State") == "s \"idle\"")
    #expect(try get("EndsAt") == "x 0")
    let start = try harness.run(
      "busctl",
      [
        "--user", "call", "org.grow.Grow1", "/org/grow/Grow1", "org.grow.Grow1.Timer", "Start", "s",
        "",
      ])
    #expect(start.status == 0)
    #expect(try get("State") == "s \"focus\"")
    #expect(try get("Card") == "s \"work\"")
    #expect(try get("Duration") == "u 1500")
    let endsAt = try #require(Int64(try get("EndsAt").dropFirst(2)))
    let expected = Int64((Date().timeIntervalSince1970 + 1500) * 1_000_000)
    #expect(abs(endsAt - expected) < 5_000_000, "EndsAt is about 25 minutes from now, in µs")

    let all = try harness.run(
      "gdbus",
      ["call", "--session"] + Self.destination
        + ["--method", "org.freedesktop.DBus.Properties.GetAll", "org.grow.Grow1.Timer"])
    #expect(all.stdout.contains("'State': <'focus'>"))
    #expect(all.stdout.contains("'Paused': <false>"))
  }

  @Test func errorsHaveGrowNamesAndHumanMessages() throws {
    let harness = try DaemonHarness()
    let unknownCard = try gdbus(harness, "Start", "nosuch")
    #expect(unknownCard.status != 0)
    #expect(
      unknownCard.stderr.contains(
        "GDBus.Error:org.grow.Grow1.Error.UnknownCard: no card named 'nosuch' (cards: work)"))

    let pauseIdle = try gdbus(harness, "Pause")
    #expect(pauseIdle.stderr.contains("org.grow.Grow1.Error.InvalidState: nothing is running"))

    #expect(try gdbus(harness, "Start", "").status == 0)
    let zero = try gdbus(harness, "Extend", "0")
    #expect(zero.stderr.contains("org.grow.Grow1.Error.InvalidArgument: can only extend by 1s"))

    let option = try gdbus(harness, "StartWith", "work", "{'colour': <'red'>}")
    #expect(option.stderr.contains("org.grow.Grow1.Error.InvalidArgument: unknown start option"))
  }

  @Test func malformedCallsGetInvalidArgsAndChangeNothing() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start").status == 0)
    let before = try harness.status()

    let wrongType = try harness.run(
      "dbus-send",
      [
        "--session", "--print-reply", "--dest=org.grow.Grow1", "/org/grow/Grow1",
        "org.grow.Grow1.Timer.Extend", "string:five",
      ])
    #expect(wrongType.status != 0)
    #expect(wrongType.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"))
    #expect(wrongType.stderr.contains("Extend takes arguments of type 'u', got 's'"))

    let missing = try harness.run(
      "dbus-send",
      [
        "--session", "--print-reply", "--dest=org.grow.Grow1", "/org/grow/Grow1",
        "org.grow.Grow1.Timer.Start",
      ])
    #expect(missing.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"))

    let extra = try harness.run(
      "dbus-send",
      [
        "--session", "--print-reply", "--dest=org.grow.Grow1", "/org/grow/Grow1",
        "org.grow.Grow1.Timer.Pause", "int32:1",
      ])
    #expect(extra.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"))

    let unknownMethod = try gdbus(harness, "Frobnicate")
    #expect(unknownMethod.stderr.contains("org.freedesktop.DBus.Error.UnknownMethod"))

    let readOnly = try harness.run(
      "busctl",
      [
        "--user", "set-property", "org.grow.Grow1", "/org/grow/Grow1", "org.grow.Grow1.Timer",
        "State", "s", "idle",
      ])
    #expect(readOnly.status != 0)
    #expect(readOnly.stderr.contains("State is read-only"))

    let huge = String(repeating: "x", count: 100_000)
    let hugeCard = try gdbus(harness, "Start", huge)
    let hugeAnswer = hugeCard.stderr
    #expect(hugeAnswer.count < 300, "the error does not echo a 100 kB name back")
    #expect(hugeAnswer.contains("org.grow.Grow1.Error.UnknownCard: no card named 'xxxxxxxx"))

    let after = try harness.status()
    #expect(after["state"] as? String == before["state"] as? String)
    #expect(after["duration"] as? Int == before["duration"] as? Int)
    #expect(after["paused"] as? Bool == false)
    #expect(harness.daemon?.isRunning == true)
  }

  @Test func signalsAndPropertiesChangedFollowEveryChange() throws {
    // Breaks start by themselves, focus waits for the person: the test moves the timer on
    // exactly as someone would, so nothing here races the clock.
    let harness = try DaemonHarness(
      config: """
        [timer]
        focus = 1s
        short-break = 1s
        long-break = 1s
        long-break-after = 2
        """)
    let monitor = try watchSignals(harness)
    defer { monitor.kill() }

    #expect(try harness.grow("start").status == 0)
    var status = try harness.waitForStatus { $0["next"] as? String == "focus" }
    #expect(status["completed_today"] as? Int == 1)
    #expect(try harness.grow("resume").status == 0)
    status = try harness.waitForStatus {
      $0["next"] as? String == "focus" && $0["completed_today"] as? Int == 2
    }
    #expect(status["state"] as? String == "idle")
    #expect(try harness.grow("stop").status == 0)
    // Only the timer's own: plugins (dnd) add PropertiesChanged of their interfaces.
    func timerChanges() -> Int {
      monitor.stdout.components(separatedBy: "member=PropertiesChanged").dropFirst().filter {
        $0.split(separator: "\n").first?.contains(#""org.grow.Grow1.Timer""#) == true
      }.count
    }
    _ = monitor.waitUntil(timeout: 5) { timerChanges() == 7 }

    #expect(
      signalArguments(monitor.stdout, member: "PhaseStarted") == [
        ["focus", "work", "1"], ["short-break", "work", "1"], ["focus", "work", "1"],
        ["long-break", "work", "1"],
      ])
    #expect(
      signalArguments(monitor.stdout, member: "PhaseEnded") == [
        ["focus", "work", "completed"], ["short-break", "work", "completed"],
        ["focus", "work", "completed"], ["long-break", "work", "completed"],
      ])
    // Focus, break, waiting, focus, long break, waiting, stopped: one PropertiesChanged each.
    #expect(timerChanges() == 7)
  }

  @Test func nothingIsSentWhileAPhaseSimplyRuns() throws {
    let harness = try DaemonHarness()
    let monitor = try watchSignals(harness)
    defer { monitor.kill() }
    #expect(try harness.grow("start").status == 0)
    _ = monitor.waitUntil(timeout: 5) { monitor.stdout.contains("PropertiesChanged") }
    let countAfterStart = monitor.stdout.components(separatedBy: "member=").count
    Thread.sleep(forTimeInterval: 2.5)
    #expect(monitor.stdout.components(separatedBy: "member=").count == countAfterStart)
  }

  /// dbus-monitor watching every signal Grow sends, ready once it has joined the bus.
  private func watchSignals(_ harness: DaemonHarness) throws -> BackgroundProcess {
    let monitor = try BackgroundProcess(
      "dbus-monitor",
      ["--session", "type='signal',sender='org.grow.Grow1'"], environment: harness.bus.environment)
    _ = monitor.waitUntil(timeout: 5) { monitor.stdout.contains("NameAcquired") }
    return monitor
  }

  /// The string and integer arguments of each `member` signal in dbus-monitor output.
  private func signalArguments(_ output: String, member: String) -> [[String]] {
    var result: [[String]] = []
    var current: [String]?
    for line in output.split(separator: "\n") {
      if line.hasPrefix("signal ") {
        if let current { result.append(current) }
        current = line.contains("member=\(member)") ? [] : nil
      } else if current != nil {
        let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
        guard words.count == 2 else { continue }
        current?.append(words[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
      }
    }
    if let current { result.append(current) }
    return result
  }
}
