import Foundation
import GrowCore
import GrowLoop
@_spi(GrowHost) import GrowPluginKit
import GrowPluginTesting
import GrowTestSupport
import Testing

@testable import WaylandPlugin

/// The wayland plugin on Hyprland, against HyprlandStandIn: a stand-in server speaking
/// Hyprland's documented IPC, because Hyprland is not packaged here and cannot run.
@MainActor @Suite struct HyprlandTests {
  let hyprland: HyprlandStandIn
  let events = EventBus()
  let recorder: EventRecorder
  let logs = LogCapture()
  let timer: FocusTimer

  init() throws {
    hyprland = try HyprlandStandIn()
    recorder = EventRecorder(events)
    let work = FocusCard(name: "work", distractions: ["Game"], block: .minimize)
    timer = FocusTimer(
      deck: CardDeck(cards: [work], defaultCardName: "work"), bus: events, time: MainLoop.shared)
  }

  func plugin(_ settings: String = "grace = 0s") throws -> WaylandPlugin {
    let context = PluginContext(
      id: "wayland", config: try PluginSettings.section("wayland", settings),
      log: logs.logger(label: "wayland"), events: events, timer: timer,
      environment: hyprland.environment, loop: MainLoop.shared)
    var notes: [String?] = []
    context.onNote = { note, _ in notes.append(note) }
    let plugin = try WaylandPlugin(context: context)
    // The stand-in has no Wayland display, so the note also says away detection is off.
    let note: String =
      "compositor: Hyprland; active window from Hyprland's event socket; "
      + "block = minimize moves the window to the special workspace 'grow'; "
      + "cannot connect to the Wayland display 'wayland-1': No such file or directory: "
      + "away detection is off"
    #expect(notes.last == note)
    return plugin
  }

  func waitUntil(_ timeout: TimeInterval = 30, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
      if Date() > deadline { return false }
      try await Task.sleep(for: .milliseconds(10))
    }
    return true
  }

  var windows: [ActiveWindowChanged] { recorder.of(ActiveWindowChanged.self) }

  @Test func activeWindowEventsBecomeActiveWindowsWithTheirPidAndTitles() async throws {
    let plugin = try plugin()
    defer { plugin.stop() }
    #expect(try await waitUntil { hyprland.eventClientCount == 1 })
    hyprland.setActiveWindow(address: "5a1b", class: "Game", title: "Level 3, part 2", pid: 4242)
    // A title with a comma: only the first comma separates the class.
    hyprland.emit("activewindow>>Game,Level 3, part 2\nactivewindowv2>>5a1b\n")
    #expect(try await waitUntil { windows.last?.pid == 4242 }, "\(windows)")
    #expect(windows.last?.windowClass == "Game")
    #expect(windows.last?.title == "Level 3, part 2")

    hyprland.emit("windowtitlev2>>5a1b,Level 4\n")
    #expect(try await waitUntil { windows.last?.title == "Level 4" }, "\(windows)")

    // Nothing focused: both lines empty.
    hyprland.emit("activewindow>>,\nactivewindowv2>>\n")
    #expect(try await waitUntil { windows.last?.windowClass == "" }, "\(windows)")
  }

  /// During focus a distracting window is flagged and, with `block = minimize`, sent to the
  /// special workspace; a Hyprland that never answers that request holds nothing up.
  @Test func aDistractionIsFlaggedAndMovedAwayWithoutWaitingForHyprland() async throws {
    let plugin = try plugin()
    defer { plugin.stop() }
    #expect(try await waitUntil { hyprland.eventClientCount == 1 })
    try timer.start()
    hyprland.answerRequests(false)
    hyprland.emit("activewindow>>Game,Level 3\nactivewindowv2>>77\n")
    #expect(try await waitUntil { !recorder.of(DistractionStarted.self).isEmpty })
    #expect(
      try await waitUntil {
        hyprland.requests.contains("dispatch movetoworkspacesilent special:grow,address:0x77")
      }, "\(hyprland.requests)")
    // The loop goes on meanwhile: the next event is handled at once.
    hyprland.emit("activewindow>>Editor,notes\nactivewindowv2>>78\n")
    #expect(try await waitUntil { !recorder.of(DistractionEnded.self).isEmpty })
    #expect(try await waitUntil { logs.contains("did not answer") }, "\(logs.lines)")
  }

  /// With `block = close` the flagged window gets Hyprland's polite `closewindow`.
  @Test func blockCloseAsksHyprlandToCloseTheWindow() async throws {
    let card = FocusCard(name: "work", distractions: ["Game"], block: .close)
    let timer = FocusTimer(
      deck: CardDeck(cards: [card], defaultCardName: "work"), bus: events, time: MainLoop.shared)
    let context = PluginContext(
      id: "wayland", config: try PluginSettings.section("wayland", "grace = 0s"),
      log: logs.logger(label: "wayland"), events: events, timer: timer,
      environment: hyprland.environment, loop: MainLoop.shared)
    let plugin = try WaylandPlugin(context: context)
    defer { plugin.stop() }
    #expect(try await waitUntil { hyprland.eventClientCount == 1 })
    try timer.start()
    hyprland.emit("activewindow>>Game,Level 3\nactivewindowv2>>77\n")
    #expect(
      try await waitUntil { hyprland.requests.contains("dispatch closewindow address:0x77") },
      "\(hyprland.requests)")
    #expect(try await waitUntil { logs.contains("closed Game (block = close)") }, "\(logs.lines)")
  }

  /// A line that never ends is not kept past 64 KiB: the connection is dropped, the plugin
  /// shows as unavailable, and it reconnects by itself.
  @Test func aFloodWithoutANewlineIsDroppedAndThePluginReconnects() async throws {
    var availability: [String?] = []
    let context = PluginContext(
      id: "wayland", config: try PluginSettings.section("wayland", "grace = 1s"),
      log: logs.logger(label: "wayland"), events: events, timer: timer,
      environment: hyprland.environment, loop: MainLoop.shared)
    context.onAvailability = { reason, _ in availability.append(reason) }
    let plugin = try WaylandPlugin(context: context)
    defer { plugin.stop() }
    #expect(try await waitUntil { hyprland.eventClientCount == 1 })
    hyprland.emit(String(repeating: "x", count: 200 * 1024))
    #expect(
      try await waitUntil { availability.contains { $0?.contains("larger than") == true } },
      "\(availability)")
    #expect(try await waitUntil { availability.last == .some(nil) }, "\(availability)")
    // The stand-in keeps the dropped client in its list: the new one is the second.
    #expect(try await waitUntil { hyprland.eventClientCount == 2 })
    hyprland.emit("activewindow>>Editor,notes\nactivewindowv2>>79\n")
    #expect(
      try await waitUntil { windows.last?.windowClass == "Editor" }, "\(windows) \(logs.lines)")
  }

  /// A Hyprland that drops every connection to its event socket at once (the report: the
  /// delay went back to 0.1 s at each drop, 112 reconnects in 12 s): the delays grow, 0.1 s
  /// doubling to 5 s, and start over only after a connection stayed up a while. Six seconds
  /// hold at most seven tries then; a busy machine only makes them fewer.
  @Test func aConnectionDroppedAtOnceIsRetriedLessAndLessOften() async throws {
    hyprland.dropEventClients(true)
    let plugin = try plugin()
    defer { plugin.stop() }
    let clock = ContinuousClock()
    let started = clock.now
    try await Task.sleep(for: .seconds(6))
    // On a busy machine the sleep may last far longer than 6 s: bound the tries by what the
    // backoff allows in the time that really passed (the old 0.1 s retry made 60 in 6 s).
    let elapsed = started.duration(to: clock.now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let allowed = Self.triesAllowedByBackoff(within: seconds) + 1
    let connections = hyprland.eventConnections
    #expect(connections <= allowed, "\(connections) connections in \(seconds) s")
    #expect(connections >= 2, "it did not reconnect")
    #expect(logs.lines.count < 2 * allowed + 8, "\(logs.lines)")
  }

  /// Connections a client backing off 0.1 s doubling to 5 s makes in `seconds`.
  static func triesAllowedByBackoff(within seconds: Double) -> Int {
    var tries = 1
    var time = 0.0
    var delay = 0.1
    while time + delay <= seconds {
      time += delay
      tries += 1
      delay = min(delay * 2, 5)
    }
    return tries
  }
}
