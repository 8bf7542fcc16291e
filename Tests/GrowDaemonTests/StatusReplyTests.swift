import Foundation
import GrowDBus
@_spi(GrowHost) import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import GrowCore
@testable import GrowDaemon

/// `GetStatus` answers from a body encoded once and copied while the status it carries stays
/// the same (`StatusReply`). A read right after each kind of change must show the change:
/// each read below follows one that had the old status encoded.
@MainActor @Suite struct StatusReplyTests {
  let time = ManualTimeSource()
  let timer: FocusTimer
  let reply: StatusReply

  init() {
    let deck = CardDeck(
      cards: [
        FocusCard(name: "work", focus: 10 * 60, shortBreak: 60, autoStartBreaks: true),
        FocusCard(name: "read", focus: 20 * 60, intention: "chapter 3"),
      ], defaultCardName: "work")
    timer = FocusTimer(deck: deck, bus: EventBus(), time: time)
    reply = StatusReply(timer: timer)
  }

  /// What `GetStatus` answers now (the body each reply copies), as a client reads it.
  func read() throws -> TimerStatus {
    TimerStatus(busValues: try reply.body().arguments.first?.vardictEntries ?? [:])
  }

  /// The status encoded afresh, as GetStatus answered before it kept a body.
  var fresh: TimerStatus { TimerStatus(busValues: timer.status.busValues) }

  /// Reads twice (the second read is answered from the kept body) and checks both.
  func expectCurrent(after change: String, _ location: SourceLocation = #_sourceLocation) throws {
    #expect(try read() == fresh, "right after \(change)", sourceLocation: location)
    #expect(try read() == fresh, "again after \(change)", sourceLocation: location)
  }

  @Test func aReadRightAfterEachKindOfChangeShowsIt() throws {
    try expectCurrent(after: "nothing (idle)")
    try timer.start()
    try expectCurrent(after: "start")
    #expect(try read().state == .focus)
    time.advance(by: 1.5)
    try expectCurrent(after: "1.5 s of focus")
    #expect(try read().remaining == 10 * 60 - 1)
    time.advance(by: 0.4)
    try expectCurrent(after: "0.4 s more, within the same countdown second")
    time.advance(by: 0.2)
    try expectCurrent(after: "a countdown second passing")
    #expect(try read().remaining == 10 * 60 - 2)
    try timer.pause()
    try expectCurrent(after: "pause")
    #expect(try read().paused)
    try timer.resume()
    try expectCurrent(after: "resume")
    #expect(try read().paused == false)
    try timer.extend(by: 60)
    try expectCurrent(after: "extend")
    try timer.skip()
    try expectCurrent(after: "skip")
    #expect(try read().state == .shortBreak)
    try timer.stop()
    try expectCurrent(after: "stop")
    #expect(try read().state == .idle)
    try timer.start(card: "read")
    try expectCurrent(after: "a session on another card")
    #expect(try read().card == "read")
    #expect(try read().intention == "chapter 3")
    time.advance(by: 20 * 60 + 0.5)
    try expectCurrent(after: "the phase's end by its deadline")
    #expect(try read().state == .shortBreak)
  }
}
