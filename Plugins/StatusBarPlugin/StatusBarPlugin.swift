import FoundationEssentials
import Glibc
import GrowConfig
import GrowCore
import GrowLoop
@_spi(GrowBuiltIn) import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// Keeps the timer's status in `$XDG_RUNTIME_DIR/grow/` for bars and scripts that read
/// files: `status.json` (the shape of `grow status --json`) and `status.txt` (the line
/// `grow status --format plain` prints, from `[plugin.statusbar] template` and `icons`).
/// Written on every change, and `status.txt` again whenever its text changes with the clock
/// while a phase runs: every minute for the default `{icon} {remaining_min}`, every second
/// for `{remaining}`, never for a template without a countdown, nor while paused, waiting or
/// idle. (Minutes by default: the daemon wakes no more than once a minute for a file that
/// bars poll anyway; `grow status --follow` has the seconds.) Atomically:
/// write a temporary file, then rename it over the old one, so a reader never sees half a
/// file.
public final class StatusBarPlugin: GrowPlugin {
  public static let id = "statusbar"
  public static var summary: String {
    Message(
      "writes status.json and status.txt to $XDG_RUNTIME_DIR/grow/ on change"
    ).render()
  }
  public static let settings = [
    PluginSetting(
      "template", .text, default: defaultTemplate,
      help: "The line of status.txt, fields in braces as for grow status --template."),
    PluginSetting(
      "icons", .choice(IconSet.allCases.map(\.rawValue)), default: IconSet.unicode.rawValue,
      help: "ascii for any font, unicode for stock fonts, nerd for Nerd Fonts."),
  ]
  /// status.txt's line unless `template` says otherwise.
  public static let defaultTemplate = "{icon} {remaining_min}"

  private let directory: URL
  private let template: StatusTemplate
  private let log: Logger
  private var distraction: String?
  private var status: TimerStatus
  private let loop: any EventLoop
  /// Wakes the plugin when `status.txt`'s countdown shows something else.
  private var tick: (any Alarm)?

  public init(context: PluginContext) throws {
    guard let runtime = XDGDirectories(environment: context.environment).runtimeDirectory else {
      throw PluginError.unavailable(
        Message("XDG_RUNTIME_DIR is not set; there is nowhere to keep the file").render())
    }
    try context.config.check(against: Self.settings, cards: [])
    let iconsName = context.config.string("icons", default: IconSet.unicode.rawValue)
    guard let icons = IconSet(rawValue: iconsName) else {
      throw PluginError.unavailable(
        Message("[plugin.statusbar] icons: unknown icon set '{name}'; icon sets: {names}").render([
          "name": iconsName, "names": IconSet.names,
        ]))
    }
    do {
      template = try StatusTemplate(
        context.config.string("template", default: Self.defaultTemplate), icons: icons)
    } catch {
      throw PluginError.unavailable(
        Message("[plugin.statusbar] template: {problem}").render(["problem": error.description]))
    }
    let directory = URL(fileURLWithPath: runtime).appendingPathComponent("grow")
    do {
      try PrivateFiles.makeDirectory(directory.path)
    } catch {
      throw PluginError.unavailable(
        Message("cannot create {path}: {reason}").render([
          "path": error.path, "reason": error.reason,
        ]))
    }
    self.directory = directory
    log = context.log
    status = context.timer.status
    loop = context.loop
    write(status)
    context.subscribe(TimerChanged.self) { [weak self] event in self?.write(event.status) }
    // The x11 plugin's distractions, for {distraction} and the "distracted" state.
    context.subscribe(DistractionStarted.self) { [weak self] event in
      self?.distraction = event.app
      self?.writeLine()
    }
    context.subscribe(DistractionEnded.self) { [weak self] _ in
      self?.distraction = nil
      self?.writeLine()
    }
  }

  public func stop() {
    tick?.cancel()
    for name in ["status.json", "status.txt"] {
      try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
    }
  }

  private func write(_ status: TimerStatus) {
    self.status = status
    replace("status.json", with: TimerStatusJSON(status).text)
    writeLine()
  }

  /// Writes `status.txt` and sets the timer for the next instant its text changes, aligned
  /// to the countdown's own second or minute (the same clock `grow status --follow` keeps).
  private func writeLine() {
    tick?.cancel()
    tick = nil
    let now = loop.now
    let snapshot = StatusSnapshot(status: status, distraction: distraction)
    replace("status.txt", with: template.render(snapshot, at: now, words: .spoken))
    guard let next = template.nextChange(after: now, of: snapshot) else { return }
    // A millisecond late, so the countdown has surely crossed the boundary when we look.
    tick = loop.at(next.addingTimeInterval(0.001)) { [weak self] in self?.writeLine() }
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

// `grow_plugin_ID`, not `grow_plugin`: the built-in plugins link into one test binary.
@_cdecl("grow_plugin_statusbar")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(StatusBarPlugin.self) }
