import Foundation
import Glibc

/// Starts programs with posix_spawn.
///
/// Not Foundation's `Process`: on Linux its `run()` copies whole `dirent` records while
/// scanning /proc/self/fd and over-reads past glibc's buffer, crashing intermittently
/// (swift-corelibs-foundation#5472; seen here about one full test run in three).
enum Spawn {
  struct Failed: Error, CustomStringConvertible {
    let program: String
    let code: Int32
    var description: String { "cannot start \(program): \(String(cString: strerror(code)))" }
  }

  /// Starts `path` with `arguments`; the child's 0, 1 and 2 are the given descriptors, and its
  /// working directory `directory` (nil: ours). The
  /// child starts with no signals blocked and the usual ones at their defaults, whatever the
  /// calling thread had (test and Dispatch threads block SIGTERM, which a child would inherit).
  static func start(
    _ path: String, _ arguments: [String], environment: [String: String],
    stdin: Int32, stdout: Int32, stderr: Int32, directory: String? = nil
  ) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let directory {
      let code = addChdir(&actions, directory)
      guard code == 0 else { throw Failed(program: path, code: code) }
    }
    posix_spawn_file_actions_adddup2(&actions, stdin, 0)
    posix_spawn_file_actions_adddup2(&actions, stdout, 1)
    posix_spawn_file_actions_adddup2(&actions, stderr, 2)

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for number in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2] {
      sigaddset(&defaults, number)
    }
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    var result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    // A script written a moment ago may still be open for writing in a child being forked by
    // another test; that lasts microseconds.
    for _ in 0..<20 where result == ETXTBSY {
      usleep(5_000)
      result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    }
    guard result == 0 else { throw Failed(program: path, code: result) }
    return pid
  }

  /// glibc's posix_spawn_file_actions_addchdir_np (2.29), which Swift's Glibc module does not
  /// import (its header declares it only under __USE_MISC).
  private static func addChdir(
    _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ directory: String
  ) -> Int32 {
    typealias AddChdir =
      @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>)
      -> Int32
    guard
      let symbol = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
    else { return ENOSYS }
    return unsafeBitCast(symbol, to: AddChdir.self)(actions, directory)
  }

  /// Calls `exited` with the shell-style status (the exit code, or 128 + the signal) once
  /// `pid` has ended; waits on a thread of its own.
  static func onExit(_ pid: pid_t, _ exited: @escaping @Sendable (Int32) -> Void) {
    Thread.detachNewThread {
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0, errno == EINTR {}
      let signal = status & 0x7f
      exited(signal == 0 ? (status >> 8) & 0xff : 128 + signal)
    }
  }

  /// A pipe whose ends are closed on exec, so other children never inherit them.
  static func pipe() -> (read: Int32, write: Int32) {
    var ends: [Int32] = [-1, -1]
    _ = Glibc.pipe(&ends)
    // pipe2(O_CLOEXEC) is not in Swift's Glibc module; the window before this is tiny.
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return (ends[0], ends[1])
  }
}

/// Writes an executable script.
///
/// Not `String.write(toFile:)`: its descriptor is not close-on-exec, so a process that another
/// test starts at that moment inherits it open for writing and keeps it for its whole life;
/// running the script then fails with "Text file busy" for as long as that process lives.
public func writeExecutable(_ text: String, to path: String) throws {
  let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
  guard descriptor >= 0 else {
    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
  }
  defer { close(descriptor) }
  let bytes = Array(text.utf8)
  guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count
  else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
  _ = fchmod(descriptor, 0o755)
}
