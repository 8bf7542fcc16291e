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

  private var byType: [ObjectIdentifier: [Entry]] = [:]
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
    let entry = Entry(id: nextID, subscriber: subscriber) { event in
      // The bus only hands an entry the events stored under its type, so this always casts.
      guard let typed = event as? E else { return }
      try handler(typed)
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
    deliver(event, to: byType[ObjectIdentifier(E.self)], key: ObjectIdentifier(E.self))
    while !pending.isEmpty {
      let next = pending.removeFirst()
      let key = ObjectIdentifier(type(of: next))
      deliver(next, to: byType[key], key: key)
    }
  }

  private func deliver(_ event: any GrowEvent, to typed: [Entry]?, key: ObjectIdentifier) {
    var failed: [(Entry, any Error)] = []
    for entry in typed ?? [] {
      do { try watched(entry, event) } catch { failed.append((entry, error)) }
    }
    for entry in everything {
      do { try watched(entry, event) } catch { failed.append((entry, error)) }
    }
    for (entry, error) in failed {
      unsubscribe(Subscription(id: entry.id))
      onSubscriberFailure(entry.subscriber, error)
    }
  }

  private func watched(_ entry: Entry, _ event: any GrowEvent) throws {
    guard let watchdog else { return try entry.deliver(event) }
    watchdog.handlerStarted(subscriber: entry.subscriber, event: type(of: event).eventName)
    defer { watchdog.handlerFinished() }
    try entry.deliver(event)
  }
}
