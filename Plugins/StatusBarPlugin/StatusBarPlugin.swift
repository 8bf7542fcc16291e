import Foundation
import GrowCore
import GrowPluginKit

/// Keeps the timer's status in `$XDG_RUNTIME_DIR/grow/status.json` for bars and scripts that
/// read files. Written on every change (never per second), atomically: write a temporary file,
/// then rename it over the old one, so a reader never sees half a file.
public final class StatusBarPlugin: GrowPlugin {
  public static let id = "statusbar"
  public static let summary = "writes the status to $XDG_RUNTIME_DIR/grow/status.json on change"

  private let file: URL
  private let log: Logger

  public init(context: PluginContext) throws {
    guard let runtime = context.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
      throw PluginError.unavailable("XDG_RUNTIME_DIR is not set; there is nowhere to keep the file")
    }
    let directory = URL(fileURLWithPath: runtime).appendingPathComponent("grow")
    do {
      try FileManager.default.createDirectory(
        at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw PluginError.unavailable("cannot create \(directory.path): \(error.localizedDescription)")
    }
    file = directory.appendingPathComponent("status.json")
    log = context.log
    write(context.timer.status)
    context.subscribe(TimerChanged.self) { [weak self] event in self?.write(event.status) }
  }

  public func stop() {
    try? FileManager.default.removeItem(at: file)
  }

  private func write(_ status: TimerStatus) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.dateEncodingStrategy = .iso8601
    guard var data = try? encoder.encode(status) else { return }
    data.append(0x0A)
    let temporary = file.deletingLastPathComponent().appendingPathComponent(".status.json.tmp")
    guard FileManager.default.createFile(
      atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]),
      rename(temporary.path, file.path) == 0
    else {
      return log.warning("cannot write \(file.path): \(String(cString: strerror(errno)))")
    }
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(StatusBarPlugin.self) }
