import GrowCore

/// Every event published on a bus, in order, for asserting what a plugin announced.
public final class EventRecorder {
  public private(set) var events: [any GrowEvent] = []

  public init(_ bus: EventBus) {
    bus.subscribeToAll(as: "test-recorder") { [weak self] event in self?.events.append(event) }
  }

  /// The recorded events of type `E`, in order.
  public func of<E: GrowEvent>(_ type: E.Type) -> [E] { events.compactMap { $0 as? E } }

  /// The last recorded event of type `E`.
  public func last<E: GrowEvent>(_ type: E.Type) -> E? { of(type).last }

  /// The `eventName` of each recorded event, in order: `["phase-started", "timer-changed"]`,
  /// the names the plugin protocol and the logs use.
  public var names: [String] { events.map { type(of: $0).eventName } }

  public func removeAll() { events.removeAll() }
}
