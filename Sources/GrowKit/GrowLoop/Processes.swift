import CLinux
import Glibc

/// Descriptors that stand for a process.
public enum ProcessDescriptor {
  /// A descriptor that becomes readable when process `pid` exits (pidfd_open, Linux 5.3+), or
  /// nil with `errno` set.
  public static func open(_ pid: pid_t) -> Int32? {
    let descriptor = clinux_pidfd_open(pid)
    return descriptor >= 0 ? descriptor : nil
  }
}

/// Starts programs that do not outlive the process that started them.
public enum ProcessLauncher {
  /// Why a program could not be started: the errno of fork or exec.
  public struct Failure: Error {
    public let errno: Int32
  }

  /// Starts `path` with `arguments` (the first is its name) and `environment` (`KEY=value`), in
  /// its own process group, with no signals blocked, `defaultSignals` at their defaults and
  /// the three descriptors as its stdin, stdout and stderr; `umask` nil keeps ours. The child
  /// gets `deathSignal` when the calling thread ends, which for the main thread is when the
  /// process dies, even by SIGKILL: the one thing posix_spawn cannot arrange.
  public static func launch(
    _ path: String, arguments: [String], environment: [String],
    standardStreams: (input: Int32, output: Int32, error: Int32), umask: mode_t?,
    defaultSignals: [Int32], deathSignal: Int32
  ) throws(Failure) -> pid_t {
    // Everything the child needs is allocated before fork: it may not call malloc.
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    var result: Int32 = 0
    // ETXTBSY: the script is still open for writing somewhere (an editor saving it, another
    // process forked while it was being written). That lasts microseconds; try again briefly.
    for attempt in 0..<20 {
      if attempt > 0 { usleep(5_000) }
      result = defaultSignals.withUnsafeBufferPointer { signals in
        clinux_spawn(
          path, argv, envp, standardStreams.input, standardStreams.output,
          standardStreams.error, umask.map { Int32($0) } ?? -1, signals.baseAddress,
          Int32(signals.count), deathSignal)
      }
      if result != -ETXTBSY { break }
    }
    guard result > 0 else { throw Failure(errno: -result) }
    return result
  }
}
