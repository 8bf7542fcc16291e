import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import Synchronization

/// The daemon's own log file, `$XDG_STATE_HOME/grow/grow.log`, for a daemon whose standard
/// error nobody reads (started by D-Bus activation or an XDG autostart entry). Under systemd
/// the journal has the log and no file is written (`LogDestination.forDaemon`).
///
/// Owner-only (0600 in a 0700 directory), appended one whole line set per `write`, and capped:
/// past `limit` bytes the file becomes `grow.log.1` (replacing the one before) and a new one
/// starts, so the log never holds more than twice the limit. A write that fails (a full disk)
/// is dropped: the log must never stop the timer.
@_spi(GrowHost) public final class LogFile: Sendable {
  public let path: String
  public let limit: Int
  private let state = Mutex<(descriptor: Int32, size: Int)>((-1, 0))

  /// 1 MiB: months of a normal daemon's lines, and a quick `grow logs` to read.
  public static let defaultLimit = 1 << 20

  public init(path: String, limit: Int = LogFile.defaultLimit) {
    self.path = path
    self.limit = limit
  }

  /// `grow.log` in Grow's state directory.
  public static func standardPath(_ directories: XDGDirectories = XDGDirectories()) -> String {
    directories.growState + "/grow.log"
  }

  /// The rotated file's path.
  public var previousPath: String { path + ".1" }

  public func write(_ text: String) {
    let bytes = Array(text.utf8)
    state.withLock { state in
      if state.descriptor >= 0, state.size + bytes.count > limit {
        close(state.descriptor)
        state.descriptor = -1
        rename(path, previousPath)
      }
      if state.descriptor < 0 {
        try? PrivateFiles.makeDirectory(PathText.directory(of: path))
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return }
        // A file left by someone else's umask or an older Grow: owner-only all the same.
        fchmod(descriptor, 0o600)
        var info = stat()
        state = (descriptor, fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0)
      }
      let written = bytes.withUnsafeBytes {
        Glibc.write(state.descriptor, $0.baseAddress, $0.count)
      }
      if written > 0 { state.size += written }
    }
  }

  deinit {
    state.withLock { if $0.descriptor >= 0 { close($0.descriptor) } }
  }
}

/// Where log lines go: standard error, a `LogFile`, or both.
@_spi(GrowHost) public struct LogDestination: Sendable {
  public var standardError: Bool
  public var file: LogFile?
  /// Gets every line as written (without the time stamp), in process: a plugin's tests read
  /// its log this way (`LogCapture` in GrowPluginTesting).
  public var lines: (@Sendable (String) -> Void)?

  public init(
    standardError: Bool, file: LogFile? = nil, lines: (@Sendable (String) -> Void)? = nil
  ) {
    self.standardError = standardError
    self.file = file
    self.lines = lines
  }

  public static let standardError = LogDestination(standardError: true)

  /// What the daemon logs to. systemd connects standard error to the journal and says so in
  /// `JOURNAL_STREAM` ("device:inode" of that stream): then standard error is enough. Otherwise
  /// (D-Bus activation, an autostart entry, a terminal) the log file is written too, and
  /// standard error only where it leads somewhere (not /dev/null).
  public static func forDaemon(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> LogDestination {
    var info = stat()
    guard fstat(2, &info) == 0 else {
      return LogDestination(standardError: false, file: LogFile(path: LogFile.standardPath()))
    }
    if let stream = environment["JOURNAL_STREAM"], stream == "\(info.st_dev):\(info.st_ino)" {
      return .standardError
    }
    var null = stat()
    let isNull =
      info.st_mode & S_IFMT == S_IFCHR && stat("/dev/null", &null) == 0
      && null.st_rdev == info.st_rdev
    return LogDestination(
      standardError: !isNull,
      file: LogFile(path: LogFile.standardPath(XDGDirectories(environment: environment))))
  }
}
