import Glibc

/// Why a file that would run with the user's rights was not opened.
enum TrustedFileError: Error, Equatable, CustomStringConvertible {
  /// The system refused to open it (no such file, a loop of symbolic links, no permission).
  case cannotOpen(path: String, errno: Int32)
  /// Someone else could change it, or a directory on the way to it: `reason` names the unsafe
  /// path and what to do about it.
  case unsafe(reason: String)

  var description: String {
    switch self {
    case .cannotOpen(let path, let code): "cannot open \(path): \(String(cString: strerror(code)))"
    case .unsafe(let reason): reason
    }
  }
}

/// Code that runs with the user's rights (a plugin library inside the daemon, an external
/// plugin's program beside it) must be a file nobody else could have changed, reached through
/// directories nobody else could have changed either (as ssh's StrictModes asks of
/// authorized_keys).
///
/// The file is opened once, walking the path one component at a time from `/`, each directory
/// checked through the descriptor it was opened as and each symbolic link followed by hand;
/// what then runs or loads is that descriptor (`ChildProcess.spawn`, `PluginLibrary.load`), so
/// nobody can swap the file between the check and its use.
///
/// A directory is safe when it belongs to the user or root and only its owner may write to
/// it, or when it is sticky (like /tmp): there nobody can rename or delete what belongs to
/// someone else, and everything below is checked to belong to the user or root.
final class TrustedFile {
  /// An `O_PATH` descriptor of the checked file, close-on-exec; closed when this goes away
  /// unless `keepOpen()` took it.
  let descriptor: Int32
  /// The file's path with every symbolic link resolved, as it was checked.
  let path: String
  private var owned = true

  private init(descriptor: Int32, path: String) {
    self.descriptor = descriptor
    self.path = path
  }

  deinit {
    if owned { close(descriptor) }
  }

  /// Hands the descriptor over to the caller, who closes it (or keeps it for good).
  func keepOpen() -> Int32 {
    owned = false
    return descriptor
  }

  /// The file's device and inode, for telling whether it was loaded before.
  var identity: (device: UInt, inode: UInt) {
    var info = stat()
    _ = fstat(descriptor, &info)
    return (UInt(info.st_dev), UInt(info.st_ino))
  }

  /// O_PATH of <fcntl.h> (the same on x86-64 and arm64), which Glibc's module leaves out: a
  /// descriptor that names the file without reading it, enough for fstat, openat and exec.
  private static let pathOnly: Int32 = 0o10_000_000

  /// More links than this on the way is a loop (the kernel's own limit, MAXSYMLINKS).
  private static let linkLimit = 40

  /// Opens the regular file at `path` (relative to the working directory unless it starts with
  /// `/`) once every directory on the way, every symbolic link followed and the file itself have
  /// passed the checks above.
  static func open(_ path: String) throws(TrustedFileError) -> TrustedFile {
    var start = path
    if !path.hasPrefix("/") {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      guard getcwd(&buffer, buffer.count) != nil else {
        throw .cannotOpen(path: path, errno: errno)
      }
      start = String(cString: buffer) + "/" + path
    }
    let root = Glibc.open("/", pathOnly | O_DIRECTORY | O_CLOEXEC)
    guard root >= 0 else { throw .cannotOpen(path: "/", errno: errno) }
    // The directories open on the way, innermost last; `..` goes back one.
    var directories: [(descriptor: Int32, path: String)] = [(root, "")]
    defer { for directory in directories { close(directory.descriptor) } }
    try checkDirectory(root, at: "/")

    // Components still to walk, the next one last.
    var pending = components(of: start).reversed() as [String]
    var linksFollowed = 0
    while let name = pending.popLast() {
      if name == "." { continue }
      let directory = directories[directories.count - 1]
      if name == ".." {
        if directories.count > 1 { close(directories.removeLast().descriptor) }
        continue
      }
      let entryPath = directory.path + "/" + name
      var info = stat()
      guard fstatat(directory.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
        throw .cannotOpen(path: entryPath, errno: errno)
      }
      if info.st_mode & S_IFMT == S_IFLNK {
        linksFollowed += 1
        guard linksFollowed <= linkLimit else { throw .cannotOpen(path: path, errno: ELOOP) }
        try checkOwner(info, of: "the symbolic link \(entryPath)")
        let target = try readLink(name, in: directory.descriptor, at: entryPath)
        if target.hasPrefix("/") {
          while directories.count > 1 { close(directories.removeLast().descriptor) }
        }
        pending += components(of: target).reversed()
        continue
      }
      // O_NOFOLLOW: were the entry replaced by a link since fstatat (only a trusted writer
      // could), the open fails instead of going somewhere unchecked.
      let isLast = pending.allSatisfy { $0 == "." }
      let flags = pathOnly | O_NOFOLLOW | O_CLOEXEC | (isLast ? 0 : O_DIRECTORY)
      let opened = openat(directory.descriptor, name, flags)
      guard opened >= 0 else { throw .cannotOpen(path: entryPath, errno: errno) }
      guard fstat(opened, &info) == 0 else {
        let code = errno
        close(opened)
        throw .cannotOpen(path: entryPath, errno: code)
      }
      if isLast {
        let file = TrustedFile(descriptor: opened, path: entryPath)
        try checkFile(info, at: entryPath)
        return file
      }
      directories.append((opened, entryPath))
      try checkDirectory(opened, at: entryPath)
    }
    // The path ends in a directory (`/`, `dir/..`).
    throw .cannotOpen(path: path, errno: EISDIR)
  }

  private static func components(of path: String) -> [String] {
    path.split(separator: "/").map(String.init)
  }

  private static func readLink(_ name: String, in directory: Int32, at path: String)
    throws(TrustedFileError) -> String
  {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlinkat(directory, name, &buffer, buffer.count - 1)
    guard count >= 0 else { throw .cannotOpen(path: path, errno: errno) }
    buffer[count] = 0
    return String(cString: buffer)
  }

  private static func checkDirectory(_ descriptor: Int32, at path: String)
    throws(TrustedFileError)
  {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw .cannotOpen(path: path, errno: errno) }
    try checkOwner(info, of: "the directory \(path)")
    if info.st_mode & (S_IWGRP | S_IWOTH) != 0, info.st_mode & S_ISVTX == 0 {
      throw .unsafe(
        reason: "the directory \(path) is writable by other users; run 'chmod go-w \(path)'")
    }
  }

  private static func checkFile(_ info: stat, at path: String) throws(TrustedFileError) {
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw .unsafe(reason: "\(path) is not a regular file")
    }
    if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
      throw .unsafe(reason: "it is writable by other users; run 'chmod go-w \(path)'")
    }
    try checkOwner(info, of: "it")
  }

  private static func checkOwner(_ info: stat, of what: String) throws(TrustedFileError) {
    guard info.st_uid != getuid(), info.st_uid != 0 else { return }
    let advice =
      what == "it" ? "use a copy of your own" : "keep plugins in a directory of your own"
    throw .unsafe(reason: "\(what) belongs to another user (uid \(info.st_uid)); \(advice)")
  }
}
