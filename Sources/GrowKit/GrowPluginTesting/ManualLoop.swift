import FoundationEssentials
import GrowCore
import GrowLoop

/// An `EventLoop` whose clocks only move when told to, for a plugin's tests: hours of grace
/// periods, retries and countdowns run in milliseconds, and a descriptor is ready when the test
/// says so (`makeReady`).
///
/// `advance(by:)` moves both clocks together and fires every due action in deadline order,
/// each at its own instant; `jumpWallClock(by:)` moves the wall clock alone (a clock change or
/// a suspend), which fires wall-clock alarms now due but never a monotonic one.
public final class ManualLoop: EventLoop {
  private enum Clock { case wall, monotonic }

  private final class Entry: Alarm {
    let clock: Clock
    let deadline: Double
    let order: Int
    var action: (() -> Void)?
    init(clock: Clock, deadline: Double, order: Int, action: @escaping () -> Void) {
      self.clock = clock
      self.deadline = deadline
      self.order = order
      self.action = action
    }
    func cancel() { action = nil }
  }

  public private(set) var now: Date
  public private(set) var monotonicNow: MonotonicInstant
  public var zone: LocalZone
  private var entries: [Entry] = []
  private var scheduled = 0
  @MainActor private var watches: [ManualWatch] = []

  public init(
    now: Date = Date(timeIntervalSince1970: 1_780_000_000), zone: LocalZone = .utc
  ) {
    self.now = now
    monotonicNow = MonotonicInstant(secondsSinceOrigin: 1_000)
    self.zone = zone
  }

  public func schedule(at deadline: Date, _ action: @escaping () -> Void) -> any Alarm {
    add(.wall, deadline.timeIntervalSince1970, action)
  }

  public func after(seconds: TimeInterval, _ action: @escaping () -> Void) -> any Alarm {
    add(.monotonic, (monotonicNow + max(0, seconds)).secondsSinceOrigin, action)
  }

  private func add(_ clock: Clock, _ deadline: Double, _ action: @escaping () -> Void) -> Entry {
    scheduled += 1
    let entry = Entry(clock: clock, deadline: deadline, order: scheduled, action: action)
    entries.append(entry)
    return entry
  }

  /// How far from now `entry` falls due, as both clocks move together.
  private func offset(_ entry: Entry) -> Double {
    switch entry.clock {
    case .wall: entry.deadline - now.timeIntervalSince1970
    case .monotonic: entry.deadline - monotonicNow.secondsSinceOrigin
    }
  }

  /// Actions waiting to run.
  public var pendingCount: Int { entries.filter { $0.action != nil }.count }

  /// Seconds until the next action falls due, if any is waiting.
  public var nextDue: TimeInterval? {
    entries.filter { $0.action != nil }.map { max(0, offset($0)) }.min()
  }

  /// Moves both clocks forward, firing every action that falls due on the way, in deadline
  /// order (scheduling order for ties), each with the clocks at its own deadline. Actions
  /// scheduled by those actions run too if they fall due before the end.
  public func advance(by seconds: TimeInterval) {
    var left = seconds
    // A nanosecond's slack: steps like 2.9 + 0.1 land a rounding error short of 3.
    while let due = entries.filter({ $0.action != nil && offset($0) <= left + 1e-9 })
      .min(by: { (offset($0), $0.order) < (offset($1), $1.order) })
    {
      let step = min(max(0, offset(due)), max(0, left))
      move(by: step)
      left -= step
      let action = due.action
      due.action = nil
      entries.removeAll { $0.action == nil }
      action?()
    }
    move(by: max(0, left))
  }

  /// Runs what is due now (a zero-second `after`, say) without moving the clocks.
  public func runDue() { advance(by: 0) }

  private func move(by seconds: Double) {
    now = now.addingTimeInterval(seconds)
    monotonicNow = monotonicNow + seconds
  }

  /// Moves the wall clock alone, as a clock change or a suspend does: wall-clock alarms now
  /// due fire (in order), monotonic ones keep their distance.
  public func jumpWallClock(by seconds: TimeInterval) {
    now = now.addingTimeInterval(seconds)
    runDue()
  }

  @MainActor
  public func watch(
    _ descriptor: Int32, for interest: FileWatcher.Readiness,
    _ handler: @escaping (FileWatcher.Readiness) -> Void
  ) -> any DescriptorWatch {
    let watch = ManualWatch(descriptor: descriptor, interest: interest, handler: handler)
    watches.append(watch)
    return watch
  }

  /// Descriptors watched and not cancelled.
  @MainActor
  public var watchedDescriptors: [Int32] {
    watches.filter { !$0.isCancelled }.map(\.descriptor)
  }

  /// Tells the watches of `descriptor` that it is ready for `readiness` (what each asked for).
  @MainActor
  public func makeReady(_ descriptor: Int32, _ readiness: FileWatcher.Readiness = .readable) {
    for watch in watches where watch.descriptor == descriptor && !watch.isCancelled {
      let relevant = readiness.intersection(watch.interest.union(.hangUp))
      if !relevant.isEmpty { watch.handler(relevant) }
    }
    watches.removeAll { $0.isCancelled }
  }
}

/// A watch on a `ManualLoop`.
@MainActor
final class ManualWatch: DescriptorWatch {
  let descriptor: Int32
  var interest: FileWatcher.Readiness
  let handler: (FileWatcher.Readiness) -> Void
  private(set) var isCancelled = false

  init(
    descriptor: Int32, interest: FileWatcher.Readiness,
    handler: @escaping (FileWatcher.Readiness) -> Void
  ) {
    self.descriptor = descriptor
    self.interest = interest
    self.handler = handler
  }

  func cancel() { isCancelled = true }
}
