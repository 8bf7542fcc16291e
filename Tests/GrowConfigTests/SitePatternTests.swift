@_spi(GrowBuiltIn) import GrowConfig
import GrowCore
import Testing

/// `site:` patterns: what a person writes and which pages it names. The browser's own rules
/// (browser/rules.js) mean the same; the Chromium test holds them to it.
@Suite struct SitePatternTests {
  func page(_ url: String) throws -> PageAddress { try #require(PageAddress(url)) }

  @Test func aHostNamesItselfAndItsSubdomainsButNotLookalikes() throws {
    let site = try #require(WindowPattern("site:youtube.com").site)
    #expect(site.matches(host: "youtube.com", path: "/"))
    #expect(site.matches(host: "www.YouTube.com", path: "/feed"))
    #expect(!site.matches(host: "notyoutube.com", path: "/"))
    #expect(!site.matches(host: "youtube.com.evil.example", path: "/"))
    #expect(try WindowPattern("site:*.reddit.com").site?.description == "reddit.com")
  }

  @Test func aPathIsAPrefixOfThePathAndQuery() throws {
    let pattern = try WindowPattern("site:youtube.com/watch?v=lecture")
    #expect(pattern.matches(page: try page("https://m.youtube.com/watch?v=lecture&t=3")))
    #expect(!pattern.matches(page: try page("https://youtube.com/watch?v=cats")))
    #expect(!pattern.matches(page: try page("https://youtube.com/")))
  }

  @Test func onlyWebPagesAreSites() throws {
    #expect(PageAddress("chrome://settings") == nil)
    #expect(PageAddress("chrome-extension://abc/blocked.html#https://youtube.com/") == nil)
    #expect(PageAddress("about:blank") == nil)
    let address = try page("HTTP://user@Video.Test:8080?q=1#top")
    #expect(address.host == "video.test")
    #expect(address.path == "/?q=1")
  }

  @Test func aSitePatternNeverMatchesAWindowAndAWindowPatternNeverAPage() throws {
    let site = try WindowPattern("site:youtube.com")
    #expect(!site.matches(instance: "youtube.com", windowClass: "youtube.com", title: "youtube"))
    #expect(!(try WindowPattern("firefox")).matches(page: try page("https://firefox.com/")))
  }

  @Test func badSitesAreRefusedWithHowToWriteThem() {
    for text in ["site:", "site:you tube.com", "site:..com", "site:ftp://x"] {
      #expect(throws: WindowPatternError.invalidSite(text)) { try WindowPattern(text) }
    }
    let message = WindowPatternError.invalidSite("site:").description
    #expect(message.contains("site:youtube.com"))
  }

  @Test func aSitesPathIsNotARegexWhenTheListIsSplit() {
    #expect(
      WindowPattern.split("site:youtube.com/shorts, steam, firefox:/a{1,3}/")
        == ["site:youtube.com/shorts", "steam", "firefox:/a{1,3}/"])
  }

  @Test func rulesJudgeAPageWithTheSiteAllowListFirst() throws {
    let card = FocusCard(
      name: "math", distractions: ["site:youtube.com", "steam"],
      allowed: ["site:youtube.com/watch?v=lecture"])
    let rules = DistractionRules(card: card)
    #expect(rules.judge(page: try page("https://youtube.com/")) != nil)
    #expect(rules.judge(page: try page("https://youtube.com/watch?v=lecture")) == nil)
    #expect(rules.sites.distractions.map(\.description) == ["youtube.com"])
    #expect(rules.sites.allowed.map(\.description) == ["youtube.com/watch?v=lecture"])
  }
}
