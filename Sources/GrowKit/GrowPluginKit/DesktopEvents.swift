import FoundationEssentials
import Glibc
import GrowCore

// Events about the desktop, published by the `x11` plugin (or any other desktop monitor).
// They live here, next to the plugin API, so every plugin can subscribe to them by type and
// the JSON-lines protocol carries them to external plugins (docs/plugin-protocol.md).

/// The window that has the keyboard focus changed, or its title did.
public struct ActiveWindowChanged: GrowEvent {
  public static let eventName = "active-window-changed"
  /// WM_CLASS class (`Firefox`); empty when nothing is focused.
  public let windowClass: String
  /// WM_CLASS instance (`Navigator`).
  public let instance: String
  public let title: String
  /// `_NET_WM_PID`, when the window sets it.
  public let pid: Int?
  /// Seconds since boot (CLOCK_MONOTONIC) when the plugin saw the change, for latency
  /// measurements that compare clocks across processes.
  public let monotonic: TimeInterval

  public init(
    windowClass: String, instance: String, title: String, pid: Int?,
    monotonic: TimeInterval = MonotonicClock.now
  ) {
    self.windowClass = windowClass
    self.instance = instance
    self.title = title
    self.pid = pid
    self.monotonic = monotonic
  }
}

/// A distracting window stayed active longer than the grace period during focus.
public struct DistractionStarted: GrowEvent {
  public static let eventName = "distraction-started"
  /// The window's WM_CLASS class (or instance when the class is empty).
  public let app: String
  public let title: String
  /// The card whose focus phase is running.
  public let card: String
  /// When the distracting window became active (the grace period included).
  public let when: Date
  /// Seconds the window has been active so far (the grace period).
  public let duration: TimeInterval
  /// The website in a browser (its host, or its address with `record-urls`), as the browser
  /// extension reported it; nil for a window.
  public let site: String?

  public init(
    app: String, title: String, card: String, when: Date, duration: TimeInterval,
    site: String? = nil
  ) {
    self.app = app
    self.title = title
    self.card = card
    self.when = when
    self.duration = duration
    self.site = site
  }
}

/// The person left the distracting window, or the focus phase ended.
public struct DistractionEnded: GrowEvent {
  public static let eventName = "distraction-ended"
  public let app: String
  public let title: String
  public let card: String
  /// When the distracting window became active.
  public let when: Date
  /// Seconds spent there, the grace period included.
  public let duration: TimeInterval
  /// Whether the person agreed to keep window titles in the history (`record-titles`).
  public let recordTitle: Bool
  /// The website, as in `DistractionStarted.site`; the history keeps it like the app.
  public let site: String?

  public init(
    app: String, title: String, card: String, when: Date, duration: TimeInterval,
    recordTitle: Bool, site: String? = nil
  ) {
    self.app = app
    self.title = title
    self.card = card
    self.when = when
    self.duration = duration
    self.recordTitle = recordTitle
    self.site = site
  }
}

/// No keyboard or mouse input for `idleSeconds`.
public struct UserIdle: GrowEvent {
  public static let eventName = "user-idle"
  public let idleSeconds: TimeInterval
  public init(idleSeconds: TimeInterval) { self.idleSeconds = idleSeconds }
}

/// Input again after being idle for `idleSeconds`.
public struct UserActive: GrowEvent {
  public static let eventName = "user-active"
  public let idleSeconds: TimeInterval
  /// Seconds since boot (CLOCK_MONOTONIC) when the plugin saw the input.
  public let monotonic: TimeInterval
  public init(idleSeconds: TimeInterval, monotonic: TimeInterval = MonotonicClock.now) {
    self.idleSeconds = idleSeconds
    self.monotonic = monotonic
  }
}

/// Focus was paused because nobody was at the computer.
public struct AwayPaused: GrowEvent {
  public static let eventName = "away-paused"
  public let card: String
  /// Seconds without input when the pause happened (the `idle-pause` threshold).
  public let awaySeconds: TimeInterval
  public init(card: String, awaySeconds: TimeInterval) {
    self.card = card
    self.awaySeconds = awaySeconds
  }
}

/// The person came back and focus resumed by itself.
public struct AwayResumed: GrowEvent {
  public static let eventName = "away-resumed"
  public let card: String
  /// Seconds without input in all, the threshold included.
  public let awaySeconds: TimeInterval
  public init(card: String, awaySeconds: TimeInterval) {
    self.card = card
    self.awaySeconds = awaySeconds
  }
}

/// Seconds since boot on CLOCK_MONOTONIC: comparable across processes on one machine.
public enum MonotonicClock {
  public static var now: TimeInterval {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return TimeInterval(spec.tv_sec) + TimeInterval(spec.tv_nsec) / 1e9
  }
}

// MARK: JSON lines

extension ActiveWindowChanged: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    [
      "class": .string(windowClass), "instance": .string(instance), "title": .string(title),
      "pid": pid.map { .int($0) } ?? .null, "monotonic": .number((monotonic * 1e6).rounded() / 1e6),
    ]
  }
}

extension DistractionStarted: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    [
      "app": .string(app), "title": .string(title), "card": .string(card), "when": .time(when),
      "duration": .seconds(duration), "site": site.map { .string($0) } ?? .null,
    ]
  }
}

extension DistractionEnded: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    [
      "app": .string(app), "title": .string(title), "card": .string(card), "when": .time(when),
      "duration": .seconds(duration), "site": site.map { .string($0) } ?? .null,
    ]
  }
}

extension UserIdle: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] { ["idle_seconds": .seconds(idleSeconds)] }
}

extension UserActive: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    [
      "idle_seconds": .seconds(idleSeconds),
      "monotonic": .number((monotonic * 1e6).rounded() / 1e6),
    ]
  }
}

extension AwayPaused: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    ["card": .string(card), "away_seconds": .seconds(awaySeconds)]
  }
}

extension AwayResumed: JSONLineEvent {
  public func jsonFields() -> [String: JSONValue] {
    ["card": .string(card), "away_seconds": .seconds(awaySeconds)]
  }
}
