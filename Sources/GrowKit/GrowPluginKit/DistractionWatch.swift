import FoundationEssentials
import Glibc
import GrowConfig
import GrowCore
import GrowDBus

/// A window as a desktop source sees it: X11 (WM_CLASS), sway or i3 (IPC), Hyprland, or a
/// wlroots compositor's toplevel list. What the distraction rules match and what the history
/// keeps.
@_spi(GrowBuiltIn) public struct DesktopWindow: Equatable, Sendable {
  /// What tells two windows apart within one source (an X window id, a sway con_id, a
  /// Hyprland address): a window that keeps its id is the same distraction.
  public var id: String
  /// WM_CLASS class for X11 windows; the `app_id` for native Wayland windows.
  public var windowClass: String
  /// WM_CLASS instance; empty for native Wayland windows, which have none.
  public var instance: String
  /// At most `maximumTitleBytes` of UTF-8, whichever source it came from.
  public var title: String {
    didSet { if title.utf8.count > Self.maximumTitleBytes { title = Self.capped(title) } }
  }
  public var pid: Int?

  /// A title is another program's bytes: whatever a window calls itself, it costs every
  /// plugin the event goes to (each external plugin's outgoing buffer, the history) at most
  /// this much. Matching sees only the first `TitleRegex.titleLimit` scalars anyway.
  package static let maximumTitleBytes = 4096

  public init(id: String, windowClass: String, instance: String, title: String, pid: Int? = nil) {
    self.id = id
    self.windowClass = windowClass
    self.instance = instance
    self.title = Self.capped(title)
    self.pid = pid
  }

  /// The longest prefix of `title` within `maximumTitleBytes`, cut between Unicode scalars.
  package static func capped(_ title: String) -> String {
    guard title.utf8.count > maximumTitleBytes else { return title }
    var end = title.utf8.index(title.utf8.startIndex, offsetBy: maximumTitleBytes)
    while end > title.startIndex, UTF8.isContinuation(title.utf8[end]) {
      end = title.utf8.index(before: end)
    }
    return String(title.unicodeScalars[..<end])
  }

  /// The application's name as the history keeps it: the class (or app_id), else the instance.
  public var app: String { windowClass.isEmpty ? instance : windowClass }
}

/// What a desktop source is asked to do with a flagged window (`block =` on its card). Frozen:
/// the sources switch over it, and a new way to block is a change to each of them anyway.
@frozen @_spi(GrowBuiltIn) public enum WindowBlock: String, Sendable {
  /// Out of sight: iconified, or moved to a scratchpad or special workspace.
  case minimize
  /// Closed politely, as its close button does: the program may still ask to save.
  case close
}

/// The distraction and away logic, once, for every desktop source (the x11 plugin's XCB
/// connection, the wayland plugin's compositor sources). A source tells it three things —
/// the focused window changed (or nothing is focused), the person went idle, the person is
/// back — and it does the rest: the grace period, the card's rules and allow-list, `block`,
/// the events the history records, the away pause with its inhibitor check, and Grow's
/// attention property on the bus.
///
/// It lives in the kit rather than in one plugin so that each source stays a plugin of its own
/// (one links XCB, the other libwayland-client, and each says in `grow plugins` why it runs
/// or stands down), while the behaviour a person sees is the same whichever one runs. It is
/// the built-in plugins' (`@_spi(GrowBuiltIn)`), not part of the plugin API: SwiftPM's
/// `package` access does not reach the plugins' package, and what it decides is product
/// policy a third-party plugin should not freeze.
/// Everything runs on `context.loop`; nothing here waits.
@MainActor
@_spi(GrowBuiltIn) public final class DistractionWatch {
  /// The settings every source plugin offers, under its own section (`[plugin.x11]`,
  /// `[plugin.wayland]`).
  public static let settings = [
    PluginSetting(
      "grace", .duration(minimum: 0), default: "10s",
      help: "How long a distracting window may stay active before it is flagged."),
    PluginSetting(
      "idle-pause", .duration(minimum: 1), default: "3m",
      help: "Pause focus after this long without keyboard or mouse."),
    PluginSetting(
      "record-titles", .bool, default: "false",
      help: "Keep distracting windows' titles in the history (only their names otherwise)."),
    PluginSetting(
      "idle-respects-inhibitors", .bool, default: "true",
      help: "Do not pause while a program inhibits idleness (a video playing)."),
  ]

  private let context: PluginContext
  public let grace: TimeInterval
  /// How long without input counts as away; sources arm their idle notification with it.
  public let idlePause: TimeInterval
  private let recordTitles: Bool
  private let respectsInhibitors: Bool
  /// What `block = minimize` or `close` does with a flagged window: the source's way (iconify
  /// or move it to the scratchpad; a polite close), which logs by itself what the desktop
  /// would not do.
  private let block: (DesktopWindow, WindowBlock) -> Void

  /// The focused window, as the source last said.
  public private(set) var active: DesktopWindow?
  /// A distracting window that is active: `flagged` once it outlasted the grace period.
  private var distraction: (window: DesktopWindow, card: String, since: Date, flagged: Bool)?
  private var graceWork: (any Alarm)?
  /// When the current idle spell began (on the wall clock), while idle.
  public private(set) var idleSince: Date?
  /// Set while focus is paused because nobody was there.
  private var awayPause: (card: String, since: Date)?
  /// Counts idle spells, so an inhibitor answer that arrives after input is dropped.
  private var idleSpell = 0
  /// Why the last check did not pause, so the log says it once and not at every recheck.
  private var loggedInhibitor: String?
  /// The idle spell in which an inhibitor held (its pause counts only the last threshold).
  private var idleSpellInhibited = -1
  /// Another look after `idle-pause` while an inhibitor held and no input came.
  private var recheckWork: (any Alarm)?
  /// Each card's patterns by card name, compiled once, with those switched off for running
  /// over their budget (see `DistractionRules.judge`).
  private var rules: [String: DistractionRules] = [:]
  /// What the source found out about the session, shown with the switched-off patterns in
  /// `grow plugins` (the plugin's note). Nil leaves the note alone until the source knows.
  public var sessionFacts: [String]? {
    didSet { showNote() }
  }
  /// What kind of limit the facts report, if any (the X session lacks the SYNC extension, the
  /// compositor gives no active window): the note's `PluginLimit`, which `grow doctor` reads.
  public var sessionLimit: PluginLimit? {
    didSet { if sessionLimit != oldValue { showNote() } }
  }

  /// Reads the shared settings from the plugin's section (checked against `settings` plus
  /// the plugin's own `extraSettings`), exports the attention property and follows the timer.
  public init(
    context: PluginContext, extraSettings: [PluginSetting] = [],
    block: @escaping (DesktopWindow, WindowBlock) -> Void
  ) throws {
    self.context = context
    self.block = block
    try context.config.check(against: Self.settings + extraSettings, cards: [])
    grace = try context.config.duration("grace", default: 10)
    idlePause = try context.config.duration("idle-pause", default: 180, minimum: 1)
    recordTitles = try context.config.bool("record-titles", default: false)
    respectsInhibitors = try context.config.bool("idle-respects-inhibitors", default: true)
    context.subscribe(TimerChanged.self) { [weak self] _ in self?.timerChanged() }
    exportAttention()
  }

  public func stop() {
    context.growObject?.remove(interface: GrowBusAPI.attentionInterface)
    graceWork?.cancel()
    recheckWork?.cancel()
  }

  // MARK: What a source says

  /// The focused window changed, or its title did; nil when nothing is focused. Only a change
  /// is news for the other plugins: a source may say the same thing twice.
  public func windowChanged(_ window: DesktopWindow?) {
    guard window != active else { return }
    active = window
    context.publish(
      ActiveWindowChanged(
        windowClass: window?.windowClass ?? "", instance: window?.instance ?? "",
        title: window?.title ?? "", pid: window?.pid))
    evaluate()
  }

  /// No input for `idleSeconds` (at least `idlePause`, as the source armed it).
  public func becameIdle(idleSeconds: TimeInterval) {
    guard idleSince == nil else { return }
    idleSince = context.loop.now.addingTimeInterval(-idleSeconds)
    context.publish(UserIdle(idleSeconds: idleSeconds))
    pauseUnlessInhibited()
  }

  /// Input again after an idle spell; focus paused for being away resumes.
  public func becameActive() {
    guard let since = idleSince else { return }
    idleSince = nil
    idleSpell += 1
    recheckWork?.cancel()
    recheckWork = nil
    context.publish(UserActive(idleSeconds: context.loop.now.timeIntervalSince(since)))
    guard let away = awayPause else { return }
    awayPause = nil
    let awaySeconds = context.loop.now.timeIntervalSince(away.since)
    do {
      try context.timer.resume()
    } catch {
      return context.log.warning("could not resume focus after being away: \(error)")
    }
    context.log.info("back after \(DurationText.format(awaySeconds.rounded())): focus resumed")
    context.publish(AwayResumed(card: away.card, awaySeconds: awaySeconds))
  }

  /// The source lost its desktop (the server or compositor went away). A flagged distraction
  /// ends now: nothing can say how long it went on; an idle spell is forgotten.
  public func sourceLost() {
    endDistraction()
    active = nil
    idleSince = nil
    idleSpell += 1
    recheckWork?.cancel()
    recheckWork = nil
    loggedInhibitor = nil
  }

  // MARK: Distractions

  private func timerChanged() {
    evaluate()
    // Focus resumed by hand, skipped or stopped while away: the away pause is over.
    let status = context.timer.status
    if awayPause != nil, !(status.state == .focus && status.paused) { awayPause = nil }
  }

  /// Starts, keeps or ends a distraction after the window or the timer changed.
  private func evaluate() {
    let status = context.timer.status
    var match: (card: FocusCard, window: DesktopWindow)?
    if status.state == .focus, !status.paused, let window = active,
      let card = try? context.timer.deck.card(named: status.card),
      isDistraction(window, on: card)
    {
      match = (card, window)
    }
    if let ongoing = distraction,
      match == nil || match?.window.id != ongoing.window.id || match?.card.name != ongoing.card
    {
      endDistraction()
    }
    guard let match, distraction == nil else { return }
    distraction = (match.window, match.card.name, context.loop.now, false)
    graceWork = context.loop.after(seconds: grace) { [weak self] in
      self?.graceEnded(block: match.card.block)
    }
  }

  /// Matches the window against the card's patterns, compiled once per card; a pattern that
  /// ran over its budget is switched off, and the log and `grow plugins` say which, where.
  private func isDistraction(_ window: DesktopWindow, on card: FocusCard) -> Bool {
    var cardRules = rules[card.name] ?? DistractionRules(card: card)
    if !cardRules.compiled(from: card) { cardRules = DistractionRules(card: card) }
    let verdict = cardRules.judge(
      instance: window.instance, windowClass: window.windowClass, title: window.title)
    rules[card.name] = cardRules
    for pattern in verdict.switchedOff { context.log.warning(pattern.description) }
    if !verdict.switchedOff.isEmpty { showNote() }
    return verdict.distraction != nil
  }

  private func graceEnded(block mode: DistractionBlock) {
    guard var ongoing = distraction, !ongoing.flagged else { return }
    ongoing.flagged = true
    distraction = ongoing
    let window = ongoing.window
    context.log.info("distraction: \(window.app) on card '\(ongoing.card)'")
    context.publish(
      DistractionStarted(
        app: window.app, title: window.title, card: ongoing.card, when: ongoing.since,
        duration: context.loop.now.timeIntervalSince(ongoing.since)))
    announceAttention()
    switch mode {
    // `page` blocks the card's sites in the browser; its windows are only flagged.
    case .off, .page: break
    case .minimize: block(window, .minimize)
    case .close: block(window, .close)
    }
  }

  private func endDistraction() {
    graceWork?.cancel()
    graceWork = nil
    guard let ongoing = distraction else { return }
    distraction = nil
    guard ongoing.flagged else { return }
    let window = ongoing.window
    context.publish(
      DistractionEnded(
        app: window.app, title: window.title, card: ongoing.card, when: ongoing.since,
        duration: context.loop.now.timeIntervalSince(ongoing.since), recordTitle: recordTitles))
    announceAttention()
  }

  private func showNote() {
    guard let sessionFacts else { return }
    let switchedOff = rules.keys.sorted().flatMap { rules[$0]?.switchedOff ?? [] }
    let note = (sessionFacts + switchedOff).joined(separator: "; ")
    if let sessionLimit {
      context.setNote(note, limit: sessionLimit)
    } else {
      context.setNote(note)
    }
  }

  // `GrowBusAPI.attentionInterface` on Grow's object: what distracts the person right now,
  // for status bars and other apps (PropertiesChanged when it changes).
  private func exportAttention() {
    context.growObject?.add(
      BusInterface(
        name: GrowBusAPI.attentionInterface,
        properties: [
          .init(
            "Distraction", "s",
            doc: "The app (or site) that distracts the person right now, once flagged; empty "
              + "otherwise."
          ) { [weak self] in
            .string(self?.distraction.flatMap { $0.flagged ? $0.window.app : nil } ?? "")
          }
        ]))
  }

  private func announceAttention() {
    context.growObject?.propertiesChanged(["Distraction"], on: GrowBusAPI.attentionInterface)
  }

  // MARK: Away

  /// Pauses a running focus phase, unless a player plays or an application inhibits idleness:
  /// then it looks again after another `idle-pause` without input.
  private func pauseUnlessInhibited() {
    let status = context.timer.status
    // During a break being away is fine; a paused focus is already paused.
    guard status.state == .focus, !status.paused else { return }
    guard respectsInhibitors, let bus = context.sessionBus else {
      return pauseForAway(
        idleSeconds: context.loop.now.timeIntervalSince(idleSince ?? context.loop.now))
    }
    let spell = idleSpell
    IdleInhibitors.check(bus: bus) { [weak self] reason in
      guard let self, spell == idleSpell, idleSince != nil else { return }
      guard let reason else {
        loggedInhibitor = nil
        // The idle spell may have lasted long while a video played; away is what came after
        // the inhibitor ended, and that is at most the last threshold: count that.
        let idleSeconds = min(
          context.loop.now.timeIntervalSince(idleSince ?? context.loop.now),
          spell == idleSpellInhibited ? idlePause : .infinity)
        return pauseForAway(idleSeconds: idleSeconds)
      }
      idleSpellInhibited = spell
      if reason != loggedInhibitor {
        loggedInhibitor = reason
        context.log.info("idle for \(DurationText.format(idlePause)) but \(reason): not pausing")
      }
      // Input before then ends the spell and cancels this.
      recheckWork?.cancel()
      recheckWork = context.loop.after(seconds: idlePause) { [weak self] in
        guard let self, spell == idleSpell, idleSince != nil else { return }
        recheckWork = nil
        pauseUnlessInhibited()
      }
    }
  }

  private func pauseForAway(idleSeconds: TimeInterval) {
    let status = context.timer.status
    guard status.state == .focus, !status.paused else { return }
    let since = context.loop.now.addingTimeInterval(-idleSeconds)
    do {
      try context.timer.pause()
    } catch {
      return context.log.warning("could not pause focus while away: \(error)")
    }
    awayPause = (status.card, since)
    context.log.info("away for \(DurationText.format(idleSeconds.rounded())): focus paused")
    context.publish(AwayPaused(card: status.card, awaySeconds: idleSeconds))
  }
}
