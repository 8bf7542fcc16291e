import Foundation
import GrowConfig
import GrowCore
import GrowDaemon
@_spi(GrowHost) import GrowPluginKit
import GrowPluginTesting

/// The parsers that read bytes from outside, each with the promise it keeps whatever the bytes:
/// no crash, and either a value that makes sense or a typed error a person can act on.
///
/// `make fuzz` (libFuzzer, through `grow-fuzz`) and the random-input tests in `GrowFuzzTests`
/// both run `check`, so a promise is written down once.
public enum FuzzTarget: String, CaseIterable, Sendable {
  /// config.ini, through `GrowConfig.parse`.
  case config
  /// `DurationText.parse`, which reads `focus = 25m` and `grow start --focus 25m`.
  case duration
  /// What an external plugin writes on its stdout, cut into lines and answered as the daemon
  /// does (`LineSplitter`, `ExternalPlugin.respond`), plus the event lines it is sent.
  case pluginLine = "plugin-line"

  /// Whether `check` must run on the main actor: the daemon answers plugins there.
  public var needsMainActor: Bool { self == .pluginLine }

  /// Runs the parser on `input`: the promises it broke, empty when it kept them all.
  /// - Precondition: on the main actor when `needsMainActor`.
  public func check(_ input: [UInt8]) -> [String] {
    switch self {
    case .config: ConfigCheck.run(input)
    case .duration: DurationCheck.run(input)
    case .pluginLine: MainActor.assumeIsolated { PluginLineCheck.run(input) }
    }
  }
}

// MARK: config.ini

enum ConfigCheck {
  static let path = "fuzz.ini"

  static func run(_ input: [UInt8]) -> [String] {
    let outcome = parse(input)
    var broken: [String] = []
    if parse(input) != outcome { broken.append("parsing the same bytes twice differed") }
    switch outcome {
    case .success(let config): broken += checkValues(config)
    case .failure(let error): broken += checkError(error, input: input)
    }
    return broken
  }

  static func parse(_ input: [UInt8]) -> Result<GrowConfig, ConfigError> {
    Result { () throws(ConfigError) in try GrowConfig.parse(Data(input), path: path) }
  }

  /// A config that loads holds only values the timer can run on.
  static func checkValues(_ config: GrowConfig) -> [String] {
    var broken: [String] = []
    if config.path != path { broken.append("path is \(String(describing: config.path))") }
    if (try? config.deck.card(named: nil)) == nil {
      broken.append("default card '\(config.deck.defaultCardName)' is not in the deck")
    }
    if Set(config.deck.names).count != config.deck.names.count {
      broken.append("two cards share a name: \(config.deck.names)")
    }
    let lengths = 1...DurationText.maximum
    for card in config.deck.cards {
      if !ConfigSchema.isValidName(card.name) { broken.append("card name '\(card.name)'") }
      for (key, seconds) in [
        ("focus", card.focus), ("short-break", card.shortBreak), ("long-break", card.longBreak),
      ] where !lengths.contains(seconds) {
        broken.append("[card.\(card.name)] \(key) = \(seconds)s, outside 1s...24h")
      }
      if !(1...100).contains(card.longBreakAfter) {
        broken.append("[card.\(card.name)] long-break-after = \(card.longBreakAfter)")
      }
      if let goal = card.dailyGoal, !lengths.contains(goal) {
        broken.append("[card.\(card.name)] daily-goal = \(goal)s")
      }
    }
    for id in config.enabledPlugins ?? [] where !ConfigSchema.isValidName(id) {
      broken.append("enabled plugin id '\(id)'")
    }
    return broken
  }

  /// An error lists at most 100 problems plus a summary, in file order, each on one line of its
  /// own, naming the file, and the line wherever the problem has one.
  static func checkError(_ error: ConfigError, input: [UInt8]) -> [String] {
    var broken: [String] = []
    let problems = error.problems
    if problems.isEmpty { broken.append("an error without problems") }
    if problems.count > 101 { broken.append("\(problems.count) problems listed, not 100 + 1") }
    // A file of n newlines has n lines; text after the last newline is one more.
    let lineCount =
      input.count(where: { $0 == 0x0A }) + (input.last.map { $0 == 0x0A ? 0 : 1 } ?? 0)
    var previousLine = 0
    for problem in problems {
      let text = problem.description
      let place = problem.line.map { "\(path):\($0): " } ?? "\(path): "
      if !text.hasPrefix(place) || text.count <= place.count + 10 {
        broken.append("message does not name the file and line or says nothing: \(text)")
      }
      if text.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) {
        broken.append("message spans lines: \(text)")
      }
      switch (problem.issue, problem.line) {
      case (.fileTooLarge, nil), (.moreProblems, nil): break
      case (.fileTooLarge, _?), (.moreProblems, _?):
        broken.append("a problem of the whole file names a line: \(text)")
      case (_, nil):
        broken.append("no line named: \(text)")
      case (_, let line?):
        if !(1...max(lineCount, 1)).contains(line) {
          broken.append("line \(line) named in a file of \(lineCount) lines: \(text)")
        }
        if line < previousLine { broken.append("problems out of file order at: \(text)") }
        previousLine = line
      }
    }
    return broken
  }
}

// MARK: Durations

enum DurationCheck {
  static func run(_ input: [UInt8]) -> [String] {
    let text = String(decoding: input, as: UTF8.self)
    var broken = checkParse(text)
    // The same bytes as a number of seconds: labels are made from values read elsewhere too
    // (history records, another process's clock), so formatting must take any Double.
    if input.count >= 8 {
      let bits = input.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      broken += checkFormat(Double(bitPattern: bits))
    }
    return broken
  }

  /// A duration is whole seconds within 0...24h that formats and parses back to itself; an
  /// error names the text and says how to write a duration.
  static func checkParse(_ text: String) -> [String] {
    do {
      let seconds = try DurationText.parse(text)
      guard (0...DurationText.maximum).contains(seconds), seconds.rounded() == seconds else {
        return ["'\(text)' read as \(seconds)s"]
      }
      let formatted = DurationText.format(seconds)
      guard let again = try? DurationText.parse(formatted), again == seconds else {
        return ["'\(text)' read as \(seconds)s, formatted '\(formatted)', which reads otherwise"]
      }
      return []
    } catch {
      let message = error.description
      switch error {
      case .empty:
        if !text.trimmingCharacters(in: .whitespaces).isEmpty {
          return ["'\(text)' called empty"]
        }
      case .malformed(let quoted), .tooLong(let quoted):
        if quoted != text { return ["the error for '\(text)' quotes '\(quoted)'"] }
      }
      return message.count < 20 ? ["message too short to act on: \(message)"] : []
    }
  }

  static func checkFormat(_ seconds: Double) -> [String] {
    let formatted = DurationText.format(seconds)
    let clock = DurationText.clock(seconds)
    if formatted.isEmpty || clock.isEmpty { return ["\(seconds)s formatted as nothing"] }
    // Whole seconds within the limit come back exactly.
    guard (0...DurationText.maximum).contains(seconds.rounded()) else { return [] }
    guard (try? DurationText.parse(formatted)) == seconds.rounded() else {
      return ["\(seconds)s formatted as '\(formatted)', which does not read back"]
    }
    return []
  }
}

// MARK: The external plugin protocol

@MainActor enum PluginLineCheck {
  static func run(_ input: [UInt8]) -> [String] {
    var broken = checkSplitting(input)
    broken += checkResponses(input)
    broken += checkEventLine(carrying: String(decoding: input, as: UTF8.self))
    return broken
  }

  /// The lines the daemon sees do not depend on how the pipe cut the bytes into reads, and a
  /// line over the limit is refused whole, with its length.
  static func checkSplitting(_ input: [UInt8]) -> [String] {
    // A small limit as well, so that short inputs reach the refusal of long lines too.
    let smallLimit = 16
    let chunkSize = Int(input.first ?? 0) % 13 + 1
    var broken: [String] = []
    for limit in [PluginCommand.maximumLineLength, smallLimit] {
      let expected = expectedPieces(input, limit: limit)
      var whole = LineSplitter(limit: limit)
      let wholePieces = whole.feed(input) + whole.finish()
      var chunked = LineSplitter(limit: limit)
      var chunkedPieces: [LineSplitter.Piece] = []
      var start = 0
      while start < input.count {
        let end = min(start + chunkSize, input.count)
        chunkedPieces += chunked.feed(input[start..<end])
        start = end
      }
      chunkedPieces += chunked.finish()
      if wholePieces != expected {
        broken.append("limit \(limit): read whole, the lines differ from splitting at newlines")
      }
      if chunkedPieces != expected {
        broken.append("limit \(limit): read \(chunkSize) bytes at a time, the lines differ")
      }
    }
    return broken
  }

  /// What the splitter should hand on: every newline-terminated line, then the unterminated
  /// rest if there is any; lines over `limit` only as their length.
  static func expectedPieces(_ input: [UInt8], limit: Int) -> [LineSplitter.Piece] {
    var lines = input.split(separator: 0x0A, omittingEmptySubsequences: false)
    if lines.last?.isEmpty == true { lines.removeLast() }
    return lines.map { $0.count > limit ? .tooLong(bytes: $0.count) : .line(Array($0)) }
  }

  /// Every line gets one reply line (blank lines none) that says what happened; the timer stays
  /// within its bounds; every event sent to plugins is one line of JSON.
  static func checkResponses(_ input: [UInt8]) -> [String] {
    let clock = ManualTimeSource()
    let bus = EventBus()
    var eventLines: [String] = []
    bus.subscribeToAll(as: "fuzz") { event in
      eventLines.append(EventJSON.line(for: event, at: clock.now))
    }
    let deck = CardDeck(
      cards: [.standard, FocusCard(name: "math", focus: 50 * 60)],
      defaultCardName: FocusCard.standard.name)
    let timer = FocusTimer(deck: deck, bus: bus, time: clock)
    var broken: [String] = []
    var splitter = LineSplitter(limit: PluginCommand.maximumLineLength)
    for piece in splitter.feed(input) + splitter.finish() {
      guard case .line(let line) = piece else { continue }
      let shown = String(decoding: line.prefix(80), as: UTF8.self)
      switch ExternalPlugin.respond(to: line, timer: timer, at: clock.now) {
      case .blank:
        if line.contains(where: { !Character(Unicode.Scalar($0)).isWhitespace }) {
          broken.append("'\(shown)' taken for a blank line")
        }
      case .executed(let command, let reply):
        broken += checkReply(reply, command: command.name, to: shown)
        if case .log(let message) = command {
          broken += checkLogLine(Logger.lines(label: "fuzz", level: .info, message), message)
        }
      case .refused(let error, let reply):
        broken += checkReply(reply, command: error.command, refused: true, to: shown)
        let logged = Logger.lines(label: "fuzz", level: .warning, "refused: \(error)")
        broken += checkLogLine(logged, error.description)
      }
      broken += checkStatus(timer.status, after: shown)
      // Let time pass between commands, a few minutes for some lines, so phases end too.
      clock.advance(by: TimeInterval(line.count % 7) * 300)
    }
    for line in eventLines { broken += checkJSONLine(line, what: "event line") }
    return broken
  }

  static func checkReply(
    _ reply: String, command: String?, refused: Bool = false, to line: String
  ) -> [String] {
    var broken = checkJSONLine(reply, what: "reply to '\(line)'")
    guard let object = jsonObject(reply) else { return broken }
    if object["type"] != .string("command-result") { broken.append("reply type: \(reply)") }
    if object["command"] != command.map(JSONReading.string) ?? .null {
      broken.append("reply names another command than \(command ?? "none"): \(reply)")
    }
    switch object["ok"] {
    case .bool(true):
      if refused { broken.append("a refused line answered ok: \(reply)") }
    case .bool(false):
      guard case .string(let error) = object["error"], error.count >= 10 else {
        broken.append("a failure without a reason: \(reply)")
        break
      }
    default:
      broken.append("reply without ok: \(reply)")
    }
    return broken
  }

  /// A line for plugins: ends in its only line break and is a JSON object of protocol v1.
  static func checkJSONLine(_ line: String, what: String) -> [String] {
    guard line.hasSuffix("\n"), line.dropLast().allSatisfy({ !$0.isNewline }) else {
      return ["\(what) is not one line: \(line.debugDescription)"]
    }
    guard let object = jsonObject(line) else { return ["\(what) is not a JSON object: \(line)"] }
    return object["v"] == .number(1) ? [] : ["\(what) lacks \"v\":1: \(line)"]
  }

  /// Reads with JSONDecoder, the parser the daemon uses. (Foundation's JSONSerialization on
  /// Linux drops a U+FEFF right after an escape sequence, which the round trips would blame
  /// on Grow.)
  static func jsonObject(_ line: String) -> [String: JSONReading]? {
    guard
      case .object(let fields)? = try? JSONDecoder().decode(JSONReading.self, from: Data(line.utf8))
    else { return nil }
    return fields
  }

  /// Whatever a plugin puts in a message, the daemon's log gets lines that all start with the
  /// plugin's label, and no control characters.
  static func checkLogLine(_ logged: String, _ message: String) -> [String] {
    let lines = logged.unicodeScalars.split(separator: "\n").map { String($0) }
    let forged = lines.contains { !$0.hasPrefix("grow[fuzz] ") }
    let controls = logged.unicodeScalars.contains {
      ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value)
    }
    guard !forged, !controls, logged.hasSuffix("\n") else {
      return ["logging '\(message.prefix(80))' wrote \(logged.debugDescription)"]
    }
    return []
  }

  static func checkStatus(_ status: TimerStatus, after line: String) -> [String] {
    let bounds = 0...DurationText.maximum
    guard bounds.contains(status.duration), bounds.contains(status.remaining),
      status.elapsed >= 0
    else {
      return ["after '\(line)': duration \(status.duration), remaining \(status.remaining)"]
    }
    return []
  }

  /// Text from anywhere (a card's intention, a card's name) goes to plugins on one line and
  /// comes back unchanged when they read the JSON.
  static func checkEventLine(carrying text: String) -> [String] {
    var lines: [String] = []
    let bus = EventBus()
    bus.subscribeToAll(as: "fuzz") { event in
      lines.append(EventJSON.line(for: event, at: Date(timeIntervalSince1970: 0)))
    }
    let card = FocusCard(name: text, intention: text)
    let timer = FocusTimer(
      deck: CardDeck(cards: [card], defaultCardName: text), bus: bus, time: ManualTimeSource())
    do {
      try timer.start()
    } catch {
      return ["the card named '\(text.prefix(80))' did not start: \(error)"]
    }
    let shown = text.prefix(80)
    var broken: [String] = []
    for line in lines {
      broken += checkJSONLine(line, what: "the event line for '\(shown)'")
      guard let object = jsonObject(line), object["type"] == .string("phase-started") else {
        continue
      }
      guard object["intention"] == .string(text), case .object(let phase)? = object["phase"],
        phase["card"] == .string(text)
      else {
        broken.append("'\(shown)' came back as \(line)")
        continue
      }
    }
    if lines.isEmpty { broken.append("starting a card published nothing") }
    return broken
  }
}

/// A JSON value as a plugin's reader sees it.
indirect enum JSONReading: Decodable, Equatable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSONReading])
  case object([String: JSONReading])

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let flag = try? container.decode(Bool.self) {
      self = .bool(flag)
    } else if let number = try? container.decode(Double.self) {
      self = .number(number)
    } else if let text = try? container.decode(String.self) {
      self = .string(text)
    } else if let items = try? container.decode([JSONReading].self) {
      self = .array(items)
    } else {
      self = .object(try container.decode([String: JSONReading].self))
    }
  }
}
