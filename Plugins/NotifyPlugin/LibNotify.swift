import CNotify
import Glibc

/// Why libnotify could not show a notification.
enum NotificationError: Error, CustomStringConvertible {
  /// `notify_init` failed (no GLib type system, out of memory).
  case cannotInitialize
  /// The server refused or is not there; the message is GLib's.
  case notShown(String)

  var description: String {
    switch self {
    case .cannotInitialize: "libnotify could not be initialised"
    case .notShown(let reason): reason
    }
  }
}

/// How urgent a notification is; sent as the BYTE hint `urgency` (dunst ignores other types).
enum NotificationUrgency: String, CaseIterable {
  case low, normal, critical

  fileprivate var libnotify: NotifyUrgency {
    switch self {
    case .low: NOTIFY_URGENCY_LOW
    case .normal: NOTIFY_URGENCY_NORMAL
    case .critical: NOTIFY_URGENCY_CRITICAL
    }
  }
}

/// A hint value; libnotify wraps it in a GVariant of the matching D-Bus type.
enum NotificationHint {
  case string(String)
  case bool(Bool)
}

/// libnotify with Swift names: process-wide set-up and the server's description.
@MainActor
enum LibNotify {
  /// Initialises libnotify once for the process, under `appName`.
  static func initialize(appName: String) throws(NotificationError) {
    if notify_is_initted() != 0 { return }
    guard notify_init(appName) != 0 else { throw .cannotInitialize }
  }

  /// GLib's shared session bus connection, which libnotify uses, held for the life of the
  /// process with exit-on-close off. GLib makes it with exit-on-close on: when the bus goes
  /// away it raises SIGTERM, which the daemon would take for a person's clean stop and end the
  /// running session; the daemon handles a lost bus itself (it keeps the session).
  private static var sharedConnection: OpaquePointer?

  /// Connects GLib's shared session bus connection now, with exit-on-close off; false when
  /// there is no session bus.
  @discardableResult
  static func keepProcessOnBusLoss() -> Bool {
    if sharedConnection != nil { return true }
    guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, nil) else { return false }
    g_dbus_connection_set_exit_on_close(connection, 0)
    sharedConnection = connection
    return true
  }

  /// The server's capabilities (`actions`, `body-markup`, …); nil when no server answers.
  /// A blocking D-Bus round trip: call it when a server appears, not for every notification.
  static func serverCapabilities() -> Set<String>? {
    guard let list = notify_get_server_caps() else { return nil }
    var capabilities = Set<String>()
    var node: UnsafeMutablePointer<GList>? = list
    while let current = node {
      if let data = current.pointee.data {
        capabilities.insert(String(cString: data.assumingMemoryBound(to: CChar.self)))
      }
      node = current.pointee.next
    }
    g_list_free_full(list, g_free)
    return capabilities
  }
}

/// One libnotify notification, reused so that every `show` replaces the last one in place
/// (libnotify sends the id the server gave it as `replaces_id`).
@MainActor
final class DesktopNotification {
  private let raw: UnsafeMutablePointer<NotifyNotification>
  /// Called with an action's key when the person picks it.
  var onAction: ((String) -> Void)?
  /// Called when the server closes the notification (expired, dismissed, action taken).
  var onClosed: (() -> Void)?

  init() {
    // notify_notification_new only returns NULL when GLib cannot allocate, which aborts first.
    raw = notify_notification_new("", nil, nil)
    let box = Unmanaged.passUnretained(self).toOpaque()
    cnotify_connect_closed(
      raw,
      { _, data in
        guard let data else { return }
        let notification = Unmanaged<DesktopNotification>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { notification.onClosed?() }
      }, box)
  }

  isolated deinit {
    notify_notification_clear_actions(raw)
    g_signal_handlers_disconnect_matched(
      raw, G_SIGNAL_MATCH_DATA, 0, 0, nil, nil, Unmanaged.passUnretained(self).toOpaque())
    g_object_unref(raw)
  }

  /// The id the server gave this notification; 0 before it was shown.
  var serverID: UInt32 { UInt32(bitPattern: cnotify_notification_id(raw)) }

  /// Sets what the next `show` sends.
  func update(
    summary: String, body: String, icon: String, urgency: NotificationUrgency,
    timeoutMilliseconds: Int32, category: String, hints: [String: NotificationHint],
    actions: [(key: String, label: String)]
  ) {
    notify_notification_update(raw, summary, body, icon)
    // Urgency and category are hints in libnotify: clear the old hints first.
    notify_notification_clear_hints(raw)
    notify_notification_set_urgency(raw, urgency.libnotify)
    notify_notification_set_timeout(raw, timeoutMilliseconds)
    notify_notification_set_category(raw, category)
    for (name, hint) in hints {
      // The variant is floating; set_hint sinks it.
      switch hint {
      case .string(let text): notify_notification_set_hint(raw, name, g_variant_new_string(text))
      case .bool(let flag):
        notify_notification_set_hint(raw, name, g_variant_new_boolean(flag ? 1 : 0))
      }
    }
    notify_notification_clear_actions(raw)
    let box = Unmanaged.passUnretained(self).toOpaque()
    for action in actions {
      notify_notification_add_action(
        raw, action.key, action.label,
        { _, key, data in
          guard let key, let data else { return }
          let notification = Unmanaged<DesktopNotification>.fromOpaque(data)
            .takeUnretainedValue()
          let name = String(cString: key)
          MainActor.assumeIsolated { notification.onAction?(name) }
        }, box, nil)
    }
  }

  /// Sends it to the server (a blocking D-Bus call, answered at once by a healthy server).
  func show() throws(NotificationError) {
    var error: UnsafeMutablePointer<GError>?
    guard notify_notification_show(raw, &error) != 0 else {
      let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
      if let error { g_error_free(error) }
      throw .notShown(message)
    }
  }

  /// Takes it off the screen, if it is there.
  func close() {
    guard serverID != 0 else { return }
    notify_notification_close(raw, nil)
  }
}
