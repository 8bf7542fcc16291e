import Foundation
import GrowTestSupport
import Testing

/// `org.grow.Grow1.Journey` as a launcher would use it, with gdbus against the real daemon:
/// add a task, list it, start a focus on it, mark it done; goals with their progress; and
/// `Changed` when they move.
@Suite struct JourneyServiceTests {
  static let config = """
    [timer]
    focus = 25m
    [card.math]
    focus = 50m
    """

  func call(_ harness: DaemonHarness, _ method: String, _ arguments: String...) throws -> (
    status: Int32, stdout: String, stderr: String
  ) {
    try harness.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.grow.Grow1", "--object-path", "/org/grow/Grow1",
        "--method", "org.grow.Grow1.Journey." + method,
      ] + arguments)
  }

  @Test func aLauncherAddsATaskStartsAFocusOnItAndMarksItDone() throws {
    let harness = try DaemonHarness(config: Self.config)
    let monitor = try BackgroundProcess(
      "stdbuf", ["-oL", "dbus-monitor", "--session", "interface='org.grow.Grow1.Journey'"],
      environment: harness.environment)
    defer { _ = monitor.terminate() }

    let added = try call(harness, "AddTask", "math", "Chapter 3")
    #expect(added.stdout == "(int64 1,)\n", "\(added.stderr)")
    #expect(try harness.eventually { monitor.stdout.contains("member=Changed") })
    let listed = try call(harness, "ListTasks", "")
    #expect(listed.stdout.contains("'Text': <'Chapter 3'>"), "\(listed.stdout)")
    #expect(listed.stdout.contains("'Card': <'math'>"))

    #expect(try call(harness, "StartTask", "1").status == 0)
    let status = try harness.status()
    #expect(status["card"] as? String == "math")
    #expect(status["intention"] as? String == "Chapter 3")

    #expect(try call(harness, "TaskDone", "1").status == 0)
    let afterDone = try call(harness, "ListTasks", "math").stdout
    #expect(!afterDone.contains("Chapter 3"), "\(afterDone)")
    let again = try call(harness, "StartTask", "1")
    #expect(again.status != 0)
    #expect(again.stderr.contains("task 1 is done"))

    let unknownCard = try call(harness, "AddTask", "mtah", "x")
    #expect(unknownCard.stderr.contains("UnknownCard"))
    #expect(unknownCard.stderr.contains("did you mean 'math'?"))
    let noTask = try call(harness, "TaskDone", "99")
    #expect(noTask.stderr.contains("no task 99"))
  }

  @Test func goalsAreListedWithTheirProgressAndTheInterfaceIsIntrospected() throws {
    let harness = try DaemonHarness(config: Self.config)
    #expect(try harness.grow("goal", "add", "Exam", "--hours", "10", "--card", "math").status == 0)
    let goals = try call(harness, "ListGoals")
    #expect(goals.stdout.contains("'Name': <'Exam'>"), "\(goals.stdout)")
    #expect(goals.stdout.contains("'TargetSeconds': <uint32 36000>"))
    #expect(goals.stdout.contains("'Percent': <0>"))
    let introspection = try harness.run(
      "gdbus",
      ["introspect", "--session", "--dest", "org.grow.Grow1", "--object-path", "/org/grow/Grow1"])
    #expect(introspection.stdout.contains("interface org.grow.Grow1.Journey"))
    #expect(introspection.stdout.contains("StartTask(in  x id);"))
    #expect(
      introspection.stdout.contains("signal Changed();")
        || introspection.stdout.contains("Changed();"))
  }

  /// A client pipelining 500 ListGoals: each call is answered (the goals, or LimitsExceeded
  /// once 32 already wait for the history), none waits for a timeout, and another client's
  /// call is answered after the flood as before.
  @Test func aFloodOfCallsIsAnsweredWithoutQueueingWorkWithoutBound() throws {
    let harness = try DaemonHarness(config: Self.config)
    #expect(try harness.grow("goal", "add", "Exam", "--hours", "10", "--card", "math").status == 0)
    let flooder = try RawBusClient(address: harness.bus.address, timeout: 120)
    let listGoals = RawBusClient.MethodCall(
      path: "/org/grow/Grow1", interface: "org.grow.Grow1.Journey", member: "ListGoals",
      destination: "org.grow.Grow1")
    let serials = Set(try flooder.send(Array(repeating: listGoals, count: 500)))
    var answered = 0
    var refused = 0
    var other: [String] = []
    while answered < serials.count, let message = try flooder.receive() {
      guard let serial = message.replySerial, serials.contains(serial) else { continue }
      answered += 1
      switch message.errorName {
      case nil: break
      case "org.freedesktop.DBus.Error.LimitsExceeded": refused += 1
      case let name?: other.append(name)
      }
    }
    #expect(answered == 500)
    #expect(other.isEmpty, "\(other.prefix(3))")
    #expect(refused > 0, "the burst came faster than the history answers")
    #expect(refused < 500, "the first ones are answered with the goals")
    #expect(try call(harness, "ListGoals").stdout.contains("'Name': <'Exam'>"), "after the flood")
  }
}
