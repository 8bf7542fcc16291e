import Foundation
import GrowTestSupport
import Testing

/// examples/plugins/taskwarrior.py with the real Taskwarrior (Debian's `task`) on a private
/// data directory: pending tasks become Grow tasks, once; done in Grow is done in Taskwarrior.
@Suite struct TaskwarriorPluginTests {
  static let examples = RepoPaths.root.appendingPathComponent("examples/plugins").path

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/task")))
  func pendingTasksComeToGrowAndDoneGoesBack() throws {
    let data = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-task-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: data) }
    let taskrc = data.appendingPathComponent("taskrc").path
    try "data.location=\(data.path)\nconfirmation=off\nverbose=nothing\n"
      .write(toFile: taskrc, atomically: true, encoding: .utf8)
    let taskEnvironment = ["TASKRC": taskrc, "TASKDATA": data.path]
    func task(_ arguments: String...) throws -> String {
      let result = try Command.run(
        "/usr/bin/task", arguments,
        environment: ProcessInfo.processInfo.environment.merging(taskEnvironment) { $1 })
      #expect(result.status == 0, "task \(arguments): \(result.stderr)")
      return result.stdout
    }
    _ = try task("add", "project:school", "Chapter 3 exercises")
    _ = try task("add", "project:school", "Essay outline")
    _ = try task("add", "project:home", "Water the plants")

    let harness = try DaemonHarness(
      config: """
        [card.math]
        focus = 50m
        [plugin.taskwarrior]
        exec = \(Self.examples)/taskwarrior.py math project:school
        """, environment: taskEnvironment)
    #expect(
      try harness.eventually(timeout: 30) {
        try harness.grow("tasks", "math").stdout.split(separator: "\n").count == 2
      }, "\(harness.daemonLog)")
    let listed = try harness.grow("tasks", "math").stdout
    #expect(listed.contains("Chapter 3 exercises"))
    #expect(listed.contains("Essay outline"))
    #expect(!listed.contains("Water the plants"), "only the filter's tasks")

    // Done in Grow (as the "Done?" button or a launcher says it) is done in Taskwarrior.
    let id = try #require(
      listed.split(separator: "\n").first { $0.contains("Chapter 3") }?
        .split(separator: " ").first)
    #expect(try harness.grow("task", "done", String(id)).status == 0)
    #expect(
      try harness.eventually(timeout: 30) {
        try task("status:completed", "export").contains("Chapter 3 exercises")
      }, "\(harness.daemonLog)")
    #expect(try task("status:pending", "export").contains("Essay outline"))

    // A plugin restarted (as with the daemon) brings the new task and nothing twice.
    _ = try task("add", "project:school", "Read chapter 4")
    #expect(try harness.grow("plugins", "reload", "taskwarrior").status == 0)
    #expect(
      try harness.eventually(timeout: 30) {
        try harness.grow("tasks", "math", "--all").stdout.contains("Read chapter 4")
      }, "\(harness.daemonLog)")
    #expect(try harness.grow("tasks", "math", "--all").stdout.split(separator: "\n").count == 3)
  }
}
