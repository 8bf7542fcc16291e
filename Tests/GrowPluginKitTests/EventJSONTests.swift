import Foundation
import Testing

@testable import GrowCore
@_spi(GrowHost) @testable import GrowPluginKit

/// The JSON-lines protocol v1 that external plugins parse: its exact shape is a promise to
/// plugin authors (docs/plugin-protocol.md), so these tests pin it down.
@Suite struct EventJSONTests {
  static let start = Date(timeIntervalSince1970: 1_740_821_400)  // 2025-03-01T09:30:00Z
  static let phase = Phase(kind: .focus, card: "math", cycle: 2, duration: 1500, startedAt: start)

  func decode(_ line: String) throws -> [String: Any] {
    #expect(line.hasSuffix("\n"))
    #expect(line.dropLast().contains("\n") == false, "one line, no embedded newline")
    return try #require(
      try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
  }

  @Test func everyLineHasVersionTypeAndTimeWithMilliseconds() throws {
    let time = Self.start.addingTimeInterval(0.25)
    let line = EventJSON.line(for: PhasePaused(phase: Self.phase), at: time)
    let object = try decode(line)
    #expect(object["v"] as? Int == 1)
    #expect(object["type"] as? String == "phase-paused")
    #expect(object["time"] as? String == "2025-03-01T09:30:00.250Z")
  }

  @Test func keysAreSortedAndTheLineIsStable() {
    let line = EventJSON.line(
      for: PhaseStarted(phase: Self.phase, intention: "Chapter 3\nexercises"), at: Self.start)
    #expect(
      line == #"{"intention":"Chapter 3\nexercises","phase":{"card":"math","cycle":2,"#
        + #""duration":1500,"ends_at":"2025-03-01T09:55:00.000Z","kind":"focus","paused":false,"#
        + #""started_at":"2025-03-01T09:30:00.000Z"},"time":"2025-03-01T09:30:00.000Z","#
        + #""type":"phase-started","v":1}"# + "\n")
  }

  @Test func aPausedPhaseHasNoEnd() throws {
    var paused = Self.phase
    paused.pausedAt = Self.start.addingTimeInterval(60)
    let object = try decode(EventJSON.line(for: PhasePaused(phase: paused), at: Self.start))
    let phase = try #require(object["phase"] as? [String: Any])
    #expect(phase["ends_at"] is NSNull)
    #expect(phase["paused"] as? Bool == true)
  }

  @Test func eachTimerEventCarriesItsFields() throws {
    let ended = try decode(
      EventJSON.line(
        for: PhaseEnded(
          phase: Self.phase, outcome: .completed, endedAt: Self.start.addingTimeInterval(1500)),
        at: Self.start))
    #expect(ended["type"] as? String == "phase-ended")
    #expect(ended["outcome"] as? String == "completed")
    #expect(ended["elapsed"] as? Int == 1500)
    #expect(ended["ended_at"] as? String == "2025-03-01T09:55:00.000Z")

    let resumed = try decode(
      EventJSON.line(for: PhaseResumed(phase: Self.phase, pausedFor: 12.5), at: Self.start))
    #expect(resumed["paused_for"] as? Double == 12.5)

    let extended = try decode(
      EventJSON.line(for: PhaseExtended(phase: Self.phase, addedSeconds: 300), at: Self.start))
    #expect(extended["added_seconds"] as? Int == 300)

    let awaiting = try decode(
      EventJSON.line(for: PhaseAwaiting(next: .longBreak, card: "math"), at: Self.start))
    #expect(awaiting["next"] as? String == "long-break")
    #expect(awaiting["card"] as? String == "math")

    let stopped = try decode(
      EventJSON.line(
        for: SessionStopped(card: "math", completedFocusPhases: 3), at: Self.start))
    #expect(stopped["completed_focus_phases"] as? Int == 3)

    let changed = try decode(EventJSON.line(for: TimerChanged(status: .idle), at: Self.start))
    let status = try #require(changed["status"] as? [String: Any])
    #expect(status["state"] as? String == "idle")
    #expect(status["card"] is NSNull)
    #expect(status["long_break_after"] as? Int == 0)
  }

  struct PluginOwnEvent: GrowEvent {
    static let eventName = "my-plugin-thing"
  }

  @Test func eventsWithoutFieldsGoOutWithTheEnvelopeOnly() throws {
    let object = try decode(EventJSON.line(for: PluginOwnEvent(), at: Self.start))
    #expect(Set(object.keys) == ["v", "type", "time"])
    #expect(object["type"] as? String == "my-plugin-thing")
  }

  @Test func helloCarriesVersionAndStatus() throws {
    let object = try decode(EventJSON.hello(growVersion: "0.1.0", status: .idle, at: Self.start))
    #expect(object["type"] as? String == "hello")
    #expect(object["grow"] as? String == "0.1.0")
    let status = try #require(object["status"] as? [String: Any])
    let expectedKeys: Set<String> = [
      "state", "paused", "card", "duration", "remaining", "elapsed", "started_at", "ends_at",
      "cycle", "long_break_after", "next", "next_phase", "completed_today", "focus_today",
      "daily_goal", "intention", "cut_short_today",
    ]
    #expect(Set(status.keys) == expectedKeys, "the keys of grow status --json")
  }

  @Test func commandResults() {
    #expect(
      EventJSON.commandResult(command: "pause", error: nil, at: Self.start)
        == #"{"command":"pause","ok":true,"time":"2025-03-01T09:30:00.000Z","#
        + #""type":"command-result","v":1}"# + "\n")
    #expect(
      EventJSON.commandResult(command: nil, error: "not JSON", at: Self.start)
        == #"{"command":null,"error":"not JSON","ok":false,"time":"2025-03-01T09:30:00.000Z","#
        + #""type":"command-result","v":1}"# + "\n")
  }

  // MARK: Commands from plugins

  func parse(_ text: String) throws(PluginCommandError) -> PluginCommand {
    try PluginCommand.parse(Array(text.utf8))
  }

  @Test func commandsParse() throws {
    #expect(try parse(#"{"command":"pause"}"#) == .pause)
    #expect(try parse(#" {"command":"resume","id":7} "#) == .resume, "extra fields are ignored")
    #expect(try parse(#"{"command":"toggle"}"#) == .toggle)
    #expect(try parse(#"{"command":"skip"}"#) == .skip)
    #expect(try parse(#"{"command":"stop"}"#) == .stop)
    #expect(try parse(#"{"command":"start"}"#) == .start(card: nil))
    #expect(try parse(#"{"command":"start","card":"math"}"#) == .start(card: "math"))
    #expect(try parse(#"{"command":"extend","seconds":300}"#) == .extend(seconds: 300))
    #expect(try parse(#"{"command":"extend","seconds":1.5}"#) == .extend(seconds: 1.5))
    #expect(try parse(#"{"command":"log","message":"hi"}"#) == .log(message: "hi"))
  }

  @Test func garbageIsRefusedWithAReason() {
    let cases: [(String, PluginCommandError)] = [
      ("hello", .notJSON),
      (#"{"command":"pause""#, .notJSON),
      ("[1,2]", .notAnObject),
      ("42", .notAnObject),
      (#"{"cmd":"pause"}"#, .missingCommand),
      (#"{"command":7}"#, .wrongType(command: nil, field: "command", expected: "a string")),
      (#"{"command":"explode"}"#, .unknownCommand("explode")),
      (
        #"{"command":"extend","seconds":"300"}"#,
        .wrongType(command: "extend", field: "seconds", expected: "a number of seconds above 0")
      ),
      (
        #"{"command":"extend","seconds":true}"#,
        .wrongType(command: "extend", field: "seconds", expected: "a number of seconds above 0")
      ),
      (
        #"{"command":"extend","seconds":-5}"#,
        .wrongType(command: "extend", field: "seconds", expected: "a number of seconds above 0")
      ),
      (
        #"{"command":"start","card":3}"#,
        .wrongType(command: "start", field: "card", expected: "a string")
      ),
      (
        #"{"command":"log"}"#,
        .wrongType(command: "log", field: "message", expected: "a string")
      ),
    ]
    for (line, expected) in cases {
      #expect(throws: expected, "\(line)") { try parse(line) }
    }
    let error = PluginCommandError.unknownCommand("explode")
    #expect(error.description.contains("unknown command 'explode'"))
    #expect(error.description.contains("pause, resume, toggle, skip or stop"), "says what works")
  }

  @Test func overlongLinesAreRefusedUnread() {
    let line = [UInt8](repeating: UInt8(ascii: " "), count: PluginCommand.maximumLineLength + 1)
    #expect(throws: PluginCommandError.lineTooLong(bytes: line.count, limit: 65536)) {
      try PluginCommand.parse(line)
    }
  }
}
