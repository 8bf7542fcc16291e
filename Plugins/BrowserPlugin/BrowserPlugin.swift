import FoundationEssentials
@_spi(GrowBuiltIn) import GrowConfig
import GrowCore
import GrowDBus
import GrowLoop
import GrowMessages
import GrowPluginKit

/// Websites, through Grow's browser extension (browser/ in the repository): the extension's
/// native messaging host (`grow browser-host`) tells this plugin the page in front of the
/// person and asks what to block; the plugin judges it with the card's `site:` patterns
/// (SiteWatch) and serves `org.grow.Grow1.Browser` on Grow's object for it.
///
/// Nothing leaves the machine: the extension talks only to the host the browser starts, the
/// host only to this daemon on the session bus. docs/browser.md has the whole path.
public final class BrowserPlugin: GrowPlugin {
  public static let id = "browser"
  public static var summary: String {
    Message(
      "blocks or flags the websites a card lists, through Grow's browser extension"
    ).render()
  }
  public static let settings = [
    PluginSetting(
      "grace", .duration(minimum: 0), default: "10s",
      help: "How long a listed site may stay in front (with block = off) before it is flagged."),
    PluginSetting(
      "record-urls", .bool, default: "false",
      help: "Keep whole addresses of distracting pages in the history (only the site otherwise)."),
  ]

  /// Longest address and browser name taken from a caller; anything longer is cut.
  static let longestURL = 8192
  static let longestBrowserName = 64
  /// Problems the hosts may report per minute; more are counted and said once.
  static let reportsPerMinute = 20

  private let context: PluginContext
  private let watch: SiteWatch
  private var reportWindow: (start: MonotonicInstant, count: Int, dropped: Int)?

  public init(context: PluginContext) throws {
    try context.config.check(against: Self.settings, cards: [])
    self.context = context
    watch = SiteWatch(
      context: context, grace: try context.config.duration("grace", default: 10),
      recordURLs: try context.config.bool("record-urls", default: false))
    watch.onBlockingChange = { [weak self] in self?.announce() }
    exportInterface()
    context.setNote(
      Message("waiting for the browser extension (grow install --user --browser)").render())
  }

  public func stop() {
    watch.stop()
    context.growObject?.remove(interface: GrowBusAPI.browserInterface)
  }

  private var lastAnnounced: [[SitePattern]]?
  /// The browser the note names: the note changes (and `grow plugins` hears of it) only when
  /// another browser calls, not at every page.
  private var connectedBrowser: String?

  private func noteConnected(_ browser: String) {
    guard browser != connectedBrowser else { return }
    connectedBrowser = browser
    context.setNote(Message("a browser is connected ({browser})").render(["browser": browser]))
  }

  /// PropertiesChanged when the lists changed, so each browser updates its rules.
  private func announce() {
    let lists = [watch.blockedSites, watch.allowedSites]
    guard lists != lastAnnounced else { return }
    lastAnnounced = lists
    context.growObject?.propertiesChanged(
      ["BlockedSites", "AllowedSites"], on: GrowBusAPI.browserInterface)
  }

  private static func sites(_ patterns: [SitePattern]) -> BusValue {
    .array(element: "s", patterns.map { .string($0.description) })
  }

  private static func text(_ value: BusValue?, limit: Int) -> String {
    String((value?.stringValue ?? "").prefix(limit))
  }

  private func exportInterface() {
    context.growObject?.add(
      BusInterface(
        name: GrowBusAPI.browserInterface,
        methods: [
          .init(
            "Visit", inputs: [.init("browser", "s"), .init("url", "s")],
            outputs: [.init("blocked", "b")],
            doc: "The page in front of the person in this browser ('' for none); "
              + "whether Grow blocks it.",
            handler: { [weak self] arguments, _ in
              guard let self else { return [.bool(false)] }
              let browser = Self.text(arguments.first, limit: Self.longestBrowserName)
              let url = Self.text(arguments.dropFirst().first, limit: Self.longestURL)
              noteConnected(browser.isEmpty ? "unnamed" : browser)
              return [.bool(watch.visit(browser: browser.isEmpty ? "browser" : browser, url: url))]
            }),
          .init(
            "Allow", inputs: [.init("url", "s"), .init("seconds", "u")],
            doc: "Lets this page's site through for that long during this focus "
              + "(recorded as a distraction).",
            handler: { [weak self] arguments, _ throws(BusError) in
              guard let self else { return [] }
              let url = Self.text(arguments.first, limit: Self.longestURL)
              let seconds = TimeInterval(arguments.dropFirst().first?.integerValue ?? 0)
              do {
                try watch.allow(url: url, seconds: seconds)
              } catch let refusal as AllowRefusal {
                throw BusError(
                  name: GrowBusAPI.ErrorName.invalidState, message: refusal.description)
              } catch {
                throw BusError(name: BusError.failed, message: "\(error)")
              }
              return []
            }),
          .init(
            "Report", inputs: [.init("browser", "s"), .init("problem", "s")],
            doc: "A problem the browser host met (a message too long or not JSON), for the log.",
            handler: { [weak self] arguments, _ in
              self?.report(
                browser: Self.text(arguments.first, limit: Self.longestBrowserName),
                problem: Self.text(arguments.dropFirst().first, limit: 500))
              return []
            }),
        ],
        properties: [
          .init(
            "BlockedSites", "as",
            doc: "Sites the browser blocks now (host, then a path prefix), while a card that "
              + "blocks focuses."
          ) { [weak self] in Self.sites(self?.watch.blockedSites ?? []) },
          .init("AllowedSites", "as", doc: "Exceptions to BlockedSites, written the same way.") {
            [weak self] in Self.sites(self?.watch.allowedSites ?? [])
          },
        ]))
  }

  /// Logs a host's problem, at most `reportsPerMinute` a minute: a flooding browser costs a
  /// line a minute, not one per message.
  private func report(browser: String, problem: String) {
    let now = context.loop.monotonicNow
    var window = reportWindow ?? (now, 0, 0)
    if now - window.start >= 60 {
      if window.dropped > 0 {
        context.log.warning("\(window.dropped) more problems from the browser host were not logged")
      }
      window = (now, 0, 0)
    }
    window.count += 1
    if window.count > Self.reportsPerMinute { window.dropped += 1 }
    reportWindow = window
    guard window.count <= Self.reportsPerMinute else { return }
    context.log.warning("browser host (\(browser.isEmpty ? "browser" : browser)): \(problem)")
  }
}

// `grow_plugin_ID`, not `grow_plugin`: the built-in plugins link into one test binary.
@_cdecl("grow_plugin_browser")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(BrowserPlugin.self) }
