import Foundation
import GrowConfig
import GrowCore
import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import NotifyPlugin

/// What the notify plugin shows and withdraws, and when, checked in milliseconds against a
/// recording server on a manual clock. The real servers (dunst, xfce4-notifyd) and the bus are
/// in Tests/GrowDaemonTests/NotifyPluginDesktopTests.swift.
@MainActor
@Suite struct NotificationLifecycleTests {
  let bed = PluginTestBed()
  var bus: EventBus { bed.events }
  var clock: ManualLoop { bed.loop }
  let timer: FocusTimer
  let server = RecordingServer()
  let plugin: NotifyPlugin

  init() throws {
    timer = FocusTimer(deck: .standard, bus: bed.events, time: bed.loop)
    let context = try bed.context("notify", timer: timer)
    plugin = try NotifyPlugin(context: context, server: server)
  }

  @Test func welcomeBackAndTheDistractionGoWhenTheFocusEnds() throws {
    try timer.start()
    bus.publish(AwayResumed(card: "work", awaySeconds: 300))
    bus.publish(
      DistractionStarted(app: "firefox", title: "news", card: "work", when: clock.now, duration: 0))
    #expect(server.onScreen == ["Distraction", "Welcome back"])
    #expect(
      server.request(titled: "Welcome back")?.body
        == "You were away 5m; focus on 'work' goes on.")

    clock.advance(by: 25 * 60)  // the focus ends; the break starts by itself
    #expect(server.onScreen == ["Focus done"])
    #expect(server.request(titled: "Focus done")?.body.hasPrefix("Take a 5m short break.") == true)
  }

  @Test func stoppingTheSessionWithdrawsEverything() throws {
    try timer.start()
    bus.publish(AwayResumed(card: "work", awaySeconds: 60))
    try timer.stop()
    #expect(server.onScreen == [])
  }

  /// Notify answers later; one that comes for the same kind meanwhile replaces the first
  /// instead of standing next to it, and one withdrawn meanwhile is closed on arrival.
  @Test func whatComesWhileANotifyIsInFlightWaitsForItsId() throws {
    server.answersAtOnce = false
    try timer.start()
    bus.publish(AwayResumed(card: "work", awaySeconds: 60))
    bus.publish(AwayResumed(card: "work", awaySeconds: 120))
    #expect(server.notifyCalls == 1, "the second waits for the first one's id")
    server.answerAll()
    #expect(server.notifyCalls == 2)
    server.answerAll()
    #expect(server.onScreen == ["Welcome back"])
    #expect(server.request(titled: "Welcome back")?.body.hasPrefix("You were away 2m") == true)

    bus.publish(AwayResumed(card: "work", awaySeconds: 180))
    try timer.stop()
    server.answerAll()
    #expect(server.onScreen == [], "closed as soon as its id was known")
  }

  /// A server that does not answer (stopped) changes nothing for the timer, and the next
  /// notification goes out as usual.
  @Test func aNotifyWithoutAnswerHoldsNothingUp() throws {
    server.answersAtOnce = false
    try timer.start()
    bus.publish(AwayResumed(card: "work", awaySeconds: 60))
    server.failAll(.noAnswer(milliseconds: 3000))
    clock.advance(by: 25 * 60)
    #expect(timer.status.state == .shortBreak)
    server.answerAll()
    #expect(server.onScreen == ["Focus done"])
  }

  /// A stopped server runs again and shows what it was sent: its late answer gives the id, so
  /// what no longer applies is closed at once and what still applies can be closed later.
  @Test func whatAStoppedServerShowsLateIsClosedWhenItNoLongerApplies() throws {
    server.answersAtOnce = false
    try timer.start()
    bus.publish(AwayResumed(card: "work", awaySeconds: 60))
    server.failAll(.noAnswer(milliseconds: 3000))
    bus.publish(
      DistractionStarted(app: "firefox", title: "news", card: "work", when: clock.now, duration: 0))
    server.failAll(.noAnswer(milliseconds: 3000))
    clock.advance(by: 25 * 60)  // both no longer apply; "Focus done" waits for its answer
    server.answerLate()
    #expect(server.onScreen == [], "shown late, closed at once")
    server.answerAll()
    #expect(server.onScreen == ["Focus done"])

    bus.publish(AwayResumed(card: "work", awaySeconds: 60))  // during the break: still applies
    server.failAll(.noAnswer(milliseconds: 3000))
    server.answerLate()
    #expect(server.onScreen == ["Focus done", "Welcome back"])
    try timer.stop()
    #expect(server.onScreen == [], "its late id let the plugin close it")
  }

  /// At the end of a focus on a task the person is asked whether it is done; the question
  /// stays through the break, and "Done" tells the history (`TaskDone`).
  @Test func aFocusOnATaskEndsWithDoneAndDoneTellsTheHistory() throws {
    try timer.start(overrides: SessionOverrides(intention: "Chapter 3, exercises", task: 7))
    clock.advance(by: 25 * 60)  // the focus ends; the break starts by itself
    #expect(server.onScreen == ["Done with this task?", "Focus done"])
    let question = try #require(server.request(titled: "Done with this task?"))
    #expect(question.body == "Chapter 3, exercises")
    #expect(question.actions.map(\.label) == ["Done", "Not yet"])
    #expect(question.hints["suppress-sound"] == .bool(true), "the focus's end rang already")
    #expect(question.expireTimeout == 0, "a question waits to be answered")

    server.invoke("task-done", on: "Done with this task?")
    #expect(bed.recorder.of(TaskDone.self).map(\.task) == [7])
    #expect(server.onScreen == ["Focus done"])
  }

  @Test func notYetLeavesTheTaskOpenAndAFocusWithoutATaskAsksNothing() throws {
    try timer.start(overrides: SessionOverrides(intention: "Essay", task: 3))
    clock.advance(by: 25 * 60)
    server.invoke("task-not-yet", on: "Done with this task?")
    #expect(bed.recorder.of(TaskDone.self).isEmpty)
    #expect(server.onScreen == ["Focus done"])
    try timer.stop()
    try timer.start()
    clock.advance(by: 25 * 60)
    #expect(server.request(titled: "Done with this task?") == nil)
    // A focus stopped before its end is not asked about either.
    try timer.stop()
    try timer.start(overrides: SessionOverrides(task: 3))
    clock.advance(by: 60)
    try timer.stop()
    #expect(server.request(titled: "Done with this task?") == nil)
  }

  /// dunst lists "default" in its menu: there the named twin is left out; GNOME Shell makes
  /// "default" the click on the body, so there the named button stays.
  @Test func theDefaultActionHasANamedTwinOnlyWhereDefaultIsNoButton() throws {
    var card = FocusCard.standard
    card.autoStartBreaks = false
    timer.replaceDeck(CardDeck(cards: [card], defaultCardName: "work"))
    try timer.start()
    clock.advance(by: 25 * 60)
    #expect(
      server.request(titled: "Focus done")?.actions.map(\.key) == ["default", "remind-5m"])

    server.restart(as: "gnome-shell")
    try timer.stop()
    try timer.start()
    clock.advance(by: 25 * 60)
    #expect(
      server.request(titled: "Focus done")?.actions.map(\.key)
        == ["default", "start-break", "remind-5m"])
  }

  /// `warn-before` is one alarm at the deadline less the warning, on the wall clock; a pause
  /// takes it back and a resume sets it again for the new deadline.
  @Test func theWarningComesWarnBeforeTheEndAndFollowsAPause() throws {
    let bed = PluginTestBed()
    let clock = bed.loop
    let timer = FocusTimer(deck: .standard, bus: bed.events, time: clock)
    let server = RecordingServer()
    let plugin = try NotifyPlugin(
      context: bed.context("notify", settings: "warn-before = 2m", timer: timer), server: server)
    _ = plugin
    try timer.start()
    clock.advance(by: 23 * 60 - 0.01)
    #expect(server.request(titled: "Focus ends in 2m") == nil)
    try timer.pause()
    clock.advance(by: 600)
    #expect(server.request(titled: "Focus ends in 2m") == nil, "paused: no warning")
    try timer.resume()
    clock.advance(by: 0.02)
    #expect(server.onScreen.contains { $0.hasPrefix("Focus ends in") })
  }
}

extension NotificationLifecycleTests {
  /// Whether "Welcome back" during focus reaches the server, and with which urgency.
  func welcomeBackDuringFocus(backend: String, silencesServer: Bool = true) throws
    -> NotificationHint?
  {
    try timer.start()
    bus.publish(
      DoNotDisturbChanged(enabled: true, backend: backend, silencesServer: silencesServer))
    bus.publish(AwayResumed(card: "work", awaySeconds: 60))
    return server.request(titled: "Welcome back").map { $0.hints["urgency"] ?? .string("none") }
  }

  @Test(arguments: ["xfce4-notifyd", "gnome", "kde", "swaync"])
  func serversWhoseDNDLetsCriticalThroughGetItCritical(backend: String) throws {
    #expect(try welcomeBackDuringFocus(backend: backend) == .byte(2))
  }

  @Test(arguments: ["dunst", "mako"])
  func serversThatWouldQueueItGetNothingDuringFocus(backend: String) throws {
    #expect(try welcomeBackDuringFocus(backend: backend) == nil)
  }

  /// `dnd = always` keeps dunst paused into the break: the prompt would only wait there.
  @Test func aPromptIntoAPausedDunstIsNotSentEither() throws {
    var card = FocusCard.standard
    card.autoStartBreaks = false
    timer.replaceDeck(CardDeck(cards: [card], defaultCardName: "work"))
    try timer.start()
    bus.publish(DoNotDisturbChanged(enabled: true, backend: "dunst", silencesServer: true))
    clock.advance(by: 25 * 60)
    #expect(timer.status.next == .shortBreak)
    #expect(server.onScreen == [])
  }

  /// mako's do-not-disturb mode shows critical ones where the person's mako config has a
  /// `[mode=do-not-disturb urgency=critical]` section with `invisible=0`: then "Welcome back"
  /// goes as critical; with the plain mode (critical ones hidden and kept), not at all.
  @Test(arguments: [(true, NotificationHint?.some(.byte(2))), (false, nil)])
  func makoGetsItCriticalOnlyWhereItsConfigShowsCriticalOnes(
    showsCritical: Bool, expected: NotificationHint?
  ) throws {
    let home = FileManager.default.temporaryDirectory.appendingPathComponent(
      "grow-mako-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: home) }
    try FileManager.default.createDirectory(
      at: home.appendingPathComponent("mako"), withIntermediateDirectories: true)
    try
      ("[mode=do-not-disturb]\ninvisible=1\n"
      + (showsCritical ? "\n[mode=do-not-disturb urgency=critical]\ninvisible=0\n" : ""))
      .write(to: home.appendingPathComponent("mako/config"), atomically: true, encoding: .utf8)
    let bed = PluginTestBed()
    let timer = FocusTimer(deck: .standard, bus: bed.events, time: bed.loop)
    let server = RecordingServer()
    let plugin = try NotifyPlugin(
      context: bed.context(
        "notify", environment: ["XDG_CONFIG_HOME": home.path, "HOME": home.path], timer: timer),
      server: server)
    _ = plugin
    try timer.start()
    bed.events.publish(DoNotDisturbChanged(enabled: true, backend: "mako", silencesServer: true))
    bed.events.publish(AwayResumed(card: "work", awaySeconds: 60))
    #expect(
      server.request(titled: "Welcome back").map { $0.hints["urgency"] ?? .string("none") }
        == expected)
  }

  @Test func withoutAServerSwitchGrowHoldsItsOwnBack() throws {
    #expect(try welcomeBackDuringFocus(backend: "none", silencesServer: false) == nil)
  }

  @Test func withoutDNDTheConfiguredUrgencyGoes() throws {
    try timer.start()
    bus.publish(AwayResumed(card: "work", awaySeconds: 60))
    #expect(server.request(titled: "Welcome back")?.hints["urgency"] == .byte(1))
  }
}

/// A test double for the server's side of NotificationServer: it keeps what would be on screen.
/// Stands in for dunst only where timing must be controlled exactly (answers held back, or
/// failed); everything else is tested against the real servers.
@MainActor
final class RecordingServer: NotificationServer {
  var onAction: ((UInt32, String) -> Void)?
  var onClosed: ((UInt32, NotificationClosedReason) -> Void)?
  var onServerChanged: ((Bool) -> Void)?
  var name = "dunst"
  var answersAtOnce = true
  private(set) var notifyCalls = 0
  private var shown: [UInt32: NotificationRequest] = [:]
  private var nextID: UInt32 = 1
  private var unanswered: [(request: NotificationRequest, id: UInt32, reply: Reply)] = []
  private var timedOut: [(request: NotificationRequest, id: UInt32, reply: Reply)] = []
  typealias Reply = (Result<UInt32, NotificationError>) -> Void

  /// The summaries on screen, sorted.
  var onScreen: [String] { shown.values.map(\.summary).sorted() }

  func request(titled summary: String) -> NotificationRequest? {
    shown.values.first { $0.summary == summary }
  }

  func notify(_ request: NotificationRequest, replacing: UInt32, reply: @escaping Reply) {
    notifyCalls += 1
    var id = replacing
    if id == 0 {
      id = nextID
      nextID += 1
    }
    if answersAtOnce {
      shown[id] = request
      reply(.success(id))
    } else {
      unanswered.append((request, id, reply))
    }
  }

  func answerAll() {
    let due = unanswered
    unanswered.removeAll()
    for call in due {
      shown[call.id] = call.request
      call.reply(.success(call.id))
    }
  }

  func failAll(_ error: NotificationError) {
    let due = unanswered
    unanswered.removeAll()
    for call in due { call.reply(.failure(error)) }
    timedOut += due
  }

  /// The calls answered `noAnswer` get their id after all, as from a server stopped and run
  /// again (FreedesktopNotifications still hears answers after its timeout).
  func answerLate() {
    let due = timedOut
    timedOut.removeAll()
    for call in due {
      shown[call.id] = call.request
      call.reply(.success(call.id))
    }
  }

  func close(_ id: UInt32) { shown[id] = nil }

  /// The person pressed `key` on the notification titled `summary`.
  func invoke(_ key: String, on summary: String) {
    guard let id = shown.first(where: { $0.value.summary == summary })?.key else { return }
    onAction?(id, key)
  }

  /// Another server takes the name; what the last one showed went with it.
  func restart(as name: String) {
    self.name = name
    shown.removeAll()
    onServerChanged?(true)
  }

  func capabilities(reply: @escaping (Set<String>?) -> Void) { reply(["actions", "body"]) }

  func serverInformation(reply: @escaping ((name: String, version: String)?) -> Void) {
    reply((name, "1.0"))
  }
}
