import FoundationEssentials
import GrowCore
import GrowDBus
import GrowLoop
import GrowMessages
@_spi(GrowHost) import GrowPluginKit

#if canImport(Glibc)
  import Glibc
#endif

/// GNOME Pomodoro's D-Bus API, served by Grow: `org.gnome.Pomodoro` on the session bus,
/// `/org/gnome/Pomodoro` with the interface `org.gnome.Pomodoro` as GNOME Pomodoro 0.22.1
/// serves it (its properties, methods, `StateChanged` and `PropertiesChanged`), so status-bar
/// modules and scripts written for GNOME Pomodoro drive Grow unchanged. The mapping and what
/// differs are in docs/gnome-pomodoro.md; PomodoroModel holds the mapping.
///
/// Off by default. It never takes the name from its owner: while the real GNOME Pomodoro holds
/// it the plugin waits in the bus's queue, unavailable with that reason, and the bus hands it
/// the name when GNOME Pomodoro quits (NameAcquired, no polling).
public final class GnomePomodoroPlugin: GrowPlugin {
  public static let id = "gnome-pomodoro"
  public static var summary: String {
    Message(
      "serves GNOME Pomodoro's D-Bus API (org.gnome.Pomodoro), for scripts written for it"
    ).render()
  }
  static let busName = "org.gnome.Pomodoro"
  static let objectPath = "/org/gnome/Pomodoro"
  static let interfaceName = "org.gnome.Pomodoro"
  /// The GNOME Pomodoro whose API this is, then Grow's own version: clients that compare
  /// versions read the leading number, people read the rest (docs/gnome-pomodoro.md).
  static let version = "0.22.1 (Grow \(growVersion))"
  static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
  /// Why the plugin waits: who owns the name, as far as the bus and /proc tell.
  static func waitingForName(owner: String?) -> String {
    guard let owner else {
      return Message(
        "org.gnome.Pomodoro is owned by another program; Grow serves it when that one quits"
      ).render()
    }
    return Message("org.gnome.Pomodoro is owned by {owner}; Grow serves it when that one quits")
      .render(["owner": owner])
  }

  private let context: PluginContext
  private let bus: BusConnection
  private var model: PomodoroModel
  /// The object, while this connection owns the name: nobody else's clients hear it.
  private var object: BusObject?
  private var tick: (any Alarm)?
  private var stopped = false

  public init(context: PluginContext) throws {
    guard let bus = context.sessionBus else {
      throw PluginError.unavailable(
        Message("no session bus to serve org.gnome.Pomodoro on").render())
    }
    self.context = context
    self.bus = bus
    model = PomodoroModel(
      status: context.timer.status, deck: context.timer.deck, now: context.loop.now)
    context.subscribe(TimerChanged.self) { [weak self] event in self?.changed(event.status) }
    do {
      for member in ["NameAcquired", "NameLost"] {
        try context.onSignal(
          match: "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
            + "member='\(member)',arg0='\(Self.busName)'"
        ) { [weak self] _ in
          member == "NameAcquired" ? self?.acquired() : self?.lost()
        }
      }
    } catch {
      throw PluginError.unavailable(
        Message("cannot follow the name org.gnome.Pomodoro: {error}").render([
          "error": "\(error)"
        ]))
    }
    bus.requestName(Self.busName, queue: true) { [weak self] result in
      guard let self, !stopped else { return }
      switch result {
      case .success(.owner): acquired()
      case .success:
        waitForName()
      case .failure(let error):
        context.setUnavailable(
          Message("cannot ask for the name org.gnome.Pomodoro: {error}").render([
            "error": error.message
          ]))
      }
    }
  }

  /// Leaves the bus as it found it: the object withdrawn, the name (or the place in its
  /// queue) given back, so a GNOME Pomodoro started later gets it.
  public func stop() {
    stopped = true
    tick?.cancel()
    tick = nil
    object?.withdraw()
    object = nil
    bus.releaseName(Self.busName)
  }

  // MARK: The name

  private func acquired() {
    guard !stopped, object == nil else { return }
    do {
      let object = try BusObject(path: Self.objectPath, on: bus)
      object.add(pomodoroInterface())
      self.object = object
      context.setAvailable()
      scheduleTick()
    } catch {
      context.setUnavailable(
        Message("cannot serve {path}: {error}").render([
          "path": Self.objectPath, "error": error.message,
        ]))
    }
  }

  private func lost() {
    guard !stopped else { return }
    tick?.cancel()
    tick = nil
    object?.withdraw()
    object = nil
    waitForName()
  }

  /// Unavailable, naming the name's owner (its program and process id) for `grow plugins`.
  private func waitForName() {
    guard object == nil else { return }
    context.setUnavailable(Self.waitingForName(owner: nil))
    guard
      let query = try? BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
        arguments: [.string(Self.busName)])
    else { return }
    bus.call(query, timeout: 2000) { [weak self] result in
      guard let self, !stopped, object == nil,
        case .success(let reply) = result, case .uint32(let pid)? = reply.arguments.first
      else { return }
      context.setUnavailable(Self.waitingForName(owner: "\(Self.program(pid)) (pid \(pid))"))
    }
  }

  /// The name of process `pid`'s program (`/proc/PID/comm`), or "process" if unreadable.
  static func program(_ pid: UInt32) -> String {
    guard let file = fopen("/proc/\(pid)/comm", "r") else { return "process" }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 64)
    guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "process" }
    let name = String(cString: buffer).split(separator: "\n").first.map(String.init) ?? ""
    return name.isEmpty ? "process" : name
  }

  // MARK: Changes

  private func changed(_ status: TimerStatus) {
    let changes = model.update(to: status, deck: context.timer.deck, now: context.loop.now)
    announce(changes)
    scheduleTick()
  }

  private func announce(_ changes: [PomodoroChange]) {
    guard let object else { return }
    for change in changes {
      switch change {
      case .stateChanged(let state, let previous, let elapsedBefore, let properties):
        object.emit(
          "StateChanged", on: Self.interfaceName,
          [
            dictionary(state, elapsed: state.elapsed(at: context.loop.now)),
            dictionary(previous, elapsed: elapsedBefore),
          ])
        object.propertiesChanged(properties, on: Self.interfaceName)
      case .propertiesChanged(let properties):
        object.propertiesChanged(properties, on: Self.interfaceName)
      }
    }
    // Sent now, as GNOME Pomodoro does, not at the end of the loop's turn.
    object.flushPropertiesChanged()
  }

  private func dictionary(_ state: PomodoroState, elapsed: Double) -> BusValue {
    .array(
      element: "{sv}",
      [
        .dictEntry(.string("duration"), .variant(.double(state.duration))),
        .dictEntry(.string("name"), .variant(.string(state.name))),
        .dictEntry(.string("elapsed"), .variant(.double(elapsed))),
        .dictEntry(.string("timestamp"), .variant(.double(state.timestamp))),
      ])
  }

  /// GNOME Pomodoro announces `Elapsed` once a second while a state runs; so does this, and
  /// it wakes for nothing else (never while idle, paused or waiting).
  private func scheduleTick() {
    tick?.cancel()
    tick = nil
    guard object != nil, let next = model.nextTick(after: context.loop.now) else { return }
    tick = context.loop.after(seconds: next.timeIntervalSince(context.loop.now)) {
      [weak self] in
      guard let self, let object else { return }
      object.propertiesChanged(["Elapsed"], on: Self.interfaceName)
      object.flushPropertiesChanged()
      scheduleTick()
    }
  }

  // MARK: Methods

  /// Runs a timer command as GNOME Pomodoro's method does: what makes no sense in the state
  /// the timer is in (Pause while nothing runs) does nothing, without an error, as there.
  private func command(_ name: String, _ action: (any TimerControl) throws(TimerError) -> Void) {
    do {
      try action(context.timer)
    } catch {
      context.log.debug("org.gnome.Pomodoro.\(name) changed nothing: \(error)")
    }
  }

  private func start() {
    // GNOME Pomodoro's Start only starts from `null`; a paused state stays paused.
    guard context.timer.status.state == .idle else { return }
    command("Start") { timer throws(TimerError) in try timer.start(card: nil, overrides: .init()) }
  }

  private func pause() {
    let status = context.timer.status
    guard status.hasPhase, !status.paused else { return }
    command("Pause") { timer throws(TimerError) in try timer.pause() }
  }

  private func resume() {
    let status = context.timer.status
    guard status.paused || status.state == .waiting else { return }
    command("Resume") { timer throws(TimerError) in try timer.resume() }
  }

  /// Skip and Reset while nothing runs begin a new `null` state in GNOME Pomodoro, and it
  /// says so; the timer itself has nothing to do.
  private func restartIdle() {
    guard let change = model.restartIdle(now: context.loop.now) else { return }
    announce([change])
  }

  private func skip() {
    guard context.timer.status.state != .idle else { return restartIdle() }
    command("Skip") { timer throws(TimerError) in try timer.skip() }
  }

  private func stopTimer(_ name: String) {
    guard context.timer.status.state != .idle else {
      if name == "Reset" { restartIdle() }
      return
    }
    command(name) { timer throws(TimerError) in try timer.stop() }
  }

  /// SetStateDuration on the current state makes the phase longer or shorter (a phase keeps
  /// its last minute, as `grow extend` does); on another state it does nothing, as there.
  private func setStateDuration(_ name: String, _ duration: Double) throws(BusError) {
    let status = context.timer.status
    guard status.hasPhase, model.state.name == name, duration.isFinite else { return }
    let change = duration - status.duration
    do {
      if change > 0 {
        try context.timer.extend(by: change)
      } else if change < 0 {
        try context.timer.shorten(by: -change)
      }
    } catch {
      throw BusError(name: BusError.failed, message: "Grow did not change the phase: \(error)")
    }
  }

  /// SetState: `null` stops, the current state's name changes nothing, `pomodoro` while idle
  /// starts the default card; Grow's cards decide which phase follows which, so any other
  /// jump is refused with the commands that do it.
  private func setState(_ name: String) throws(BusError) {
    if name == PomodoroState.idleName { return stopTimer("SetState") }
    if name == model.state.name { return }
    if name == PhaseKind.focus.pomodoroName, context.timer.status.state == .idle { return start() }
    guard [PhaseKind.focus, .shortBreak, .longBreak].contains(where: { $0.pomodoroName == name })
    else {
      throw BusError(
        name: BusError.invalidArgs,
        message: "no state '\(name)': GNOME Pomodoro's states are null, pomodoro, short-break "
          + "and long-break")
    }
    throw BusError(
      name: Self.notSupported,
      message: "Grow's cards decide which phase follows which: it cannot jump from "
        + "\(model.state.name) to \(name); use Skip to move on, Stop to end, Start to begin")
  }

  private func pomodoroInterface() -> BusInterface {
    let plain: [(String, () -> Void)] = [
      ("Start", { [weak self] in self?.start() }),
      ("Stop", { [weak self] in self?.stopTimer("Stop") }),
      ("Reset", { [weak self] in self?.stopTimer("Reset") }),
      ("Pause", { [weak self] in self?.pause() }),
      ("Resume", { [weak self] in self?.resume() }),
      ("Skip", { [weak self] in self?.skip() }),
    ]
    let refused: [(String, [BusInterface.Argument], String)] = [
      (
        "ShowMainWindow", [.init("mode", "s"), .init("timestamp", "u")],
        "Grow has no main window: `grow status` shows the timer, `grow stats` the history"
      ),
      (
        "ShowPreferences", [.init("timestamp", "u")],
        "Grow has no preferences window: its settings are in ~/.config/grow/config.ini "
          + "(`grow config check` checks them)"
      ),
      (
        "Quit", [],
        "Quit would end Grow's daemon, which does more than this API: stop it with "
          + "`systemctl --user stop grow.service` or turn the gnome-pomodoro plugin off"
      ),
    ]
    var methods: [BusInterface.Method] = [
      .init("SetState", inputs: [.init("name", "s"), .init("timestamp", "d")]) {
        [weak self] arguments, _ throws(BusError) in
        try self?.setState(arguments.first?.stringValue ?? "")
        return []
      },
      .init("SetStateDuration", inputs: [.init("name", "s"), .init("duration", "d")]) {
        [weak self] arguments, _ throws(BusError) in
        guard case .double(let duration)? = arguments.dropFirst().first else { return [] }
        try self?.setStateDuration(arguments.first?.stringValue ?? "", duration)
        return []
      },
    ]
    methods += refused.map { name, inputs, message in
      BusInterface.Method(name, inputs: inputs) { _, _ throws(BusError) in
        throw BusError(name: Self.notSupported, message: message)
      }
    }
    methods.insert(
      contentsOf: plain.map { name, action in
        BusInterface.Method(name) { _, _ in
          action()
          return []
        }
      }, at: methods.count - 1)
    return BusInterface(
      name: Self.interfaceName,
      methods: methods,
      properties: [
        .init("Elapsed", "d") { [weak self] in
          guard let self else { return .double(0) }
          return .double(model.state.elapsed(at: context.loop.now))
        },
        .init("State", "s") { [weak self] in .string(self?.model.state.name ?? "null") },
        .init("StateDuration", "d") { [weak self] in .double(self?.model.state.duration ?? 0) },
        .init("IsPaused", "b") { [weak self] in .bool(self?.model.state.isPaused ?? false) },
        .init("Version", "s") { .string(Self.version) },
      ],
      signals: [
        .init("StateChanged", [.init("state", "a{sv}"), .init("previous_state", "a{sv}")])
      ],
      doc: "")
  }
}

// `grow_plugin_ID`, not `grow_plugin`: the built-in plugins link into one test binary.
@_cdecl("grow_plugin_gnome_pomodoro")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(GnomePomodoroPlugin.self) }
