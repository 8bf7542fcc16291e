internal import CLinux
import Dispatch
import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore

/// Descriptors that stand for a process.
public enum ProcessDescriptor {
  /// A descriptor that becomes readable when process `pid` exits (pidfd_open, Linux 5.3+), or
  /// nil with `errno` set.
  public static func open(_ pid: Glibc.pid_t) -> Int32? {
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

  /// Starts the program open as `program` (any descriptor of it, even `O_PATH`: the file
  /// itself runs, not what its path leads to now) with `arguments` (the first is its name) and
  /// `environment` (`KEY=value`), in its own process group, with no signals blocked, `defaultSignals` at their defaults and
  /// the three descriptors as its stdin, stdout and stderr; `umask` nil keeps ours. The child
  /// gets `deathSignal` when this process dies, even by SIGKILL: the one thing posix_spawn
  /// cannot arrange. A script sees itself as `/dev/fd/N`: its interpreter reads it from there.
  @MainActor
  public static func launch(
    _ program: Int32, arguments: [String], environment: [String],
    standardStreams: (input: Int32, output: Int32, error: Int32), umask: Glibc.mode_t?,
    defaultSignals: [Int32], deathSignal: Int32
  ) throws(Failure) -> Glibc.pid_t {
    // Everything the child needs is allocated before fork: it may not call malloc.
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    // ETXTBSY: the script is still open for writing somewhere (an editor saving it, another
    // process forked while it was being written). That lasts microseconds; try again briefly.
    var result: Int32 = 0
    for attempt in 0..<20 {
      if attempt > 0 { usleep(5_000) }
      result = forkOnLauncherThread(
        program, argv, envp, standardStreams, umask.map { Int32($0) } ?? -1, defaultSignals,
        deathSignal)
      if result != -ETXTBSY { break }
    }
    guard result > 0 else { throw Failure(errno: -result) }
    return result
  }

  /// `clinux_spawn` on the launcher thread. Nonisolated, so the closure it hands over is too:
  /// one formed in `launch` would belong to the main actor, and Swift checks that at run time.
  private nonisolated static func forkOnLauncherThread(
    _ program: Int32, _ argv: [UnsafeMutablePointer<CChar>?],
    _ envp: [UnsafeMutablePointer<CChar>?],
    _ streams: (input: Int32, output: Int32, error: Int32), _ childUmask: Int32,
    _ defaultSignals: [Int32], _ deathSignal: Int32
  ) -> Int32 {
    var result: Int32 = 0
    LauncherThread.shared.run {
      result = defaultSignals.withUnsafeBufferPointer { signals in
        clinux_spawn(
          program, argv, envp, streams.input, streams.output, streams.error, childUmask,
          signals.baseAddress, Int32(signals.count), deathSignal)
      }
    }
    return result
  }
}

/// The thread every program is started from, kept for the life of the process.
///
/// PR_SET_PDEATHSIG fires when the *thread* that forked ends, not the process. Under
/// `dispatchMain` the main thread has exited and the main queue runs on libdispatch's worker
/// threads, which come and go: a child forked there would be sent its death signal whenever
/// that worker retired. This thread never returns, so the signal means the process died.
private final class LauncherThread: @unchecked Sendable {
  static let shared = LauncherThread()

  private let request = DispatchSemaphore(value: 0)
  private let finished = DispatchSemaphore(value: 0)
  /// Set by the caller before `request` is signalled and cleared by the thread before
  /// `finished` is: the semaphores order every access. Callers are on the main actor, one at a
  /// time.
  private var job: (() -> Void)?

  private init() {
    BackgroundThread.start(name: "grow-launcher") { [unowned self] in
      while true {
        request.wait()
        job?()
        job = nil
        finished.signal()
      }
    }
  }

  /// Runs `body` on the launcher thread and waits for it.
  func run(_ body: () -> Void) {
    withoutActuallyEscaping(body) { body in
      job = body
      request.signal()
      finished.wait()
    }
  }
}
