import Foundation
import FoundationXML
import GrowTestSupport
import Testing

/// The D-Bus description of the timer, as real clients read it: `gdbus introspect` against
/// the running daemon, `dbus-monitor` for what is announced, `gdbus-codegen` for the file
/// `make install` puts under `share/dbus-1/interfaces/`.
@Suite struct TimerInterfaceTests {
  static let timer = "org.grow.Grow1.Timer"
  static let emits = "org.freedesktop.DBus.Property.EmitsChangedSignal"
  static let docString = "org.gtk.GDBus.DocString"
  /// The properties that change with the clock (or at midnight) and so are never announced.
  static let silent: Set<String> = [
    "Remaining", "Elapsed", "FocusToday", "CutShortToday", "CompletedToday", "Streak",
  ]

  /// Grow's object as `gdbus introspect` describes it.
  static func introspection(of harness: DaemonHarness) throws -> XMLDocument {
    let xml = try harness.run(
      "gdbus",
      [
        "introspect", "--session", "--xml", "--dest", "org.grow.Grow1", "--object-path",
        "/org/grow/Grow1",
      ])
    #expect(xml.status == 0, "\(xml.stderr)")
    return try XMLDocument(xmlString: xml.stdout)
  }

  @Test func everyPropertySaysHowItsChangesAreAnnouncedAndEverythingIsDocumented() throws {
    let harness = try DaemonHarness()
    let document = try Self.introspection(of: harness)
    let interface = "/node/interface[@name='\(Self.timer)']"
    let properties = try document.nodes(forXPath: "\(interface)/property/@name")
      .compactMap(\.stringValue)
    #expect(properties.count == 17)
    // Every property the daemon serves is in the D-Bus API's page.
    let page = try String(
      contentsOf: RepoPaths.root.appendingPathComponent("docs/dbus-api.md"), encoding: .utf8)
    for property in properties {
      #expect(page.contains("`\(property)`"), "docs/dbus-api.md does not name \(property)")
    }
    for property in properties {
      let annotation = try document.nodes(
        forXPath:
          "\(interface)/property[@name='\(property)']/annotation[@name='\(Self.emits)']/@value"
      ).compactMap(\.stringValue)
      #expect(annotation == [Self.silent.contains(property) ? "false" : "true"], "\(property)")
    }
    for member in ["method", "property", "signal"] {
      let names = try document.nodes(forXPath: "\(interface)/\(member)/@name").compactMap(
        \.stringValue)
      #expect(!names.isEmpty)
      for name in names {
        let doc = try document.nodes(
          forXPath:
            "\(interface)/\(member)[@name='\(name)']/annotation[@name='\(Self.docString)']/@value"
        ).compactMap(\.stringValue)
        #expect(doc.first.map { !$0.isEmpty } == true, "\(member) \(name) has no DocString")
      }
    }
  }

  /// Caching proxies keep what PropertiesChanged told them: it names only properties that
  /// are annotated to be announced, and the clock-driven ones never.
  @Test func propertiesChangedCarriesOnlyWhatIsAnnouncedAsChanging() throws {
    let harness = try DaemonHarness()
    let monitor = try watchSignals(harness)
    defer { monitor.kill() }
    // Changes within one loop turn (or 50 ms) go out as one signal, so each command waits
    // for its own announcement: a pause and a resume a few milliseconds apart would
    // otherwise be one signal, or none, as a caching proxy rightly sees nothing changed.
    for command in ["start", "pause", "resume", "stop"] {
      let before = changedNames(monitor.stdout, Self.timer).count
      #expect(try harness.grow(command).status == 0)
      #expect(
        monitor.waitUntil(timeout: 20) {
          changedNames(monitor.stdout, Self.timer).count > before
        }, "no PropertiesChanged after grow \(command)")
    }
    let announced = changedNames(monitor.stdout, Self.timer)
    #expect(announced.first?.isSuperset(of: ["State", "Card", "Duration", "EndsAt"]) == true)
    #expect(announced.allSatisfy { $0.isDisjoint(with: Self.silent) }, "\(announced)")
    // Pausing changes Paused and EndsAt, nothing else.
    #expect(announced.dropFirst().first == ["Paused", "EndsAt"])
  }

  /// The kind of the phase that comes next, as scripts and bars read it: `next_phase` in
  /// `grow status --json`, the `NextPhase` property, announced whenever it changes.
  @Test func theNextPhaseIsShownAndAnnouncedWhenItChanges() throws {
    // The long break is due after one completed focus; a skipped focus does not count, so a
    // short break follows it; breaks start by themselves, focus waits for grow resume.
    let harness = try DaemonHarness(config: "[timer]\nlong-break-after = 1\n")
    let property = { () throws -> String in
      let reply = try harness.run(
        "gdbus",
        [
          "call", "--session", "--dest", "org.grow.Grow1", "--object-path", "/org/grow/Grow1",
          "--method", "org.freedesktop.DBus.Properties.Get", Self.timer, "NextPhase",
        ])
      return reply.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    #expect(try harness.status()["next_phase"] is NSNull)
    #expect(try property() == "(<''>,)")
    let monitor = try watchSignals(harness)
    defer { monitor.kill() }

    #expect(try harness.grow("start").status == 0)
    #expect(try harness.status()["next_phase"] as? String == "long-break")
    #expect(try property() == "(<'long-break'>,)")
    #expect(try harness.grow("skip").status == 0)
    let shortBreak = try harness.status()
    #expect(shortBreak["state"] as? String == "short-break")
    #expect(shortBreak["next_phase"] as? String == "focus")
    #expect(try property() == "(<'focus'>,)")
    #expect(try harness.grow("skip").status == 0)
    let waiting = try harness.status()
    #expect(waiting["state"] as? String == "waiting")
    #expect(waiting["next_phase"] as? String == "focus")

    // Announced on start ('' to long-break) and on the first skip (long-break to focus).
    let announcing = {
      changedNames(monitor.stdout, Self.timer).filter { $0.contains("NextPhase") }
    }
    #expect(
      monitor.waitUntil(timeout: 30) { announcing().count >= 2 },
      "NextPhase was not in PropertiesChanged: \(changedNames(monitor.stdout, Self.timer))")
  }

  @Test func theInstalledInterfaceFileIsTheServedOneAndGdbusCodegenAcceptsIt() throws {
    let harness = try DaemonHarness()
    let file = harness.bus.directory.appendingPathComponent("\(Self.timer).xml")
    let generated = try harness.grow("generate", "dbus-interface")
    try #require(generated.status == 0, "\(generated.stderr)")
    try generated.stdout.write(to: file, atomically: true, encoding: .utf8)

    // The same interface as the running daemon's, element for element.
    let served = try harness.run(
      "gdbus",
      [
        "introspect", "--session", "--xml", "--dest", "org.grow.Grow1", "--object-path",
        "/org/grow/Grow1",
      ])
    let element = { (xml: String) throws -> String? in
      try XMLDocument(xmlString: xml).nodes(forXPath: "/node/interface[@name='\(Self.timer)']")
        .first?.xmlString
    }
    #expect(try element(generated.stdout) != nil)
    #expect(try element(generated.stdout) == element(served.stdout))

    let output = harness.bus.directory.appendingPathComponent("codegen").path
    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
    let codegen = try harness.run(
      "gdbus-codegen",
      [
        "--interface-prefix", "org.grow.Grow1.", "--c-namespace", "Grow", "--output-directory",
        output, "--generate-c-code", "grow-timer", "--generate-docbook", "doc", file.path,
      ])
    #expect(codegen.status == 0, "\(codegen.stderr)")
    #expect(codegen.stderr == "")
    let header = try String(contentsOfFile: output + "/grow-timer.h", encoding: .utf8)
    #expect(header.contains("grow_timer_get_remaining"))
    #expect(header.contains("grow_timer_call_start_with"))
    let docbook = try String(
      contentsOfFile: output + "/doc-\(Self.timer).xml", encoding: .utf8)
    #expect(docbook.contains("changes every second without a signal"))
  }

  /// The dnd plugin's PropertiesChanged names only what changed: focus switches Enabled on,
  /// while Backend and Server stay as they were.
  @Test(.enabled(if: NotificationServers.haveDisplay, "dunst needs an X display"))
  func doNotDisturbAnnouncesOnlyWhatChanged() throws {
    let harness = try DaemonHarness(config: "[timer]\nfocus = 10m\n", startDaemon: false)
    let dunst = try NotificationServers.dunst(harness)
    defer { dunst.kill() }
    try harness.start()
    #expect(try harness.eventually { try harness.dndStatus()["backend"] as? String == "dunst" })
    let monitor = try watchSignals(harness)
    defer { monitor.kill() }
    let interface = "org.grow.Grow1.DoNotDisturb"
    #expect(try harness.grow("start").status == 0)
    #expect(monitor.waitUntil(timeout: 30) { !changedNames(monitor.stdout, interface).isEmpty })
    #expect(try harness.grow("stop").status == 0)
    // Enabled (what Grow wants) and ServerState (what the server confirmed) each change twice;
    // changes made in one loop turn share a signal (BusObject gathers them per turn), so count
    // names, not signals. Backend and Server never appear: they did not change.
    func changes(of name: String) -> Int {
      changedNames(monitor.stdout, interface).filter { $0.contains(name) }.count
    }
    #expect(
      monitor.waitUntil(timeout: 30) {
        changes(of: "Enabled") >= 2 && changes(of: "ServerState") >= 2
      })
    let signals = changedNames(monitor.stdout, interface)
    #expect(signals.allSatisfy { $0.isSubset(of: ["Enabled", "ServerState"]) }, "\(signals)")
    #expect(changes(of: "Enabled") == 2 && changes(of: "ServerState") == 2, "\(signals)")
  }

  private func watchSignals(_ harness: DaemonHarness) throws -> BackgroundProcess {
    let monitor = try BackgroundProcess(
      "dbus-monitor",
      ["--session", "type='signal',sender='org.grow.Grow1'"],
      environment: harness.bus.environment)
    #expect(
      monitor.waitUntil(timeout: 30) { monitor.stdout.contains("NameAcquired") },
      "dbus-monitor did not join the bus")
    return monitor
  }
}

/// The property names of each PropertiesChanged for `interface` in dbus-monitor's output.
func changedNames(_ output: String, _ interface: String) -> [Set<String>] {
  output.components(separatedBy: "\nsignal ").filter {
    $0.contains("member=PropertiesChanged") && $0.contains("string \"\(interface)\"")
  }.map { block in
    Set(
      block.matches(of: /dict entry\(\s*string "([^"]+)"/).map { String($0.output.1) })
  }
}

/// Every interface Grow serves on its object, not only the timer's, documents each method,
/// property and signal for `gdbus introspect` and d-feet (`org.gtk.GDBus.DocString`).
@Suite struct GrowInterfacesDocumentationTests {
  @Test func everyMemberOfEveryGrowInterfaceHasADocString() throws {
    let harness = try DaemonHarness()
    let document = try TimerInterfaceTests.introspection(of: harness)
    let interfaces = try document.nodes(forXPath: "/node/interface/@name").compactMap(\.stringValue)
      .filter { $0.hasPrefix("org.grow.Grow1.") }
    #expect(interfaces.contains("org.grow.Grow1.Plugins"), "\(interfaces)")
    var undocumented: [String] = []
    for interface in interfaces {
      for member in ["method", "property", "signal"] {
        let path = "/node/interface[@name='\(interface)']/\(member)"
        for name in try document.nodes(forXPath: "\(path)/@name").compactMap(\.stringValue) {
          let doc = try document.nodes(
            forXPath:
              "\(path)[@name='\(name)']/annotation[@name='\(TimerInterfaceTests.docString)']/@value"
          ).compactMap(\.stringValue)
          if doc.first?.isEmpty ?? true { undocumented.append("\(interface).\(name)") }
        }
      }
    }
    #expect(undocumented.isEmpty, "no DocString: \(undocumented)")
  }
}
