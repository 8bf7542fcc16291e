import FoundationEssentials
import GrowConfig
import GrowCore
import GrowDBus
@_spi(GrowHost) import GrowPluginKit

/// Everything a plugin's fast test needs, wired together: a manual loop, a recording timer,
/// an event bus with a recorder on it and a captured log; `context` makes the plugin's
/// `PluginContext` from them.
///
///     let bed = PluginTestBed()
///     let plugin = try MyPlugin(context: bed.context("mine", settings: "interval = 5s"))
///     bed.loop.advance(by: 5)
///     #expect(bed.recorder.of(MyEvent.self).count == 1)
@MainActor
public final class PluginTestBed {
  public let loop: ManualLoop
  public let events = EventBus()
  public let recorder: EventRecorder
  public let timer: RecordingTimer
  public let logs = LogCapture()
  /// What the plugins' contexts told the host, in order, as `grow plugins` would show it:
  /// `setNote` (nil clears), `setUnavailable` (nil: `setAvailable`), `disable(because:)`.
  public private(set) var notes: [String?] = []
  public private(set) var availability: [String?] = []
  public private(set) var disabled: [PluginError] = []

  public init(loop: ManualLoop = ManualLoop(), timer: RecordingTimer = RecordingTimer()) {
    self.loop = loop
    self.timer = timer
    recorder = EventRecorder(events)
  }

  /// A context for plugin `id` with `settings` (lines of its `[plugin.ID]` section), on this
  /// bed's loop, timer, bus and log. `timer` replaces the recording one (a real `FocusTimer`
  /// on `loop`, say).
  public func context(
    _ id: String, settings: String..., environment: [String: String] = [:],
    timer: (any TimerControl)? = nil, sessionBus: BusConnection? = nil
  ) throws(ConfigError) -> PluginContext {
    let lines = settings.joined(separator: "\n")
    let section =
      lines.isEmpty
      ? ConfigSection(name: "plugin.\(id)", path: "test.ini", line: 1)
      : try PluginSettings.section(id, lines)
    let context = PluginContext(
      id: id, config: section, log: logs.logger(label: id), events: events,
      timer: timer ?? self.timer, sessionBus: sessionBus, environment: environment, loop: loop)
    // Weak: a plugin (and its context) may outlive the bed in a test.
    context.onNote = { [weak self] note, _ in self?.notes.append(note) }
    context.onAvailability = { [weak self] reason, _ in self?.availability.append(reason) }
    context.onDisable = { [weak self] in self?.disabled.append($0) }
    return context
  }

  /// Publishes `event` as the daemon would.
  public func publish<E: GrowEvent>(_ event: E) { events.publish(event) }
}
