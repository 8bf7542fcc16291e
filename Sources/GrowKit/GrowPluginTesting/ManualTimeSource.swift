import FoundationEssentials
import GrowCore

/// A clock that only moves when told to, for tests and simulations.
public final class ManualTimeSource: TimeSource {
  private final class ManualAlarm: Alarm {
    let deadline: Date
    let order: Int
    var action: (() -> Void)?
    init(deadline: Date, order: Int, action: @escaping () -> Void) {
      self.deadline = deadline
      self.order = order
      self.action = action
    }
    func cancel() { action = nil }
  }

  public private(set) var now: Date
  public var zone: LocalZone
  private var alarms: [ManualAlarm] = []
  private var scheduled = 0

  public init(now: Date = Date(timeIntervalSince1970: 1_780_000_000), zone: LocalZone = .utc) {
    self.now = now
    self.zone = zone
  }

  /// A clock in a Foundation time zone (tests make them by name with the full Foundation).
  public convenience init(
    now: Date = Date(timeIntervalSince1970: 1_780_000_000), timeZone: TimeZone
  ) {
    self.init(now: now, zone: LocalZone(timeZone))
  }

  public func schedule(at deadline: Date, _ action: @escaping () -> Void) -> any Alarm {
    scheduled += 1
    let alarm = ManualAlarm(deadline: deadline, order: scheduled, action: action)
    alarms.append(alarm)
    return alarm
  }

  /// The earliest pending deadline, if any.
  public var nextDeadline: Date? {
    alarms.filter { $0.action != nil }.map(\.deadline).min()
  }

  /// Moves time forward, firing every alarm that falls due on the way, in deadline order,
  /// each at its own deadline.
  public func advance(by seconds: TimeInterval) {
    let target = now.addingTimeInterval(seconds)
    while let due = alarms.filter({ $0.action != nil && $0.deadline <= target })
      .min(by: { ($0.deadline, $0.order) < ($1.deadline, $1.order) })
    {
      now = max(now, due.deadline)
      let action = due.action
      due.action = nil
      alarms.removeAll { $0.action == nil }
      action?()
    }
    now = target
  }

  /// Jumps the clock without firing anything (a wall-clock change or a suspend).
  public func set(now: Date) { self.now = now }
}
