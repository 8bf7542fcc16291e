import FoundationEssentials

/// One command an external plugin sends on its stdout: a JSON object on one line, such as
/// `{"command":"extend","seconds":300}` (protocol v1, docs/plugin-protocol.md).
/// The daemon's reading of executable plugins' lines (`@_spi(GrowHost)`): what they may send is
/// the line protocol's promise, versioned by the protocol, not part of the Swift plugin API.
@_spi(GrowHost) @frozen public enum PluginCommand: Equatable, Sendable {
  case pause, resume, toggle, skip, stop
  /// `{"command":"start","card":"math"}`; without `card`, the default card.
  case start(card: String?)
  /// `{"command":"extend","seconds":300}`.
  case extend(seconds: TimeInterval)
  /// `{"command":"log","message":"…"}`: a line in the daemon's log under the plugin's id.
  case log(message: String)

  /// The value of `"command"`.
  public var name: String {
    switch self {
    case .pause: "pause"
    case .resume: "resume"
    case .toggle: "toggle"
    case .skip: "skip"
    case .stop: "stop"
    case .start: "start"
    case .extend: "extend"
    case .log: "log"
    }
  }

  /// What a plugin may send, for error replies.
  public static let accepted =
    #"accepted: {"command":NAME} with NAME pause, resume, toggle, skip or stop; "#
    + #"{"command":"start","card":CARD} (card optional); {"command":"extend","seconds":N}; "#
    + #"{"command":"log","message":TEXT}"#

  /// The longest command line accepted, newline excluded.
  public static let maximumLineLength = 64 * 1024

  /// Reads one line (without its newline). Fields other than the ones named are ignored, so
  /// a plugin may add its own (an `id` to match replies, say).
  public static func parse(_ line: some Collection<UInt8>) throws(PluginCommandError)
    -> PluginCommand
  {
    guard line.count <= maximumLineLength else {
      throw .lineTooLong(bytes: line.count, limit: maximumLineLength)
    }
    let object: [String: JSONValue]
    switch JSONValue.parse(line) {
    case .object(let fields)?: object = fields
    case nil: throw .notJSON
    default: throw .notAnObject
    }
    guard let nameValue = object["command"] else { throw .missingCommand }
    guard case .string(let name) = nameValue else {
      throw .wrongType(command: nil, field: "command", expected: "a string")
    }
    switch name {
    case "pause": return .pause
    case "resume": return .resume
    case "toggle": return .toggle
    case "skip": return .skip
    case "stop": return .stop
    case "start":
      switch object["card"] {
      case nil, .null?: return .start(card: nil)
      case .string(let card)?: return .start(card: card.isEmpty ? nil : card)
      default: throw .wrongType(command: name, field: "card", expected: "a string")
      }
    case "extend":
      guard case .number(let seconds)? = object["seconds"], seconds.isFinite, seconds > 0 else {
        throw .wrongType(command: name, field: "seconds", expected: "a number of seconds above 0")
      }
      return .extend(seconds: seconds)
    case "log":
      guard case .string(let message)? = object["message"] else {
        throw .wrongType(command: name, field: "message", expected: "a string")
      }
      return .log(message: message)
    default:
      throw .unknownCommand(name)
    }
  }
}

/// Why a command line was refused; the message goes back to the plugin in its reply.
@_spi(GrowHost) public enum PluginCommandError: Error, Equatable, CustomStringConvertible {
  case lineTooLong(bytes: Int, limit: Int)
  case notJSON
  case notAnObject
  case missingCommand
  case unknownCommand(String)
  case wrongType(command: String?, field: String, expected: String)

  /// The command's name, when the line had a readable one.
  public var command: String? {
    switch self {
    case .unknownCommand(let name): name
    case .wrongType(let command, _, _): command
    default: nil
    }
  }

  public var description: String {
    let problem =
      switch self {
      case .lineTooLong(let bytes, let limit):
        "line of \(bytes) bytes refused; a command line may have at most \(limit) bytes"
      case .notJSON: "not JSON; send one JSON object per line"
      case .notAnObject: "not a JSON object; send one JSON object per line"
      case .missingCommand: #"no "command" field"#
      case .unknownCommand(let name):
        "unknown command '\(name.count > 40 ? name.prefix(40) + "…" : name)'"
      case .wrongType(_, let field, let expected): #""\#(field)" must be \#(expected)"#
      }
    return problem + "; " + PluginCommand.accepted
  }
}
