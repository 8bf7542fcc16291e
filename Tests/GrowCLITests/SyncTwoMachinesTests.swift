import Foundation
import GrowTestSupport
import Testing

/// Two complete Grows, each with its own private bus, XDG directories and daemon, and real
/// Syncthing instances on 127.0.0.1 syncing their sync folders: one history on both.
@Suite(.serialized) struct SyncTwoMachinesTests {
  /// One machine: a daemon and its Syncthing.
  final class Machine {
    let harness: DaemonHarness
    let syncthing: SyncthingPeer
    let folder: String
    let name: String

    init(_ name: String) throws {
      self.name = name
      harness = try DaemonHarness(
        config: """
          [timer]
          focus = 1s
          short-break = 1m

          [card.review]

          [card.essay]

          [sync]
          name = \(name)
          """, startDaemon: false)
      folder = harness.bus.environment["HOME", default: ""] + "/Sync/grow"
      // In $XDG_CONFIG_HOME/syncthing, where Grow looks for its config.xml.
      syncthing = try SyncthingPeer(
        directory: harness.bus.directory.appendingPathComponent("config"), folder: folder)
    }

    /// `grow history --all --json`, decoded.
    func history() throws -> [[String: Any]] {
      let result = try harness.grow("history", "--all", "--json")
      guard result.status == 0 else { throw HarnessError("grow history: \(result.stderr)") }
      return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        ?? []
    }

    /// Waits (a generous deadline, for Syncthing) until the history satisfies `condition`.
    func waitForHistory(_ condition: ([[String: Any]]) -> Bool) throws -> [[String: Any]] {
      let deadline = Date().addingTimeInterval(90)
      while true {
        let phases = try history()
        if condition(phases) { return phases }
        guard Date() < deadline else {
          throw HarnessError(
            "\(name)'s history never matched: \(phases)\ndaemon: \(harness.daemon?.stderr ?? "")")
        }
        Thread.sleep(forTimeInterval: 0.1)
      }
    }
  }

  /// Three machines; two edit the same phase at nearly the same time, and a journal is
  /// damaged on one of them: all three end with the same history, the later edit's.
  @Test func threeMachinesEditingOnePhaseConverge() throws {
    let machines = try ["laptop", "desktop", "office"].map(Machine.init)
    for machine in machines {
      try machine.syncthing.share(with: machines.filter { $0 !== machine }.map(\.syncthing))
    }
    for machine in machines { try machine.syncthing.start() }
    defer { for machine in machines { machine.syncthing.stop() } }
    for machine in machines {
      try machine.harness.start()
      #expect(try machine.harness.grow("sync", "setup", machine.folder).status == 0)
    }
    let (laptop, desktop, office) = (machines[0], machines[1], machines[2])
    #expect(try laptop.harness.grow("start").status == 0)
    var ids: [Int] = []
    for machine in [desktop, office] {
      let phases = try machine.waitForHistory { phases in
        phases.contains { $0["machine"] as? String == "laptop" && $0["kind"] as? String == "focus" }
      }
      ids.append(try #require(phases.first { $0["kind"] as? String == "focus" }?["id"] as? Int))
    }
    #expect(
      try desktop.harness.grow("history", "edit", "\(ids[0])", "--card", "review").status == 0)
    #expect(try office.harness.grow("history", "edit", "\(ids[1])", "--card", "essay").status == 0)
    for machine in machines {
      _ = try machine.waitForHistory { phases in
        phases.contains { $0["card"] as? String == "essay" && $0["kind"] as? String == "focus" }
      }
    }
    let histories = try machines.map { machine in
      try machine.history().map {
        "\($0["started_at"] ?? "") \($0["card"] ?? "") \($0["machine"] ?? "")"
      }
    }
    #expect(histories[0] == histories[1] && histories[1] == histories[2], "\(histories)")
    #expect(try office.harness.status()["completed_today"] as? Int == 1)
  }

  @Test func aPhaseGrownOnOneMachineShowsOnTheOtherAndAnEditComesBack() throws {
    let laptop = try Machine("laptop")
    let desktop = try Machine("desktop")
    try laptop.syncthing.share(with: [desktop.syncthing])
    try desktop.syncthing.share(with: [laptop.syncthing])
    try laptop.syncthing.start()
    try desktop.syncthing.start()
    defer {
      laptop.syncthing.stop()
      desktop.syncthing.stop()
    }
    for machine in [laptop, desktop] {
      try machine.harness.start()
      let setup = try machine.harness.grow("sync", "setup", machine.folder)
      #expect(setup.status == 0, "\(setup.stderr)")
      #expect(setup.stdout.contains("the running daemon syncs from now on"))
    }

    // A focus of one second on the laptop.
    #expect(try laptop.harness.grow("start").status == 0)
    let grown = try laptop.waitForHistory { $0.contains { $0["kind"] as? String == "focus" } }
    let ended = Date()
    #expect(grown.first?["machine"] as? String != nil)
    let arrived = try desktop.waitForHistory { phases in
      phases.contains { $0["machine"] as? String == "laptop" && $0["kind"] as? String == "focus" }
    }
    print(
      "sync: a focus ended on the laptop was in the desktop's history after \(Date().timeIntervalSince(ended)) s"
    )
    #expect(arrived.count == 1)
    // It counts in the desktop's today.
    _ = try desktop.harness.waitForStatus { ($0["completed_today"] as? Int ?? 0) == 1 }
    let filtered = try desktop.harness.grow("history", "--all", "--machine", "laptop", "--json")
    #expect(filtered.stdout.contains("\"machine\":\"laptop\""))

    // An edit on the desktop reaches the laptop.
    let id = try #require(arrived.first?["id"] as? Int)
    let edit = try desktop.harness.grow("history", "edit", "\(id)", "--card", "review")
    #expect(edit.status == 0, "\(edit.stderr)")
    _ = try laptop.waitForHistory { phases in
      phases.contains { $0["card"] as? String == "review" && $0["kind"] as? String == "focus" }
    }

    let status = try desktop.harness.grow("sync", "status", "--json")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
    let machines = report["machines"] as? [[String: Any]] ?? []
    #expect(machines.first?["name"] as? String == "laptop")
    #expect(machines.first?["phases"] as? Int == 1)
    let syncthing = report["syncthing"] as? [String: Any] ?? [:]
    #expect(syncthing["finding"] as? String == "shared", "\(syncthing)")
    #expect(syncthing["devices"] as? Int == 1)

    // The desktop is offline (its Syncthing stopped) while the laptop grows another focus;
    // it catches up when it is back.
    desktop.syncthing.stop()
    #expect(try laptop.harness.grow("stop").status == 0)
    #expect(try laptop.harness.grow("start").status == 0)
    _ = try laptop.waitForHistory { $0.filter { $0["kind"] as? String == "focus" }.count == 2 }
    try desktop.syncthing.start()
    _ = try desktop.waitForHistory { phases in
      phases.filter { $0["machine"] as? String == "laptop" && $0["kind"] as? String == "focus" }
        .count == 2
    }
    _ = try desktop.harness.waitForStatus { ($0["completed_today"] as? Int ?? 0) == 2 }

    // A file in the folder that is not a journal: the doctor names it on both machines, and
    // both histories stay whole.
    try "not a journal\n".write(
      toFile: laptop.folder + "/notes.jsonl", atomically: true, encoding: .utf8)
    let doctor = try laptop.harness.grow("doctor")
    #expect(doctor.stdout.contains("notes.jsonl:1: not a Grow sync journal"), "\(doctor.stdout)")
    #expect(doctor.stdout.contains("syncthing: Syncthing shares folder 'grow'"))
    let deadline = Date().addingTimeInterval(90)
    while !FileManager.default.fileExists(atPath: desktop.folder + "/notes.jsonl"),
      Date() < deadline
    {
      Thread.sleep(forTimeInterval: 0.1)
    }
    #expect(try desktop.harness.grow("doctor").stdout.contains("notes.jsonl:1: not a Grow"))
    let desktopHistory = try desktop.history()
    #expect(
      desktopHistory.count == (try laptop.history()).count
        && desktopHistory.filter { $0["kind"] as? String == "focus" }.count == 2,
      "\(desktopHistory)")
    #expect(try laptop.harness.status()["completed_today"] as? Int == 2)
  }
}
