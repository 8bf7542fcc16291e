import Foundation
@_spi(GrowBuiltIn) import GrowConfig
import GrowCore
import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import BrowserPlugin

/// The browser plugin's decisions on a manual loop with the real timer: what is blocked
/// when, what "Allow 5 minutes" lets through and for how long, and what the history gets.
/// The real browser (Chromium with the extension and `grow browser-host`) is in
/// Tests/GrowCLITests/BrowserExtensionTests.swift.
@MainActor
@Suite struct SiteWatchTests {
  let bed = PluginTestBed()
  let timer: FocusTimer

  init() {
    let blocking = FocusCard(
      name: "math", distractions: ["site:youtube.com", "site:*.reddit.com", "steam"],
      allowed: ["site:youtube.com/watch?v=lecture"], block: .page)
    let flagging = FocusCard(name: "write", distractions: ["site:news.example"])
    timer = FocusTimer(
      deck: CardDeck(cards: [blocking, flagging], defaultCardName: "math"), bus: bed.events,
      time: bed.loop)
  }

  func watch(grace: TimeInterval = 10) throws -> SiteWatch {
    SiteWatch(context: try bed.context("browser", timer: timer), grace: grace, recordURLs: false)
  }

  @Test func aListedSiteIsBlockedDuringFocusAndLetThroughInTheBreak() throws {
    let watch = try watch()
    #expect(!watch.visit(browser: "chromium", url: "https://www.youtube.com/"), "no session")
    try timer.start()
    #expect(watch.blockedSites.map(\.description) == ["youtube.com", "reddit.com"])
    #expect(watch.visit(browser: "chromium", url: "https://www.youtube.com/feed"))
    #expect(watch.visit(browser: "chromium", url: "https://old.reddit.com/r/swift"))
    #expect(!watch.visit(browser: "chromium", url: "https://youtube.com/watch?v=lecture"))
    #expect(!watch.visit(browser: "chromium", url: "https://swift.org/"))
    try timer.pause()
    #expect(!watch.visit(browser: "chromium", url: "https://www.youtube.com/"))
    #expect(watch.blockedSites.isEmpty)
    try timer.resume()
    try timer.skip()
    #expect(timer.status.state != .focus)
    #expect(!watch.visit(browser: "chromium", url: "https://www.youtube.com/"))
    #expect(watch.blockedSites.isEmpty)
  }

  @Test func aBlockedVisitIsRecordedWithItsSiteWhenThePersonLeavesGrowsPage() throws {
    let watch = try watch()
    try timer.start()
    #expect(watch.visit(browser: "chromium", url: "https://www.youtube.com/"))
    bed.loop.advance(by: 4)
    watch.visit(browser: "chromium", url: "https://swift.org/documentation")
    let ended = try #require(bed.recorder.last(DistractionEnded.self))
    #expect(ended.site == "www.youtube.com")
    #expect(ended.app == "chromium")
    #expect(ended.duration == 4)
    #expect(bed.recorder.of(DistractionStarted.self).isEmpty, "a blocked site needs no nudge")
  }

  @Test func allowFiveMinutesLetsTheSiteThroughForFiveMinutesOfTheClock() throws {
    let watch = try watch()
    var changes = 0
    watch.onBlockingChange = { changes += 1 }
    try timer.start()
    #expect(watch.visit(browser: "chromium", url: "https://www.youtube.com/"))
    try watch.allow(url: "https://www.youtube.com/", seconds: 300)
    #expect(changes > 0, "the browser is told to let it through")
    #expect(watch.allowedSites.map(\.description).contains("www.youtube.com"))
    #expect(!watch.visit(browser: "chromium", url: "https://www.youtube.com/watch?v=cats"))
    let started = try #require(bed.recorder.last(DistractionStarted.self))
    #expect(started.site == "www.youtube.com", "an allowance is a distraction, flagged at once")
    bed.loop.advance(by: 299)
    #expect(!watch.visit(browser: "chromium", url: "https://www.youtube.com/watch?v=dogs"))
    bed.loop.advance(by: 1)
    #expect(!watch.allowedSites.map(\.description).contains("www.youtube.com"))
    let ended = try #require(bed.recorder.last(DistractionEnded.self))
    #expect(ended.site == "www.youtube.com")
    #expect(ended.duration == 300)
    #expect(watch.visit(browser: "chromium", url: "https://www.youtube.com/watch?v=dogs"))
  }

  @Test func anAllowanceEndsWithItsFocusPhase() throws {
    let watch = try watch()
    try timer.start()
    try watch.allow(url: "https://www.youtube.com/", seconds: 300)
    try timer.skip()
    try timer.skip()
    try timer.resume()
    #expect(timer.status.state == .focus)
    #expect(watch.visit(browser: "chromium", url: "https://www.youtube.com/"))
  }

  @Test func allowIsRefusedWithAReasonWhenNothingIsBlocked() throws {
    let watch = try watch()
    #expect(throws: AllowRefusal.notFocusing) {
      try watch.allow(url: "https://www.youtube.com/", seconds: 300)
    }
    try timer.start()
    #expect(throws: AllowRefusal.notASite("chrome://settings")) {
      try watch.allow(url: "chrome://settings", seconds: 300)
    }
  }

  @Test func withBlockOffASiteIsFlaggedAfterTheGraceLikeAWindow() throws {
    let watch = try watch(grace: 10)
    try timer.start(card: "write")
    #expect(watch.blockedSites.isEmpty)
    #expect(!watch.visit(browser: "firefox", url: "http://news.example/today"))
    bed.loop.advance(by: 9)
    #expect(bed.recorder.of(DistractionStarted.self).isEmpty)
    bed.loop.advance(by: 1)
    #expect(bed.recorder.last(DistractionStarted.self)?.site == "news.example")
    bed.loop.advance(by: 20)
    watch.visit(browser: "firefox", url: "")
    #expect(bed.recorder.last(DistractionEnded.self)?.duration == 30)
    // A glance shorter than the grace is nothing.
    watch.visit(browser: "firefox", url: "http://news.example/")
    bed.loop.advance(by: 5)
    watch.visit(browser: "firefox", url: "")
    #expect(bed.recorder.of(DistractionEnded.self).count == 1)
  }
}
