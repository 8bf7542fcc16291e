import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowDaemon
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
        "no log yet: \(file.path) does not exist; the daemon writes it when it runs "
          + "(under systemd the journal has it: journalctl --user -u grow.service)")
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

  /// Prints what is appended from now on, across rotations, until interrupted. The command
  /// line tool has no event loop to keep free: it blocks in inotify's read, so it sleeps until
  /// the file changes instead of polling.
  private static func follow(_ file: LogFile, plugin: String?) -> Never {
    let directory = PathText.directory(of: file.path)
    let inotify = inotify_init1(Int32(IN_CLOEXEC))
    guard inotify >= 0,
      inotify_add_watch(inotify, directory, UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO)) >= 0
    else {
      reportError(.failed("cannot watch \(directory): \(String(cString: strerror(errno)))"))
      exit(1)
    }
    var descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
    var offset = descriptor >= 0 ? lseek(descriptor, 0, SEEK_END) : 0
    var partial: [UInt8] = []
    var events = [UInt8](repeating: 0, count: 4096)
    while true {
      // Rotated (a new file at the path) or truncated: start at the top of the new one.
      var onDisk = stat()
      var reading = stat()
      if stat(file.path, &onDisk) == 0,
        descriptor < 0 || fstat(descriptor, &reading) != 0 || reading.st_ino != onDisk.st_ino
          || onDisk.st_size < offset
      {
        if descriptor >= 0 { drain(descriptor, &partial, plugin) }
        if descriptor >= 0 { close(descriptor) }
        descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        offset = 0
      }
      if descriptor >= 0 { offset += drain(descriptor, &partial, plugin) }
      let count = events.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
      if count < 0, errno != EINTR { exit(1) }
    }
  }

  /// Prints the whole lines that are readable now; keeps a half-written last line for later.
  @discardableResult
  private static func drain(_ descriptor: Int32, _ partial: inout [UInt8], _ plugin: String?)
    -> Int
  {
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
        if matches(Substring(line), plugin) { say(line) }
      }
    }
    return total
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
    throw .failed("cannot run journalctl: \(String(cString: strerror(errno)))")
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
        throw .usage("grow logs: --lines takes a whole number, not '\(lines)'")
      }
      options.lines = count
    }
    try LogsCommand.run(options, environment: ProcessInfo.processInfo.environment)
  }
}
