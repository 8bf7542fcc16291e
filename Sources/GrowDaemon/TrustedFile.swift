import Glibc

/// Code that runs with the user's rights (a plugin library inside the daemon, an external
/// plugin's program beside it) must be a file nobody else could have changed.
enum TrustedFile {
  /// Why `path` cannot be trusted, with what to do about it: it is group- or world-writable,
  /// or belongs to someone other than the user or root. Nil when it can be trusted, or when
  /// there is no such file (loading or running it then says so). Symbolic links are followed:
  /// the file checked is the one that runs.
  static func problem(with path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
      return "it is writable by other users; run 'chmod go-w \(path)'"
    }
    if info.st_uid != getuid(), info.st_uid != 0 {
      return "it belongs to another user (uid \(info.st_uid)); use a copy of your own"
    }
    return nil
  }
}
