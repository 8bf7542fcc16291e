import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowDaemon
@_spi(GrowHost) import GrowLoop
import GrowMessages
@_spi(GrowHost) import GrowPluginKit

/// `grow logs`: the daemon's log, wherever it went. A daemon that systemd runs logs to the
/// journal, so that is asked (journalctl); any other daemon writes `LogFile.standardPath()`.
enum LogsCommand {
  struct Options {
    var follow = false
    var plugin: String?
    /// Only the last lines; nil for all (10 with `--follow`, as `journalctl -f` does).
    var lines: Int?
  }

  static func run(_ options: Options, environment: [String: String]) throws(CLIError) {
    let file = LogFile(path: LogFile.standardPath(XDGDirectories(environment: environment)))
    if !FileManager.default.fileExists(atPath: file.path), systemdRunsTheDaemon() {
      try journal(options)
    }
    guard FileManager.default.fileExists(atPath: file.path) else {
      throw .failed(
        Message(
          "no log yet: {path} does not exist; the daemon writes it when it runs "
            + "(under systemd the journal has it: journalctl --user -u grow.service)"
        ).render(["path": file.path]))
    }
    let keep = options.lines ?? (options.follow ? 10 : nil)
    var shown: [Substring] = []
    for path in [file.previousPath, file.path] {
      guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
      shown += text.split(separator: "\n").filter { matches($0, options.plugin) }
    }
    if let keep { shown = Array(shown.suffix(keep)) }
    if !shown.isEmpty { say(shown.joined(separator: "\n")) }
    if options.follow { follow(file, plugin: options.plugin) }
  }

  /// Whether a line is the plugin's (`… grow[ID] level: …`), or any line without a filter.
  static func matches(_ line: Substring, _ plugin: String?) -> Bool {
    guard let plugin else { return true }
    return line.contains(" grow[\(plugin)] ")
  }

  /// Prints what is appended from now on, across rotations, until interrupted: the log's
  /// directory is watched on the command's event loop (DirectoryWatch), so it sleeps until
  /// the file changes instead of polling.
  private static func follow(_ file: LogFile, plugin: String?) -> Never {
    MainActor.assumeIsolated {
      // The loop first: it must own FileWatcher's epoll before anything is watched.
      let loop = EpollLoop.shared
      let tail = LogTail(path: file.path, plugin: plugin)
      let name = PathText.name(of: file.path)
      do {
        LogTail.watch = try DirectoryWatch(
          directory: PathText.directory(of: file.path),
          appeared: { if $0 == name { tail.catchUp() } },
          written: { if $0 == name { tail.catchUp() } })
      } catch {
        reportError(.failed("\(error)"))
        exit(1)
      }
      tail.catchUp()
      loop.run()
    }
  }

  /// systemd manages `grow.service` for this user (so the journal has the log).
  private static func systemdRunsTheDaemon() -> Bool {
    let arguments = [
      "systemctl", "--user", "show", "--property=ActiveState", "--value", "grow.service",
    ]
    let result = Subprocess.capture(arguments, stream: STDOUT_FILENO)
    return result?.output.hasPrefix("active") ?? false
  }

  private static func journal(_ options: Options) throws(CLIError) -> Never {
    var arguments = ["journalctl", "--user", "--unit=grow.service", "--output=short-iso"]
    if options.follow { arguments.append("--follow") }
    if let lines = options.lines { arguments.append("--lines=\(lines)") }
    if let plugin = options.plugin { arguments.append("--grep=grow\\[\(plugin)\\] ") }
    let cArguments = arguments.map { strdup($0) } + [nil]
    execvp("journalctl", cArguments)
    throw .failed(
      Message("cannot run journalctl: {reason}").render([
        "reason": String(cString: strerror(errno))
      ]))
  }
}

extension Commands {
  static func runLogs(_ words: [String]) throws(CLIError) {
    // The short forms tail and journalctl users type.
    var words = words
    for (index, word) in words.enumerated() {
      if word == "-f" { words[index] = "--follow" }
      if word == "-n" { words[index] = "--lines" }
    }
    let arguments = try parse(
      words, values: ["plugin", "lines"], flags: ["follow"], usage: "logs")
    try expect(arguments, atMost: 0, "logs")
    var options = LogsCommand.Options(follow: arguments.flag("follow"))
    options.plugin = arguments.value("plugin")
    if let lines = arguments.value("lines") {
      guard let count = Int(lines), count >= 0 else {
        throw .usage(
          Message("grow logs: --lines takes a whole number, not '{value}'").render([
            "value": shown(lines)
          ]))
      }
      options.lines = count
    }
    try LogsCommand.run(options, environment: ProcessInfo.processInfo.environment)
  }
}

/// The end of the log as `grow logs --follow` reads it: what was appended since the last look,
/// across rotations (a new file at the path) and truncations, whole lines only.
@MainActor
private final class LogTail {
  /// The watch that calls `catchUp`, kept while the process runs.
  static var watch: DirectoryWatch?
  private let path: String
  private let plugin: String?
  private var descriptor: Int32
  private var offset: Int
  private var partial: [UInt8] = []

  init(path: String, plugin: String?) {
    self.path = path
    self.plugin = plugin
    descriptor = open(path, O_RDONLY | O_CLOEXEC)
    offset = descriptor >= 0 ? Int(lseek(descriptor, 0, SEEK_END)) : 0
  }

  func catchUp() {
    // Rotated (a new file at the path) or truncated: start at the top of the new one.
    var onDisk = stat()
    var reading = stat()
    if stat(path, &onDisk) == 0,
      descriptor < 0 || fstat(descriptor, &reading) != 0 || reading.st_ino != onDisk.st_ino
        || onDisk.st_size < offset
    {
      if descriptor >= 0 {
        drain()
        close(descriptor)
      }
      descriptor = open(path, O_RDONLY | O_CLOEXEC)
      offset = 0
    }
    if descriptor >= 0 { offset += drain() }
  }

  /// Prints the whole lines that are readable now; keeps a half-written last line for later.
  @discardableResult
  private func drain() -> Int {
    var total = 0
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      guard count > 0 else { break }
      total += count
      partial += buffer[..<count]
      while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: partial[..<newline], as: UTF8.self)
        partial.removeSubrange(...newline)
        if LogsCommand.matches(Substring(line), plugin) { say(line) }
      }
    }
    return total
  }
}
