import Foundation
import GrowConfig
import GrowTestSupport

// grow-bench: prints Grow's performance figures. Run with `make bench` (release build).
// Figures are medians of repeated runs in one process; compare them as ratios, since the
// machines this runs on are shared and noisy.
//
//   grow-bench [--json] [--quick] [bus] [history] [history-scale] [external] [statusbar] [x11]
//              [wayland] [breakscreen] [breakscreen-sway] [peers] [calls] [config] [journal]
//              [sync] [compare] [lean] [plugins] [getstatus] [control]
//              [patterns [--swift-regex-24]]
//
// Without a section name, all of them. `compare` also writes its table to bench/results/.

let arguments = CommandLine.arguments.dropFirst()
let json = arguments.contains("--json")
let quick = arguments.contains("--quick")
let named = Set(arguments.filter { !$0.hasPrefix("--") })
func wanted(_ section: String) -> Bool { named.isEmpty || named.contains(section) }

@MainActor func progress(_ text: String) {
  if !json { FileHandle.standardError.write(Data((text + "\n").utf8)) }
}

/// Everything measured, for `--json`.
struct Report: Encodable {
  var bus: [BusBenchmark.Sample] = []
  var directCallsPerSecondFourHandlers: Double?
  var history: HistoryBenchmark.Sample?
  var historyScale: [HistoryScaleBenchmark.Figures] = []
  var externalPlugin: ExternalPluginBenchmark.Sample?
  var statusBarWakeUpsPerMinute: [StatusBarBenchmark.Row] = []
  var x11: X11Benchmark.Sample?
  var wayland: WaylandBenchmark.Sample?
  var breakScreen: BreakScreenBenchmark.Sample?
  var breakScreenSway: BreakScreenBenchmark.Sample?
  var peers: [PeerFloodBenchmark.Row] = []
  var calls: CallBurstBenchmark.Sample?
  var config: ConfigBenchmark.Sample?
  var journal: JournalBenchmark.Sample?
  var sync: SyncBenchmark.Sample?
  var compare: CompareBenchmark.Result?
  var patterns: PatternBenchmark.Sample?
  var lean: LeanBenchmark.Sample?
  var plugins: PluginCostBenchmark.Sample?
}
var report = Report()

let bus = BusBenchmark(events: quick ? 100_000 : 1_000_000, runs: quick ? 3 : 7)
if wanted("bus") {
  for subscribers in [1, 4, 16] {
    progress("bus: \(subscribers) subscriber(s)…")
    report.bus.append(bus.run(subscribers: subscribers))
  }
  report.directCallsPerSecondFourHandlers = bus.directCallRate()
}
if wanted("history") {
  progress("history: ten years of phases…")
  report.history = try HistoryBenchmark(runs: 5).run()
}
if wanted("history-scale") {
  report.historyScale = try MainActor.assumeIsolated {
    try HistoryScaleBenchmark(quick: quick).run()
  }
}
if wanted("external") {
  progress("external plugin: event latency…")
  report.externalPlugin = try MainActor.assumeIsolated {
    try ExternalPluginBenchmark(events: quick ? 20 : 100).run()
  }
}
let statusBar = StatusBarBenchmark(seconds: quick ? 5 : 20)
if wanted("statusbar") {
  let window = Int(statusBar.seconds)
  progress("status bar: \(window) s with a focus phase running, then \(window) s idle…")
  report.statusBarWakeUpsPerMinute = try statusBar.run()
}
let x11 = X11Benchmark(runs: quick ? 5 : 20, seconds: quick ? 5 : 20)
if wanted("x11") {
  progress(
    "x11: \(x11.runs) window switches, \(x11.runs) returns after idleness, "
      + "\(Int(x11.seconds)) s of a quiet desktop…")
  report.x11 = try x11.run()
}
let wayland = WaylandBenchmark(runs: quick ? 5 : 20, seconds: quick ? 5 : 20)
if wanted("wayland") {
  progress(
    "wayland: headless sway, \(wayland.runs) window switches, \(wayland.runs) returns after "
      + "idleness, \(Int(wayland.seconds)) s of quiet focus…")
  report.wayland = try wayland.run()
}
let breakScreen = BreakScreenBenchmark(seconds: quick ? 5 : 20)
if wanted("breakscreen") {
  progress(
    "breakscreen: two 1920x1080 monitors on Xvfb, \(Int(breakScreen.seconds)) s each of focus, "
      + "the screen, and after the break…")
  report.breakScreen = try breakScreen.run()
}
if wanted("breakscreen-sway") {
  progress(
    "breakscreen-sway: two 1920x1080 outputs on headless sway, \(Int(breakScreen.seconds)) s "
      + "each of focus, the screen, and after the break…")
  var onSway = breakScreen
  onSway.onSway = true
  report.breakScreenSway = try onSway.run()
}
if wanted("peers") {
  let peers = PeerFloodBenchmark(seconds: quick ? 5 : 12)
  progress("peers: hostile sway and Hyprland sockets, \(Int(peers.seconds)) s each…")
  report.peers = try peers.run()
}
if wanted("calls") {
  let calls = CallBurstBenchmark(seconds: quick ? 5 : 12)
  progress(
    "calls: pipelined Toggle+Extend, ListCards of 1,000 cards (the most a config may have), a rogue's notification "
      + "signals, \(Int(calls.seconds)) s each…")
  report.calls = try calls.run()
}
if wanted("config") {
  progress("config: 1,000 cards in 1 MiB, grow config check and a SIGHUP reload…")
  report.config = try ConfigBenchmark().run()
}
if wanted("journal") {
  progress("journal: 20,000 phases kept for a locked history: start, phase ends, the drain…")
  report.journal = try JournalBenchmark().run()
}
if wanted("sync") {
  progress("sync: three machines' journals merged by a fourth; a daemon's sync folder…")
  report.sync = try SyncBenchmark(quick: quick).run()
}
if wanted("patterns") {
  progress("patterns: (a+)+$ on a title of a's and '!', Swift's Regex and Grow's matcher…")
  report.patterns = try PatternBenchmark(
    quick: quick, measureTwentyFour: arguments.contains("--swift-regex-24")
  ).run()
}
if wanted("compare") {
  let window = quick ? 5.0 : 20.0
  progress("compare: Grow, Safe Eyes, Workrave, GNOME Pomodoro, \(Int(window)) s windows…")
  let result = try MainActor.assumeIsolated {
    try CompareBenchmark(seconds: window, quick: quick).run()
  }
  report.compare = result
  let results = RepoPaths.root.appendingPathComponent("bench/results")
  try result.write(to: results)
  progress("compare: written to \(results.path)/compare-latest.md and .json")
}

if wanted("lean") {
  progress("lean: grow status and busctl, the follower, the floors…")
  report.lean = try MainActor.assumeIsolated { try LeanBenchmark(quick: quick).run() }
}

// `control` alone: the daemon with compare's four plugins only, to compare two builds.
if wanted("plugins") || wanted("getstatus") || named.contains("control") {
  progress("plugins: each newer plugin's cost on top of compare's four, GetStatus's cost…")
  report.plugins = try MainActor.assumeIsolated {
    try PluginCostBenchmark(
      quick: quick, plugins: wanted("plugins") || named.contains("control"),
      getStatus: wanted("getstatus"), extras: wanted("plugins")
    ).run()
  }
}

if json {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
  print(String(decoding: try encoder.encode(report), as: UTF8.self))
} else {
  printTables(report)
}

func printTables(_ report: Report) {
  func millions(_ value: Double) -> String { String(format: "%.2f M", value / 1e6) }
  func column(_ text: String, _ width: Int) -> String {
    text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0)
  }
  if let direct = report.directCallsPerSecondFourHandlers {
    print("Event bus, in process (\(bus.events) events × \(bus.runs) runs, median)")
    print("subscribers  events/s     deliveries/s  ns/event  events/CPU-s")
    for sample in report.bus {
      print(
        String(format: "%11d  ", sample.subscribers) + column(millions(sample.eventsPerSecond), 11)
          + "  " + column(millions(sample.deliveriesPerSecond), 12)
          + String(format: "  %8.0f", sample.nanosecondsPerEvent) + "  "
          + millions(sample.eventsPerCPUSecond))
    }
    let four = report.bus.first { $0.subscribers == 4 }?.eventsPerSecond ?? 0
    print(
      "direct calls to 4 closures: \(millions(direct)) events/s "
        + String(format: "(the bus runs at %.0f%% of that)", four / direct * 100))
  }
  if let patterns = report.patterns {
    print("Title pattern (a+)+$ on N a's and '!', time per evaluation")
    for (length, milliseconds) in patterns.swiftRegexMilliseconds.sorted(by: {
      Int($0.key) ?? 0 < Int($1.key) ?? 0
    }) {
      print("  before, Swift Regex, N = \(length): " + String(format: "%.1f ms", milliseconds))
    }
    if let growth = patterns.swiftRegexGrowthPerCharacter,
      let extrapolated = patterns.swiftRegexExtrapolated24Milliseconds
    {
      print(
        String(
          format: "  before, N = 24: about %.0f s (×%.2f per further a, extrapolated)",
          extrapolated / 1000, growth))
    }
    print(
      String(
        format: "  after, TitleRegex, N = 24: %.1f µs; N = %d (the title limit): %.1f µs",
        patterns.titleRegexIssueTitleMicroseconds, TitleRegex.titleLimit,
        patterns.titleRegexLongestTitleMicroseconds))
    print(
      "  after, a heavy pattern ([a-z]|[0-9]){1,600}! on 512 a's: "
        + String(format: "%.1f ms", patterns.titleRegexHeaviestPatternMilliseconds)
        + " (\(patterns.heaviestPatternOutcome))")
  }
  if let history = report.history {
    print(
      "History: grow stats --year over \(history.phases) phases (ten years): "
        + String(format: "%.0f ms", history.statsYearMedianSeconds * 1000)
        + " (median of 5 runs, whole process); database "
        + String(format: "%.1f MB", Double(history.databaseBytes) / 1e6))
  }
  if !report.historyScale.isEmpty { HistoryScaleBenchmark.printTable(report.historyScale) }
  if let external = report.externalPlugin {
    print(
      "External plugin: D-Bus Pause/Resume → the plugin reads the event on its stdin: "
        + String(
          format: "median %.2f ms, p90 %.2f ms over %d events", external.medianMilliseconds,
          external.p90Milliseconds, external.events))
    print(
      "External plugin: SIGTERM → exit while a plugin sends 800 commands a second: "
        + String(format: "%.0f ms", external.sigtermWhileFloodedMilliseconds)
        + " (status \(external.sigtermWhileFloodedStatus); 0 is the normal shutdown)")
  }
  if !report.statusBarWakeUpsPerMinute.isEmpty {
    print(
      "Status bar feed: wake-ups per minute (context switches over \(Int(statusBar.seconds)) s)")
    print("process                     focus running   idle")
    for row in report.statusBarWakeUpsPerMinute {
      print(
        row.process.padding(toLength: 26, withPad: " ", startingAt: 0)
          + String(format: "  %13.1f  %5.1f", row.focusPerMinute, row.idlePerMinute))
    }
  }
  for screen in [report.breakScreen, report.breakScreenSway].compactMap({ $0 }) {
    print("break screen (\(screen.display) of 1920x1080; daemon, all threads)")
    for (name, window) in [
      ("focus, plugin loaded, no screen", screen.focusNoScreen),
      ("screen shown (a redraw a second)", screen.screenShown),
      ("after the break, screen gone", screen.afterTheBreak),
    ] {
      print(
        name.padding(toLength: 34, withPad: " ", startingAt: 0)
          + String(
            format: "%4d context switches in %.0f s = %.2f/s; CPU %.0f ms = %.1f ms/s",
            window.contextSwitches, window.seconds, Double(window.contextSwitches) / window.seconds,
            window.cpuMilliseconds, window.cpuMilliseconds / window.seconds))
    }
  }
  if let x11 = report.x11 {
    let polling = X11Benchmark.pollingLatencyMilliseconds
    print("x11 plugin (Xvfb + openbox; medians of \(x11.runs) runs; vs polling X once a second)")
    print(
      String(
        format: "window switch → active-window-changed: %.1f ms (polling: %.0f ms, %.0f× slower)",
        x11.windowSwitchMedianMilliseconds, polling, polling / x11.windowSwitchMedianMilliseconds))
    print(
      String(
        format: "input after idleness → user-active:    %.1f ms (polling: %.0f ms, %.0f× slower)",
        x11.inputAfterIdleMedianMilliseconds, polling,
        polling / x11.inputAfterIdleMedianMilliseconds))
    let perSecond = x11.contextSwitchesPerSecond
    let ratio =
      perSecond > 0
      ? String(format: "%.0f× fewer", X11Benchmark.pollingWakeUpsPerSecond / perSecond)
      : "none at all"
    print(
      String(
        format: "daemon context switches, quiet desktop, focus running: %d in %.0f s = %.2f/s ",
        x11.contextSwitches, x11.seconds, perSecond)
        + String(format: "(polling: ≥ %.0f/s; ", X11Benchmark.pollingWakeUpsPerSecond) + ratio + ")"
    )
    print(
      String(
        format:
          "title flood, %d titles in %.0f s: GetStatus p50 %.1f ms, p99 %.1f ms, max %.1f ms "
          + "(%d calls); RSS %.1f → %.1f MiB",
        x11.floodTitles, x11.floodSeconds, x11.floodGetStatusP50Milliseconds,
        x11.floodGetStatusP99Milliseconds, x11.floodGetStatusMaxMilliseconds,
        x11.floodGetStatusCalls, x11.rssBeforeFloodMiB, x11.rssAfterFloodMiB))
  }
  if !report.peers.isEmpty {
    print("Hostile compositor peers (stand-ins), GetStatus every 50 ms during each flood")
    for row in report.peers {
      print(
        column(row.flood, 27)
          + String(
            format: "  p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d calls, %d failed); "
              + "fds ≤ %d, RSS ≤ %.0f MiB; %d sent",
            row.p50Milliseconds, row.p99Milliseconds, row.maxMilliseconds, row.calls,
            row.failedCalls, row.maxDescriptors, row.maxRSSMiB, row.sent))
    }
  }
  if let calls = report.calls {
    print("Call bursts from other clients, GetStatus every 50 ms from another connection")
    for row in calls.rows {
      print(
        column(row.burst, 31)
          + String(
            format: "  p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d calls, %d failed); %d sent",
            row.p50Milliseconds, row.p99Milliseconds, row.maxMilliseconds, row.calls,
            row.failedCalls, row.sent)
          + (row.signalsPerCall.map { String(format: "; %.3f PropertiesChanged a call", $0) }
            ?? ""))
    }
    print(
      String(
        format: "ListCards of %d cards: first call %.3f s, then %.3f s (median)",
        CallBurstBenchmark.cards, calls.listCardsFirstSeconds, calls.listCardsMedianSeconds))
    print(
      String(
        format: "a rogue's ActionInvoked to everyone: %d in %.1f s; the daemon used %.1f %% of a "
          + "core", calls.rogueSignalsSent, calls.rogueSeconds, calls.rogueDaemonCPUShare * 100))
  }
  if let wayland = report.wayland {
    print("wayland plugin (headless sway 1.7; medians of \(wayland.runs) runs)")
    print(
      String(
        format: "window switch (swaymsg focus) → active-window-changed: %.1f ms",
        wayland.windowSwitchMedianMilliseconds))
    print(
      String(
        format: "input after idleness (swaymsg seat cursor move) → user-active: %.1f ms",
        wayland.inputAfterIdleMedianMilliseconds))
    print(
      String(
        format: "daemon context switches, quiet focus: %d in %.0f s = %.2f/s; RSS %.1f MiB",
        wayland.contextSwitches, wayland.seconds, wayland.contextSwitchesPerSecond,
        wayland.rssMiB))
  }
  if let sync = report.sync { SyncBenchmark.print(sync) }
  if let config = report.config {
    print(
      "Config of \(config.sections) cards (\(config.bytes / 1024) KiB): "
        + String(
          format: "grow config check %.2f s; SIGHUP reload %.2f s, during which %d GetStatus "
            + "calls waited at most %.1f ms (median %.1f ms)", config.checkSeconds,
          config.reloadSeconds, config.callsDuringReload, config.slowestCallMilliseconds,
          config.medianCallMilliseconds))
  }
  if let journal = report.journal {
    print(
      "Journal of \(journal.kept) phases kept for a locked history: "
        + String(
          format: "recorder start %.3f s (%.3f CPU s); a phase end holds the loop %.2f ms "
            + "(median; slowest %.2f ms); writing them all once the lock is gone %.2f s "
            + "(%.2f CPU s)", journal.startSeconds, journal.startCPUSeconds,
          journal.phaseEndMedianMilliseconds, journal.phaseEndSlowestMilliseconds,
          journal.drainSeconds, journal.drainCPUSeconds))
  }
  if let compare = report.compare {
    print("Side by side")
    print(compare.markdown, terminator: "")
  }
  if let lean = report.lean {
    print("Lean: the goals with the anchors and the floors")
    print(lean.markdown(compare: report.compare, bus: report.bus), terminator: "")
  }
  if let plugins = report.plugins {
    print("Plugins: what each newer one costs the daemon; the daemon's cost per GetStatus")
    print(plugins.markdown, terminator: "")
  }
}
