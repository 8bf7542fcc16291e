import Foundation
@_spi(GrowHost) import GrowCore
import GrowFuzz
import Testing

/// SplitMix64: a fixed, tiny PRNG, so a seed means the same inputs on every machine and every
/// Swift version (the standard library's generators promise neither).
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
  mutating func chance(_ probability: Double) -> Bool {
    Double.random(in: 0..<1, using: &self) < probability
  }
  mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }
  mutating func bytes(_ count: Int) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
  }
}

/// How the random-input tests choose their seed and size. Each test has a fixed seed, so CI
/// runs the same inputs every time and a failure reproduces; `GROW_FUZZ_SEED=N` runs other
/// inputs and `GROW_FUZZ_ROUNDS=N` N times as many (for a longer run by hand).
enum FuzzSettings {
  static let environment = ProcessInfo.processInfo.environment

  static func seed(default value: UInt64) -> UInt64 {
    guard let text = environment["GROW_FUZZ_SEED"] else { return value }
    let parsed = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    return parsed ?? value
  }

  static var rounds: Int {
    environment["GROW_FUZZ_ROUNDS"].flatMap(Int.init).map { max(1, $0) } ?? 1
  }
}

/// Runs `count` inputs from `make` through `target`'s check and records every broken promise
/// with the seed, the input's number and the input itself, saved to a file the replay reads:
/// `swift run grow-fuzz TARGET FILE`. Stops after a few failing inputs.
///
/// Inputs for a target that needs the main actor are checked there one at a time, so other
/// tests' main-actor work runs in between.
func fuzz(
  _ target: FuzzTarget, seed defaultSeed: UInt64, count: Int,
  sourceLocation: SourceLocation = #_sourceLocation,
  _ make: (inout SeededGenerator) -> [UInt8]
) async {
  let seed = FuzzSettings.seed(default: defaultSeed)
  var generator = SeededGenerator(seed: seed)
  var failures = 0
  for index in 0..<count * FuzzSettings.rounds {
    let input = make(&generator)
    let broken = await check(target, input)
    guard !broken.isEmpty else { continue }
    failures += 1
    let saved = save(input, target: target, seed: seed, index: index)
    Issue.record(
      """
      \(target.rawValue): input #\(index) of seed 0x\(String(seed, radix: 16)) \
      (GROW_FUZZ_SEED=0x\(String(seed, radix: 16)) reruns it): \(shown(input))
      saved as \(saved); replay: swift run grow-fuzz \(target.rawValue) \(saved)
      \(broken.prefix(5).joined(separator: "\n"))
      """, sourceLocation: sourceLocation)
    if failures == 3 { return }
  }
}

/// Checks one input, written into a test because it once broke something.
func expectHolds(
  _ target: FuzzTarget, _ input: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
) async {
  let broken = await check(target, input)
  #expect(
    broken.isEmpty, "\(target.rawValue) on \(shown(input)):\n\(broken.joined(separator: "\n"))",
    sourceLocation: sourceLocation)
}

func check(_ target: FuzzTarget, _ input: [UInt8]) async -> [String] {
  target.needsMainActor ? await MainActor.run { target.check(input) } : target.check(input)
}

/// The input as a Swift-escaped string, cut at 300 bytes.
func shown(_ input: [UInt8]) -> String {
  let text = String(decoding: input.prefix(300), as: UTF8.self).debugDescription
  return input.count > 300 ? "\(text)… (\(input.count) bytes)" : text
}

private func save(_ input: [UInt8], target: FuzzTarget, seed: UInt64, index: Int) -> String {
  let path =
    NSTemporaryDirectory() + "grow-fuzz-\(target.rawValue)-\(String(seed, radix: 16))-\(index)"
  FileManager.default.createFile(atPath: path, contents: Data(input))
  return path
}

// MARK: Mutations

/// libFuzzer-style mutations of a byte string: bits flipped, bytes replaced by ones parsers
/// care about, pieces inserted, deleted, repeated and spliced from other inputs.
struct Mutator {
  /// Bytes with a meaning to one parser or another.
  static let interesting: [UInt8] =
    [
      0x00, 0x09, 0x0A, 0x0D, 0x20, 0x7F, 0x80, 0xBF, 0xC0, 0xE2, 0xEF, 0xF0, 0xFF,
    ] + Array("[]=;#:.,\"{}\\-+0123456789hmse".utf8)

  /// Words to insert, like libFuzzer's dictionaries.
  var tokens: [[UInt8]]
  /// Other inputs to splice in.
  var pool: [[UInt8]]
  /// Longer results are cut, like libFuzzer's `-max_len`: a few huge inputs find little that
  /// many short ones do not, and cost far more.
  var maxLength: Int

  func mutate(_ input: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
    var bytes = input
    for _ in 0..<random.int(1...6) {
      let position = random.int(0...bytes.count)
      switch random.int(0...8) {
      case 0 where !bytes.isEmpty:
        bytes[position % bytes.count] ^= 1 << UInt8(random.int(0...7))
      case 1 where !bytes.isEmpty:
        bytes[position % bytes.count] = random.pick(Self.interesting)
      case 2:
        bytes.insert(contentsOf: random.bytes(random.int(1...8)), at: position)
      case 3 where !bytes.isEmpty:
        let end = min(bytes.count, position + random.int(1...16))
        bytes.removeSubrange(min(position, end)..<end)
      case 4 where !tokens.isEmpty:
        bytes.insert(contentsOf: random.pick(tokens), at: position)
      case 5 where !bytes.isEmpty:
        // A piece repeated: duplicate lines and sections, long runs.
        let start = random.int(0...bytes.count - 1)
        let piece = bytes[start..<min(bytes.count, start + random.int(1...64))]
        let copies = random.chance(0.1) ? random.int(10...2000) : random.int(1...3)
        bytes.insert(
          contentsOf: Array(repeating: Array(piece), count: copies).joined(), at: position)
      case 6 where !pool.isEmpty:
        let other = random.pick(pool)
        guard !other.isEmpty else { continue }
        let start = random.int(0...other.count - 1)
        bytes.insert(
          contentsOf: other[start..<min(other.count, start + random.int(1...80))], at: position)
      case 7:
        bytes.insert(random.pick(Self.interesting), at: position)
      default:
        if !bytes.isEmpty, random.chance(0.3) { bytes.removeLast(random.int(1...bytes.count)) }
      }
    }
    return Array(bytes.prefix(maxLength))
  }
}

// MARK: The committed corpus

/// Tests/FuzzCorpus/TARGET: the seeds `make fuzz` starts from, and inputs that once broke
/// something.
enum FuzzCorpus {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("FuzzCorpus")

  static func inputs(_ target: FuzzTarget) -> [(name: String, bytes: [UInt8])] {
    let directory = root.appendingPathComponent(target.rawValue)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.sorted().compactMap { name in
      FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
        .map { (name, [UInt8]($0)) }
    }
  }

  /// The dictionary for libFuzzer (`"token"` per line), as tokens for `Mutator`.
  static func tokens(_ target: FuzzTarget) -> [[UInt8]] {
    let path = root.appendingPathComponent("\(target.rawValue).dict").path
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { line in
      guard let open = line.firstIndex(of: "\""), line.last == "\"", !line.hasPrefix("#") else {
        return nil
      }
      let quoted = line[line.index(after: open)..<line.index(before: line.endIndex)]
      return unescapeDictionaryEntry(quoted)
    }
  }

  /// libFuzzer dictionaries escape `\\`, `\"` and bytes as `\xAB`.
  private static func unescapeDictionaryEntry(_ text: Substring) -> [UInt8] {
    var bytes: [UInt8] = []
    var rest = Array(text.utf8)[...]
    while let byte = rest.popFirst() {
      guard byte == UInt8(ascii: "\\"), let next = rest.popFirst() else {
        bytes.append(byte)
        continue
      }
      if next == UInt8(ascii: "x"), rest.count >= 2,
        let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16)
      {
        bytes.append(value)
        rest = rest.dropFirst(2)
      } else {
        bytes.append(next)
      }
    }
    return bytes
  }
}
