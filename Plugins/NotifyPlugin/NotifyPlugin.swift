import GrowCore
import GrowDBus
import GrowPluginKit

/// Tells the person when focus is over and when a break is over, through the desktop's
/// notification server (org.freedesktop.Notifications). One notification is replaced in
/// place rather than stacked.
public final class NotifyPlugin: GrowPlugin {
  public static let id = "notify"
  public static let summary = "desktop notifications when focus or a break ends"

  private let bus: BusConnection
  private let log: Logger
  private let timer: any TimerControl
  private var shownID: UInt32 = 0
  private var serverMissingReported = false

  public init(context: PluginContext) throws {
    guard let bus = context.sessionBus else { throw PluginError.unavailable("no session bus") }
    self.bus = bus
    log = context.log
    timer = context.timer
    context.subscribe(PhaseStarted.self) { [weak self] event in self?.started(event) }
    context.subscribe(PhaseAwaiting.self) { [weak self] event in self?.awaiting(event) }
  }

  private func started(_ event: PhaseStarted) {
    let minutes = DurationText.format(event.phase.duration)
    switch event.phase.kind {
    case .focus:
      break
    case .shortBreak, .longBreak:
      show("Focus done", "Take a \(minutes) \(event.phase.kind.displayName).")
    }
  }

  private func awaiting(_ event: PhaseAwaiting) {
    if event.next == .focus {
      show("Break over", "Ready when you are: 'grow resume' starts focus on '\(event.card)'.")
    } else {
      show("Focus done", "Your \(event.next.displayName) is waiting: 'grow resume' starts it.")
    }
  }

  private func show(_ summary: String, _ body: String) {
    let hints: [String: BusValue] = [
      "urgency": .byte(1),
      "category": .string("x-grow.phase"),
      "desktop-entry": .string("grow"),
      "x-dunst-stack-tag": .string("grow-phase"),
      "x-canonical-private-synchronous": .string("grow-phase"),
    ]
    guard
      let call = try? BusMessage.methodCall(
        destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
        interface: "org.freedesktop.Notifications", member: "Notify",
        arguments: [
          .string("Grow"), .uint32(shownID), .string("appointment-soon"), .string(summary),
          .string(body), .array(element: "s", []), .vardict(hints), .int32(-1),
        ])
    else { return }
    bus.call(call, timeout: 2000) { [weak self] result in
      guard let self else { return }
      switch result {
      case .success(let reply):
        if case .uint32(let id)? = reply.arguments.first { shownID = id }
        serverMissingReported = false
      case .failure(let error):
        if !serverMissingReported {
          log.warning("no notification server took '\(summary)' (\(error.name)); will retry")
          serverMissingReported = true
        }
      }
    }
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(NotifyPlugin.self) }
