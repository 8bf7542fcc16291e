import Foundation
import GrowCore
import GrowFuzz
import Testing

/// Durations from config files and the command line: any text gives whole seconds within
/// 0...24h that format and read back the same, or a `DurationError` that quotes the text.
@Suite struct DurationFuzzTests {
  static let corpus = FuzzCorpus.inputs(.duration).map(\.bytes)
  static let mutator = Mutator(tokens: FuzzCorpus.tokens(.duration), pool: corpus, maxLength: 256)

  @Test func theCommittedCorpusHolds() async {
    #expect(Self.corpus.count >= 8)
    for (name, bytes) in FuzzCorpus.inputs(.duration) {
      let broken = await check(.duration, bytes)
      #expect(broken.isEmpty, "\(name): \(broken)")
    }
  }

  @Test func randomTextOfDurationCharacters() async {
    let alphabet = Array("0123456789hmsHMS +-.eE:,_\tnaif".utf8)
    await fuzz(.duration, seed: 0xD0_0001, count: 3000) { random in
      (0..<random.int(0...24)).map { _ in random.pick(alphabet) }
    }
  }

  @Test func randomBytes() async {
    await fuzz(.duration, seed: 0xD0_0002, count: 2000) { random in random.bytes(random.int(0...40))
    }
  }

  @Test func mutatedDurations() async {
    await fuzz(.duration, seed: 0xD0_0003, count: 3000) { random in
      Self.mutator.mutate(random.pick(Self.corpus), using: &random)
    }
  }

  /// Amounts near and far past what fits: Int.max minutes, 10^40 seconds, many units.
  @Test func hugeNumbersAndOverflow() async {
    await fuzz(.duration, seed: 0xD0_0004, count: 2000) { random in
      let digits = String((0..<random.int(1...40)).map { _ in random.pick(Array("0123456789")) })
      let sign = random.pick(["", "", "-", "+"])
      let unit = random.pick(["", "h", "m", "s", "h0m", "m1s", " h"])
      return Array((sign + digits + unit).utf8)
    }
    for text in [
      "9223372036854775807", "9223372036854775808", "-9223372036854775808", "9223372036854775807m",
      "9223372036854775807s", "100000h", "100001s", "99999h99999m99999s", "1440", "1441", "24h",
      "24h1s", "23h59m60s", String(repeating: "9", count: 10_000),
      String(repeating: "1h", count: 5000),
    ] {
      await expectHolds(.duration, Array(text.utf8))
    }
    #expect((try? DurationText.parse("9223372036854775807")) == nil)
    #expect((try? DurationText.parse("23h59m60s")) == DurationText.maximum)
  }

  /// Text a float parser would take: none of it is a duration.
  @Test func floatLikeTextIsRefused() async {
    for text in [
      "nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e9", "1e9m", "1.5h", "0x10", "0x10m",
      "1_000", "١٢m", "٣", "２５m", "25m ", "\u{0}25m", "25\u{0}m", "25mm", "m25", "h", "--5",
    ] {
      await expectHolds(.duration, Array(text.utf8))
      if !["25m "].contains(text) {
        #expect((try? DurationText.parse(text)) == nil, "'\(text)' is not a duration")
      }
    }
  }

  /// Every whole number of seconds up to 24h formats into text that reads back as itself.
  @Test func everyDurationRoundTrips() {
    var failures: [String] = []
    for seconds in stride(from: 0, through: Int(DurationText.maximum), by: 1) {
      let formatted = DurationText.format(TimeInterval(seconds))
      if (try? DurationText.parse(formatted)) != TimeInterval(seconds) {
        failures.append("\(seconds)s -> '\(formatted)'")
        if failures.count == 5 { break }
      }
    }
    #expect(failures.isEmpty)
  }

  /// Labels are made from numbers read elsewhere (a history file, another clock): any Double,
  /// NaN and infinities included, gives a label rather than a trap.
  @Test func anyNumberFormats() {
    for value in [
      Double.nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
      1e300, -1, -0.4, 0.4, 0.5, 9.2233720368547758e18, .leastNonzeroMagnitude,
    ] {
      #expect(!DurationText.format(value).isEmpty, "\(value)")
      #expect(!DurationText.clock(value).isEmpty, "\(value)")
    }
    #expect(DurationText.format(.nan) == "0s")
    #expect(DurationText.format(-5) == "0s")
    #expect(DurationText.clock(.infinity) == DurationText.clock(1e15))
    var random = SeededGenerator(seed: FuzzSettings.seed(default: 0xD0_0005))
    for _ in 0..<20_000 * FuzzSettings.rounds {
      let value = Double(bitPattern: random.next())
      _ = DurationText.format(value)
      _ = DurationText.clock(value)
    }
  }
}
