import FoundationEssentials
import Glibc
import GrowCore
import GrowDBus
import GrowMessages
import GrowPluginKit

/// Idle and return on GNOME (X11 or Wayland), from Mutter over the session bus: an idle watch
/// (`AddIdleWatch`) fires `WatchFired` once the person has been idle for the interval; a user
/// active watch (`AddUserActiveWatch`, one-shot) at the next input. No polling: the bus
/// connection sits on the loop, and every call has a timeout.
@MainActor
final class MutterIdle {
  static let service = "org.gnome.Mutter.IdleMonitor"
  static let path = "/org/gnome/Mutter/IdleMonitor/Core"
  static let timeout: Int32 = 2000

  var onReady: ((Worded?) -> Void)?
  var onIdle: (() -> Void)?
  var onActive: (() -> Void)?

  private let bus: BusConnection
  private let milliseconds: UInt64
  private let log: Logger
  private var idleWatch: UInt32?
  private var activeWatch: UInt32?
  /// Ends with the plugin (the host cancels what its context subscribed), or at `stop()`.
  private var watchFired: SignalSubscription?
  private let context: PluginContext

  init(bus: BusConnection, milliseconds: UInt64, context: PluginContext) {
    self.bus = bus
    self.context = context
    self.milliseconds = milliseconds
    self.log = context.log
  }

  /// Subscribes to `WatchFired` and adds the idle watch; `onReady` says whether Mutter
  /// answered (nil) or why not.
  func start() {
    do {
      watchFired = try context.onSignal(
        match: "type='signal',sender='\(Self.service)',interface='\(Self.service)',"
          + "member='WatchFired',path='\(Self.path)'"
      ) { [weak self] message in
        guard let id = message.arguments.first?.integerValue else { return }
        self?.fired(UInt32(truncatingIfNeeded: id))
      }
    } catch {
      onReady?(
        Worded(
          Message("cannot follow {service}: {error}: away detection is off"),
          ["service": Self.service, "error": "\(error)"]))
      return
    }
    call("AddIdleWatch", [.uint64(milliseconds)]) { [weak self] id in
      guard let self else { return }
      guard let id else {
        onReady?(
          Worded(
            Message("{service} does not answer (is this GNOME Shell?): away detection is off"),
            ["service": Self.service]))
        return
      }
      idleWatch = id
      onReady?(nil)
    }
  }

  func stop() {
    for watch in [idleWatch, activeWatch].compactMap({ $0 }) {
      call("RemoveWatch", [.uint32(watch)]) { _ in }
    }
    idleWatch = nil
    activeWatch = nil
    watchFired?.cancel()
    watchFired = nil
  }

  private func fired(_ id: UInt32) {
    if id == idleWatch {
      // The active watch first, so input right after the idle notice is not missed.
      call("AddUserActiveWatch", []) { [weak self] id in self?.activeWatch = id }
      onIdle?()
    } else if id == activeWatch {
      activeWatch = nil
      onActive?()
    }
  }

  private func call(_ member: String, _ arguments: [BusValue], _ done: @escaping (UInt32?) -> Void)
  {
    guard
      let message = try? BusMessage.methodCall(
        destination: Self.service, path: Self.path, interface: Self.service, member: member,
        arguments: arguments)
    else { return done(nil) }
    bus.call(message, timeout: Self.timeout) { [log] result in
      switch result {
      case .success(let reply):
        done(reply.arguments.first?.integerValue.map { UInt32(truncatingIfNeeded: $0) })
      case .failure(let error):
        log.warning("\(Self.service).\(member): \(error)")
        done(nil)
      }
    }
  }
}
