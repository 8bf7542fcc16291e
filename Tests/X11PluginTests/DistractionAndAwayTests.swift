import Foundation
import GrowCore
import GrowLoop
import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import X11Plugin

/// The x11 plugin's distraction and away tracking against a scripted X server, on a manual
/// loop with the real timer: exact grace periods and away times, in milliseconds. The real
/// server (Xvfb, openbox, xdotool) is in Tests/GrowDaemonTests/X11PluginDesktopTests.swift.
@MainActor
@Suite struct DistractionAndAwayTests {
  let bed = PluginTestBed()
  let display = ScriptedDisplay()
  let timer: FocusTimer

  init() {
    let work = FocusCard(
      name: "work", distractions: ["Game", "Browser:/youtube|reddit/"],
      allowed: ["Browser:/grow docs/"])
    timer = FocusTimer(
      deck: CardDeck(cards: [work], defaultCardName: "work"), bus: bed.events, time: bed.loop)
  }

  func plugin(_ settings: String...) throws -> X11Plugin {
    let plugin = try X11Plugin(
      context: bed.context(
        "x11", settings: settings.joined(separator: "\n"), environment: ["DISPLAY": ":99"],
        timer: timer)
    ) { [display] _, _ in display }
    turn()
    return plugin
  }

  /// The server's socket is readable: the plugin takes its turn (and any it queues).
  func turn() {
    bed.loop.makeReady(display.descriptor)
    bed.loop.runDue()
  }

  func activate(_ window: WindowInfo) {
    display.windows[window.id] = window
    display.active = window.id
    display.notices.append(.activeWindowChanged)
    turn()
  }

  static let game = WindowInfo(id: 7, instance: "game", windowClass: "Game", title: "Level 3")
  static let editor = WindowInfo(id: 8, instance: "code", windowClass: "Code", title: "x.swift")

  @Test func aDistractionIsFlaggedExactlyWhenTheGraceEnds() throws {
    let plugin = try plugin("grace = 10s")
    defer { plugin.stop() }
    try timer.start()
    let since = bed.loop.now
    activate(Self.game)
    bed.loop.advance(by: 9.99)
    #expect(bed.recorder.of(DistractionStarted.self).isEmpty, "flagged before the grace period")
    bed.loop.advance(by: 0.01)
    let started = try #require(bed.recorder.last(DistractionStarted.self))
    #expect(started.app == "Game")
    #expect(started.when == since)
    #expect(started.duration == 10)

    bed.loop.advance(by: 50)
    activate(Self.editor)
    let ended = try #require(bed.recorder.last(DistractionEnded.self))
    #expect(ended.duration == 60)
  }

  /// A window manager that ignores iconify is named in the note (what `grow plugins` shows)
  /// half a second after the request; a later block that works takes that back.
  @Test func anIgnoredMinimiseIsNotedUntilOneWorks() throws {
    let work = FocusCard(name: "work", distractions: ["Game"], block: .minimize)
    let timer = FocusTimer(
      deck: CardDeck(cards: [work], defaultCardName: "work"), bus: bed.events, time: bed.loop)
    let plugin = try X11Plugin(
      context: bed.context(
        "x11", settings: "grace = 1s", environment: ["DISPLAY": ":99"], timer: timer)
    ) { [display] _, _ in display }
    defer { plugin.stop() }
    turn()
    try timer.start()
    display.honoursIconify = false
    activate(Self.game)
    bed.loop.advance(by: 1)
    #expect(display.iconified == [Self.game.id])
    bed.loop.advance(by: 0.5)
    turn()
    let ignored =
      "Openbox ignored the minimise request for Game: block = minimize only flags windows here"
    #expect(bed.notes.last??.hasSuffix(ignored) == true, "\(bed.notes)")

    activate(Self.editor)
    display.honoursIconify = true
    activate(Self.game)
    bed.loop.advance(by: 1.5)
    turn()
    #expect(display.iconified == [Self.game.id, Self.game.id])
    #expect(bed.notes.last??.contains("ignored") == false, "\(bed.notes)")
  }

  @Test func aGlanceShorterThanTheGraceIsNoDistraction() throws {
    let plugin = try plugin("grace = 10s")
    defer { plugin.stop() }
    try timer.start()
    activate(Self.game)
    bed.loop.advance(by: 5)
    activate(Self.editor)
    bed.loop.advance(by: 60)
    #expect(bed.recorder.of(DistractionStarted.self).isEmpty)
    #expect(bed.recorder.of(DistractionEnded.self).isEmpty)
  }

  /// Only during a running focus: a break or a pause is free time.
  @Test func nothingIsADistractionDuringABreakOrAPause() throws {
    let plugin = try plugin("grace = 1s")
    defer { plugin.stop() }
    try timer.start()
    try timer.pause()
    activate(Self.game)
    bed.loop.advance(by: 30)
    #expect(bed.recorder.of(DistractionStarted.self).isEmpty)
    try timer.resume()
    bed.loop.advance(by: 1)
    #expect(bed.recorder.of(DistractionStarted.self).count == 1, "counted once focus goes on")
  }

  /// An allowed title beats a distracting one; a break is free time.
  @Test func anAllowedTitleIsNotFlaggedAndNothingIsFlaggedDuringABreak() throws {
    let plugin = try plugin("grace = 1s")
    defer { plugin.stop() }
    try timer.start()
    let docs = WindowInfo(
      id: 9, instance: "browser", windowClass: "Browser", title: "grow docs - reddit")
    activate(docs)
    bed.loop.advance(by: 25 * 60)
    #expect(timer.status.state == .shortBreak)
    activate(Self.game)
    bed.loop.advance(by: 60)
    #expect(bed.recorder.of(DistractionStarted.self).isEmpty)
    #expect(bed.recorder.of(ActiveWindowChanged.self).contains { $0.windowClass == "Game" })
  }

  /// Idle for `idle-pause`: focus pauses, and the away time counts from the last input; the
  /// first input resumes it and says how long the person was away.
  @Test func awayPausesFocusAndInputResumesItWithTheTimeAway() throws {
    let plugin = try plugin("idle-pause = 3m", "idle-respects-inhibitors = no")
    defer { plugin.stop() }
    try timer.start()
    #expect(display.idleAlarm?.becomingIdle == true)
    #expect(display.idleAlarm?.milliseconds == 180_000)
    bed.loop.advance(by: 600)
    display.notices.append(.idleAlarm(milliseconds: 180_000))
    turn()
    #expect(timer.status.paused)
    #expect(bed.recorder.last(AwayPaused.self)?.awaySeconds == 180)
    #expect(display.idleAlarm?.becomingIdle == false, "now waiting for input")

    bed.loop.advance(by: 120)
    display.notices.append(.idleAlarm(milliseconds: 20))
    turn()
    #expect(!timer.status.paused)
    #expect(bed.recorder.last(AwayResumed.self)?.awaySeconds == 300)
    #expect(bed.logs.contains("back after 5m: focus resumed"))
  }

  /// Under Wayland, Xwayland's DISPLAY is no view of the session (native windows leave
  /// _NET_ACTIVE_WINDOW at 0, their input leaves IDLETIME climbing): the plugin stands down
  /// and says who watches instead, without opening the display.
  @Test func underWaylandThePluginStandsDownEvenWithDisplaySet() throws {
    var opened = false
    let context = try bed.context(
      "x11", environment: ["DISPLAY": ":99", "WAYLAND_DISPLAY": "wayland-1"], timer: timer)
    #expect(
      throws: PluginError.limited(
        "this is a Wayland session (WAYLAND_DISPLAY=wayland-1): the wayland plugin watches it; "
          + "Xwayland sees neither native windows nor their input", .otherSession)
    ) {
      _ = try X11Plugin(context: context) { [display] _, _ in
        opened = true
        return display
      }
    }
    #expect(!opened)
  }

  /// A server that stops answering (a stopped Xvfb) is shown as unavailable once a question
  /// has waited out the reply deadline; answering again puts the plugin back.
  @Test func aSilentServerIsReportedUnavailableAndBackWhenItAnswers() throws {
    let context = try bed.context(
      "x11", environment: ["DISPLAY": ":99"], timer: timer)
    let plugin = try X11Plugin(context: context) { [display] _, _ in display }
    defer { plugin.stop() }
    turn()
    display.answering = false
    display.onAnsweringChanged?(false)
    #expect(bed.availability.last??.contains("not answering") == true)
    display.answering = true
    display.onAnsweringChanged?(true)
    #expect(bed.availability.last == .some(nil))
  }
}

/// An X server, scripted: windows, the active one, the idle alarms, and the notices the next
/// turn reads. Replies come in the next `take`, as XCB hands them over. A double because the
/// cases here (a notice at an exact instant, a counter value) need control an Xvfb does not
/// give; the real server is driven in GrowDaemonTests.
@MainActor
final class ScriptedDisplay: X11Connection {
  let descriptor: Int32 = 99
  var connectionLost = false
  var answering = true
  var onAnsweringChanged: ((Bool) -> Void)?
  var hasIdleAlarms = true
  var hasScreenSaverExtension = false
  /// Whether the "window manager" hides what it is asked to iconify.
  var honoursIconify = true

  var windows: [XWindowID: WindowInfo] = [:]
  var active: XWindowID?
  var idleMilliseconds: Int64 = 0
  var notices: [X11Notice] = []
  private(set) var idleAlarm: (becomingIdle: Bool, milliseconds: Int64)?
  private(set) var iconified: [XWindowID] = []
  private(set) var closed: [XWindowID] = []
  private var replies: [() -> Void] = []
  private var asked = false

  private func answer(_ reply: @escaping () -> Void) {
    asked = true
    replies.append(reply)
  }

  func whenReady(_ ready: @escaping () -> Void) { answer(ready) }

  func take(limit: Int) -> (notices: [X11Notice], more: Bool) {
    let due = replies
    replies = []
    for reply in due { reply() }
    let taken = notices
    notices = []
    return (taken, false)
  }

  func flush() -> Bool {
    defer { asked = false }
    return asked
  }

  func close() {}

  func readActiveWindow(_ done: @escaping (XWindowID?) -> Void) {
    answer { [self] in done(active) }
  }
  func readInfo(of window: XWindowID, _ done: @escaping (WindowInfo?) -> Void) {
    answer { [self] in done(windows[window]) }
  }
  func readTitle(of window: XWindowID, _ done: @escaping (String?) -> Void) {
    answer { [self] in done(windows[window]?.title) }
  }
  func readWindowManager(_ done: @escaping (WindowManagerFacts) -> Void) {
    answer { done(WindowManagerFacts(name: "Openbox", publishesActiveWindow: true)) }
  }
  func readIsHidden(_ window: XWindowID, _ done: @escaping (Bool?) -> Void) {
    answer { [self] in done(honoursIconify && iconified.contains(window)) }
  }
  func readIdleMilliseconds(_ done: @escaping (Int64?) -> Void) {
    answer { [self] in done(idleMilliseconds) }
  }
  func watchProperties(of window: XWindowID, _ watch: Bool) {}
  func iconify(_ window: XWindowID) { iconified.append(window) }
  func requestClose(_ window: XWindowID) { closed.append(window) }
  func readTakesDeleteWindow(_ window: XWindowID, _ done: @escaping (Bool?) -> Void) {
    answer { done(true) }
  }
  func sendDeleteWindow(_ window: XWindowID) { closed.append(window) }
  func armIdleAlarm(becomingIdle: Bool, milliseconds: Int64) {
    idleAlarm = (becomingIdle, milliseconds)
  }
}
