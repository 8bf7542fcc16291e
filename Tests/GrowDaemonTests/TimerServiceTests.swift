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

  /// A caller's bytes that a terminal obeys (ESC sequences, a bell, line breaks) never come
  /// back raw in an error: not from the daemon over D-Bus (a status bar may show the message),
  /// not from `grow` on stderr. They are written as escapes, `\u{1B}`.
  @Test func errorsEchoControlCharactersAsEscapes() throws {
    let harness = try DaemonHarness()
    let client = try rawClient(harness)
    var name = WireWriter()
    name.string(Array("\u{1B}]0;owned\u{7}\u{1B}[2J\nx".utf8))
    #expect(
      try rawCall(client, "Start", "s", name)
        == .error(
          name: "org.grow.Grow1.Error.UnknownCard",
          message: "no card named '\\u{1B}]0;owned\\u{7}\\u{1B}[2J\\nx' (cards: work)"))
    var options = WireWriter()
    options.string([])
    options.vardict([("\u{1B}[31m", .uint32(60))])
    guard case .error(_, let message) = try rawCall(client, "StartWith", "sa{sv}", options) else {
      Issue.record("StartWith with an unknown option was accepted")
      return
    }
    #expect(message.hasPrefix("unknown start option '\\u{1B}[31m'; known"))

    for arguments in [["start", "\u{1B}[31mred"], ["\u{1B}]0;owned\u{7}"], ["status", "\u{1B}x"]] {
      let result = try Command.run(Binaries.grow, arguments, environment: harness.environment)
      #expect(result.status != 0)
      #expect(!result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(result)")
      #expect(result.stderr.contains("\\u{1B}"), "\(result.stderr)")
    }
  }

  /// Everything a refused call must leave as it was (all but the countdown).
  func snapshot(_ harness: DaemonHarness) throws -> [String] {
    let status = try harness.status()
    return ["state", "card", "duration", "started_at", "ends_at", "paused", "intention", "cycle"]
      .map { "\($0)=\(status[$0].map { "\($0)" } ?? "none")" }
  }

  /// A raw client on the harness's bus, for what libdbus would not send.
  func rawClient(_ harness: DaemonHarness) throws -> RawBusClient {
    try RawBusClient(address: harness.bus.address)
  }

  func rawCall(
    _ client: RawBusClient, _ member: String, _ signature: String, _ body: WireWriter
  ) throws -> RawBusClient.Outcome {
    try client.call(
      path: "/org/grow/Grow1", interface: "org.grow.Grow1.Timer", member: member,
      destination: "org.grow.Grow1", signature: signature, body: body)
  }

  /// The daemon's peak resident memory, in MiB (VmHWM in /proc/PID/status).
  func peakMemoryMiB(_ harness: DaemonHarness) throws -> Int {
    Int(try harness.daemonMemoryMiB("VmHWM"))
  }

  /// D-Bus lets a string run to tens of megabytes. A card name of 16 MB gets the usual short
  /// UnknownCard error and an intention of 16 MB an InvalidArgument, without the daemon
  /// swelling: suggesting a near-miss card name once took a table of word × name, gigabytes.
  @Test func multiMegabyteStringsGetShortErrorsAndChangeNothing() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start").status == 0)
    let before = try snapshot(harness)
    let client = try rawClient(harness)
    let huge = [UInt8](repeating: UInt8(ascii: "x"), count: 16 << 20)

    var name = WireWriter()
    name.string(huge)
    let start = try rawCall(client, "Start", "s", name)
    #expect(
      start
        == .error(
          name: "org.grow.Grow1.Error.UnknownCard",
          message: "no card named '\(String(repeating: "x", count: 64))…' (cards: work)"))

    var withName = WireWriter()
    withName.string(huge)
    withName.vardict([("focus", .uint32(60))])
    let startWith = try rawCall(client, "StartWith", "sa{sv}", withName)
    #expect(
      startWith
        == .error(
          name: "org.grow.Grow1.Error.UnknownCard",
          message: "no card named '\(String(repeating: "x", count: 64))…' (cards: work)"))

    let intentionRefused = RawBusClient.Outcome.error(
      name: "org.grow.Grow1.Error.InvalidArgument",
      message: "the intention is longer than 200 characters; keep it to one short line, "
        + "such as 'Chapter 3 exercises'")
    var intention = WireWriter()
    intention.string(Array("work".utf8))
    intention.vardict([("intention", .string(huge))])
    #expect(try rawCall(client, "StartWith", "sa{sv}", intention) == intentionRefused)

    let reload = try client.call(
      path: "/org/grow/Grow1", interface: "org.grow.Grow1.Plugins", member: "Reload",
      destination: "org.grow.Grow1", signature: "s", body: name)
    guard case .error(let reloadError, let reloadMessage) = reload else {
      Issue.record("Reload of a 16 MB id answered \(reload)")
      return
    }
    #expect(reloadError == "org.grow.Grow1.Error.InvalidArgument")
    #expect(reloadMessage.hasPrefix("no plugin '\(String(repeating: "x", count: 64))…'"))

    // Properties.Get and GetAll with a 16 MB name answer with the name cut short.
    var property = WireWriter()
    property.string(Array("org.grow.Grow1.Timer".utf8))
    property.string(huge)
    let get = try client.call(
      path: "/org/grow/Grow1", interface: "org.freedesktop.DBus.Properties", member: "Get",
      destination: "org.grow.Grow1", signature: "ss", body: property)
    #expect(
      get
        == .error(
          name: "org.freedesktop.DBus.Error.UnknownProperty",
          message: "no property '\(String(repeating: "x", count: 64))…' in "
            + "'org.grow.Grow1.Timer' at /org/grow/Grow1"))
    let getAll = try client.call(
      path: "/org/grow/Grow1", interface: "org.freedesktop.DBus.Properties", member: "GetAll",
      destination: "org.grow.Grow1", signature: "s", body: name)
    #expect(
      getAll
        == .error(
          name: "org.freedesktop.DBus.Error.UnknownInterface",
          message: "no interface '\(String(repeating: "x", count: 64))…' here"))

    // The same from the command line, as long as one argument may be (128 KiB).
    let cli = try harness.grow("start", "--intention", String(repeating: "x", count: 100_000))
    #expect(cli.status == 1)
    #expect(
      cli.stderr
        == "grow: the intention is longer than 200 characters; keep it to one short line, "
        + "such as 'Chapter 3 exercises'\n")
    let twoLines = try harness.grow("start", "--intention", "essay\nrm -rf ~")
    #expect(twoLines.status == 1)
    #expect(
      twoLines.stderr
        == "grow: the intention must be one line of text; it holds the control character "
        + "U+000A\n")

    #expect(try snapshot(harness) == before)
    #expect(try peakMemoryMiB(harness) < 512, "a few copies of the message, not gigabytes")
    #expect(harness.daemon?.isRunning == true)
  }

  @Test func outOfRangeDurationsAreRefusedAndChangeNothing() throws {
    let harness = try DaemonHarness()
    let invalid = "GDBus.Error:org.grow.Grow1.Error.InvalidArgument: "
    for (options, message) in [
      ("{'focus': <uint32 0>}", "focus must be between 1s and 24h, not 0s"),
      ("{'focus': <uint32 4294967295>}", "focus must be between 1s and 24h, not 4294967295s"),
      ("{'short-break': <uint32 0>}", "short-break must be between 1s and 24h, not 0s"),
      (
        "{'long-break': <uint32 4294967295>}",
        "long-break must be between 1s and 24h, not 4294967295s"
      ),
      (
        "{'focus': <int32 -60>}",
        "start option 'focus' has the wrong type 'i': it takes seconds as a uint32 ('u')"
      ),
      (
        "{'focus': <'25m'>}",
        "start option 'focus' has the wrong type 's': it takes seconds as a uint32 ('u')"
      ),
      (
        "{'intention': <uint32 3>}",
        "start option 'intention' has the wrong type 'u': it takes a string ('s')"
      ),
      ("{'colour': <'red'>}", "unknown start option 'colour'; known: focus (u), short-break (u)"),
    ] {
      let call = try gdbus(harness, "StartWith", "work", options)
      #expect(call.status != 0)
      #expect(call.stderr.contains(invalid + message), "\(options): \(call.stderr)")
      #expect(try harness.status()["state"] as? String == "idle")
    }

    #expect(try harness.grow("start").status == 0)
    let before = try snapshot(harness)
    // 86400 (a day) would make the 25-minute phase longer than a day.
    for seconds in ["0", "4294967295", "86400"] {
      let call = try gdbus(harness, "Extend", seconds)
      #expect(
        call.stderr.contains(
          invalid + "can only extend by 1s or more, up to a phase of 24h (asked for \(seconds)s)"),
        "\(seconds): \(call.stderr)")
    }
    #expect(try snapshot(harness) == before)
    #expect(try gdbus(harness, "Extend", "60").status == 0, "in range still works")
    #expect(try harness.status()["duration"] as? Int == 1560)
  }

  /// libdbus never sends a string that is not UTF-8, so a hand-written client does. The bus
  /// checks every message and drops the connection that sent one; the daemon never sees it,
  /// keeps its state and answers the next caller.
  @Test func invalidUTF8NeverReachesTheDaemon() throws {
    let harness = try DaemonHarness()
    #expect(try harness.grow("start").status == 0)
    let before = try snapshot(harness)

    // The same client is heard when it sends valid UTF-8: it is the bytes that are refused.
    let control = try rawClient(harness)
    var valid = WireWriter()
    valid.string(Array("nosuch".utf8))
    #expect(
      try rawCall(control, "Start", "s", valid)
        == .error(
          name: "org.grow.Grow1.Error.UnknownCard",
          message: "no card named 'nosuch' (cards: work)"))

    let notUTF8: [[UInt8]] = [
      [0x77, 0x6F, 0xFF, 0xFE],  // "wo" and two bytes that never occur in UTF-8
      [0xC3],  // a sequence cut short
      [0xED, 0xA0, 0x80],  // a UTF-16 surrogate, U+D800
      [0xC0, 0xAF],  // an overlong "/"
    ]
    for bytes in notUTF8 {
      var card = WireWriter()
      card.string(bytes)
      #expect(try rawCall(try rawClient(harness), "Start", "s", card) == .disconnected)

      var intention = WireWriter()
      intention.string(Array("work".utf8))
      intention.vardict([("intention", .string(bytes))])
      #expect(
        try rawCall(try rawClient(harness), "StartWith", "sa{sv}", intention) == .disconnected)
    }

    #expect(try snapshot(harness) == before)
    #expect(try gdbus(harness, "Pause").status == 0, "the daemon still takes commands")
    #expect(try harness.status()["paused"] as? Bool == true)
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
    #expect(status["state"] as? String == "waiting")
    #expect(try harness.grow("stop").status == 0)
    // Only the timer's own: plugins (dnd) add PropertiesChanged of their interfaces.
    func timerChanges() -> Int {
      monitor.stdout.components(separatedBy: "member=PropertiesChanged").dropFirst().filter {
        $0.split(separator: "\n").first?.contains(#""org.grow.Grow1.Timer""#) == true
      }.count
    }
    #expect(monitor.waitUntil(timeout: 30) { timerChanges() >= 7 })

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
    #expect(monitor.waitUntil(timeout: 30) { monitor.stdout.contains("PropertiesChanged") })
    let countAfterStart = monitor.stdout.components(separatedBy: "member=").count
    Thread.sleep(forTimeInterval: 2.5)
    #expect(monitor.stdout.components(separatedBy: "member=").count == countAfterStart)
  }

  /// dbus-monitor watching every signal Grow sends, ready once it has joined the bus.
  private func watchSignals(_ harness: DaemonHarness) throws -> BackgroundProcess {
    let monitor = try BackgroundProcess(
      "dbus-monitor",
      ["--session", "type='signal',sender='org.grow.Grow1'"], environment: harness.bus.environment)
    #expect(
      monitor.waitUntil(timeout: 30) { monitor.stdout.contains("NameAcquired") },
      "dbus-monitor did not join the bus")
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
