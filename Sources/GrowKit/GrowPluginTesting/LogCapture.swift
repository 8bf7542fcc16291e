@_spi(GrowHost) import GrowPluginKit
import Synchronization

/// A plugin's log, kept in memory: give the plugin `logger(label:)` and read `lines`.
public final class LogCapture: Sendable {
  private let captured = Mutex<[String]>([])

  public init() {}

  /// A logger that writes here only (not to standard error), from `minimumLevel` up.
  public func logger(label: String, minimumLevel: Logger.Level = .debug) -> Logger {
    Logger(
      label: label, minimumLevel: minimumLevel,
      destination: LogDestination(standardError: false) { [self] text in
        let lines = text.split(separator: "\n").map(String.init)
        captured.withLock { $0.append(contentsOf: lines) }
      })
  }

  /// Each line as written: `grow[x11] warning: ...`.
  public var lines: [String] { captured.withLock { $0 } }

  /// The lines at `level`, without their `grow[ID] level: ` prefix.
  public func messages(at level: Logger.Level) -> [String] {
    let marker = "] \(level.label): "
    return lines.compactMap { line in
      line.firstRange(of: marker).map { String(line[$0.upperBound...]) }
    }
  }

  public func contains(_ text: String) -> Bool { lines.contains { $0.contains(text) } }

  public func removeAll() { captured.withLock { $0.removeAll() } }
}
