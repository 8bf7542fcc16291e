import Foundation
import GrowConfig
import GrowCore
import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import SoundPlugin

/// What the sound plugin plays, and when, on a manual clock against a recording output. The
/// real sound server (PulseAudio with a null sink, recorded) is in
/// Tests/GrowDaemonTests/SoundPluginDesktopTests.swift.
@MainActor
@Suite struct SoundPluginTests {
  let bed = PluginTestBed()
  let timer: FocusTimer
  let output = RecordingOutput()

  init() {
    // 20:26 UTC on the manual loop's day.
    timer = FocusTimer(deck: .standard, bus: bed.events, time: bed.loop)
  }

  func plugin(_ settings: String...) throws -> SoundPlugin {
    let lines = settings.joined(separator: "\n")
    let context =
      lines.isEmpty
      ? try bed.context("sound", timer: timer)
      : try bed.context("sound", settings: lines, timer: timer)
    return try SoundPlugin(context: context, output: output)
  }

  @Test func aFocusAndABreakThatRunTheirCourseAreHeard() throws {
    let plugin = try plugin()
    _ = plugin
    try timer.start()
    #expect(output.played.isEmpty, "nothing at the start")
    bed.loop.advance(by: 25 * 60)
    #expect(output.played.map(\.eventID) == ["complete"])
    #expect(output.played.first?.decibels == 0)
    #expect(output.played.first?.description == "Focus over")
    bed.loop.advance(by: 5 * 60)
    #expect(output.played.map(\.eventID) == ["complete", "bell"])
  }

  @Test func aPhaseThePersonEndsIsSilent() throws {
    let plugin = try plugin()
    _ = plugin
    try timer.start()
    try timer.skip()
    try timer.stop()
    #expect(output.played.isEmpty)
  }

  @Test func aCardsOwnSoundAndAFileAndTheVolume() throws {
    let plugin = try plugin(
      "card.work = /home/me/gong.oga", "break-over = off", "volume = 50")
    _ = plugin
    try timer.start()
    bed.loop.advance(by: 30 * 60)
    #expect(output.played.count == 1)
    #expect(output.played.first?.file == "/home/me/gong.oga")
    #expect(output.played.first?.eventID == nil)
    // Half the loudness: 20·log10(0.5) dB.
    #expect(abs((output.played.first?.decibels ?? 0) + 6.0206) < 0.001)
  }

  @Test func quietHoursAcrossMidnightAndTheDistractionSound() throws {
    // The focus ends at 20:51 UTC: inside 20:00-07:00, outside 21:00-07:00.
    do {
      let quiet = try plugin("quiet-hours = 20:00-07:00")
      try timer.start()
      bed.loop.advance(by: 25 * 60)
      #expect(output.played.isEmpty)
      try timer.stop()
      _ = quiet
    }
    let bed2 = PluginTestBed()
    let timer2 = FocusTimer(deck: .standard, bus: bed2.events, time: bed2.loop)
    let output2 = RecordingOutput()
    let plugin2 = try SoundPlugin(
      context: bed2.context(
        "sound", settings: "quiet-hours = 21:00-07:00\nevents = focus-over, distraction",
        timer: timer2),
      output: output2)
    _ = plugin2
    try timer2.start()
    bed2.publish(
      DistractionStarted(
        app: "firefox", title: "news", card: "work", when: bed2.loop.now, duration: 0))
    bed2.loop.advance(by: 25 * 60)
    #expect(output2.played.map(\.eventID) == ["dialog-warning", "complete"])
  }

  @Test func doNotDisturbSilencesGrowOnlyWhenAsked() throws {
    let silent = try plugin("during-dnd = false")
    bed.publish(DoNotDisturbChanged(enabled: true, backend: "dunst", silencesServer: true))
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    #expect(output.played.isEmpty)
    _ = silent

    let bed2 = PluginTestBed()
    let timer2 = FocusTimer(deck: .standard, bus: bed2.events, time: bed2.loop)
    let output2 = RecordingOutput()
    let heard = try SoundPlugin(context: bed2.context("sound", timer: timer2), output: output2)
    _ = heard
    bed2.publish(DoNotDisturbChanged(enabled: true, backend: "dunst", silencesServer: true))
    try timer2.start()
    bed2.loop.advance(by: 25 * 60)
    #expect(output2.played.count == 1, "Grow's own phase end passes its own DND by default")
  }

  @Test func noSoundServerMakesThePluginUnavailableUntilOnePlays() throws {
    let plugin = try plugin()
    _ = plugin
    output.outcome = .noServer("no sound server (Not available)")
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    #expect(bed.availability == ["no sound server (Not available)"])
    output.outcome = .played
    bed.loop.advance(by: 5 * 60)
    #expect(bed.availability == ["no sound server (Not available)", nil])
  }

  @Test func aSoundThatCannotPlayIsLoggedAndTheNextStillPlays() throws {
    let plugin = try plugin("focus-over = no-such-sound")
    _ = plugin
    output.outcome = .failed("Not found")
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    #expect(bed.logs.contains("cannot play no-such-sound: Not found"))
    #expect(bed.availability.isEmpty)
  }

  @Test func aBrokenSettingSaysWhereAndWhat() throws {
    #expect {
      _ = try plugin("focus-over = Ding Dong!")
    } throws: { error in
      "\(error)".contains("test.ini:")
        && "\(error)".contains("use on, off, an event id such as bell, or a file path")
    }
    #expect {
      _ = try plugin("quiet-hours = 25:00-7")
    } throws: { error in
      "\(error)".contains("write a span such as 22:00-07:00, or none")
    }
  }
}

/// Records what the plugin asks to play and answers with `outcome`.
@MainActor
final class RecordingOutput: SoundOutput {
  var outcome = PlayOutcome.played
  private(set) var played: [SoundRequest] = []

  func play(_ sound: SoundRequest, _ done: @escaping (PlayOutcome) -> Void) {
    if outcome == .played { played.append(sound) }
    done(outcome)
  }
}
