/// Something that happened, published on the `EventBus`.
///
/// Events are plain value types. Each has a stable kebab-case `eventName`, used wherever an
/// event leaves the process (JSON lines for external plugins, logs).
public protocol GrowEvent: Sendable {
  static var eventName: String { get }
}

/// A handle for one subscription; pass it to `EventBus.unsubscribe(_:)` to stop receiving.
public struct Subscription: Hashable, Sendable {
  fileprivate let id: Int
}

/// The in-process, typed event bus.
///
/// Subscribers ask for the event types they want and receive them as those types; there is
/// no string matching and no casting in subscriber code. The bus belongs to one event loop
/// (the daemon's main queue) and is not thread-safe by design: everything that touches it
/// runs on that loop, which is what keeps publishing cheap.
///
/// A subscriber that throws is reported through `onSubscriberFailure` and removed, so one
/// broken plugin never takes the daemon or the other subscribers down. An event published
/// from inside a handler is queued and delivered after the current one has reached every
/// subscriber, so all subscribers see events in the same order.
public final class EventBus {
  /// A subscription to one event type. `deliver` reads the event from a pointer to a value of
  /// exactly that type: `byType` files an entry under its own type only, so the handler gets
  /// its event without boxing it in `any GrowEvent` and casting it back, which was most of the
  /// cost of a delivery (`grow-bench bus`).
  private struct TypedEntry {
    let id: Int
    let subscriber: String
    let deliver: (UnsafeRawPointer) throws -> Void
  }

  /// A subscription to every event, which needs the event boxed.
  private struct Entry {
    let id: Int
    let subscriber: String
    let deliver: (any GrowEvent) throws -> Void
  }

  /// Called with the subscriber's name and its error when a handler throws.
  @_spi(GrowHost) public var onSubscriberFailure:
    (_ subscriber: String, _ error: any Error) -> Void = { _, _ in }

  /// Told when each handler starts and returns, so a handler that never returns is noticed.
  @_spi(GrowHost) public var watchdog: HandlerWatchdog?

  private var byType: [ObjectIdentifier: [TypedEntry]] = [:]
  private var everything: [Entry] = []
  private var nextID = 0
  private var isDelivering = false
  private var pending: [any GrowEvent] = []

  public init() {}

  /// Delivers every `E` published from now on to `handler`.
  /// - Parameter subscriber: a name for error reports, such as the plugin id.
  @discardableResult
  public func subscribe<E: GrowEvent>(
    _ type: E.Type, as subscriber: String, _ handler: @escaping (E) throws -> Void
  ) -> Subscription {
    nextID += 1
    let entry = TypedEntry(id: nextID, subscriber: subscriber) { event in
      try handler(event.assumingMemoryBound(to: E.self).pointee)
    }
    byType[ObjectIdentifier(type), default: []].append(entry)
    return Subscription(id: nextID)
  }

  /// Delivers every event, whatever its type, to `handler` (for bridges such as the D-Bus
  /// API and external plugins).
  @discardableResult
  public func subscribeToAll(
    as subscriber: String, _ handler: @escaping (any GrowEvent) throws -> Void
  ) -> Subscription {
    nextID += 1
    everything.append(Entry(id: nextID, subscriber: subscriber, deliver: handler))
    return Subscription(id: nextID)
  }

  public func unsubscribe(_ subscription: Subscription) {
    for key in byType.keys { byType[key]?.removeAll { $0.id == subscription.id } }
    everything.removeAll { $0.id == subscription.id }
  }

  /// Removes every subscription made under `subscriber`.
  public func unsubscribeAll(of subscriber: String) {
    for key in byType.keys { byType[key]?.removeAll { $0.subscriber == subscriber } }
    everything.removeAll { $0.subscriber == subscriber }
  }

  /// The number of live subscriptions, for diagnostics.
  public var subscriptionCount: Int { byType.values.reduce(everything.count) { $0 + $1.count } }

  public func publish<E: GrowEvent>(_ event: E) {
    if isDelivering {
      pending.append(event)
      return
    }
    isDelivering = true
    defer { isDelivering = false }
    deliver(event)
    while !pending.isEmpty {
      // Opens the existential, so a queued event reaches its typed subscribers as itself.
      let next = pending.removeFirst()
      deliver(next)
    }
  }

  private func deliver<E: GrowEvent>(_ event: E) {
    // The class's properties are read once, not per subscriber: each read of a class's stored
    // property is an exclusivity check at run time, which cost more than the delivery itself.
    let watchdog = self.watchdog
    var failed: [(id: Int, subscriber: String, error: any Error)] = []
    if let typed = byType[ObjectIdentifier(E.self)] {
      withUnsafePointer(to: event) { pointer in
        for entry in typed {
          do {
            try Self.run(entry.subscriber, E.eventName, watchdog) { try entry.deliver(pointer) }
          } catch { failed.append((entry.id, entry.subscriber, error)) }
        }
      }
    }
    for entry in everything {
      do {
        try Self.run(entry.subscriber, E.eventName, watchdog) { try entry.deliver(event) }
      } catch { failed.append((entry.id, entry.subscriber, error)) }
    }
    for (id, subscriber, error) in failed {
      unsubscribe(Subscription(id: id))
      onSubscriberFailure(subscriber, error)
    }
  }

  private static func run(
    _ subscriber: String, _ event: @autoclosure () -> String, _ watchdog: HandlerWatchdog?,
    _ handler: () throws -> Void
  ) throws {
    guard let watchdog else { return try handler() }
    watchdog.handlerStarted(subscriber: subscriber, event: event())
    defer { watchdog.handlerFinished() }
    try handler()
  }
}
