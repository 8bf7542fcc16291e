import Glibc

/// Why a directory cannot be watched.
public enum DirectoryWatchError: Error, Equatable, CustomStringConvertible {
  /// inotify refused (too many watches or instances: `fs.inotify.max_user_*`).
  case cannotWatch(path: String, reason: String)

  public var description: String {
    switch self {
    case .cannotWatch(let path, let reason):
      "cannot watch \(path) for changes (\(reason)); raise fs.inotify.max_user_watches or "
        + "fs.inotify.max_user_instances if they are exhausted"
    }
  }
}

/// Calls back on the main queue when an entry appears in a directory (created, or moved in),
/// or, if asked, when one is written to, through inotify on `FileWatcher.shared`: nothing polls, and the process sleeps until the
/// kernel reports a change.
///
/// A directory that does not exist yet is waited for in its parent; once it appears, every
/// entry already in it is reported too, since they may have been made before the watch was
/// moved over.
@MainActor
public final class DirectoryWatch {
  public let path: String
  private let appeared: (String) -> Void
  /// Called with the name of an entry written to; nil to hear only new entries.
  private let written: ((String) -> Void)?
  private let inotify: Int32
  private var watch: FileWatcher.Watch?
  /// The inotify watch on the directory, or on its parent while the directory is missing.
  private var descriptor: Int32 = -1
  private var waitingForDirectory = false

  /// - Parameter appeared: called with the name (not the path) of each new entry.
  public convenience init(directory path: String, appeared: @escaping (String) -> Void)
    throws(DirectoryWatchError)
  {
    try self.init(directory: path, appeared: appeared, written: nil)
  }

  /// - Parameters:
  ///   - appeared: called with the name (not the path) of each new entry.
  ///   - written: called with the name of each entry written to (a log that grows), if any.
  public init(
    directory path: String, appeared: @escaping (String) -> Void,
    written: ((String) -> Void)?
  ) throws(DirectoryWatchError) {
    self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    self.appeared = appeared
    self.written = written
    inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard inotify >= 0 else {
      throw .cannotWatch(path: path, reason: String(cString: strerror(errno)))
    }
    do {
      try watchDirectoryOrParent()
    } catch {
      close(inotify)
      throw error
    }
    watch = FileWatcher.shared.watch(inotify, for: .readable) { [weak self] _ in self?.readEvents()
    }
  }

  isolated deinit { cancel() }

  /// Stops watching. Safe to call more than once.
  public func cancel() {
    guard let watch else { return }
    watch.cancel()
    self.watch = nil
    close(inotify)
  }

  private var parent: String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }

  private var baseName: String {
    path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
  }

  private func watchDirectoryOrParent() throws(DirectoryWatchError) {
    let directoryMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)
    descriptor = inotify_add_watch(
      inotify, path, directoryMask | (written == nil ? 0 : UInt32(IN_MODIFY)))
    if descriptor >= 0 {
      waitingForDirectory = false
      return
    }
    guard errno == ENOENT else {
      throw .cannotWatch(path: path, reason: String(cString: strerror(errno)))
    }
    descriptor = inotify_add_watch(inotify, parent, directoryMask)
    guard descriptor >= 0 else {
      throw .cannotWatch(path: parent, reason: String(cString: strerror(errno)))
    }
    waitingForDirectory = true
  }

  /// Reads every queued event; inotify packs several into one read.
  private func readEvents() {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while watch != nil {
      let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
      guard count > 0 else { return }
      var offset = 0
      // struct inotify_event: int wd; uint32_t mask, cookie, len; char name[len].
      let header = MemoryLayout<inotify_event>.size
      while offset + header <= count {
        let event = buffer.withUnsafeBytes {
          $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
        }
        let nameBytes = buffer[(offset + header)..<(offset + header + Int(event.len))]
        let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
        offset += header + Int(event.len)
        handle(descriptor: event.wd, name: name, wasWritten: event.mask & UInt32(IN_MODIFY) != 0)
        if watch == nil { return }
      }
    }
  }

  private func handle(descriptor watched: Int32, name: String, wasWritten: Bool) {
    guard watched == descriptor, !name.isEmpty else { return }
    if wasWritten, !waitingForDirectory { return written?(name) ?? () }
    guard waitingForDirectory else { return appeared(name) }
    guard name == baseName else { return }
    // The directory itself appeared: move the watch into it and report what is there.
    inotify_rm_watch(inotify, descriptor)
    do {
      try watchDirectoryOrParent()
    } catch {
      return
    }
    guard !waitingForDirectory, let directory = opendir(path) else { return }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
      let entryName = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
      }
      if entryName != "." && entryName != ".." { appeared(entryName) }
      if watch == nil { return }
    }
  }
}
