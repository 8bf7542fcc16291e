import FoundationEssentials
@_spi(GrowBuiltIn) import GrowConfig
import GrowCore
import GrowDBus
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// Grow in the system tray: a StatusNotifierItem (the tray protocol of KDE Plasma, XFCE's
/// panel, waybar, GNOME's AppIndicator extension) on the daemon's own bus connection, with
/// its menu over com.canonical.dbusmenu: start a card, pause or resume, skip, stop, +5 min,
/// Do-Not-Disturb. Left click pauses or resumes (starts the default card when idle); the
/// wheel adds a minute or takes one off. The icon is a ring that fills as the phase passes,
/// drawn here, redrawn when the state changes and at most once a minute for progress.
///
/// Without a StatusNotifierWatcher (no tray running) the plugin is unavailable with that
/// reason, and registers by itself when one appears (NameOwnerChanged, no polling); a watcher
/// that restarts gets the item again.
public final class TrayPlugin: GrowPlugin {
  public static let id = "tray"
  public static var summary: String {
    Message(
      "an icon in the system tray (StatusNotifierItem) with a menu that drives the timer"
    ).render()
  }
  static let watcherName = "org.kde.StatusNotifierWatcher"
  static let watcherPath = "/StatusNotifierWatcher"
  static let itemInterface = "org.kde.StatusNotifierItem"
  static let itemPath = "/StatusNotifierItem"
  static let menuInterface = "com.canonical.dbusmenu"
  static let menuPath = "/MenuBar"
  /// How long the watcher has to answer a registration (milliseconds).
  static let callTimeout: Int32 = 3000

  private let context: PluginContext
  private let bus: BusConnection
  private let item: BusObject
  private let menuObject: BusObject
  private var model: TrayModel
  private var revision: UInt32 = 1
  private var tick: (any Alarm)?
  private var drawnProgress: Double?
  private var drawnPhase: TrayPhase?
  private var watcherSubscription: SignalSubscription?

  public init(context: PluginContext) throws {
    guard let bus = context.sessionBus else {
      throw PluginError.unavailable(Message("no session bus to reach a tray on").render())
    }
    self.context = context
    self.bus = bus
    model = TrayModel(
      status: context.timer.status, cards: context.timer.deck.names, doNotDisturb: false)
    do {
      item = try BusObject(path: Self.itemPath, on: bus)
      menuObject = try BusObject(path: Self.menuPath, on: bus)
    } catch {
      throw PluginError.unavailable(
        Message("cannot serve the tray item on the bus: {error}").render(["error": "\(error)"]))
    }
    item.add(itemInterface())
    menuObject.add(menuInterface())
    context.subscribe(TimerChanged.self) { [weak self] event in self?.update(status: event.status) }
    context.subscribe(DoNotDisturbChanged.self) { [weak self] event in
      guard let self, model.doNotDisturb != event.enabled else { return }
      model.doNotDisturb = event.enabled
      layoutChanged()
    }
    do {
      watcherSubscription = try context.onSignal(
        match: "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
          + "member='NameOwnerChanged',arg0='\(Self.watcherName)'"
      ) { [weak self] message in
        guard case .string(let owner)? = message.arguments.last, !owner.isEmpty else {
          self?.context.setUnavailable(Self.noWatcher)
          return
        }
        self?.register()
      }
    } catch {
      throw PluginError.unavailable(
        Message("cannot follow the tray's watcher on the bus: {error}").render([
          "error": "\(error)"
        ]))
    }
    register()
    scheduleTick()
  }

  /// Takes the item and its menu off the bus: a tray that asks after the plugin was turned
  /// off gets `UnknownObject`, not a menu that no longer drives anything.
  public func stop() {
    tick?.cancel()
    tick = nil
    item.withdraw()
    menuObject.withdraw()
  }

  static var noWatcher: String {
    Message("no StatusNotifierWatcher (is a tray running?)").render()
  }

  // MARK: The watcher

  private func register() {
    guard
      let call = try? BusMessage.methodCall(
        destination: Self.watcherName, path: Self.watcherPath, interface: Self.watcherName,
        member: "RegisterStatusNotifierItem", arguments: [.string(bus.uniqueName)])
    else { return }
    bus.call(call, timeout: Self.callTimeout) { [weak self] result in
      guard let self else { return }
      switch result {
      case .success:
        context.setAvailable()
      case .failure(let error):
        context.setUnavailable(
          error.name == "org.freedesktop.DBus.Error.ServiceUnknown"
            ? Self.noWatcher
            : Message("the tray did not take the icon: {error}").render([
              "error": error.message
            ]))
      }
    }
  }

  // MARK: Changes

  private func update(status: TimerStatus) {
    let before = model
    model.status = status
    model.cards = context.timer.deck.names
    if before.menu != model.menu { layoutChanged() }
    item.emit("NewToolTip", on: Self.itemInterface)
    redrawIfChanged()
    scheduleTick()
  }

  private func layoutChanged() {
    revision &+= 1
    menuObject.emit("LayoutUpdated", on: Self.menuInterface, [.uint32(revision), .int32(0)])
  }

  /// The icon changes with the state, and with the minutes left; nothing is sent otherwise.
  private func redrawIfChanged() {
    let now = context.loop.now
    let progress = model.progress(at: now)
    guard progress != drawnProgress || model.phase != drawnPhase else { return }
    drawnProgress = progress
    drawnPhase = model.phase
    item.emit("NewIcon", on: Self.itemInterface)
  }

  /// Wakes once a minute while a phase counts down (for the ring and the tooltip), never while
  /// idle, paused or waiting.
  private func scheduleTick() {
    tick?.cancel()
    tick = nil
    guard let next = model.nextProgressChange(after: context.loop.now) else { return }
    tick = context.loop.at(next.addingTimeInterval(0.001)) { [weak self] in
      self?.redrawIfChanged()
      self?.item.emit("NewToolTip", on: Self.itemInterface)
      self?.scheduleTick()
    }
  }

  // MARK: Actions

  func perform(_ action: TrayAction) {
    let timer = context.timer
    do {
      switch action {
      case .start(let card): try timer.start(card: card, overrides: SessionOverrides())
      case .pause: try timer.pause()
      case .resume: try timer.resume()
      case .skip: try timer.skip()
      case .stop: try timer.stop()
      case .extend(let minutes): try timer.extend(by: TimeInterval(minutes * 60))
      case .shorten(let minutes): try timer.shorten(by: TimeInterval(minutes * 60))
      case .toggleDoNotDisturb: toggleDoNotDisturb()
      }
    } catch {
      context.log.info("the tray's \(action) was refused: \(error)")
    }
  }

  /// Left click: pause or resume, or start the default card.
  private func activate() {
    let status = context.timer.status
    perform(
      status.hasPhase
        ? (status.paused ? .resume : .pause)
        : status.state == .waiting ? .resume : .start(card: context.timer.deck.defaultCardName))
  }

  /// Do-Not-Disturb is the dnd plugin's: the tray asks it over Grow's own bus interface.
  private func toggleDoNotDisturb() {
    guard
      let call = try? BusMessage.methodCall(
        destination: bus.uniqueName, path: GrowBusAPI.objectPath,
        interface: GrowBusAPI.doNotDisturbInterface, member: "Toggle")
    else { return }
    bus.call(call, timeout: Self.callTimeout) { [weak self] result in
      if case .failure(let error) = result {
        self?.context.log.info("Do-Not-Disturb did not switch: \(error.message)")
      }
    }
  }

  // MARK: org.kde.StatusNotifierItem

  /// Always Active: a Passive item is hidden by hosts (waybar), and when idle the tray is
  /// where a person starts a focus.
  private var itemStatus: String { "Active" }

  private func pixmaps() -> BusValue {
    let progress = model.progress(at: context.loop.now)
    let phase = model.phase
    return .array(
      element: "(iiay)",
      TrayIcon.sizes.map { size in
        .structure([
          .int32(Int32(size)), .int32(Int32(size)),
          .array(
            element: "y",
            TrayIcon.pixels(
              size: size, progress: progress, colour: phase.colour, idle: phase == .idle
            ).map(BusValue.byte)),
        ])
      })
  }

  private func itemInterface() -> BusInterface {
    let tooltip = { [weak self] () -> BusValue in
      guard let self else {
        return .structure([.string(""), .array(element: "(iiay)", []), .string(""), .string("")])
      }
      let (title, text) = model.tooltip(at: context.loop.now)
      return .structure([
        .string(model.phase.iconName), .array(element: "(iiay)", []), .string(title),
        .string(text),
      ])
    }
    return BusInterface(
      name: Self.itemInterface,
      methods: [
        .init("ContextMenu", inputs: [.init("x", "i"), .init("y", "i")]) { _, _ in [] },
        .init("Activate", inputs: [.init("x", "i"), .init("y", "i")]) { [weak self] _, _ in
          self?.activate()
          return []
        },
        .init("SecondaryActivate", inputs: [.init("x", "i"), .init("y", "i")]) {
          [weak self] _, _ in
          self?.activate()
          return []
        },
        .init("Scroll", inputs: [.init("delta", "i"), .init("orientation", "s")]) {
          [weak self] arguments, _ in
          // A notch up adds a minute, down takes one off (a phase keeps its last minute).
          guard case .int32(let delta)? = arguments.first,
            case .string(let orientation)? = arguments.dropFirst().first,
            let action = TrayAction.wheel(delta: delta, orientation: orientation)
          else { return [] }
          self?.perform(action)
          return []
        },
      ],
      properties: [
        .init("Category", "s", changes: .const) { .string("ApplicationStatus") },
        .init("Id", "s", changes: .const) { .string("grow") },
        .init("Title", "s", changes: .const) { .string("Grow") },
        .init("Status", "s", changes: .const) { [weak self] in
          .string(self?.itemStatus ?? "Active")
        },
        .init("WindowId", "i", changes: .const) { .int32(0) },
        // Empty: hosts prefer a name over pixels (as the specification asks them to), and
        // a themed name would hide the drawn ring and its progress everywhere. The name
        // stays in the tooltip's icon, for hosts that show one there.
        .init("IconName", "s", changes: .const) { .string("") },
        .init("IconPixmap", "a(iiay)", changes: .silent) { [weak self] in
          self?.pixmaps() ?? .array(element: "(iiay)", [])
        },
        .init("OverlayIconName", "s", changes: .const) { .string("") },
        .init("AttentionIconName", "s", changes: .const) { .string("") },
        .init("ToolTip", "(sa(iiay)ss)", changes: .silent, get: tooltip),
        .init("ItemIsMenu", "b", changes: .const) { .bool(false) },
        .init("Menu", "o", changes: .const) { .objectPath(Self.menuPath) },
      ],
      signals: [
        .init("NewTitle"), .init("NewIcon"), .init("NewAttentionIcon"), .init("NewOverlayIcon"),
        .init("NewToolTip"), .init("NewStatus", [.init("status", "s")]),
      ],
      doc: "Grow's tray icon (StatusNotifierItem).")
  }

  // MARK: com.canonical.dbusmenu

  private func properties(of item: TrayMenuItem) -> [BusValue] {
    var values: [(String, BusValue)] = []
    if item.isSeparator {
      values.append(("type", .string("separator")))
    } else {
      values.append(("label", .string(item.label)))
      values.append(("enabled", .bool(item.enabled)))
    }
    if let toggled = item.toggled {
      values.append(("toggle-type", .string("checkmark")))
      values.append(("toggle-state", .int32(toggled ? 1 : 0)))
    }
    if !item.children.isEmpty { values.append(("children-display", .string("submenu"))) }
    return values.map { .dictEntry(.string($0.0), .variant($0.1)) }
  }

  private func layout(_ item: TrayMenuItem, depth: Int32) -> BusValue {
    .structure([
      .int32(item.id), .array(element: "{sv}", properties(of: item)),
      .array(
        element: "v",
        depth == 0 ? [] : item.children.map { .variant(layout($0, depth: depth - 1)) }),
    ])
  }

  private func menuInterface() -> BusInterface {
    BusInterface(
      name: Self.menuInterface,
      methods: [
        .init(
          "GetLayout",
          inputs: [
            .init("parentId", "i"), .init("recursionDepth", "i"), .init("propertyNames", "as"),
          ],
          outputs: [.init("revision", "u"), .init("layout", "(ia{sv}av)")]
        ) { [weak self] arguments, _ throws(BusError) in
          guard let self else { throw BusError(name: BusError.failed, message: "gone") }
          guard case .int32(let parent)? = arguments.first,
            case .int32(let depth)? = arguments.dropFirst().first,
            let root = model.itemsByID[parent]
          else { throw BusError(name: BusError.invalidArgs, message: "no such menu item") }
          return [.uint32(revision), layout(root, depth: depth < 0 ? Int32.max : depth)]
        },
        .init(
          "GetGroupProperties", inputs: [.init("ids", "ai"), .init("propertyNames", "as")],
          outputs: [.init("properties", "a(ia{sv})")]
        ) { [weak self] arguments, _ in
          guard let self, case .array(_, let ids)? = arguments.first else { return [] }
          let all = model.itemsByID
          let wanted = ids.isEmpty ? Array(all.keys).sorted().map(BusValue.int32) : ids
          return [
            .array(
              element: "(ia{sv})",
              wanted.compactMap { value in
                guard case .int32(let id) = value, let item = all[id] else { return nil }
                return .structure([.int32(id), .array(element: "{sv}", properties(of: item))])
              })
          ]
        },
        .init(
          "GetProperty", inputs: [.init("id", "i"), .init("name", "s")],
          outputs: [.init("value", "v")]
        ) { [weak self] arguments, _ throws(BusError) in
          guard let self, case .int32(let id)? = arguments.first,
            case .string(let name)? = arguments.dropFirst().first, let item = model.itemsByID[id],
            let found = properties(of: item).first(where: {
              if case .dictEntry(.string(name), _) = $0 { return true }
              return false
            }), case .dictEntry(_, let value) = found
          else { throw BusError(name: BusError.invalidArgs, message: "no such property") }
          return [value]
        },
        .init(
          "Event",
          inputs: [
            .init("id", "i"), .init("eventId", "s"), .init("data", "v"), .init("timestamp", "u"),
          ]
        ) { [weak self] arguments, _ in
          guard let self, case .int32(let id)? = arguments.first,
            case .string("clicked")? = arguments.dropFirst().first,
            let action = model.itemsByID[id]?.action
          else { return [] }
          perform(action)
          return []
        },
        .init(
          "EventGroup", inputs: [.init("events", "a(isvu)")], outputs: [.init("idErrors", "ai")]
        ) { [weak self] arguments, _ in
          guard let self, case .array(_, let events)? = arguments.first else {
            return [.array(element: "i", [])]
          }
          var errors: [BusValue] = []
          for event in events {
            guard case .structure(let fields) = event, case .int32(let id)? = fields.first else {
              continue
            }
            guard let item = model.itemsByID[id] else {
              errors.append(.int32(id))
              continue
            }
            if case .string("clicked")? = fields.dropFirst().first, let action = item.action {
              perform(action)
            }
          }
          return [.array(element: "i", errors)]
        },
        .init(
          "AboutToShow", inputs: [.init("id", "i")], outputs: [.init("needUpdate", "b")]
        ) { _, _ in [.bool(false)] },
        .init(
          "AboutToShowGroup", inputs: [.init("ids", "ai")],
          outputs: [.init("updatesNeeded", "ai"), .init("idErrors", "ai")]
        ) { _, _ in [.array(element: "i", []), .array(element: "i", [])] },
      ],
      properties: [
        .init("Version", "u", changes: .const) { .uint32(3) },
        .init("TextDirection", "s", changes: .const) { .string("ltr") },
        .init("Status", "s", changes: .const) { .string("normal") },
        .init("IconThemePath", "as", changes: .const) { .array(element: "s", []) },
      ],
      signals: [
        .init(
          "ItemsPropertiesUpdated",
          [.init("updatedProps", "a(ia{sv})"), .init("removedProps", "a(ias)")]),
        .init("LayoutUpdated", [.init("revision", "u"), .init("parent", "i")]),
        .init("ItemActivationRequested", [.init("id", "i"), .init("timestamp", "u")]),
      ],
      doc: "The tray icon's menu (dbusmenu).")
  }
}

// `grow_plugin_ID`, not `grow_plugin`: the built-in plugins link into one test binary.
@_cdecl("grow_plugin_tray")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(TrayPlugin.self) }
