import Foundation

// grow-bench: prints Grow's performance figures. Run with `make bench` (release build).
// Figures are medians of repeated runs in one process; compare them as ratios, since the
// machines this runs on are shared and noisy.

let arguments = CommandLine.arguments.dropFirst()
let json = arguments.contains("--json")
let quick = arguments.contains("--quick")

let bus = BusBenchmark(events: quick ? 100_000 : 1_000_000, runs: quick ? 3 : 7)
var samples: [BusBenchmark.Sample] = []
for subscribers in [1, 4, 16] {
  if !json { FileHandle.standardError.write(Data("bus: \(subscribers) subscriber(s)…\n".utf8)) }
  samples.append(bus.run(subscribers: subscribers))
}
let direct = bus.directCallRate()
if !json { FileHandle.standardError.write(Data("history: ten years of phases…\n".utf8)) }
let history = try HistoryBenchmark(runs: 5).run()
if !json { FileHandle.standardError.write(Data("external plugin: event latency…\n".utf8)) }
let external = try MainActor.assumeIsolated {
  try ExternalPluginBenchmark(events: quick ? 20 : 100).run()
}

if json {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
  struct Report: Encodable {
    let bus: [BusBenchmark.Sample]
    let directCallsPerSecondFourHandlers: Double
    let history: HistoryBenchmark.Sample
    let externalPlugin: ExternalPluginBenchmark.Sample
  }
  let data = try encoder.encode(
    Report(
      bus: samples, directCallsPerSecondFourHandlers: direct, history: history,
      externalPlugin: external))
  print(String(decoding: data, as: UTF8.self))
} else {
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
  print(
    "History: grow stats --year over \(history.phases) phases (ten years): "
      + String(format: "%.0f ms", history.statsYearMedianSeconds * 1000)
      + " (median of 5 runs, whole process); database "
      + String(format: "%.1f MB", Double(history.databaseBytes) / 1e6))
  print(
    "External plugin: D-Bus Pause/Resume → the plugin reads the event on its stdin: "
      + String(
        format: "median %.2f ms, p90 %.2f ms over %d events", external.medianMilliseconds,
        external.p90Milliseconds, external.events))
}
