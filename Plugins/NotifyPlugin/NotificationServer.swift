import GrowDBus

/// Why a notification could not be shown.
enum NotificationError: Error, Equatable, CustomStringConvertible {
  /// Nobody owns `org.freedesktop.Notifications` (and D-Bus could not start anyone).
  case noServer(String)
  /// The server took the call but did not answer in time (stopped, or stuck on its display).
  case noAnswer(milliseconds: Int32)
  /// The server answered with an error.
  case refused(String)

  var description: String {
    switch self {
    case .noServer(let reason): reason
    case .noAnswer(let milliseconds): "no answer within \(milliseconds / 1000) s"
    case .refused(let reason): reason
    }
  }
}

/// How urgent a notification is; sent as the BYTE hint `urgency` (dunst ignores other types).
enum NotificationUrgency: String, CaseIterable {
  case low, normal, critical

  var byte: UInt8 {
    switch self {
    case .low: 0
    case .normal: 1
    case .critical: 2
    }
  }
}

/// A hint value of the types Grow sends.
enum NotificationHint: Equatable {
  case string(String)
  case bool(Bool)
  case byte(UInt8)
}

/// One `Notify` call: what the person reads and what they can do about it.
struct NotificationRequest: Equatable {
  var summary: String
  var body: String
  var icon: String
  /// `(key, label)` pairs; the key "default" is what clicking the notification does.
  var actions: [(key: String, label: String)]
  var hints: [String: NotificationHint]
  /// Milliseconds; -1 for the server's default, 0 for never.
  var expireTimeout: Int32

  static func == (left: Self, right: Self) -> Bool {
    left.summary == right.summary && left.body == right.body && left.icon == right.icon
      && left.actions.elementsEqual(right.actions) { $0 == $1 } && left.hints == right.hints
      && left.expireTimeout == right.expireTimeout
  }
}

/// Why the server closed a notification (the spec's `NotificationClosed` reasons).
enum NotificationClosedReason: UInt32 {
  case expired = 1
  case dismissed = 2
  case closedByCall = 3
  case undefined = 4
}

/// A desktop notification server as the notify plugin uses it: every call answers later,
/// on the loop, and never waits. `FreedesktopNotifications` speaks the freedesktop protocol
/// over the daemon's bus; the protocol keeps the plugin's wording and lifecycle apart from it.
@MainActor
protocol NotificationServer: AnyObject {
  /// Shows `request`, in place of notification `replacing` when not 0; the reply has the id.
  /// After `noAnswer` a second reply may come, with the id, when the server shows it late.
  func notify(
    _ request: NotificationRequest, replacing: UInt32,
    reply: @escaping (Result<UInt32, NotificationError>) -> Void)
  /// Takes notification `id` off the screen (and out of the server's queue).
  func close(_ id: UInt32)
  /// What the server can do (`actions`, `body-markup`, …); nil when it cannot say.
  func capabilities(reply: @escaping (Set<String>?) -> Void)
  /// The server's name (`dunst`, `gnome-shell`, …) and version; nil when it cannot say.
  func serverInformation(reply: @escaping ((name: String, version: String)?) -> Void)
  /// Called with the notification's id and the action's key when the person picks one.
  var onAction: ((UInt32, String) -> Void)? { get set }
  /// Called when the server closed a notification.
  var onClosed: ((UInt32, NotificationClosedReason) -> Void)? { get set }
  /// Called when a server takes the name (true) or leaves it (false).
  var onServerChanged: ((Bool) -> Void)? { get set }
}
