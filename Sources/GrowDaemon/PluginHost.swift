import FoundationEssentials
import Glibc
import GrowBasics
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowLoop
import GrowMessages
@_spi(GrowHost) import GrowPluginKit

/// Where plugin libraries are looked for, in order.
public struct PluginDirectories: Sendable, Equatable {
  /// Next to the `grow` binary (the build directory) and in `PREFIX/lib/grow/plugins`.
  public var builtIn: [String]
  /// `$GROW_PLUGIN_PATH` (colon-separated), then `$XDG_DATA_HOME/grow/plugins`.
  public var user: [String]

  public init(builtIn: [String], user: [String]) {
    self.builtIn = builtIn
    self.user = user
  }

  /// The standard places for this process and environment.
  public static func standard(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> PluginDirectories {
    let executable =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    // The front's directory (PREFIX/bin) also when this is PREFIX/lib/grow/grow-cli.
    let binDirectory = InstallLayout.binDirectory(ofExecutable: executable)
    // PREFIX/lib/grow/plugins: beside an executable in PREFIX/lib/grow (grow-cli, the static
    // daemon image), else from the front's PREFIX/bin.
    let directory = PathText.directory(of: executable)
    let installed =
      directory.hasSuffix("/lib/grow")
      ? PathText.join(directory, "plugins")
      : PathText.normalized(PathText.join(binDirectory, "../lib/grow/plugins"))
    var user = (environment["GROW_PLUGIN_PATH"] ?? "").split(separator: ":").map(String.init)
    user.append(XDGDirectories(environment: environment).growData + "/plugins")
    return PluginDirectories(builtIn: [binDirectory, installed], user: user)
  }
}

/// Loads the plugins the config asks for, keeps each one's state, and isolates failures: a
/// plugin that cannot load, throws during set-up or from a handler is reported and disabled,
/// and the daemon and the other plugins go on.
@MainActor
public final class PluginHost {
  /// Where a plugin comes from.
  public enum Source: Equatable, Sendable {
    case builtIn(path: String)
    case library(path: String)
    case executable(arguments: [String])
    case unknown

    public var kind: String {
      switch self {
      case .builtIn: "built-in"
      case .library: "library"
      case .executable: "executable"
      case .unknown: "unknown"
      }
    }

    public var location: String {
      switch self {
      case .builtIn(let path), .library(let path): path
      case .executable(let arguments): arguments.joined(separator: " ")
      case .unknown: ""
      }
    }
  }

  public enum State: Equatable, Sendable {
    case running
    /// Not enabled in the config; not even loaded.
    case disabled
    /// Something it needs is missing (no display, no server).
    case unavailable(String)
    /// Restarting after its process ended (external plugins).
    case restarting(String)
    case failed(String)

    public var name: String {
      switch self {
      case .running: "running"
      case .disabled: "disabled"
      case .unavailable: "unavailable"
      case .restarting: "restarting"
      case .failed: "failed"
      }
    }

    public var reason: String? {
      switch self {
      case .running, .disabled: nil
      case .unavailable(let reason), .restarting(let reason), .failed(let reason): reason
      }
    }
  }

  /// One line of `grow plugins`.
  public struct Record: Equatable, Sendable {
    public var id: String
    public var source: Source
    public var state: State
    public var summary: String
    /// A running plugin's remark about a limitation (a window manager that ignored a minimise request, say).
    public var note: String? = nil
    /// The kind of the note (while running) or of the reason it is unavailable, when the plugin
    /// gave one (`PluginLimit`): what `grow doctor` advises on.
    public var limit: PluginLimit? = nil
    /// An external plugin's last lines on stderr: what it said before it exited.
    public var lastOutput: [String] = []
  }

  /// The plugins that ship with Grow.
  public static let builtInIDs = builtInPluginIDs
  /// Built-in plugins that run only when the config asks for them.
  public static let offByDefault = builtInPluginsOffByDefault

  /// The built-in plugins linked into this executable, by id, when it is the static daemon
  /// image (`grow-daemon`, DaemonImage): they start from these types instead of their
  /// libraries, and no library is opened, since a library brings libGrowKit.so and the shared
  /// Swift runtime, a second copy of both in this process. nil in `grow`, which opens them.
  public static var linkedIn: [String: any GrowPlugin.Type]? = nil

  /// Called whenever a record changes (for PropertiesChanged-style announcements).
  public var onChange: (() -> Void)?

  /// What running plugins must undo if the daemon leaves while its loop is stuck.
  package let emergencyActions = EmergencyExitActions()

  /// How long the host waits for a plugin's `stop(then:)` before going on without it.
  public static let stopGrace: TimeInterval = 2.5

  /// Set by the daemon: a plugin's synchronous `stop()` runs on the loop, and the signal
  /// thread must see one that never returns as it sees a stuck handler.
  var watchdog: HandlerWatchdog?

  private let directories: PluginDirectories
  /// Where libraries that took the daemon down are kept out; nil to trust every library.
  private let quarantine: PluginQuarantine?
  private let log: Logger
  /// The daemon's loop: grace periods are alarms on it.
  private let loop: any EventLoop
  private let makeContext: (_ id: String, _ section: ConfigSection) -> PluginContext
  private var config = GrowConfig.defaults
  private var order: [String] = []
  private var records: [String: Record] = [:]
  /// Each loaded plugin, in the daemon or in its own process, with the context it was given:
  /// what it subscribed to on the bus ends when it stops.
  private var loaded: [String: (plugin: any HostedPlugin, context: PluginContext)] = [:]
  /// Plugins whose previous instance has not finished stopping (an asynchronous stop, an
  /// external plugin's exit). A new instance of the same plugin waits for that: two never run
  /// at once, or the old one's undo (the dnd plugin putting the server back and removing its
  /// restore record) lands after the new one adopted what it undoes.
  private var stopping: Set<String> = []
  /// Plugins to start once their previous instance has stopped (`stopping`).
  private var startAfterStop: Set<String> = []
  /// Called once the previous instance has stopped and the start that waited for it has
  /// happened, or was called off meanwhile (`reload(_:then:)`, `afterPendingStarts`).
  private var whenStarted: [String: [() -> Void]] = [:]

  public init(
    directories: PluginDirectories, log: Logger, loop: any EventLoop,
    quarantine: PluginQuarantine? = nil,
    makeContext: @escaping (_ id: String, _ section: ConfigSection) -> PluginContext
  ) {
    self.directories = directories
    self.quarantine = quarantine
    self.log = log
    self.loop = loop
    self.makeContext = makeContext
  }

  /// Every known plugin, in the order they were configured or found.
  public var all: [Record] { order.compactMap { records[$0] } }

  public func record(_ id: String) -> Record? { records[id] }

  // MARK: Starting and stopping

  /// Loads and starts what `config` enables; records the rest as disabled.
  public func start(with config: GrowConfig) {
    self.config = config
    for id in quarantine?.quarantineLeftMarkers() ?? [] {
      log.error(
        "plugin '\(id)' took the daemon down while it was being started; it stays out until "
          + "'grow plugins enable \(id)'")
    }
    let plan = Self.plan(config: config, available: Self.discover(in: directories))
    order = plan.map(\.id)
    for item in plan {
      records[item.id] = Record(id: item.id, source: item.source, state: .disabled, summary: "")
      switch item.decision {
      case .load: load(item.id)
      case .skip: break
      case .refuse(let reason):
        set(item.id, .failed(reason.message))
        log.error("plugin '\(item.id)' not started: \(reason)")
      }
    }
  }

  /// Whether `start(with:)` would load plugin `id`: enabled, found, and not quarantined.
  /// Opens no library.
  public func wouldLoad(_ id: String, with config: GrowConfig) -> Bool {
    guard quarantine?.reason(id) == nil else { return false }
    return Self.plan(config: config, available: Self.discover(in: directories)).contains {
      $0.id == id && $0.decision == .load
    }
  }

  /// Stops every running plugin, so each can undo what it changed, and calls `completion` once
  /// external plugins have exited too (SIGTERM, then SIGKILL after their grace period). One
  /// deadline for all: in-process plugins that have not finished stopping `within` seconds from
  /// now are gone on without, however many there are.
  public func stopAll(
    within seconds: TimeInterval = PluginHost.stopGrace, then completion: @escaping () -> Void = {}
  ) {
    var waiting = order.count
    guard waiting > 0 else { return completion() }
    let deadline = loop.monotonicNow + seconds
    for id in order.reversed() {
      unload(id, deadline: deadline) {
        waiting -= 1
        if waiting == 0 { completion() }
      }
    }
  }

  /// Stops a plugin and starts it again (after the X server came back, say). `started` is
  /// called once the new instance has been started (or failed to start), which waits for the
  /// old one to finish stopping.
  public func reload(_ id: String, then started: @escaping () -> Void = {})
    throws(PluginHostError)
  {
    guard let record = records[id] else {
      throw .unknownPlugin(id, known: order)
    }
    guard record.state != .disabled else { throw .notEnabled(id) }
    restart(id)
    afterStarts(of: startAfterStop.intersection([id]), started)
  }

  /// Calls `done` once every plugin that waits for its previous instance to stop has been
  /// started (or its start was called off): at once when none waits.
  public func afterPendingStarts(_ done: @escaping () -> Void) {
    afterStarts(of: startAfterStop, done)
  }

  private func afterStarts(of ids: Set<String>, _ done: @escaping () -> Void) {
    guard !ids.isEmpty else { return done() }
    var left = ids.count
    for id in ids {
      whenStarted[id, default: []].append {
        left -= 1
        if left == 0 { done() }
      }
    }
  }

  /// The lines of a reload's report that say a plugin was started or restarted.
  static func startedReport(_ id: String) -> Worded {
    Worded(Message("started plugin '{id}'"), ["id": id])
  }
  static func movedReport(_ id: String, to location: String) -> Worded {
    Worded(
      Message("restarted plugin '{id}': it now runs {location}"), ["id": id, "location": location])
  }
  static func resetReport(_ id: String, keys: [String]) -> Worded {
    Worded(
      Message("restarted plugin '{id}' with new settings: {keys}"),
      ["id": id, "keys": keys.joined(separator: ", ")])
  }

  /// Whether a line of a reload's report (`grow reload`, `Config.Reload`) says plugin `id`
  /// was started or restarted, in whichever language the daemon said it: `grow plugin
  /// install` and `grow plugins reload` restart the plugin themselves only when not.
  public static func reportStarted(_ id: String, in line: String) -> Bool {
    [startedReport(id), movedReport(id, to: ""), resetReport(id, keys: [])].contains {
      $0.message.matches(line, ["id": id])
    } || line.hasPrefix(DaemonImage.handOverReport)
  }

  /// Applies a reloaded config: a plugin whose section, source or enabling changed is
  /// stopped and started again with the new settings; added plugins start; removed or
  /// disabled ones stop (each undoing what it changed). A plugin whose settings did not change
  /// is left running as it is, so its state (Do-Not-Disturb on during focus, say) is not
  /// disturbed. Returns one line per change, for `grow reload` and the log.
  @discardableResult
  public func apply(_ newConfig: GrowConfig) -> [String] {
    let oldConfig = config
    config = newConfig
    let plan = Self.plan(config: newConfig, available: Self.discover(in: directories))
    var changes: [String] = []
    for id in order where !plan.contains(where: { $0.id == id }) {
      if isLoaded(id) {
        changes.append(
          Message("stopped plugin '{id}': it is no longer configured").render(["id": id]))
      }
      unload(id)
      records[id] = nil
    }
    order = plan.map(\.id)
    for item in plan {
      let id = item.id
      let previous = records[id]
      let changedKeys = Self.changedKeys(
        oldConfig.pluginSections[id], newConfig.pluginSections[id])
      let sourceChanged = previous.map { $0.source != item.source } ?? true
      if previous == nil || sourceChanged {
        records[id] = Record(id: id, source: item.source, state: .disabled, summary: "")
      }
      switch item.decision {
      case .load:
        if !isLoaded(id) {
          if previous?.state == .running || previous?.state == .disabled || !changedKeys.isEmpty
            || sourceChanged
          {
            load(id)
            changes.append(Self.startedReport(id).text)
          }
        } else if sourceChanged {
          restart(id)
          changes.append(
            Self.movedReport(id, to: item.source.location).text)
        } else if !changedKeys.isEmpty {
          restart(id)
          changes.append(
            Self.resetReport(id, keys: changedKeys).text)
        }
      case .skip:
        if isLoaded(id) {
          unload(id)
          changes.append(Message("stopped plugin '{id}': it is disabled").render(["id": id]))
        }
        set(id, .disabled)
      case .refuse(let reason):
        if isLoaded(id) { unload(id) }
        if previous?.state != .failed(reason.message) {
          changes.append(
            Message("plugin '{id}' not started: {reason}").render([
              "id": id, "reason": reason.message,
            ]))
          log.error("plugin '\(id)' not started: \(reason)")
        }
        set(id, .failed(reason.message))
      }
    }
    return changes
  }

  /// Running, or to start once its previous instance has stopped.
  private func isLoaded(_ id: String) -> Bool {
    loaded[id] != nil || startAfterStop.contains(id)
  }

  /// The keys whose values differ between two versions of a section (lines do not count).
  static func changedKeys(_ old: ConfigSection?, _ new: ConfigSection?) -> [String] {
    let before = Dictionary(
      (old?.entries ?? []).map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    let after = Dictionary(
      (new?.entries ?? []).map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    return Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
  }

  /// Stops `id` and, once it has finished stopping (the dnd plugin puts the server back
  /// asynchronously, and its restore record is then gone), starts it again with the current
  /// config (`load` waits for the stop). A new instance that finds focus running switches
  /// Do-Not-Disturb on again; see `DoNotDisturbPlugin.init` for what it adopts.
  private func restart(_ id: String) {
    unload(id)
    load(id)
  }

  /// A plugin's event handler threw: disable it.
  public func subscriberFailed(_ id: String, error: any Error) {
    guard records[id] != nil else { return }
    log.error("plugin '\(id)' failed in an event handler and was disabled: \(error)")
    unload(id)
    set(id, .failed(Message("event handler threw: {error}").render(["error": "\(error)"])))
  }

  /// A plugin took itself out of service (`PluginContext.disable`).
  private func disabledItself(_ id: String, error: PluginError) {
    guard loaded[id] != nil else { return }
    log.error("plugin '\(id)' disabled itself: \(error)")
    unload(id)
    if let (reason, limit) = Self.unavailability(error) {
      records[id]?.limit = limit
      set(id, .unavailable(reason))
    } else {
      set(id, .failed(error.description))
    }
  }

  /// The reason a plugin is unavailable, and its kind when it gave one; nil for an error that
  /// is a failure.
  private static func unavailability(_ error: PluginError) -> (String, PluginLimit?)? {
    switch error {
    case .unavailable(let reason): (reason, nil)
    case .limited(let reason, let limit): (reason, limit)
    default: nil
    }
  }

  /// A loaded plugin lost what it needs and waits for it (`PluginContext.setUnavailable`), or
  /// has it back.
  private func availabilityChanged(
    _ id: String, unavailableBecause reason: String?, limit: PluginLimit?
  ) {
    guard loaded[id] != nil else { return }
    if let reason {
      log.warning("plugin '\(id)' unavailable: \(reason)")
      records[id]?.limit = limit
      set(id, .unavailable(reason))
    } else if records[id]?.state != .running {
      log.info("plugin '\(id)' running again")
      records[id]?.limit = nil
      set(id, .running)
    }
  }

  // MARK: Loading

  private func load(_ id: String) {
    guard let record = records[id] else { return }
    guard !stopping.contains(id) else {
      startAfterStop.insert(id)
      return
    }
    let section =
      config.pluginSections[id]
      ?? ConfigSection(name: "plugin.\(id)", path: config.path ?? "", line: 0)
    switch record.source {
    case .builtIn(let path), .library(let path):
      if let why = quarantine?.reason(id) {
        set(id, .failed(why))
        log.error("plugin '\(id)' not started: \(why)")
        return
      }
      do {
        let type = try starting(id) { try Self.pluginType(id, path: path) }
        records[id]?.summary = type.summary
        let context = makeContext(id, section)
        context.onDisable = { [weak self] error in self?.disabledItself(id, error: error) }
        context.onNote = { [weak self] note, limit in
          self?.records[id]?.note = note
          self?.records[id]?.limit = note == nil ? nil : limit
          self?.onChange?()
        }
        context.onAvailability = { [weak self] reason, limit in
          self?.availabilityChanged(id, unavailableBecause: reason, limit: limit)
        }
        context.onEmergencyAction = { [emergencyActions] action in
          emergencyActions.set(id, action)
        }
        let plugin = try starting(id) {
          do { return try type.init(context: context) } catch {
            context.endSignalSubscriptions()
            throw error
          }
        }
        loaded[id] = (
          InProcessPlugin(
            id: id, plugin: plugin, loop: loop, log: log, watchdog: watchdog,
            stopped: { [weak self] in
              // A plugin reloaded meanwhile has registered its own action under the same id.
              if self?.loaded[id] == nil { self?.emergencyActions.set(id, nil) }
            }),
          context
        )
        set(id, .running)
        log.info("plugin '\(id)' running (\(record.source.kind): \(path))")
      } catch let error as PluginError {
        emergencyActions.set(id, nil)
        if let (reason, limit) = Self.unavailability(error) {
          records[id]?.limit = limit
          set(id, .unavailable(reason))
          log.warning("plugin '\(id)' unavailable: \(reason)")
        } else {
          set(id, .failed(error.description))
          log.error("plugin '\(id)' failed to start: \(error)")
        }
      } catch let error as any WordedError {
        emergencyActions.set(id, nil)
        set(id, .failed(error.message))
        log.error("plugin '\(id)' failed to start: \(error)")
      } catch {
        emergencyActions.set(id, nil)
        set(id, .failed("\(error)"))
        log.error("plugin '\(id)' failed to start: \(error)")
      }
    case .executable(let arguments):
      let context = makeContext(id, section)
      let plugin = ExternalPlugin(
        context: context, arguments: arguments, growVersion: growVersion)
      plugin.onStateChange = { [weak self, unowned plugin] state in
        self?.records[id]?.lastOutput = plugin.lastOutput
        self?.set(id, Self.state(of: state, lastError: plugin.lastError))
      }
      loaded[id] = (plugin, context)
      records[id]?.summary = Message("runs {program}").render(["program": arguments.first ?? ""])
      plugin.start()
      set(id, Self.state(of: plugin.state, lastError: plugin.lastError))
    case .unknown:
      break
    }
  }

  /// Plugin `id`'s type: linked into this image, or from its library at `path`.
  static func pluginType(_ id: String, path: String) throws -> any GrowPlugin.Type {
    guard let linkedIn = Self.linkedIn else {
      return try PluginLibrary.load(path: path, expectedID: id)
    }
    guard let type = linkedIn[id] else { throw DaemonImageError.notLinkedIn(id, path: path) }
    return type
  }

  /// Opening or setting up library `id`, with the quarantine's marker on disk meanwhile.
  private func starting<T>(_ id: String, _ work: () throws -> T) rethrows -> T {
    guard let quarantine else { return try work() }
    return try quarantine.whileStarting(id, work)
  }

  private func unload(
    _ id: String, deadline: MonotonicInstant? = nil, then completion: @escaping () -> Void = {}
  ) {
    unsubscribe(id)
    let unloaded = loaded.removeValue(forKey: id)
    unloaded?.context.endSignalSubscriptions()
    records[id]?.note = nil
    records[id]?.limit = nil
    // A stop asked for after a start that waits cancels that start.
    startAfterStop.remove(id)
    let stopped = { [weak self] in
      self?.finishedStopping(id)
      completion()
    }
    if let plugin = unloaded?.plugin {
      stopping.insert(id)
      plugin.stop(by: deadline ?? loop.monotonicNow + Self.stopGrace, then: stopped)
    } else {
      completion()
    }
    if records[id]?.state == .running { set(id, .disabled) }
  }

  /// The previous instance of `id` has stopped (or the host gave up waiting): a start that
  /// waited for it goes ahead.
  private func finishedStopping(_ id: String) {
    guard stopping.remove(id) != nil else { return }
    if startAfterStop.remove(id) != nil { load(id) }
    startSettled(id)
  }

  /// Tells whoever waits for the start of `id` that it has happened (or was called off).
  private func startSettled(_ id: String) {
    for started in whenStarted.removeValue(forKey: id) ?? [] { started() }
  }

  private static func state(of external: ExternalPlugin.State, lastError: String?) -> State {
    switch external {
    case .running: .running
    case .restarting(let delay):
      .restarting(
        lastError.map {
          Message("{error}; restarting in {delay}").render([
            "error": $0, "delay": DurationText.format(delay),
          ])
        } ?? Message("restarting in {delay}").render(["delay": DurationText.format(delay)]))
    case .failed(let reason): .failed(reason)
    case .stopped: .disabled
    }
  }

  /// Set by the daemon: removes every event subscription a plugin made.
  public var unsubscribe: (String) -> Void = { _ in }

  private func set(_ id: String, _ state: State) {
    records[id]?.state = state
    onChange?()
  }

  // MARK: Planning

  enum Decision: Equatable {
    case load
    case skip
    case refuse(PluginRefusal)
  }

  struct PlanItem: Equatable {
    var id: String
    var source: Source
    var decision: Decision
  }

  /// What plugin `id` declares about its `[plugin.ID]` keys (`GrowPlugin.settings`), read by
  /// opening its library (dlopen, as `probe` does) without setting it up; nil for a program,
  /// an unknown id, a plugin that declares no settings, or a library that cannot be opened (`grow plugins` and `grow doctor` say
  /// why). Ask only for plugins that are to start: a disabled plugin is never loaded.
  public static func declaredSettings(of id: String, directories: PluginDirectories)
    -> [PluginSetting]?
  {
    switch discover(in: directories)[id] {
    case .builtIn(let path), .library(let path):
      // A plugin that declares nothing keeps its section unchecked (GrowPlugin.settings).
      (try? pluginType(id, path: path)).flatMap {
        $0.settings.isEmpty ? nil : $0.settings
      }
    case .executable, .unknown, nil: nil
    }
  }

  /// `declaredSettings(of:directories:)` in this host's directories.
  public func declaredSettings(of id: String) -> [PluginSetting]? {
    // A quarantined library is not opened, not even to read its settings.
    guard quarantine?.reason(id) == nil else { return nil }
    return starting(id) { Self.declaredSettings(of: id, directories: directories) }
  }

  /// What `grow config check` reports about plugins, without loading any: ids that name no
  /// plugin.
  /// Whether a daemon started with `config` would start plugin `id` (the doctor checks what
  /// only a running plugin needs).
  public static func willStart(_ id: String, config: GrowConfig, directories: PluginDirectories)
    -> Bool
  {
    plan(config: config, available: discover(in: directories))
      .contains { $0.id == id && $0.decision == .load }
  }

  public static func configurationProblems(
    in config: GrowConfig, directories: PluginDirectories
  ) -> [String] {
    let available = discover(in: directories)
    return plan(config: config, available: available).compactMap { item in
      guard case .refuse(let reason) = item.decision else { return nil }
      return "\(config.path ?? "config"): [plugins] enable: \(reason.message)"
    } + unknownSections(in: config, available: available).map(\.description)
  }

  /// `[plugin.ID]` sections without `exec` whose id names no plugin found: a misspelt id
  /// would otherwise leave the plugin it meant on its defaults, and nothing would say so.
  public static func unknownSections(in config: GrowConfig, directories: PluginDirectories)
    -> [ConfigProblem]
  {
    unknownSections(in: config, available: discover(in: directories))
  }

  /// `unknownSections(in:directories:)` in this host's directories.
  public func unknownSections(in config: GrowConfig) -> [ConfigProblem] {
    Self.unknownSections(in: config, directories: directories)
  }

  static func unknownSections(in config: GrowConfig, available: [String: Source])
    -> [ConfigProblem]
  {
    let known = available.keys.sorted()
    return config.pluginSections.sorted { $0.value.line < $1.value.line }.compactMap {
      id, section in
      guard section["exec"] == nil, available[id] == nil else { return nil }
      return ConfigProblem(
        path: section.path, line: section.line, issue: .unknownPlugin(id, known: known))
    }
  }

  /// What `grow doctor` reports about plugins without a daemon: each plugin the config would
  /// know of, whether it is enabled, and why it would not start. Libraries are opened (dlopen,
  /// and the entry point and API version checked) but never set up, so nothing runs.
  public static func probe(
    config: GrowConfig, directories: PluginDirectories,
    quarantine: PluginQuarantine = PluginQuarantine()
  ) -> [Probe] {
    plan(config: config, available: discover(in: directories)).map { item in
      var probe = Probe(id: item.id, source: item.source, enabled: true, problem: nil)
      switch item.decision {
      case .skip: probe.enabled = false
      case .refuse(let reason): probe.problem = reason.message
      case .load:
        switch item.source {
        case .builtIn(let path), .library(let path):
          if let why = quarantine.reason(item.id) {
            probe.problem = why
            break
          }
          do {
            _ = try PluginLibrary.load(path: path, expectedID: item.id)
          } catch let error as PluginLoadError {
            probe.problem = error.message
          } catch {
            probe.problem = "\(error)"
          }
        case .executable(let arguments):
          probe.problem = arguments.first.flatMap(Self.problem(withProgram:))
        case .unknown: break
        }
      }
      return probe
    }
  }

  /// Why an external plugin's program would not run, found as the daemon finds it (PATH).
  private static func problem(withProgram program: String) -> String? {
    let path: String
    do throws(SpawnError) {
      path = try ChildProcess.locate(program, path: ProcessInfo.processInfo.environment["PATH"])
    } catch {
      return error.message
    }
    guard FileManager.default.isExecutableFile(atPath: path) else {
      return Message("{path} is not an executable file").render(["path": path])
    }
    do throws(SpawnError) {
      _ = try ChildProcess.openProgram(path)
      return nil
    } catch {
      return error.message
    }
  }

  /// One plugin as `probe` found it.
  public struct Probe: Equatable, Sendable {
    public var id: String
    public var source: Source
    public var enabled: Bool
    /// Why it would not start; nil when it loads.
    public var problem: String?
  }

  /// The libraries found on disk, by id, built-in directories first; and in the user
  /// directories the programs named `grow-plugin-ID` (what `grow plugin install` puts there),
  /// which run as if `[plugin.ID] exec` named them.
  static func discover(in directories: PluginDirectories) -> [String: Source] {
    var found: [String: Source] = [:]
    let scan = { (directory: String, builtIn: Bool) in
      let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
      for name in names.sorted() {
        let path = PathText.join(directory, name)
        if !builtIn, let id = PluginLibrary.id(fromProgramName: name),
          name == PluginLibrary.programName(for: id), found[id] == nil
        {
          found[id] = .executable(arguments: [path])
          continue
        }
        guard let id = PluginLibrary.id(fromFileName: name), found[id] == nil else { continue }
        found[id] =
          builtIn && Self.builtInIDs.contains(id) ? .builtIn(path: path) : .library(path: path)
      }
    }
    if let linkedIn = Self.linkedIn {
      let image = DaemonImage.runningExecutable()
      for id in linkedIn.keys { found[id] = .builtIn(path: image) }
    }
    for directory in directories.builtIn { scan(directory, true) }
    for directory in directories.user { scan(directory, false) }
    return found
  }

  /// Decides, without loading anything, what happens to each plugin: the ones `[plugins]
  /// enable` lists (or, without that key, every library found and every `[plugin.ID]` with
  /// `exec`) load unless their section says `enabled = false`; everything else is disabled.
  static func plan(config: GrowConfig, available: [String: Source]) -> [PlanItem] {
    var sources = available
    var broken: [String: PluginRefusal] = [:]
    let home = ProcessInfo.processInfo.environment["HOME"]
    for (id, section) in config.pluginSections {
      do {
        if let arguments = try ExecCommandLine.arguments(of: section, home: home) {
          sources[id] = .executable(arguments: arguments)
        }
      } catch {
        sources[id] = .executable(arguments: [])
        broken[id] = .brokenExec(error)
      }
    }
    let known = Array(sources.keys)
    let wanted =
      config.enabledPlugins
      ?? builtInIDs.filter {
        sources[$0] != nil
          && (!builtInPluginsOffByDefault.contains($0)
            || (try? config.pluginSections[$0]?.bool("enabled", default: false)) == true)
      }
      + sources.keys.filter { !builtInIDs.contains($0) }.sorted()
    var items: [PlanItem] = []
    for id in wanted where !items.contains(where: { $0.id == id }) {
      guard let source = sources[id] else {
        items.append(
          PlanItem(
            id: id, source: .unknown, decision: .refuse(.unknownPlugin(id, known: known.sorted()))
          ))
        continue
      }
      let enabled = (try? config.pluginSections[id]?.bool("enabled", default: true)) ?? true
      let decision: Decision = !enabled ? .skip : broken[id].map { .refuse($0) } ?? .load
      items.append(PlanItem(id: id, source: source, decision: decision))
    }
    for id in sources.keys.sorted() where !items.contains(where: { $0.id == id }) {
      items.append(PlanItem(id: id, source: sources[id] ?? .unknown, decision: .skip))
    }
    return items
  }
}

/// Why a plugin the config asks for is not started, found without loading anything:
/// `description` in English for the log, `message` for `grow plugins`, `grow doctor` and
/// `grow config check`.
enum PluginRefusal: Error, Equatable, CustomStringConvertible {
  /// `[plugins] enable` names a plugin nobody has.
  case unknownPlugin(String, known: [String])
  /// Its `[plugin.ID] exec` cannot be read: the config's own problem, worded by GrowConfig.
  case brokenExec(ConfigError)

  var description: String { worded(inEnglish: true) }
  var message: String { worded(inEnglish: false) }

  private func worded(inEnglish: Bool) -> String {
    switch self {
    case .unknownPlugin(let id, let known):
      let list = known.joined(separator: ", ")
      let worded =
        if let guess = closestMatch(to: id, in: known) {
          Worded(
            Message("unknown plugin '{id}'; did you mean '{guess}'? (known: {known})"),
            ["id": id, "guess": guess, "known": list])
        } else {
          Worded(Message("unknown plugin '{id}' (known: {known})"), ["id": id, "known": list])
        }
      return inEnglish ? worded.english : worded.text
    case .brokenExec(let error):
      return error.description
    }
  }
}

/// Why a request about plugins was refused.
public enum PluginHostError: WordedError, Equatable {
  case unknownPlugin(String, known: [String])
  case notEnabled(String)

  public var worded: Worded {
    switch self {
    case .unknownPlugin(let id, let known):
      let list = known.joined(separator: ", ")
      if let guess = closestMatch(to: id, in: known) {
        return Worded(
          Message("no plugin '{id}'; did you mean '{guess}'? (plugins: {known})"),
          ["id": shown(id), "guess": guess, "known": list]
        )
      }
      return Worded(
        Message("no plugin '{id}' (plugins: {known})"), ["id": shown(id), "known": list])
    case .notEnabled(let id):
      return Worded(
        Message("plugin '{id}' is not enabled; add it to [plugins] enable in config.ini"),
        ["id": id]
      )
    }
  }
}
