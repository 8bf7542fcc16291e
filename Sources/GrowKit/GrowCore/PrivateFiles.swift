import Dispatch
import FoundationEssentials
import Glibc

/// Why one of Grow's own files or directories could not be written.
public struct PrivateFileError: Error, Equatable, CustomStringConvertible {
  public let path: String
  /// The errno of the call that failed.
  public let code: Int32

  public init(path: String, code: Int32) {
    self.path = path
    self.code = code
  }

  public var reason: String { String(cString: strerror(code)) }
  public var description: String { "\(path): \(reason)" }
}

/// Grow's own files (the history, the saved session, the status feed, the DND record) are
/// nobody's business but the user's: directories are created 0700 and files 0600 from their
/// first instant, whatever the umask. FileManager does not promise that: it creates with 0777
/// or 0666 under the umask and only then applies the mode it was given.
public enum PrivateFiles {
  /// Creates the directory `path`, and any missing parent, with mode 0700. A directory that
  /// already exists is left as it is.
  public static func makeDirectory(_ path: String) throws(PrivateFileError) {
    if mkdir(path, 0o700) == 0 { return }
    switch errno {
    case EEXIST:
      var info = stat()
      guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
        throw PrivateFileError(path: path, code: ENOTDIR)
      }
    case ENOENT:
      let parent = PathText.directory(of: path)
      guard !parent.isEmpty, parent != path else {
        throw PrivateFileError(path: path, code: ENOENT)
      }
      try makeDirectory(parent)
      guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
        throw PrivateFileError(path: path, code: errno)
      }
    default:
      throw PrivateFileError(path: path, code: errno)
    }
  }

  /// Replaces the file at `path` with `data`, mode 0600: written to a hidden temporary file
  /// beside it, flushed to disk, then renamed over the old one, so that a reader, or the next
  /// start after a crash, sees the old file or the new one and never half of one. Creates the
  /// directory as `makeDirectory` does.
  ///
  /// - Parameters:
  ///   - flush: false to leave the fsync to a later `flush(_:)`: the rename alone is atomic
  ///     for every process (a crash of ours included); only a crash of the whole machine
  ///     before the flush can lose the new contents.
  ///   - mode: the file's permission bits, exactly, whatever the umask; 0644 for a file other
  ///     programs read on the user's behalf (an autostart entry, a D-Bus service file).
  public static func replace(
    _ path: String, with data: Data, flush: Bool = true, mode: mode_t = 0o600
  ) throws(PrivateFileError) {
    let name = PathText.name(of: path)
    let parent = PathText.directory(of: path)
    let directory = parent.isEmpty ? "." : parent
    try makeDirectory(directory)
    let temporary = directory + "/." + name + ".tmp"
    // A leftover from a crash could have any mode; O_EXCL below makes a new file, 0600.
    unlink(temporary)
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw PrivateFileError(path: temporary, code: errno) }
    // Created 0600, so nobody else can write it meanwhile; then `mode` exactly, which fchmod
    // takes whatever the umask.
    var failure = mode == 0o600 || fchmod(descriptor, mode) == 0 ? 0 : errno
    if failure == 0 {
      failure = data.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
          let written = write(
            descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
          if written < 0, errno != EINTR { return errno }
          offset += max(0, written)
        }
        return 0
      }
    }
    if failure == 0, flush, fsync(descriptor) != 0 { failure = errno }
    close(descriptor)
    if failure == 0, rename(temporary, path) != 0 { failure = errno }
    guard failure == 0 else {
      unlink(temporary)
      throw PrivateFileError(path: path, code: failure)
    }
  }

  /// Flushes the file at `path` and its directory entry to disk (after `replace(_:with:flush:)`
  /// with `flush: false`). A file that is gone is fine: there is nothing to keep.
  public static func flush(_ path: String) throws(PrivateFileError) {
    let parent = PathText.directory(of: path)
    for target in [path, parent.isEmpty ? "." : parent] {
      let descriptor = open(target, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else {
        if errno == ENOENT { continue }
        throw PrivateFileError(path: target, code: errno)
      }
      defer { close(descriptor) }
      guard fsync(descriptor) == 0 else { throw PrivateFileError(path: target, code: errno) }
    }
  }

  /// `flush(_:)` on a queue of its own, not the caller's thread. After `replace(flush: false)`
  /// the new file is already whole for every process, a kill -9 of ours included; the sync
  /// only guards against the machine itself going down, and on a disk busy with other work it
  /// can take long enough to stall the daemon's event loop (`make soak` saw GetStatus wait
  /// 130-290 ms at phase ends). Flushes run one at a time, in the order asked for.
  public static func flushInBackground(
    _ path: String, onError: @escaping @Sendable (PrivateFileError) -> Void
  ) {
    flushQueue.async {
      do throws(PrivateFileError) { try flush(path) } catch { onError(error) }
    }
  }

  private static let flushQueue = DispatchQueue(label: "grow.private-files.flush", qos: .utility)
}
