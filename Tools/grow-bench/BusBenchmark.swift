import Foundation
import GrowCore

/// Events per second through the in-process bus, to 1, 4 and 16 subscribers, next to a plain
/// closure call as the floor. Medians over several runs in one process, so the machine's noise
/// shows up in the spread rather than in the figure.
struct BusBenchmark {
  struct Sample: Encodable {
    let subscribers: Int
    let eventsPerSecond: Double
    let deliveriesPerSecond: Double
    let nanosecondsPerEvent: Double
    /// Events per second of this thread's CPU time: what the bus costs, whatever else the
    /// machine runs (on a loaded machine the wall-clock rate mostly measures the load).
    let eventsPerCPUSecond: Double
    let runs: Int
  }

  /// A typical small event.
  struct Tick: GrowEvent {
    static let eventName = "bench-tick"
    let value: Int
  }

  let events: Int
  let runs: Int

  func run(subscribers: Int) -> Sample {
    var rates: [Double] = []
    var cpuRates: [Double] = []
    for _ in 0..<runs {
      let bus = EventBus()
      var sink = 0
      for _ in 0..<subscribers {
        bus.subscribe(Tick.self, as: "bench") { sink &+= $0.value }
      }
      let start = DispatchTime.now().uptimeNanoseconds
      let cpuStart = threadCPUSeconds()
      for value in 0..<events { bus.publish(Tick(value: value)) }
      let cpu = threadCPUSeconds() - cpuStart
      let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
      precondition(sink != 42, "keeps the work observable")
      rates.append(Double(events) / elapsed)
      cpuRates.append(Double(events) / max(cpu, 1e-9))
    }
    let rate = median(rates)
    return Sample(
      subscribers: subscribers, eventsPerSecond: rate,
      deliveriesPerSecond: rate * Double(subscribers), nanosecondsPerEvent: 1e9 / rate,
      eventsPerCPUSecond: median(cpuRates), runs: runs)
  }

  /// Calling four closures directly: what the bus costs on top of that.
  func directCallRate() -> Double {
    var rates: [Double] = []
    for _ in 0..<runs {
      var sink = 0
      let handlers: [(Tick) -> Void] = Array(repeating: { sink &+= $0.value }, count: 4)
      let start = DispatchTime.now().uptimeNanoseconds
      for value in 0..<events {
        let tick = Tick(value: value)
        for handler in handlers { handler(tick) }
      }
      let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
      precondition(sink != 42)
      rates.append(Double(events) / elapsed)
    }
    return median(rates)
  }
}

/// The CPU time this thread has used, in seconds.
func threadCPUSeconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return 0 }
  return sorted.count % 2 == 1
    ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
