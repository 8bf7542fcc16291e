import Foundation
import GrowCore
import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import TrayPlugin

/// The tray's menu, tooltip and icon from the timer's status, on a manual clock. Its D-Bus
/// side (StatusNotifierItem, dbusmenu, the watcher) is in
/// Tests/GrowDaemonTests/TrayPluginBusTests.swift.
@MainActor
@Suite struct TrayModelTests {
  let bed = PluginTestBed()
  let timer: FocusTimer

  init() {
    timer = FocusTimer(deck: .standard, bus: bed.events, time: bed.loop)
  }

  var model: TrayModel {
    TrayModel(status: timer.status, cards: timer.deck.names, doNotDisturb: false)
  }

  func labels(_ item: TrayMenuItem) -> [String] {
    item.children.map { $0.isSeparator ? "—" : $0.label }
  }

  @Test func idleOffersTheCardsAndRunningOffersTheControls() throws {
    #expect(labels(model.menu) == ["Start", "—", "Do not disturb"])
    #expect(model.menu.children.first?.children.map(\.action) == [.start(card: "work")])
    try timer.start()
    #expect(labels(model.menu) == ["Pause", "Skip", "+5 min", "Stop", "—", "Do not disturb"])
    try timer.pause()
    #expect(labels(model.menu).first == "Resume")
    #expect(model.itemsByID[2]?.action == .resume)
  }

  @Test func theTooltipSaysPhaseCardTimeLeftAndToday() throws {
    try timer.start()
    bed.loop.advance(by: 60)
    let tip = model.tooltip(at: bed.loop.now)
    #expect(tip.title == "focus on 'work'")
    #expect(tip.text.hasPrefix("24m left\nToday: "))
  }

  @Test func theRingFillsOncePerMinuteAndRestsWhileIdle() throws {
    #expect(model.progress(at: bed.loop.now) == 0)
    #expect(model.nextProgressChange(after: bed.loop.now) == nil)
    try timer.start()
    let start = bed.loop.now
    #expect(model.progress(at: start) == 0)
    #expect(model.nextProgressChange(after: start) == start.addingTimeInterval(60))
    bed.loop.advance(by: 30)
    #expect(model.progress(at: bed.loop.now) == 0, "no change within the minute")
    bed.loop.advance(by: 30)
    #expect(abs(model.progress(at: bed.loop.now) - 1.0 / 25) < 1e-9)
    try timer.pause()
    #expect(model.nextProgressChange(after: bed.loop.now) == nil, "no wake-ups while paused")
  }

  /// Each host's wheel up adds a minute, as it calls `Scroll`: waybar and xfce4-panel pass
  /// GDK's delta (up is negative), KDE Plasma and LXQt Qt's angle (up is positive, 120 a
  /// notch; Plasma writes "Vertical").
  @Test(arguments: [
    ("waybar", Int32(-1), Int32(1), "vertical"),
    ("xfce4-panel, a fast flick", -3, 2, "vertical"),
    ("KDE Plasma", 120, -120, "Vertical"),
    ("KDE Plasma, a touchpad", 15, -8, "Vertical"),
    ("LXQt", 120, -240, "vertical"),
  ])
  func theWheelUpAddsAMinuteOnEveryHost(host: String, up: Int32, down: Int32, orientation: String) {
    #expect(TrayAction.wheel(delta: up, orientation: orientation) == .extend(minutes: 1), "\(host)")
    #expect(
      TrayAction.wheel(delta: down, orientation: orientation) == .shorten(minutes: 1), "\(host)")
  }

  @Test func theWheelSidewaysOrStillDoesNothing() {
    #expect(TrayAction.wheel(delta: -1, orientation: "horizontal") == nil)
    #expect(TrayAction.wheel(delta: 120, orientation: "Horizontal") == nil)
    #expect(TrayAction.wheel(delta: 0, orientation: "vertical") == nil)
  }

  @Test func theIconIsARingInThePhasesColour() {
    let size = 24
    let half = TrayIcon.pixels(size: size, progress: 0.5, colour: 0xFFE5_534B, idle: false)
    #expect(half.count == size * size * 4)
    func pixel(_ x: Int, _ y: Int) -> [UInt8] {
      Array(half[((y * size + x) * 4)..<((y * size + x) * 4 + 4)])
    }
    // Right of centre (a quarter turn: filled) in the colour, opaque; left (three quarters:
    // not yet) the faint track; the dot in the middle in the colour, clear around it.
    #expect(pixel(size - 2, size / 2) == [0xFF, 0xE5, 0x53, 0x4B])
    #expect(pixel(1, size / 2)[0] < 0x80 && pixel(1, size / 2)[0] > 0)
    #expect(pixel(size / 2, size / 2) == [0xFF, 0xE5, 0x53, 0x4B])
    #expect(pixel(size / 2 + 5, size / 2) == [0, 0, 0, 0])
  }
}
