import FoundationEssentials
import GrowConfig
import GrowCore
import GrowDBus
import GrowLoop

/// What a plugin gets from the daemon: its settings, a logger, the event bus and the timer.
@MainActor
public final class PluginContext {
  /// The plugin's id.
  public let id: String
  /// The plugin's own `[plugin.ID]` section (empty when the file has none). Its typed accessors
  /// throw errors that name file, line and key.
  public let config: ConfigSection
  /// Speaks as `grow[ID]`.
  public let log: Logger
  /// Drives the timer: start, pause, resume, skip, stop, extend, and its status.
  public let timer: any TimerControl
  /// The daemon's session bus connection; nil when the daemon runs without one (tests).
  public let sessionBus: BusConnection?
  /// Grow's own object, `/org/grow/Grow1`, so a plugin can add its interface to the API.
  public let growObject: BusObject?
  /// The daemon's environment (`DISPLAY`, `XDG_*`).
  public let environment: [String: String]
  /// The event loop: the clocks, alarms and descriptor watches. A plugin uses this, never the
  /// main queue, `FileWatcher.shared` or `Date()` directly, so its tests can run it on a
  /// `ManualLoop` (GrowPluginTesting).
  public let loop: any EventLoop

  // The host's side: what the calls below reach in the daemon. Behind SPI so that a plugin can
  // neither see nor replace them; the daemon and the test kit import GrowPluginKit with
  // `@_spi(GrowHost)`.

  /// Set by the host: takes the plugin out of service with `error` as the reason.
  @_spi(GrowHost) public var onDisable: ((PluginError) -> Void)?
  /// Set by the host: shows a note next to a running plugin in `grow plugins`, with its kind
  /// when the plugin gave one.
  @_spi(GrowHost) public var onNote: ((String?, PluginLimit?) -> Void)?
  /// Set by the host: keeps the plugin's emergency-exit action (see `onEmergencyExit`).
  @_spi(GrowHost) public var onEmergencyAction: ((@Sendable () -> Void)?) -> Void = { _ in }
  /// Set by the host: shows the plugin as unavailable for the reason given (with its kind when
  /// the plugin gave one), or running again for nil, while it stays loaded.
  @_spi(GrowHost) public var onAvailability: ((String?, PluginLimit?) -> Void)?

  private let events: EventBus
  /// What `onSignal` subscribed, ended when the plugin stops (`endSignalSubscriptions`).
  private var signalSubscriptions: [SignalSubscription] = []
  private var signalSubscriptionsEnded = false

  /// Made by the host for each plugin it starts (and by the test kit's `PluginTestBed`).
  @_spi(GrowHost) public init(
    id: String, config: ConfigSection, log: Logger, events: EventBus, timer: any TimerControl,
    sessionBus: BusConnection? = nil, growObject: BusObject? = nil,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    loop: any EventLoop = MainLoop.shared
  ) {
    self.id = id
    self.config = config
    self.log = log
    self.events = events
    self.timer = timer
    self.sessionBus = sessionBus
    self.growObject = growObject
    self.environment = environment
    self.loop = loop
  }

  /// Calls `handler` with every `E` published from now on. If the handler throws, the plugin
  /// is disabled.
  public func subscribe<E: GrowEvent>(_ type: E.Type, _ handler: @escaping (E) throws -> Void) {
    events.subscribe(type, as: id, handler)
  }

  /// Calls `handler` with every event, whatever its type.
  public func subscribeToAll(_ handler: @escaping (any GrowEvent) throws -> Void) {
    events.subscribeToAll(as: id, handler)
  }

  /// Calls `handler` with each signal on the session bus that matches `rule` (which must name
  /// its sender; see `BusConnection.onSignal`), for as long as the plugin runs: when it stops,
  /// the host cancels the subscription, removing its handler and its match rule, so a plugin
  /// reloaded a hundred times leaves nothing behind. `cancel()` it to end it sooner.
  /// - Throws: NoServer without a session bus, or after the plugin was stopped; what
  ///   `BusConnection.onSignal` throws for a bad rule.
  @discardableResult
  public func onSignal(match rule: String, _ handler: @escaping (BusMessage) -> Void)
    throws(BusError) -> SignalSubscription
  {
    guard let sessionBus else {
      throw BusError(name: BusError.noServer, message: "the daemon has no session bus")
    }
    guard !signalSubscriptionsEnded else {
      throw BusError(
        name: BusError.noServer,
        message: "plugin '\(id)' has stopped; a new instance subscribes for itself")
    }
    signalSubscriptions.removeAll { $0.isCancelled }
    let subscription = try sessionBus.onSignal(match: rule, handler)
    signalSubscriptions.append(subscription)
    return subscription
  }

  /// Called by the host when the plugin stops: cancels every subscription `onSignal` made,
  /// and refuses new ones (an answer the stopped plugin still gets must not subscribe again).
  @_spi(GrowHost) public func endSignalSubscriptions() {
    signalSubscriptionsEnded = true
    for subscription in signalSubscriptions { subscription.cancel() }
    signalSubscriptions.removeAll()
  }

  /// Takes the plugin out of service from outside an event handler (its X server went away,
  /// say): the host removes its subscriptions, calls `stop()` and shows `error` in
  /// `grow plugins`. Return right after calling it.
  public func disable(because error: PluginError) {
    onDisable?(error)
  }

  /// Something the plugin needs went away, and the plugin stays loaded to take it up again by
  /// itself (its X server crashed, and it waits for the next one): `grow plugins` shows it as
  /// unavailable with `reason` until `setAvailable()`. Unlike `disable(because:)`, nothing is
  /// unsubscribed or stopped.
  public func setUnavailable(_ reason: String) {
    onAvailability?(reason, nil)
  }

  /// As `setUnavailable(_:)`, for a reason of a known kind, which `grow doctor` advises on.
  public func setUnavailable(_ reason: String, limit: PluginLimit) {
    onAvailability?(reason, limit)
  }

  /// Back in service after `setUnavailable(_:)`.
  public func setAvailable() {
    onAvailability?(nil, nil)
  }

  /// A remark `grow plugins` shows under a running plugin (a limitation it works around), or
  /// nil to clear it.
  public func setNote(_ note: String?) {
    onNote?(note, nil)
  }

  /// As `setNote(_:)`, for a limitation of a known kind, which `grow doctor` advises on.
  public func setNote(_ note: String, limit: PluginLimit) {
    onNote?(note, limit)
  }

  /// What to undo if the daemon must exit while its event loop is stuck (a handler that never
  /// returns), when `stop()` cannot run: see `EmergencyExitActions`. `action` runs on another
  /// thread, must not touch the plugin's own state, and must finish within a second or so.
  /// Pass nil to remove it.
  public func onEmergencyExit(_ action: (@Sendable () -> Void)?) {
    onEmergencyAction(action)
  }

  /// Publishes an event of the plugin's own to every subscriber.
  public func publish<E: GrowEvent>(_ event: E) {
    events.publish(event)
  }
}

/// The timer as plugins see it.
@MainActor
public protocol TimerControl: AnyObject {
  var status: TimerStatus { get }
  var deck: CardDeck { get }
  func start(card: String?, overrides: SessionOverrides) throws(TimerError)
  func pause() throws(TimerError)
  func resume() throws(TimerError)
  func toggle() throws(TimerError)
  func skip() throws(TimerError)
  func stop() throws(TimerError)
  func extend(by seconds: TimeInterval) throws(TimerError)
  /// Takes time off the running phase, always leaving a minute of it.
  func shorten(by seconds: TimeInterval) throws(TimerError)
}

extension FocusTimer: TimerControl {}
