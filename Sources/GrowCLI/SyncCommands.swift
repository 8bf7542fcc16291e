import FoundationEssentials
import Glibc
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowHistory
import GrowMessages
import GrowSync

extension Commands {
  /// The folder Syncthing's default setup syncs, with a folder of Grow's own in it.
  static let standardSyncFolder = "~/Sync/grow"

  /// `grow sync setup [FOLDER]`, `grow sync status [--json]` (also plain `grow sync`).
  static func runSync(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["json"], usage: "sync")
    switch arguments.positionals.first {
    case "setup":
      try expect(arguments, atMost: 2, "sync")
      try setUpSync(folder: arguments.positionals.dropFirst().first ?? standardSyncFolder)
    case "status", nil:
      try expect(arguments, atMost: 1, "sync")
      try syncStatus(json: arguments.flag("json"))
    case let other?:
      throw .usage(
        Message("grow sync: unknown action '{action}' (setup, status)").render([
          "action": shown(other)
        ]))
    }
  }

  /// This machine's sync folder as config.ini names it, or nil when sync is off.
  static func configuredSyncFolder() throws(CLIError) -> SyncFolder? {
    let config: GrowConfig
    do {
      config = try loadConfiguration(nil)
    } catch {
      throw .failed(error.description)
    }
    guard let folder = config.syncFolder else { return nil }
    let identity: MachineIdentity
    do {
      identity = try MachineIdentity.load(name: config.syncName ?? ThisMachine.name)
    } catch {
      throw .failed(error.description)
    }
    return SyncFolder(
      path: SyncFolder.expand(folder, environment: ProcessInfo.processInfo.environment),
      identity: identity)
  }

  /// Turns sync on: `[sync] folder` in config.ini, this machine's id, its whole history in its
  /// journal, the other machines' journals merged, and a running daemon told.
  private static func setUpSync(folder: String) throws(CLIError) {
    guard !folder.isEmpty else { throw .usage(Message("grow sync setup needs a folder").render()) }
    let environment = ProcessInfo.processInfo.environment
    let path = GrowConfig.defaultPath(environment: environment)
    do {
      try SyncConfigFile.setFolder(folder, in: path)
    } catch {
      throw .failed(
        Message("cannot write [sync] folder into {path} ({reason}); add it there yourself")
          .render(["path": path, "reason": "\(error)"]))
    }
    guard let sync = try configuredSyncFolder() else {
      throw .failed(Message("{path} does not turn sync on").render(["path": path]))
    }
    let report = try withHistory { store throws(HistoryError) in
      Result { () throws(SyncError) in
        try sync.create()
        let written = try sync.writeNewPhases(from: store)
        return (written, sync.merge(into: store))
      }
    }
    let (written, merged): (Int, SyncFolder.MergeReport)
    switch report {
    case .success(let result): (written, merged) = result
    case .failure(let error): throw .failed(error.description)
    }
    say(
      Message("sync is on: {folder} ({path} says so)").render([
        "folder": sync.path, "path": path,
      ]))
    say(
      Message("this machine is {name} ({id}); its journal is {journal}").render([
        "name": sync.identity.name, "id": sync.identity.id, "journal": sync.journalPath,
      ]))
    say(
      Message(
        one: "wrote {count} phase of this machine's history into it",
        other: "wrote {count} phases of this machine's history into it", countedBy: "count"
      ).render(["count": written]))
    if merged.result.added > 0 {
      say(
        Message(
          one: "merged {count} phase from the other machines' journals",
          other: "merged {count} phases from the other machines' journals", countedBy: "count"
        ).render(["count": merged.result.added]))
    }
    for problem in merged.problems { say("! \(problem)") }
    if let client = try? GrowClient(), client.daemonIsRunning() {
      _ = try reloadConfiguration(client)
      say(Message("the running daemon syncs from now on").render())
    }
    say(
      Message(
        "next: share {folder} with your other machines (Syncthing: add the folder, share it "
          + "with their devices), then run 'grow sync setup {folder}' on each; "
          + "'grow sync status' shows what arrived"
      ).render(["folder": folder]))
  }

  private static func syncStatus(json: Bool) throws(CLIError) {
    guard let sync = try configuredSyncFolder() else {
      if json { return say(#"{"enabled":false}"#) }
      return say(
        Message("sync is off; 'grow sync setup [FOLDER]' turns it on (docs/sync.md)").render())
    }
    let checked = sync.check()
    let known = (try? withHistory { store throws(HistoryError) in try store.syncMachines() }) ?? []
    let status = SyncStatusReport(
      sync: sync, checked: checked, known: known,
      syncthing: SyncthingProbe.report(folder: sync.path))
    if json { return say(status.json()) }
    for line in status.lines() { say(line) }
  }
}

/// What `grow sync status` says: the folder, this machine, the others with their latest
/// phase, and the journals' problems.
struct SyncStatusReport {
  struct Machine: Encodable {
    var id: String
    var name: String
    var phases: Int
    /// ISO 8601 UTC: the end of its latest phase here.
    var lastRecordAt: String?
    /// Whether its journal is in the folder now.
    var journalInFolder: Bool

    enum CodingKeys: String, CodingKey {
      case id, name, phases
      case lastRecordAt = "last_record_at"
      case journalInFolder = "journal_in_folder"
    }
  }

  struct Report: Encodable {
    var enabled = true
    var folder: String
    var machineID: String
    var machineName: String
    var journal: String
    var machines: [Machine]
    var problems: [String]
    var syncthing: SyncthingReport

    enum CodingKeys: String, CodingKey {
      case enabled, folder, journal, machines, problems, syncthing
      case machineID = "machine_id"
      case machineName = "machine_name"
    }
  }

  let report: Report

  init(
    sync: SyncFolder, checked: (problems: [JournalProblem], machines: [(id: String, name: String)]),
    known: [SyncMachine], syncthing: SyncthingReport
  ) {
    var machines: [Machine] = known.map { machine in
      Machine(
        id: machine.id, name: machine.name, phases: machine.phases,
        lastRecordAt: machine.lastRecordAt.map {
          HistoryExport.timestamp($0, offset: 0)
        }, journalInFolder: checked.machines.contains { $0.id == machine.id })
    }
    for (id, name) in checked.machines
    where id != sync.identity.id && !machines.contains(where: { $0.id == id }) {
      machines.append(
        Machine(id: id, name: name, phases: 0, lastRecordAt: nil, journalInFolder: true))
    }
    report = Report(
      folder: sync.path, machineID: sync.identity.id, machineName: sync.identity.name,
      journal: sync.journalPath, machines: machines, problems: checked.problems.map(\.description),
      syncthing: syncthing)
  }

  func json() -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: (try? encoder.encode(report)) ?? Data(), as: UTF8.self)
  }

  func lines() -> [String] {
    var lines = [
      Message("sync folder: {folder}").render(["folder": report.folder]),
      Message("this machine: {name} ({id}), journal {journal}").render([
        "name": report.machineName, "id": report.machineID, "journal": report.journal,
      ]),
    ]
    if report.machines.isEmpty {
      lines.append(
        Message(
          "no other machine yet: share the folder with them and run 'grow sync setup' there"
        ).render())
    }
    for machine in report.machines {
      let line = Message(
        one: "{name} ({id}): {phases} phase, latest ended {last}",
        other: "{name} ({id}): {phases} phases, latest ended {last}", countedBy: "phases"
      ).render([
        "name": machine.name, "id": machine.id, "phases": machine.phases,
        "last": machine.lastRecordAt ?? Message("never").render(),
      ])
      lines.append(
        machine.journalInFolder
          ? line
          : Message("{machine}; its journal is not in the folder now").render(["machine": line]))
    }
    let syncthing = report.syncthing.summary
    lines.append(
      (syncthing.ok ? "" : "! ")
        + (syncthing.fix.map {
          Message("{problem}; fix: {fix}").render(["problem": syncthing.text, "fix": $0])
        } ?? syncthing.text))
    for problem in report.problems { lines.append("! \(problem)") }
    return lines
  }
}

/// Writing `[sync] folder` into config.ini, leaving the rest of the file as it is.
enum SyncConfigFile {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// Sets `folder = FOLDER` in `[sync]` (replacing one there, adding the section when
  /// missing); a missing file is made. A config.ini that is a link has the file it leads to
  /// replaced, atomically, with its permissions kept.
  static func setFolder(_ folder: String, in path: String) throws(Failure) {
    var target = path
    var mode: mode_t = 0o644
    var text = ""
    if let resolved = realpath(path, nil) {
      target = String(cString: resolved)
      free(resolved)
      var info = stat()
      if stat(target, &info) == 0 { mode = info.st_mode & 0o7777 }
      if access(target, F_OK) == 0 {
        guard let data = FileManager.default.contents(atPath: target) else {
          throw Failure(description: "cannot read it")
        }
        text = String(decoding: data, as: UTF8.self)
      }
    } else {
      do {
        try PrivateFiles.makeDirectory(PathText.directory(of: path))
      } catch {
        throw Failure(description: error.description)
      }
    }
    let updated = withFolder(folder, in: text)
    do {
      try PrivateFiles.replace(target, with: Data(updated.utf8), mode: mode)
    } catch {
      throw Failure(description: error.description)
    }
  }

  /// `text` with `[sync] folder` set to `folder`.
  static func withFolder(_ folder: String, in text: String) -> String {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.last == "" { lines.removeLast() }
    let entry = "folder = \(folder)"
    var inSync = false
    var syncHeader: Int?
    for (index, line) in lines.enumerated() {
      let trimmed = line.trimmingWhitespace()
      if trimmed.hasPrefix("[") {
        inSync = trimmed == "[sync]"
        if inSync { syncHeader = index }
        continue
      }
      if inSync, let equals = trimmed.firstIndex(of: "="),
        trimmed[..<equals].trimmingWhitespace() == "folder"
      {
        lines[index] = entry
        return lines.joined(separator: "\n") + "\n"
      }
    }
    if let syncHeader {
      lines.insert(entry, at: syncHeader + 1)
    } else {
      if let last = lines.last, !last.isEmpty { lines.append("") }
      lines += ["[sync]", entry]
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
