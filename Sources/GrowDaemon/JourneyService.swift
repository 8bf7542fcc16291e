import FoundationEssentials
import GrowCore
import GrowDBus
import GrowHistory
import GrowMessages
import GrowPluginKit

/// `org.grow.Grow1.Journey`: goals and tasks for launchers and other apps ("start the next
/// task of my goal"). Every read and write of the history runs on its own queue
/// (`HistoryRecorder.access`) and the call is answered from there, so the loop never waits
/// for SQLite; `Changed` says when goals or tasks may read differently.
@MainActor
final class JourneyService {
  private let timer: FocusTimer
  private let history: HistoryRecorder
  private let object: BusObject
  private let events: EventBus
  /// The daemon's loop: when "now" is, and in which zone (never `Date()`).
  private let time: any TimeSource

  init(
    timer: FocusTimer, history: HistoryRecorder, object: BusObject, events: EventBus,
    time: any TimeSource
  ) {
    self.time = time
    self.timer = timer
    self.history = history
    self.object = object
    self.events = events
  }

  func install() {
    object.add(Self.interface(self))
    // A recorded focus moves goals and tasks on; a task answered "Done" is one fewer.
    events.subscribe(HistoryRecorded.self, as: "journey") { [weak self] event in
      if event.phase.kind == .focus { self?.changed() }
    }
    events.subscribe(TaskDone.self, as: "journey") { [weak self] _ in self?.changed() }
  }

  private func changed() {
    object.emit("Changed", on: GrowBusAPI.journeyInterface)
  }

  /// The interface; `service` nil for the interface file (no calls).
  static func interface(_ service: JourneyService?) -> BusInterface {
    typealias Arg = BusInterface.Argument
    return BusInterface(
      name: GrowBusAPI.journeyInterface,
      methods: [
        .init(
          "ListGoals", outputs: [Arg("goals", "aa{sv}")],
          doc: "Every goal, parents before their steps: Name, Parent (s, empty for none), Card "
            + "(s), TargetSeconds and DoneSeconds (u; 0 without a target), Percent (i; -1 "
            + "without a target), Reached (b), Due and Estimated (s, YYYY-MM-DD or empty).",
          answer: { _, reply in service?.listGoals(reply) }),
        .init(
          "ListTasks", inputs: [Arg("card", "s", doc: "A card's name; empty for every card.")],
          outputs: [Arg("tasks", "aa{sv}")],
          doc: "The open tasks in the order they were added: Id (x), Card, Text (s), "
            + "FocusSeconds and FocusCount (u: completed focus on it).",
          answer: { call, reply in service?.listTasks(call, reply) }),
        .init(
          "AddTask", inputs: [Arg("card", "s"), Arg("text", "s", doc: "One line.")],
          outputs: [Arg("id", "x")], doc: "Adds a task to a card of the config.",
          answer: { call, reply in service?.addTask(call, reply) }),
        .init(
          "TaskDone", inputs: [Arg("id", "x")], doc: "Marks a task done.",
          answer: { call, reply in service?.taskDone(call, reply) }),
        .init(
          "StartTask", inputs: [Arg("id", "x")],
          doc: "Starts a session on the task's card with the task as its intention; each "
            + "focus is recorded toward it (grow start --task).",
          answer: { call, reply in service?.startTask(call, reply) }),
      ],
      signals: [
        .init(
          "Changed",
          doc: "Goals or tasks may read differently: a focus was recorded, a task added or "
            + "done. Call ListGoals or ListTasks again.")
      ],
      doc: "Goals with their steps, and the tasks on each card, kept in the history database.")
  }

  // MARK: Calls

  /// Calls waiting for the history at most; more get LimitsExceeded at once, so a client
  /// flooding the interface queues no unbounded work behind the history's writes.
  static let maximumWaiting = 32
  private var waiting = 0

  /// Runs `read` on the history's queue and `then` on the loop with what it gave; a failure
  /// is the caller's error reply.
  private func access<T: Sendable>(
    _ reply: PendingReply, read: @escaping @Sendable (HistoryStore) throws -> T,
    then: @escaping (T) -> Void
  ) {
    guard waiting < Self.maximumWaiting else {
      return reply.fail(
        BusError(
          name: "org.freedesktop.DBus.Error.LimitsExceeded",
          message: Message(
            "{count} goal and task calls already wait for the history; try again in a moment"
          ).render(["count": Self.maximumWaiting])))
    }
    waiting += 1
    history.access(
      { store in Result { try read(store) } },
      then: { [weak self] result in
        self?.waiting -= 1
        switch result {
        case .success(let value): then(value)
        case .failure(let error): reply.fail(Self.busError(error))
        }
      })
  }

  private func listGoals(_ reply: PendingReply) {
    let (now, zone) = (time.now, time.zone)
    access(
      reply, read: { store in try store.journeys(now: now, zone: zone) },
      then: { journeys in
        func flat(_ list: [GoalProgress]) -> [GoalProgress] {
          list.flatMap { [$0] + flat($0.subgoals) }
        }
        let today = LocalDay(now, in: zone)
        reply.send([
          .array(
            element: "a{sv}", flat(journeys).map { .vardict(Self.values(of: $0, today: today)) })
        ])
      })
  }

  private func listTasks(_ call: BusMessage, _ reply: PendingReply) {
    guard case .string(let card)? = call.arguments.first else { return }
    access(
      reply, read: { store in try store.tasks(card: card.isEmpty ? nil : card) },
      then: { tasks in
        reply.send([
          .array(
            element: "a{sv}",
            tasks.map { task in
              .vardict([
                "Id": .int64(task.id), "Card": .string(task.card), "Text": .string(task.text),
                "FocusSeconds": .uint32(UInt32(clamping: Int(task.focusSeconds.rounded()))),
                "FocusCount": .uint32(UInt32(clamping: task.focusCount)),
              ])
            })
        ])
      })
  }

  private func addTask(_ call: BusMessage, _ reply: PendingReply) {
    guard case .string(let card)? = call.arguments.first,
      case .string(let text)? = call.arguments.dropFirst().first
    else { return }
    let name: String
    do {
      name = try timer.deck.card(named: card).name
    } catch {
      return reply.fail(BusError(name: GrowBusAPI.ErrorName.unknownCard, message: error.message))
    }
    let now = time.now
    access(
      reply, read: { store in try store.addTask(card: name, text: text, at: now) },
      then: {
        [weak self] task in
        reply.send([.int64(task.id)])
        self?.changed()
      })
  }

  private func taskDone(_ call: BusMessage, _ reply: PendingReply) {
    guard case .int64(let id)? = call.arguments.first else { return }
    let now = time.now
    access(
      reply, read: { store in try store.setTask(id, done: true, at: now) },
      then: { [weak self] in
        reply.send()
        // For the plugins that mirror tasks elsewhere (examples/plugins/taskwarrior.py); it
        // also says Changed.
        self?.events.publish(TaskDone(task: id, at: now))
      })
  }

  private func startTask(_ call: BusMessage, _ reply: PendingReply) {
    guard case .int64(let id)? = call.arguments.first else { return }
    access(
      reply, read: { store in try store.task(id) },
      then: { [weak self] task in
        guard let self else { return }
        guard !task.isDone else {
          return reply.fail(
            BusError(
              name: GrowBusAPI.ErrorName.invalidState,
              message: Message("task {id} is done; 'grow task done {id} --undo' opens it again")
                .render(["id": task.id])))
        }
        do throws(BusError) {
          try TimerService.translate { () throws(TimerError) in
            try timer.start(
              card: task.card, overrides: SessionOverrides(intention: task.text, task: task.id))
          }
          reply.send()
        } catch {
          reply.fail(error)
        }
      })
  }

  // MARK: Values

  static func values(of progress: GoalProgress, today: LocalDay) -> [String: BusValue] {
    let goal = progress.goal
    return [
      "Name": .string(goal.name), "Parent": .string(goal.parent ?? ""),
      "Card": .string(goal.card ?? ""),
      "TargetSeconds": .uint32(UInt32(clamping: Int((progress.targetSeconds ?? 0).rounded()))),
      "DoneSeconds": .uint32(UInt32(clamping: Int(progress.doneSeconds.rounded()))),
      "Percent": .int32(progress.fraction.map { Int32(($0 * 100).rounded(.down)) } ?? -1),
      "Reached": .bool(progress.isReached), "Due": .string(goal.due?.text ?? ""),
      "Estimated": .string(progress.estimatedDay(from: today)?.text ?? ""),
    ]
  }

  static func busError(_ error: any Error) -> BusError {
    switch error {
    case let error as TaskError:
      if case .history = error { return BusError(name: BusError.failed, message: error.message) }
      return BusError(name: GrowBusAPI.ErrorName.invalidArgument, message: error.message)
    case let error as GoalError:
      return BusError(name: BusError.failed, message: error.message)
    default:
      return BusError(name: BusError.failed, message: "\(error)")
    }
  }
}
