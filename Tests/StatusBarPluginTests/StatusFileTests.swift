import Foundation
import GrowCore
import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import StatusBarPlugin

/// What the statusbar plugin leaves in `$XDG_RUNTIME_DIR/grow/` for a bar, and when it
/// rewrites it, on a manual loop with the real timer. Real bars reading the files are in
/// Tests/GrowCLITests/StatusBarRealBarsTests.swift.
@MainActor
@Suite struct StatusFileTests {
  let bed = PluginTestBed()
  let runtime: URL
  let timer: FocusTimer

  init() throws {
    runtime = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-statusbar-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
    timer = FocusTimer(deck: .standard, bus: bed.events, time: bed.loop)
  }

  func plugin(_ settings: String...) throws -> StatusBarPlugin {
    try StatusBarPlugin(
      context: bed.context(
        "statusbar", settings: settings.joined(separator: "\n"),
        environment: ["XDG_RUNTIME_DIR": runtime.path], timer: timer))
  }

  func line() throws -> String {
    try String(contentsOf: runtime.appendingPathComponent("grow/status.txt"), encoding: .utf8)
  }

  @Test func theCountdownGoesDownOncePerMinuteAndNotInBetween() throws {
    let plugin = try plugin()
    defer { plugin.stop() }
    try timer.start()
    #expect(try line().hasSuffix("25m\n"))
    bed.loop.advance(by: 59)
    #expect(try line().hasSuffix("25m\n"))
    bed.loop.advance(by: 1.5)
    #expect(try line().hasSuffix("24m\n"))
    bed.loop.advance(by: 10 * 60)
    #expect(try line().hasSuffix("14m\n"))
  }

  @Test func secondsInTheTemplateTickEverySecond() throws {
    let plugin = try plugin("template = {remaining}")
    defer { plugin.stop() }
    try timer.start()
    #expect(try line() == "25:00\n")
    bed.loop.advance(by: 1.01)
    #expect(try line() == "24:59\n")
  }

  /// Paused, nothing changes on its own, so the plugin keeps no alarm: the daemon sleeps.
  @Test func nothingWakesThePluginWhilePaused() throws {
    let plugin = try plugin()
    defer { plugin.stop() }
    try timer.start()
    bed.loop.advance(by: 90)
    try timer.pause()
    let paused = try line()
    #expect(bed.loop.nextDue == nil)
    bed.loop.advance(by: 3600)
    #expect(try line() == paused)
  }

  /// A wall-clock jump (a suspend) shows the time that is really left at once.
  @Test func aSuspendShowsTheTimeLeftAfterIt() throws {
    let plugin = try plugin()
    defer { plugin.stop() }
    try timer.start()
    bed.loop.jumpWallClock(by: 10 * 60 + 0.5)
    #expect(try line().hasSuffix("15m\n"))
  }

  @Test func stoppingThePluginRemovesItsFiles() throws {
    let plugin = try plugin()
    #expect(
      FileManager.default.fileExists(
        atPath: runtime.appendingPathComponent("grow/status.json").path))
    plugin.stop()
    #expect(
      !FileManager.default.fileExists(
        atPath: runtime.appendingPathComponent("grow/status.json").path))
    #expect(
      !FileManager.default.fileExists(
        atPath: runtime.appendingPathComponent("grow/status.txt").path))
  }

  @Test func anUnknownIconSetIsRefusedWithTheChoices() throws {
    #expect {
      try plugin("icons = emoji2")
    } throws: { error in
      // The plugin's declared settings name the choices, with file and line.
      "\(error)".contains("test.ini:2: icons = 'emoji2'")
        && "\(error)".contains("is not one of ascii, unicode, nerd")
    }
  }
}
