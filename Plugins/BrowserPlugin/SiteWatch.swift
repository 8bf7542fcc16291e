import FoundationEssentials
@_spi(GrowBuiltIn) import GrowConfig
import GrowCore
import GrowPluginKit

/// Why the browser's "Allow 5 minutes" was refused; the message is shown on Grow's page.
enum AllowRefusal: Error, Equatable, CustomStringConvertible {
  case notFocusing
  case notASite(String)

  var description: String {
    switch self {
    case .notFocusing: "nothing is blocked right now: no focus is running"
    case .notASite(let url): "'\(url.prefix(200))' is not a web page (http or https)"
    }
  }
}

/// What the browser plugin decides, apart from D-Bus: the sites a card lists, judged as the
/// browser extension reports the page in front of the person (`visit`), blocked or flagged,
/// recorded in the history with their site, and let through for a while on request (`allow`).
///
/// - A listed site while a card with `block` other than `off` focuses is blocked: the browser
///   shows Grow's page. The visit is recorded when the person leaves it (with how long they
///   stayed on Grow's page), without a notification: the page already says it.
/// - With `block = off` it is flagged like a window: after `grace`, with the other plugins'
///   `DistractionStarted` (a notification, a sound), and recorded if it was flagged.
/// - "Allow 5 minutes" lets a site through until that much of the loop's clock has passed, or
///   the focus phase ends; it is a distraction, recorded as one, flagged at once.
///
/// Breaks, pauses and no session block nothing; a phase that ends ends every allowance.
@MainActor
final class SiteWatch {
  struct Visit: Equatable {
    var browser: String
    var site: String
    var address: PageAddress
    var card: String
    var since: Date
    var flagged: Bool
    var blocked: Bool
  }

  private let context: PluginContext
  let grace: TimeInterval
  private let recordURLs: Bool
  /// Whatever the extension asked for, an allowance lasts at most this long.
  static let longestAllowance: TimeInterval = 60 * 60
  /// At most this many browsers are followed at once (each a running host).
  static let browserLimit = 16

  /// The page in front of the person in each browser, while it is a listed site.
  private(set) var visits: [String: Visit] = [:]
  private var graceWork: [String: any Alarm] = [:]
  /// Sites let through, until when.
  private(set) var allowances: [(site: SitePattern, until: Date)] = []
  private var allowanceWork: (any Alarm)?
  /// The focus phase the allowances belong to (its start).
  private var allowancePhase: Date?
  private var rules: [String: DistractionRules] = [:]
  /// Called when what the browser must block changed (`blockedSites`, `allowedSites`).
  var onBlockingChange: () -> Void = {}

  init(context: PluginContext, grace: TimeInterval, recordURLs: Bool) {
    self.context = context
    self.grace = grace
    self.recordURLs = recordURLs
    context.subscribe(TimerChanged.self) { [weak self] _ in self?.timerChanged() }
  }

  func stop() {
    for browser in Array(visits.keys) { leave(browser) }
    allowanceWork?.cancel()
  }

  // MARK: What the browser must block

  /// The running focus phase's card, when it blocks sites and runs.
  private var blockingCard: FocusCard? {
    let status = context.timer.status
    guard status.state == .focus, !status.paused,
      let card = try? context.timer.deck.card(named: status.card), card.block.blocksSites
    else { return nil }
    return card
  }

  /// The sites the browser blocks now: the card's `site:` distractions while it focuses.
  var blockedSites: [SitePattern] {
    guard let card = blockingCard else { return [] }
    return compiledRules(for: card).sites.distractions
  }

  /// Exceptions to `blockedSites`: the card's `site:` allow patterns and what was allowed.
  var allowedSites: [SitePattern] {
    guard let card = blockingCard else { return [] }
    return compiledRules(for: card).sites.allowed + allowances.map(\.site)
  }

  private func compiledRules(for card: FocusCard) -> DistractionRules {
    if let compiled = rules[card.name], compiled.compiled(from: card) { return compiled }
    let compiled = DistractionRules(card: card)
    rules[card.name] = compiled
    return compiled
  }

  // MARK: What the browser says

  /// The page in front of the person in `browser` is now `url` ("" when the browser is not
  /// in front, or shows no web page). Returns whether Grow blocks it.
  @discardableResult
  func visit(browser: String, url: String) -> Bool {
    let status = context.timer.status
    guard status.state == .focus, !status.paused,
      let address = PageAddress(url),
      let card = try? context.timer.deck.card(named: status.card),
      compiledRules(for: card).judge(page: address) != nil
    else {
      leave(browser)
      return false
    }
    let allowed = isAllowed(address)
    let blocked = card.block.blocksSites && !allowed
    let site = recordURLs ? url : address.host
    if let ongoing = visits[browser], ongoing.site == site, ongoing.card == card.name {
      // The same site again (a reload, another page of it): one visit, now maybe blocked.
      visits[browser]?.blocked = ongoing.blocked || blocked
      return blocked
    }
    leave(browser)
    guard visits.count < Self.browserLimit else { return blocked }
    visits[browser] = Visit(
      browser: browser, site: site, address: address, card: card.name,
      since: context.loop.now, flagged: false, blocked: blocked)
    if allowed {
      flag(browser)
    } else if !blocked {
      graceWork[browser] = context.loop.after(seconds: grace) { [weak self] in
        self?.flag(browser)
      }
    }
    return blocked
  }

  /// Lets the site of `url` through for `seconds` of this focus phase.
  func allow(url: String, seconds: TimeInterval) throws(AllowRefusal) {
    guard let address = PageAddress(url), let site = SitePattern(address.host) else {
      throw .notASite(url)
    }
    guard blockingCard != nil else { throw .notFocusing }
    let until = context.loop.now.addingTimeInterval(min(max(seconds, 1), Self.longestAllowance))
    allowances.removeAll { $0.site == site }
    allowances.append((site, until))
    allowancePhase = context.timer.status.startedAt
    context.log.info(
      "\(address.host) allowed for \(DurationText.format(until.timeIntervalSince(context.loop.now)))"
    )
    armAllowanceExpiry()
    onBlockingChange()
    // The browser reports the page again once it loads; until then the visit (Grow's page)
    // turns into the allowed one.
    for (browser, visit) in visits where site.matches(host: visit.address.host, path: "/") {
      visits[browser]?.blocked = false
      flag(browser)
    }
  }

  private func isAllowed(_ address: PageAddress) -> Bool {
    allowances.contains { $0.site.matches(host: address.host, path: address.path) }
  }

  private func armAllowanceExpiry() {
    allowanceWork?.cancel()
    guard let first = allowances.map(\.until).min() else {
      allowanceWork = nil
      return
    }
    allowanceWork = context.loop.after(
      seconds: max(0, first.timeIntervalSince(context.loop.now))
    ) { [weak self] in self?.allowancesExpired() }
  }

  private func allowancesExpired() {
    let now = context.loop.now
    let ended = allowances.filter { $0.until <= now }
    allowances.removeAll { $0.until <= now }
    for allowance in ended {
      context.log.info("\(allowance.site.host) is blocked again: its allowed time is over")
      for (browser, visit) in visits
      where allowance.site.matches(host: visit.address.host, path: visit.address.path) {
        leave(browser)
      }
    }
    armAllowanceExpiry()
    onBlockingChange()
  }

  // MARK: Distractions

  private func timerChanged() {
    let status = context.timer.status
    if allowancePhase != nil, status.state != .focus || status.startedAt != allowancePhase {
      allowances.removeAll()
      allowancePhase = nil
      allowanceWork?.cancel()
      allowanceWork = nil
    }
    if status.state != .focus || status.paused {
      for browser in Array(visits.keys) { leave(browser) }
    }
    onBlockingChange()
  }

  private func flag(_ browser: String) {
    graceWork.removeValue(forKey: browser)?.cancel()
    guard let visit = visits[browser], !visit.flagged else { return }
    visits[browser]?.flagged = true
    context.log.info("distraction: \(visit.site) in \(visit.browser) on card '\(visit.card)'")
    context.publish(
      DistractionStarted(
        app: visit.browser, title: "", card: visit.card, when: visit.since,
        duration: context.loop.now.timeIntervalSince(visit.since), site: visit.site))
  }

  /// The person left the site in `browser` (or the phase ended): a blocked or flagged visit
  /// goes into the history.
  private func leave(_ browser: String) {
    graceWork.removeValue(forKey: browser)?.cancel()
    guard let visit = visits.removeValue(forKey: browser), visit.flagged || visit.blocked
    else { return }
    context.publish(
      DistractionEnded(
        app: visit.browser, title: "", card: visit.card, when: visit.since,
        duration: context.loop.now.timeIntervalSince(visit.since), recordTitle: false,
        site: visit.site))
  }
}
