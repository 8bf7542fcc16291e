import Foundation
import GrowTestSupport
import Testing

/// Grow's browser extension (browser/) in the real Chromium from Debian, headless, with
/// `grow browser-host` as its native messaging host and a real daemon: what a person sees
/// when a card lists a site. Pages are served on 127.0.0.1 under made-up names.
@Suite(.serialized) struct BrowserExtensionTests {
  static let config = """
    [card.math]
    focus = 25m
    intention = Chapter 3 exercises
    distractions = site:video.test, steam
    allow = site:video.test/lecture/
    block = page
    [plugin.notify]
    enabled = false
    """
  static let pages = [
    "index.html": "<html><head><title>Videos</title></head><body>Cat videos</body></html>",
    "lecture/index.html": "<html><body>A lecture</body></html>",
  ]
  static let growsPage = Chromium.extensionOrigin + "/blocked.html#"

  /// A daemon focusing on `math`, and the browser with video.test opened in it, blocked.
  func videoOpenedDuringFocus(language: String? = nil) throws -> (DaemonHarness, Chromium) {
    let harness = try DaemonHarness(config: Self.config)
    let browser = try Chromium(
      hosts: ["video.test"], pages: Self.pages, hostEnvironment: harness.environment,
      language: language)
    #expect(try harness.grow("start", "math").status == 0)
    try browser.open("http://video.test/")
    let blocked = try browser.waitForPages { $0.contains(Self.growsPage + "http://video.test/") }
    #expect(blocked, "pages: \((try? browser.pages()) ?? [])\n\(browser.log.suffix(3000))")
    return (harness, browser)
  }

  @Test(.enabled(if: Chromium.isInstalled))
  func aListedSiteShowsGrowsPageDuringFocusAndLoadsInTheBreak() throws {
    let (harness, browser) = try videoOpenedDuringFocus()
    // What the person reads there: the card, what they meant to do, the time left.
    browser.waitUntil {
      (try? browser.evaluate(
        "document.getElementById('time').textContent", inPageStartingWith: Self.growsPage))?
        .contains("left") ?? false
    }
    let heading = try browser.evaluate(
      "document.getElementById('heading').textContent", inPageStartingWith: Self.growsPage)
    #expect(heading == "Focus on “math”")
    let intention = try browser.evaluate(
      "document.getElementById('intention').textContent", inPageStartingWith: Self.growsPage)
    #expect(intention == "Chapter 3 exercises")
    let time = try browser.evaluate(
      "document.getElementById('time').textContent", inPageStartingWith: Self.growsPage)
    #expect(time.hasPrefix("2") && time.hasSuffix(" left"), "\(time)")
    if let shot = ProcessInfo.processInfo.environment["GROW_BROWSER_SCREENSHOT"] {
      try browser.screenshot(ofPageStartingWith: Self.growsPage, to: shot)
    }

    // An allowed part of a listed site loads.
    try browser.open("http://video.test/lecture/")
    #expect(try browser.waitForPages { $0.contains("http://video.test/lecture/") })

    // The break lets the site through: the tab on Grow's page gets it back, a new one loads.
    #expect(try harness.grow("skip").status == 0)
    #expect(
      try browser.waitForPages { pages in
        !pages.contains { $0.hasPrefix(Self.growsPage) } && pages.contains("http://video.test/")
      }, "pages: \((try? browser.pages()) ?? [])")

    // The blocked visit is in the history, with its site.
    #expect(try harness.grow("stop").status == 0)
    try harness.waitForHistory()
    let history = try harness.grow("history", "--json")
    let phases = try #require(
      try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]])
    let focus = try #require(phases.first { $0["kind"] as? String == "focus" })
    #expect(focus["sites"] as? [String] == ["video.test"], "\(history.stdout)")
    #expect(focus["distractions"] as? Int == 1)
  }

  /// The browser in German: Grow's page and the popup speak it (browser/_locales).
  @Test(.enabled(if: Chromium.isInstalled))
  func inAGermanBrowserGrowsPageAndThePopupSpeakGerman() throws {
    let (harness, browser) = try videoOpenedDuringFocus(language: "de")
    defer { withExtendedLifetime(harness) {} }
    let text = { (id: String, page: String) in
      (try? browser.evaluate(
        "document.getElementById('\(id)').textContent", inPageStartingWith: page)) ?? ""
    }
    browser.waitUntil { text("time", Self.growsPage).hasPrefix("noch ") }
    #expect(text("time", Self.growsPage).hasPrefix("noch 2"), "\(text("time", Self.growsPage))")
    #expect(text("heading", Self.growsPage) == "Fokus auf „math“")
    #expect(text("site", Self.growsPage) == "video.test wartet bis zu deiner Pause")
    #expect(text("back", Self.growsPage) == "Zurück an die Arbeit")
    #expect(text("allow", Self.growsPage) == "5 Minuten erlauben")
    let language = try browser.evaluate(
      "document.documentElement.lang", inPageStartingWith: Self.growsPage)
    #expect(language == "de")

    let popup = Chromium.extensionOrigin + "/popup.html"
    try browser.open(popup)
    browser.waitUntil { text("detail", popup).contains("gesperrt") }
    #expect(text("heading", popup) == "„math“: Fokus")
    #expect(text("detail", popup) == "1 Website wird während deines Fokus gesperrt.")
    #expect(text("note", popup) == "Chapter 3 exercises")
  }

  @Test(.enabled(if: Chromium.isInstalled))
  func allowFiveMinutesLetsTheSiteThroughAndIsRecordedAsADistraction() throws {
    let (harness, browser) = try videoOpenedDuringFocus()

    _ = try browser.evaluate(
      "document.getElementById('allow').click()", inPageStartingWith: Self.growsPage)
    #expect(
      try browser.waitForPages { pages in
        pages.contains("http://video.test/") && !pages.contains { $0.hasPrefix(Self.growsPage) }
      }, "pages: \((try? browser.pages()) ?? [])")
    // Let through for the rest of the five minutes: a new tab loads too.
    try browser.open("http://video.test/?again")
    #expect(try browser.waitForPages { $0.contains("http://video.test/?again") })
    let logs = try harness.grow("logs", "--plugin", "browser")
    #expect(logs.stdout.contains("video.test allowed for 5m"), "\(logs.stdout)")

    #expect(try harness.grow("stop").status == 0)
    try harness.waitForHistory()
    let history = try harness.grow("history", "--json")
    #expect(history.stdout.contains("\"sites\":[\"video.test\"]"), "\(history.stdout)")
  }

  @Test(.enabled(if: Chromium.isInstalled))
  func withoutGrowNothingIsBlockedAndADaemonStartedLaterIsFoundWithoutARestart() throws {
    let harness = try DaemonHarness(config: Self.config, startDaemon: false)
    let browser = try Chromium(
      hosts: ["video.test"], pages: Self.pages, hostEnvironment: harness.environment)
    try browser.open(Chromium.extensionOrigin + "/popup.html")
    var heading = ""
    browser.waitUntil {
      heading =
        (try? browser.evaluate(
          "document.getElementById('heading').textContent",
          inPageStartingWith: Chromium.extensionOrigin + "/popup.html")) ?? ""
      return heading == "Grow is not running"
    }
    #expect(heading == "Grow is not running")
    try browser.open("http://video.test/")
    #expect(try browser.waitForPages { $0.contains("http://video.test/") })

    // Grow starts after the browser; the extension finds it and blocks from then on.
    try harness.start()
    #expect(try harness.grow("start", "math").status == 0)
    try browser.open("http://video.test/?during-focus")
    #expect(
      try browser.waitForPages { $0.contains(Self.growsPage + "http://video.test/?during-focus") },
      "pages: \((try? browser.pages()) ?? [])")

    // The host killed: the extension starts another, and blocking goes on.
    let killed = try Command.run("pkill", ["-KILL", "-f", "grow browser-host"])
    #expect(killed.status == 0)
    #expect(try harness.grow("stop").status == 0)
    #expect(try harness.grow("start", "math").status == 0)
    try browser.open("http://video.test/?next-focus")
    #expect(
      try browser.waitForPages(timeout: 60) {
        $0.contains(Self.growsPage + "http://video.test/?next-focus")
      }, "pages: \((try? browser.pages()) ?? [])")
  }
}
