import Foundation
import GrowConfig
import GrowCore
import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import BreakScreenPlugin

/// A stand-in for the X server: records what the plugin drew, answers at once.
@MainActor
final class ScriptedScreen: BreakScreenServer {
  let descriptor: Int32 = 77
  let kind = "the X server"
  var connectionLost = false
  var answering = true
  var onAnsweringChanged: ((Bool) -> Void)?
  private(set) var isShowing = false
  var monitorCount: Int { isShowing ? 2 : 0 }
  let sharesFrames = true
  var fullscreen = false
  var refusal: ShowRefusal?
  /// Every frame drawn: at each show and each update.
  private(set) var drawn: [BreakScreenContent] = []
  private(set) var shows = 0
  private(set) var hides = 0
  var queued: [BreakScreenNotice] = []

  func take(limit: Int) -> (notices: [BreakScreenNotice], more: Bool) {
    defer { queued = [] }
    return (queued, false)
  }
  func flush() -> Bool { false }
  func close() { isShowing = false }
  func readFullscreen(_ done: @escaping (Bool) -> Void) { done(fullscreen) }
  func show(_ content: BreakScreenContent, _ done: @escaping (ShowRefusal?) -> Void) {
    shows += 1
    if let refusal { return done(refusal) }
    isShowing = true
    drawn.append(content)
    done(nil)
  }
  func update(_ content: BreakScreenContent) { drawn.append(content) }
  func relayout(refused: @escaping (ShowRefusal) -> Void) {}
  func hide() {
    if isShowing { hides += 1 }
    isShowing = false
  }
}

/// The plugin on a manual clock with a real timer, against the scripted screen. The real X
/// server (Xvfb, two monitors, openbox) is in BreakScreenDesktopTests.
@MainActor
@Suite struct BreakScreenPluginTests {
  let bed = PluginTestBed()
  let screen = ScriptedScreen()

  func timer(_ choice: BreakScreenChoice = .all) -> FocusTimer {
    var card = FocusCard(name: "work")
    card.breakScreen = choice
    return FocusTimer(
      deck: CardDeck(cards: [card], defaultCardName: "work"), bus: bed.events, time: bed.loop)
  }

  func plugin(_ timer: FocusTimer, _ settings: String...) throws -> BreakScreenPlugin {
    let context =
      settings.isEmpty
      ? try bed.context("breakscreen", environment: ["DISPLAY": ":9"], timer: timer)
      : try bed.context(
        "breakscreen", settings: settings.joined(separator: "\n"),
        environment: ["DISPLAY": ":9"], timer: timer)
    return try BreakScreenPlugin(context: context) { _, _ in self.screen }
  }

  func press(_ input: BreakScreenInput) {
    screen.queued.append(.input(input))
    bed.loop.makeReady(screen.descriptor)
  }

  @Test func aBreakOnACardThatAsksCoversTheScreenWithItsTimeAndWhatWasDone() throws {
    let timer = timer()
    let plugin = try plugin(timer)
    try timer.start()
    #expect(screen.shows == 0, "not during focus")
    bed.loop.advance(by: 25 * 60)
    #expect(screen.isShowing)
    let first = try #require(screen.drawn.first)
    #expect(first.timeLeft == "5:00")
    #expect(first.headline == "Focus 1 of 4 on 'work' done")
    #expect(first.buttons.map(\.button) == [.skip, .postpone])
    _ = plugin
  }

  @Test func onlyTheBreaksTheCardNames() throws {
    let timer = timer(.long)
    let plugin = try plugin(timer, "skip-when-fullscreen = false")
    try timer.start()
    for _ in 0..<3 {
      bed.loop.advance(by: 25 * 60)
      #expect(!screen.isShowing, "not at a short break")
      try timer.skip()
      try timer.start()
    }
    bed.loop.advance(by: 25 * 60)
    #expect(timer.status.state.phaseKind == .longBreak)
    #expect(screen.isShowing)
    #expect(screen.drawn.first?.headline == "Focus 4 of 4 on 'work' done")
    _ = plugin
  }

  @Test func aCardWithoutItNeverShowsOne() throws {
    let timer = timer(.off)
    let plugin = try plugin(timer)
    try timer.start()
    bed.loop.advance(by: 30 * 60)
    #expect(screen.shows == 0)
    _ = plugin
  }

  @Test func oneRedrawPerSecondAndNoAlarmOnceTheBreakIsOver() throws {
    let timer = timer()
    let plugin = try plugin(timer)
    try timer.start()
    bed.loop.advance(by: 25 * 60 + 0.3)
    #expect(screen.drawn.count == 1)
    for _ in 0..<100 { bed.loop.advance(by: 0.1) }
    // 0.3 s in, ten more seconds: the clock changed ten times.
    #expect(
      screen.drawn.map(\.timeLeft)
        == ["5:00", "4:59", "4:58", "4:57", "4:56", "4:55", "4:54", "4:53", "4:52", "4:51", "4:50"])
    bed.loop.advance(by: 5 * 60)
    #expect(!screen.isShowing, "the screen goes when the break ends")
    #expect(screen.hides == 1)
    #expect(bed.loop.pendingCount == 0, "nothing wakes the daemon while no screen shows")
    _ = plugin
  }

  @Test func skipByClickEndsTheBreakAsSkipped() throws {
    let timer = timer()
    let plugin = try plugin(timer)
    try timer.start()
    bed.loop.advance(by: 25 * 60 + 10)
    press(.clicked(.skip))
    #expect(!screen.isShowing)
    let ended = bed.recorder.of(PhaseEnded.self).last
    #expect(ended?.phase.kind == .shortBreak)
    #expect(ended?.outcome == .skipped)
    _ = plugin
  }

  @Test func escapeSkipsAndTabEnterPostpones() throws {
    let timer = timer()
    let plugin = try plugin(timer)
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    press(.tab(backwards: false))
    #expect(screen.drawn.last?.focused == .skip, "Tab shows where the keyboard is")
    press(.tab(backwards: false))
    press(.enter)
    #expect(!screen.isShowing, "postponed")
    #expect(timer.status.duration == 7 * 60)
    bed.loop.advance(by: 2 * 60)
    #expect(screen.isShowing)
    press(.escape)
    #expect(bed.recorder.of(PhaseEnded.self).last?.outcome == .skipped)
    _ = plugin
  }

  @Test func postponeBringsTheBreakBackWholeAtMostTheLimit() throws {
    let timer = timer()
    let plugin = try plugin(timer, "postpone-limit = 2", "skip-when-fullscreen = false")
    try timer.start()
    bed.loop.advance(by: 25 * 60 + 10)
    #expect(screen.drawn.last?.timeLeft == "4:50")
    press(.clicked(.postpone))
    #expect(!screen.isShowing)
    bed.loop.advance(by: 119)
    #expect(!screen.isShowing, "not before the postpone is over")
    bed.loop.advance(by: 1)
    #expect(screen.isShowing)
    #expect(screen.drawn.last?.timeLeft == "4:50", "the rest that was left, whole")
    press(.clicked(.postpone))
    bed.loop.advance(by: 120)
    #expect(screen.drawn.last?.buttons.map(\.button) == [.skip], "no third postpone")
    press(.clicked(.postpone))
    #expect(screen.isShowing)
    #expect(bed.logs.contains("postponed: the break screen comes back in 2m"))
    _ = plugin
  }

  @Test func strictHasNoWayOut() throws {
    let timer = timer()
    let plugin = try plugin(timer, "strict = true")
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    #expect(screen.drawn.last?.buttons.isEmpty == true)
    press(.escape)
    press(.clicked(.skip))
    #expect(screen.isShowing)
    #expect(timer.status.state.phaseKind == .shortBreak)
    bed.loop.advance(by: 5 * 60)
    #expect(!screen.isShowing)
    _ = plugin
  }

  @Test func aFullscreenWindowPostponesTheScreen() throws {
    let timer = timer()
    let plugin = try plugin(timer)
    screen.fullscreen = true
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    #expect(!screen.isShowing)
    #expect(bed.logs.contains("a fullscreen window is active: the break screen comes back in 2m"))
    screen.fullscreen = false
    bed.loop.advance(by: 2 * 60)
    #expect(screen.isShowing)
    #expect(screen.drawn.last?.timeLeft == "5:00")
    _ = plugin
  }

  @Test func aRefusedGrabIsLoggedAndTheBreakGoesOnWithoutIt() throws {
    let timer = timer()
    let plugin = try plugin(timer, "skip-when-fullscreen = false")
    screen.refusal = .grabRefused(what: "keyboard")
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    #expect(!screen.isShowing)
    #expect(
      bed.logs.messages(at: .warning).contains {
        $0.contains("cannot show: another program holds the keyboard")
      })
    bed.loop.advance(by: 5 * 60)
    #expect(bed.recorder.of(PhaseEnded.self).last?.outcome == .completed)
    _ = plugin
  }

  @Test func startedDuringABreakItShowsForTheRestOfIt() throws {
    let timer = timer()
    try timer.start()
    bed.loop.advance(by: 25 * 60 + 30)
    let plugin = try plugin(timer)
    #expect(screen.isShowing)
    #expect(screen.drawn.last?.timeLeft == "4:30")
    bed.loop.advance(by: 4 * 60 + 30)
    #expect(!screen.isShowing, "and goes when it ends")
    _ = plugin
  }

  @Test func withoutADesktopSessionItSaysWhy() throws {
    let timer = timer()
    #expect(throws: PluginError.self) {
      try BreakScreenPlugin(
        context: try bed.context("breakscreen", environment: [:], timer: timer)
      ) { _, _ in self.screen }
    }
  }

  @Test func aWaylandSessionUsesTheCompositorNotXwayland() throws {
    let timer = timer()
    var connected: [String] = []
    let plugin = try BreakScreenPlugin(
      context: try bed.context(
        "breakscreen", environment: ["DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-1"],
        timer: timer)
    ) { name, _ in
      connected.append(name)
      return self.screen
    }
    #expect(connected == ["wayland-1"])
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    #expect(screen.isShowing)
    _ = plugin
  }

  /// GNOME: no layer shell. `grow plugins` says so; at the break a critical notification
  /// stands in (here, without a bus, the log says what it would show).
  @Test func aCompositorWithoutALayerShellSaysSoAndNotifiesInstead() throws {
    let timer = timer()
    let plugin = try plugin(timer)
    screen.refusal = .noLayerShell
    screen.queued.append(.cannotCover(BreakScreenWayland.noLayerShellReason))
    bed.loop.makeReady(screen.descriptor)
    bed.loop.advance(by: 0)
    #expect(bed.availability.last == BreakScreenWayland.noLayerShellReason)
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    #expect(screen.shows == 1)
    #expect(!screen.isShowing)
    let notified = bed.logs.lines.filter { $0.contains("a critical notification instead") }
    #expect(notified.count == 1)
    #expect(notified.first?.contains("Short break: Focus 1 of 4 on 'work' done.") == true)
    #expect(timer.status.state.phaseKind == .shortBreak, "the break goes on")
    _ = plugin
  }
}
