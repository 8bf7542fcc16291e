import FoundationEssentials
import Glibc

// Text and path helpers that FoundationEssentials leaves out (it has no NSString and no
// String(format:)). Grow's shipped modules import FoundationEssentials only, so that the
// processes never load ICU; everything here is plain Swift over the standard library.
// The daemon's and the CLI's (`@_spi(GrowHost)`), not part of the plugin API: a plugin that
// needs one keeps its own copy, and the SDK is free to change these.

extension StringProtocol {
  /// Without leading and trailing spaces and tabs (Unicode spaces too; not line breaks), as
  /// Foundation's `trimmingCharacters(in: .whitespaces)`.
  @_spi(GrowHost) public func trimmingWhitespace() -> String {
    trimming { $0.isWhitespace && !$0.isNewline }
  }

  /// Without leading and trailing characters for which `isTrimmed` holds.
  @_spi(GrowHost) public func trimming(while isTrimmed: (Character) -> Bool) -> String {
    guard let first = firstIndex(where: { !isTrimmed($0) }),
      let last = lastIndex(where: { !isTrimmed($0) })
    else { return "" }
    return String(self[first...last])
  }

  /// Exactly `width` characters: cut, or padded with spaces on the right (as Foundation's
  /// `padding(toLength:withPad:" ",startingAt:0)`).
  @_spi(GrowHost) public func fitted(toWidth width: Int) -> String {
    let count = self.count
    if count >= width { return String(prefix(width)) }
    return String(self) + String(repeating: " ", count: width - count)
  }
}

extension BinaryInteger {
  /// The decimal digits, with leading zeros up to `width` (`7.zeroPadded(2)` is "07"); a
  /// minus sign comes first.
  @_spi(GrowHost) public func zeroPadded(_ width: Int) -> String {
    let digits = String(self.magnitude)
    let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
    return self < 0 ? "-" + padded : padded
  }
}

/// File-system paths as text, as NSString's path methods treat them.
@_spi(GrowHost) public enum PathText {
  /// `/a/b` → `/a`, `/a` → `/`, `a` → `` (no directory part).
  public static func directory(of path: String) -> String {
    let trimmed = withoutTrailingSlashes(path)
    guard let slash = trimmed.lastIndex(of: "/") else { return "" }
    if slash == trimmed.startIndex { return "/" }
    return withoutTrailingSlashes(String(trimmed[..<slash]))
  }

  /// `/a/b` → `b`.
  public static func name(of path: String) -> String {
    let trimmed = withoutTrailingSlashes(path)
    guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
    return trimmed == "/" ? "/" : String(trimmed[trimmed.index(after: slash)...])
  }

  /// `directory` and `name` with one slash between.
  public static func join(_ directory: String, _ name: String) -> String {
    if directory.isEmpty { return name }
    return directory.hasSuffix("/") ? directory + name : directory + "/" + name
  }

  /// `.` and `..` resolved as text (no symbolic links followed), repeated slashes merged.
  public static func normalized(_ path: String) -> String {
    let absolute = path.hasPrefix("/")
    var parts: [Substring] = []
    for part in path.split(separator: "/") where part != "." {
      if part == "..", let last = parts.last, last != ".." {
        parts.removeLast()
      } else if part == "..", absolute {
        continue
      } else {
        parts.append(part)
      }
    }
    let joined = parts.joined(separator: "/")
    return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
  }

  /// The home directory: `$HOME` when set, else the password database's.
  public static func home(environment: [String: String]) -> String {
    if let home = environment["HOME"], !home.isEmpty { return home }
    guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return "/" }
    return String(cString: directory)
  }

  private static func withoutTrailingSlashes(_ path: String) -> String {
    var path = Substring(path)
    while path.count > 1, path.hasSuffix("/") { path.removeLast() }
    return String(path)
  }
}

/// A thread of its own, for work that must not run on the event loop (a watchdog, a
/// launcher); Foundation's `Thread` is not in FoundationEssentials.
@_spi(GrowHost) public enum BackgroundThread {
  private final class Start {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
      self.name = name
      self.body = body
    }
  }

  /// Starts `body` on a new, detached thread; `name` says which in the error should the
  /// system refuse one.
  public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
    let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
      &thread, nil,
      { raw in
        guard let raw else { return nil }
        let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
        start.body()
        return nil
      }, start)
    precondition(result == 0, "cannot start thread \(name): \(String(cString: strerror(result)))")
    pthread_detach(thread)
  }
}

/// Sleeps the calling thread (never the event loop's) for `seconds`.
@_spi(GrowHost) public func sleepThread(seconds: Double) {
  guard seconds > 0 else { return }
  var request = timespec(
    tv_sec: Int(seconds.rounded(.down)),
    tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
  var left = timespec()
  while nanosleep(&request, &left) != 0, errno == EINTR { request = left }
}

/// Writes all of `text` to `descriptor` (e.g. `STDERR_FILENO`), retrying short writes and
/// interruptions; false when the descriptor refused (closed, EPIPE).
@_spi(GrowHost) @discardableResult
public func writeAll(_ text: String, to descriptor: Int32) -> Bool {
  var bytes = Array(text.utf8)[...]
  while !bytes.isEmpty {
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    if written < 0 {
      if errno == EINTR { continue }
      return false
    }
    bytes = bytes.dropFirst(written)
  }
  return true
}

/// What went wrong, for a message: FileManager's errors carry the system's reason
/// (`Permission denied`) as their underlying error; others describe themselves.
/// (FoundationEssentials has no `localizedDescription`.)
@_spi(GrowHost) public func failureReason(_ error: any Error) -> String {
  if let cocoa = error as? CocoaError,
    let posix = cocoa.userInfo["NSUnderlyingError"] as? POSIXError
  {
    return String(cString: strerror(posix.code.rawValue))
  }
  return "\(error)"
}
