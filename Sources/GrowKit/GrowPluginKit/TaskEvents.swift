import FoundationEssentials
@_spi(GrowHost) import GrowCore

/// The person said the task their focus was for is done (the notify plugin's "Done?" button),
/// as `task-done` for external plugins. The history marks it done.
public struct TaskDone: GrowEvent, Equatable {
  public static let eventName = "task-done"
  /// The task's id (`PhaseStarted.task`, `grow tasks`).
  public let task: Int64
  public let at: Date

  public init(task: Int64, at: Date) {
    self.task = task
    self.at = at
  }
}

extension TaskDone: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    ["task": .int(Int(task))]
  }
}
