import Foundation

// grow-bench: prints Grow's performance figures. Run with `make bench` (release build).
// Figures are medians of repeated runs in one process; compare them as ratios, since the
// machines this runs on are shared and noisy.

// Sections: `grow-bench [--json] [--quick] [bus] [statusbar]`; without a name, all of them.

let arguments = CommandLine.arguments.dropFirst()
let json = arguments.contains("--json")
let quick = arguments.contains("--quick")
let named = Set(arguments.filter { !$0.hasPrefix("--") })
let runsBus = named.isEmpty || named.contains("bus")
let runsStatusBar = named.isEmpty || named.contains("statusbar")

@MainActor func progress(_ text: String) {
  if !json { FileHandle.standardError.write(Data((text + "\n").utf8)) }
}

let bus = BusBenchmark(events: quick ? 100_000 : 1_000_000, runs: quick ? 3 : 7)
var samples: [BusBenchmark.Sample] = []
var direct = 0.0
if runsBus {
  for subscribers in [1, 4, 16] {
    progress("bus: \(subscribers) subscriber(s)…")
    samples.append(bus.run(subscribers: subscribers))
  }
  direct = bus.directCallRate()
}

let statusBar = StatusBarBenchmark(seconds: quick ? 5 : 20)
var statusBarRows: [StatusBarBenchmark.Row] = []
if runsStatusBar {
  let window = Int(statusBar.seconds)
  progress("status bar: \(window) s with a focus phase running, then \(window) s idle…")
  statusBarRows = try statusBar.run()
}

if json {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
  struct Report: Encodable {
    let bus: [BusBenchmark.Sample]
    let directCallsPerSecondFourHandlers: Double
    let statusBarWakeUpsPerMinute: [StatusBarBenchmark.Row]
  }
  let data = try encoder.encode(
    Report(
      bus: samples, directCallsPerSecondFourHandlers: direct,
      statusBarWakeUpsPerMinute: statusBarRows))
  print(String(decoding: data, as: UTF8.self))
} else {
  printTables()
}

@MainActor func printTables() {
  if !statusBarRows.isEmpty {
    print(
      "Status bar feed: wake-ups per minute (context switches over \(Int(statusBar.seconds)) s)")
    print("process                     focus running   idle")
    for row in statusBarRows {
      print(
        row.process.padding(toLength: 26, withPad: " ", startingAt: 0)
          + String(format: "  %13.1f  %5.1f", row.focusPerMinute, row.idlePerMinute))
    }
  }
  guard !samples.isEmpty else { return }
  func millions(_ value: Double) -> String { String(format: "%.2f M", value / 1e6) }
  print("Event bus, in process (\(bus.events) events × \(bus.runs) runs, median)")
  print("subscribers  events/s     deliveries/s  ns/event")
  func column(_ text: String, _ width: Int) -> String {
    text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0)
  }
  for sample in samples {
    print(
      String(format: "%11d  ", sample.subscribers) + column(millions(sample.eventsPerSecond), 11)
        + "  " + column(millions(sample.deliveriesPerSecond), 12)
        + String(format: "  %8.0f", sample.nanosecondsPerEvent))
  }
  let four = samples.first { $0.subscribers == 4 }?.eventsPerSecond ?? 0
  print(
    "direct calls to 4 closures: \(millions(direct)) events/s "
      + String(format: "(the bus runs at %.0f%% of that)", four / direct * 100))
}
