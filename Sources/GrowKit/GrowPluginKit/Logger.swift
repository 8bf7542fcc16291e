import Foundation

/// Writes one line per message to standard error, which systemd's journal and a terminal both
/// read. Each line goes out in one `write`, so lines from plugins never interleave.
public struct Logger: Sendable {
  public enum Level: Int, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error
    public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    var label: String {
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

  /// - Parameter minimumLevel: defaults to `GROW_LOG` (`debug`, `info`, `warning`, `error`),
  ///   else `info`.
  public init(label: String, minimumLevel: Level? = nil) {
    self.label = label
    let fromEnvironment = ProcessInfo.processInfo.environment["GROW_LOG"].flatMap { name in
      Level.allCases.first { $0.label == name.lowercased() }
    }
    self.minimumLevel = minimumLevel ?? fromEnvironment ?? .info
  }

  /// The same destination and level, speaking for someone else.
  public func named(_ label: String) -> Logger { Logger(label: label, minimumLevel: minimumLevel) }

  public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
  public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
  public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
  public func error(_ message: @autoclosure () -> String) { log(.error, message()) }

  public func log(_ level: Level, _ message: @autoclosure () -> String) {
    guard level >= minimumLevel else { return }
    let line = "grow[\(label)] \(level.label): \(message())\n"
    FileHandle.standardError.write(Data(line.utf8))
  }
}
