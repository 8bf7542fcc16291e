import Dispatch
import FoundationEssentials
import Glibc
import GrowConfig
import GrowCore
import GrowDaemon
import GrowMessages
@_spi(GrowHost) import GrowPluginKit

extension Commands {
  /// A real daemon on the session bus running a cycle measured in seconds, printed live.
  static func runDemo(_ words: [String]) throws(CLIError) {
    try expect(try parse(words, usage: "demo"), atMost: 0, "demo")
    let card = FocusCard(
      name: "demo", focus: 6, shortBreak: 3, longBreak: 5, longBreakAfter: 2,
      autoStartBreaks: true, autoStartFocus: false, intention: "see how Grow works")
    // The demo's own timer, with the plugins that show the cycle on the desktop.
    let daemon = Daemon(
      config: GrowConfig(
        deck: CardDeck(cards: [card], defaultCardName: card.name),
        enabledPlugins: ["notify", "statusbar"]),
      log: Logger(label: "demo", minimumLevel: .warning),
      // Seconds-long demo phases are not the person's focus: keep them out of the history
      // and the saved session.
      historyPath: FileManager.default.temporaryDirectory
        .appendingPathComponent("grow-demo-\(getpid()).sqlite").path,
      sessionPath: nil)
    do {
      try daemon.start()
    } catch {
      throw .failed(
        Message("the demo runs its own timer: {problem}").render(["problem": error.description]))
    }
    let demo = DemoNarrator(daemon: daemon)
    say(
      Message(
        """
        Grow demo: a real focus cycle, in seconds instead of minutes.
          card 'demo': focus 6s → short break 3s → focus 6s → long break 5s
          The daemon is live on the session bus as org.grow.Grow1 while this runs.
        """
      ).render() + "\n")
    demo.begin()
    dispatchMain()
  }
}

/// Prints what the timer does as it happens, and plays the person's part where the card waits
/// for them.
@MainActor
private final class DemoNarrator {
  private let daemon: Daemon
  private let started = Date()
  private let isTerminal = isatty(1) != 0
  private var ticker: (any DispatchSourceTimer)?
  private var breaksSeen = 0

  init(daemon: Daemon) { self.daemon = daemon }

  func begin() {
    let events = daemon.events
    events.subscribe(PhaseStarted.self, as: "demo") { [weak self] event in
      let phase = event.phase.kind.inWords
      let length = DurationText.format(event.phase.duration)
      let text =
        event.phase.kind == .focus
        ? Message("{phase} started: {length} (cycle {cycle}/2)").render([
          "phase": phase, "length": length, "cycle": event.phase.cycle,
        ])
        : Message("{phase} started: {length}").render(["phase": phase, "length": length])
      self?.line("▶ " + text)
      self?.startTicker()
    }
    events.subscribe(PhaseEnded.self, as: "demo") { [weak self] event in
      self?.stopTicker()
      self?.line(
        "■ "
          + Message("{phase} {outcome}").render([
            "phase": event.phase.kind.inWords, "outcome": event.outcome.inWords,
          ]))
    }
    events.subscribe(PhaseAwaiting.self, as: "demo") { [weak self] event in
      self?.awaiting(event.next)
    }
    do {
      try daemon.timer.start()
    } catch {
      line(Message("could not start: {reason}").render(["reason": error.message]))
      exit(1)
    }
  }

  private func awaiting(_ next: PhaseKind) {
    let status = daemon.timer.status
    if status.completedToday >= 2 {
      line(
        "✔ "
          + Message(
            one: "cycle done: {count} focus phase completed, {focus} of focus.",
            other: "cycle done: {count} focus phases completed, {focus} of focus.",
            countedBy: "count"
          ).render([
            "count": status.completedToday, "focus": DurationText.format(status.focusToday),
          ]))
      line(
        "  "
          + Message("Next, a real session: 'grow daemon &' then 'grow start'. See README.md.")
          .render())
      daemon.shutdown()
    }
    line(
      "… "
        + Message(
          "the {phase} waits for you: this card never starts focus by itself. "
            + "Pressing 'grow resume' for you in 2s."
        ).render(["phase": next.inWords]))
    DispatchQueue.main.asyncAfter(deadline: .now() + 2) { [weak self] in
      MainActor.assumeIsolated { try? self?.daemon.timer.resume() }
    }
  }

  private func startTicker() {
    stopTicker()
    let timer = DispatchSource.makeTimerSource(queue: .main)
    // The demo shows a live countdown; the daemon itself never ticks.
    timer.schedule(deadline: .now() + 1, repeating: 1)
    timer.setEventHandler { [weak self] in MainActor.assumeIsolated { self?.tick() } }
    timer.resume()
    ticker = timer
  }

  private func stopTicker() {
    ticker?.cancel()
    ticker = nil
    if isTerminal { writeRaw("\r\u{1B}[K") }
  }

  private func tick() {
    let status = daemon.timer.status
    guard status.state != .idle else { return }
    let done = status.duration > 0 ? status.elapsed / status.duration : 0
    let filled = Int((done * 20).rounded())
    let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: 20 - filled)
    let left = Message("{left} left").render(["left": DurationText.clock(status.remaining)])
    let text = "  \(bar) \(left)"
    if isTerminal { writeRaw("\r\u{1B}[K" + text) } else { say(stamp() + text) }
  }

  private func line(_ text: String) {
    if isTerminal { writeRaw("\r\u{1B}[K") }
    say(stamp() + text)
  }

  private func stamp() -> String {
    let seconds = Int(Date().timeIntervalSince(started).rounded())
    return "[\(DurationText.clock(Double(seconds)))] "
  }

  private func writeRaw(_ text: String) {
    _ = text.withCString { write(1, $0, strlen($0)) }
  }
}
