import Foundation
import GrowCore
import GrowPluginKit

/// Keeps the timer's status in `$XDG_RUNTIME_DIR/grow/` for bars and scripts that read
/// files: `status.json` (the shape of `grow status --json`) and `status.txt` (the line
/// `grow status --format plain` prints, from `[plugin.statusbar] template`). Written on every
/// change (never per second, so a countdown in `status.txt` is as of the last change),
/// atomically: write a temporary file, then rename it over the old one, so a reader never
/// sees half a file. Bars that want a live countdown run `grow status --follow` instead.
public final class StatusBarPlugin: GrowPlugin {
  public static let id = "statusbar"
  public static let summary =
    "writes status.json and status.txt to $XDG_RUNTIME_DIR/grow/ on change"

  private let directory: URL
  private let template: StatusTemplate
  private let log: Logger
  private var distraction: String?

  public init(context: PluginContext) throws {
    guard let runtime = context.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
      throw PluginError.unavailable("XDG_RUNTIME_DIR is not set; there is nowhere to keep the file")
    }
    try context.config.checkKeys(["template"])
    do {
      template = try StatusTemplate(
        context.config.string("template", default: StatusTemplate.standard.source))
    } catch {
      throw PluginError.unavailable("[plugin.statusbar] template: \(error.description)")
    }
    let directory = URL(fileURLWithPath: runtime).appendingPathComponent("grow")
    do {
      try PrivateFiles.makeDirectory(directory.path)
    } catch {
      throw PluginError.unavailable("cannot create \(error.path): \(error.reason)")
    }
    self.directory = directory
    log = context.log
    write(context.timer.status)
    context.subscribe(TimerChanged.self) { [weak self] event in self?.write(event.status) }
    // The x11 plugin's distractions, for {distraction} and the "distracted" state.
    context.subscribe(DistractionStarted.self) { [weak self] event in
      self?.distraction = event.app
      self?.write(context.timer.status)
    }
    context.subscribe(DistractionEnded.self) { [weak self] _ in
      self?.distraction = nil
      self?.write(context.timer.status)
    }
  }

  public func stop() {
    for name in ["status.json", "status.txt"] {
      try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
    }
  }

  private func write(_ status: TimerStatus) {
    let line = template.render(
      StatusSnapshot(status: status, distraction: distraction), at: Date())
    replace("status.json", with: TimerStatusJSON(status).text)
    replace("status.txt", with: line)
  }

  /// Replaces `name` with `line` and a newline: a temporary file renamed over the old one, so
  /// a bar never reads half a line. Not flushed to disk: the files live in the runtime
  /// directory, are rewritten on every change and mean nothing after a reboot.
  private func replace(_ name: String, with line: String) {
    do {
      try PrivateFiles.replace(
        directory.appendingPathComponent(name).path, with: Data((line + "\n").utf8),
        flush: false)
    } catch {
      log.warning("cannot write \(error)")
    }
  }
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(StatusBarPlugin.self) }
