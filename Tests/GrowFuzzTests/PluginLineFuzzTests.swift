import Foundation
import GrowCore
import GrowFuzz
@_spi(GrowHost) import GrowPluginKit
import Testing

/// Garbage from an external plugin's stdout, through the daemon's own line splitting and
/// answering (`FuzzTarget.pluginLine`): every line gets one JSON reply line saying what
/// happened, the timer stays within its bounds, and nothing a plugin writes can forge a line of
/// the daemon's log.
@Suite struct PluginLineFuzzTests {
  static let corpus = FuzzCorpus.inputs(.pluginLine).map(\.bytes)
  static let mutator = Mutator(
    tokens: FuzzCorpus.tokens(.pluginLine), pool: corpus, maxLength: 4096)

  @Test func theCommittedCorpusHolds() async {
    #expect(Self.corpus.count >= 5)
    for (name, bytes) in FuzzCorpus.inputs(.pluginLine) {
      let broken = await check(.pluginLine, bytes)
      #expect(broken.isEmpty, "\(name): \(broken)")
    }
  }

  @Test func randomBytes() async {
    await fuzz(.pluginLine, seed: 0xB1_0001, count: 200) { random in
      random.bytes(random.int(0...300)).map { random.chance(0.03) ? 0x0A : $0 }
    }
  }

  @Test func mutatedCommandLines() async {
    await fuzz(.pluginLine, seed: 0xB1_0002, count: 300) { random in
      Self.mutator.mutate(random.pick(Self.corpus), using: &random)
    }
  }

  /// JSON that parses, with the fields of every command in every type, and some that nearly
  /// parses: the replies must tell each apart.
  @Test func generatedJSON() async {
    await fuzz(.pluginLine, seed: 0xB1_0003, count: 300) { random in
      let lines = (0..<random.int(1...6)).map { _ in JSONWriter.commandLine(using: &random) }
      return Array(lines.joined(separator: "\n").utf8)
    }
  }

  /// Deep nesting, the longest line accepted and one byte more, a line with no end.
  @Test func deepAndLongLines() async throws {
    let limit = PluginCommand.maximumLineLength
    let inputs: [[UInt8]] = [
      Array(repeating: UInt8(ascii: "["), count: limit),
      Array(String(repeating: #"{"a":"#, count: limit / 5).utf8),
      Array((String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)).utf8),
      logLine(bytes: limit), logLine(bytes: limit + 1),
      Array(repeating: UInt8(ascii: "x"), count: 3 * limit),
      Array(repeating: UInt8(ascii: "\n"), count: limit),
    ]
    #expect(inputs[3].count == limit && inputs[4].count == limit + 1)
    for input in inputs { await expectHolds(.pluginLine, input) }
  }

  /// `{"command":"log","message":"xxx…"}` of exactly `bytes` bytes.
  func logLine(bytes: Int) -> [UInt8] {
    let start = #"{"command":"log","message":""#
    let end = #""}"#
    return Array(
      (start + String(repeating: "x", count: bytes - start.utf8.count - end.utf8.count) + end).utf8)
  }

  @Test func oddNumbersAndStrings() async {
    for line in [
      #"{"command":"extend","seconds":1e308}"#, #"{"command":"extend","seconds":1e309}"#,
      #"{"command":"extend","seconds":-0}"#, #"{"command":"extend","seconds":1e-400}"#,
      #"{"command":"extend","seconds":NaN}"#, #"{"command":"extend","seconds":0.5}"#,
      #"{"command":"extend","seconds":86400}"#, #"{"command":"extend","seconds":true}"#,
      #"{"command":"extend","seconds":300,"seconds":-5}"#, #"{"command":"start","card":"\u0000"}"#,
      #"{"command":"start","card":"\ud800"}"#, #"{"command":"st\u0061rt"}"#,
      #"{"command":"log","message":"\u001b[2J\rgrow[daemon] error: forged"}"#,
      #"{"command":"\n grow[daemon] error: forged"}"#, #"{"command":"log","message":"a\u2028b"}"#,
      "{\"command\":\"pause\"}\r", "\u{FEFF}{\"command\":\"pause\"}", #"{"command":"pause"}{"#,
    ] {
      await expectHolds(.pluginLine, Array(("{\"command\":\"start\"}\n" + line + "\n").utf8))
    }
  }

  /// What plugins are sent carries any text (an intention, say) on one line, and it comes back
  /// unchanged from their JSON parser.
  @Test func eventLinesCarryAnyText() async {
    await fuzz(.pluginLine, seed: 0xB1_0004, count: 300) { random in
      let scalars = (0..<random.int(0...40)).map { _ -> Unicode.Scalar in
        let ranges: [ClosedRange<UInt32>] = [
          0...0x7F, 0x80...0x7FF, 0x2000...0x206F, 0xD7F0...0xD7FF, 0xE000...0x10FFFF,
        ]
        let range = random.pick(ranges)
        return Unicode.Scalar(UInt32.random(in: range, using: &random)) ?? "?"
      }
      return Array(String(String.UnicodeScalarView(scalars)).utf8)
    }
  }

  @Test func aPluginCannotForgeLogLines() {
    let logged = Logger.lines(
      label: "hook", level: .info, "done\ngrow[daemon] error: disk on fire\r\u{1B}[2Jcleared")
    #expect(
      logged
        == "grow[hook] info: done\ngrow[hook] info: grow[daemon] error: disk on fire\\u{D}\\u{1B}[2Jcleared\n"
    )
  }
}

/// Writes command lines: the right fields with values of every JSON type.
enum JSONWriter {
  static func commandLine(using random: inout SeededGenerator) -> String {
    var fields: [(String, String)] = []
    if random.chance(0.95) {
      let names = [
        "pause", "resume", "toggle", "skip", "stop", "start", "extend", "log", "Pause", "",
        "explode",
      ]
      fields.append(
        (
          "command",
          random.chance(0.9) ? quoted(random.pick(names)) : value(using: &random, depth: 0)
        ))
    }
    for _ in 0..<random.int(0...3) {
      let key = random.pick(["card", "seconds", "message", "id", "command", "v"])
      let text: String
      switch key {
      case "card" where random.chance(0.6):
        text = quoted(random.pick(["math", "work", "nope", ""]))
      case "seconds" where random.chance(0.6):
        text = random.pick([
          "300", "1", "0", "-1", "86400", "1e308", "0.001", "1E3", "86399.5", "2.5e-3",
        ])
      default: text = value(using: &random, depth: 0)
      }
      fields.append((key, text))
    }
    fields.shuffle(using: &random)
    var line =
      "{" + fields.map { "\(quoted($0.0)):\($0.1)" }.joined(separator: random.pick([",", ", "]))
      + "}"
    if random.chance(0.1) { line.removeLast(random.int(1...line.count)) }
    return line
  }

  static func value(using random: inout SeededGenerator, depth: Int) -> String {
    switch random.int(0...(depth > 3 ? 4 : 6)) {
    case 0: return "null"
    case 1: return random.pick(["true", "false"])
    case 2:
      return random.pick([
        "0", "-0", "1e400", "-1e400", "123456789012345678901234567890", "3.14", "1e-320",
      ])
    case 3:
      return quoted(
        random.pick(["", "x", "\\u0000", "\\ud800", "\\uDFFF\\uD800", "tab\\t", "\\\"", "é"]))
    case 4: return random.pick(["\"unterminated", "tru", "01", "[", "{", "'single'", "+1", ".5"])
    case 5:
      return "["
        + (0..<random.int(0...3)).map { _ in value(using: &random, depth: depth + 1) }.joined(
          separator: ",") + "]"
    default:
      return "{"
        + (0..<random.int(0...3)).map { _ in "\"k\":" + value(using: &random, depth: depth + 1) }
        .joined(separator: ",") + "}"
    }
  }

  static func quoted(_ text: String) -> String { "\"\(text)\"" }
}
