import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore

/// Writes one line per message to standard error, which systemd's journal and a terminal both
/// read, and to the daemon's log file where nobody reads its standard error
/// (`LogDestination.forDaemon`). Each message goes out in one `write`, so lines from plugins
/// never interleave.
public struct Logger: Sendable {
  public enum Level: Int, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error
    public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    public var label: String {
      switch self {
      case .debug: "debug"
      case .info: "info"
      case .warning: "warning"
      case .error: "error"
      }
    }
  }

  /// Who is speaking: `daemon`, or a plugin id.
  public let label: String
  public let minimumLevel: Level
  @_spi(GrowHost) public let destination: LogDestination

  /// - Parameter minimumLevel: defaults to `GROW_LOG` (`debug`, `info`, `warning`, `error`),
  ///   else `info`.
  @_spi(GrowHost) public init(
    label: String, minimumLevel: Level? = nil, destination: LogDestination = .standardError
  ) {
    self.label = label
    self.destination = destination
    let fromEnvironment = ProcessInfo.processInfo.environment["GROW_LOG"].flatMap { name in
      Level.allCases.first { $0.label == name.lowercased() }
    }
    self.minimumLevel = minimumLevel ?? fromEnvironment ?? .info
  }

  /// The same destination and level, speaking for someone else.
  public func named(_ label: String) -> Logger {
    Logger(label: label, minimumLevel: minimumLevel, destination: destination)
  }

  public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
  public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
  public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
  public func error(_ message: @autoclosure () -> String) { log(.error, message()) }

  public func log(_ level: Level, _ message: @autoclosure () -> String) {
    guard level >= minimumLevel else { return }
    let lines = Self.lines(label: label, level: level, message())
    if destination.standardError { writeAll(lines, to: STDERR_FILENO) }
    destination.lines?(lines)
    if let file = destination.file {
      // The journal stamps each line itself; a file needs the time written in.
      let stamp = Self.timestamp(Date())
      file.write(
        lines.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
          .map { "\(stamp) \($0)\n" }.joined())
    }
  }

  /// Local time as `2026-12-01 09:41:05`, sortable and what `journalctl` shows.
  static func timestamp(_ date: Date) -> String {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var local = tm()
    localtime_r(&seconds, &local)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(local.tm_year + 1900)-\(two(local.tm_mon + 1))-\(two(local.tm_mday)) "
      + "\(two(local.tm_hour)):\(two(local.tm_min)):\(two(local.tm_sec))"
  }

  /// What `log` writes: each line of `message` after the label, so a message with a newline
  /// (from a plugin's `log` command, say) cannot pass for a line of the daemon or another
  /// plugin. Other control characters, a terminal's escape sequences among them, are written as
  /// `\u{1B}`.
  @_spi(GrowHost) public static func lines(label: String, level: Level, _ message: String) -> String
  {
    let prefix = "grow[\(label)] \(level.label): "
    // Split by scalars, not Characters: "\r\n" is one Character, yet a newline to a reader.
    return message.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
      .map { prefix + escapingControlCharacters($0) + "\n" }.joined()
  }

  private static func escapingControlCharacters(_ text: Substring.UnicodeScalarView) -> String {
    func isControl(_ scalar: Unicode.Scalar) -> Bool {
      (scalar.value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
    }
    guard text.contains(where: isControl) else { return String(text) }
    var escaped = String.UnicodeScalarView()
    for scalar in text {
      if isControl(scalar) {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        escaped.append(contentsOf: "\\u{\(hex)}".unicodeScalars)
      } else {
        escaped.append(scalar)
      }
    }
    return String(escaped)
  }
}
