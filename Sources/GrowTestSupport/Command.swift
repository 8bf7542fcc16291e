import Foundation

/// Why `Command.run` could not produce a result.
public enum CommandError: Error, CustomStringConvertible {
  /// The executable was not found on the `PATH` of the child's environment.
  case notFound(executable: String, path: String)
  /// The program could not be started (not executable, not found by the system, …).
  case launchFailed(command: String, underlying: any Error)
  /// The child ran longer than the timeout and was killed; output up to that point is kept.
  case timedOut(command: String, timeout: TimeInterval, stdout: String, stderr: String)

  public var description: String {
    switch self {
    case .notFound(let executable, let path):
      return "command not found: \(executable) (PATH=\(path))"
    case .launchFailed(let command, let underlying):
      return "could not start \(command): \(underlying)"
    case .timedOut(let command, let timeout, let stdout, let stderr):
      return """
        timed out after \(timeout)s and was killed: \(command)
        --- stdout ---
        \(stdout)
        --- stderr ---
        \(stderr)
        """
    }
  }
}

/// Run short-lived commands (CLI calls, `dbus-send`, …) from tests.
public enum Command {
  /// Runs `executable` with `args` and waits for it, with a timeout.
  ///
  /// - Parameters:
  ///   - executable: a path, or a name looked up on the `PATH` of the child's environment.
  ///   - environment: merged over this process's environment (pass `bus.environment`), its
  ///     locale pinned (`PinnedLocale`), or the whole environment when not
  ///     `inheritingEnvironment`.
  ///   - directory: the child's working directory (nil: ours).
  ///   - stdin: written to the child's standard input, which is then closed; `nil` gives the
  ///     child an empty stdin (never the test runner's).
  ///   - timeout: after this many seconds the child gets SIGTERM, then SIGKILL, and
  ///     `CommandError.timedOut` is thrown.
  /// - Returns: the exit status (128 + N when killed by signal N) and the decoded output.
  public static func run(
    _ executable: String, _ args: [String], environment: [String: String] = [:],
    inheritingEnvironment: Bool = true, directory: String? = nil, stdin: String? = nil,
    timeout: TimeInterval = 10
  ) throws -> (status: Int32, stdout: String, stderr: String) {
    let childEnvironment =
      inheritingEnvironment
      ? PinnedLocale.childEnvironment(environment) : environment
    let display = ([executable] + args).joined(separator: " ")

    let path = try resolve(executable, in: childEnvironment).path
    let output = Spawn.pipe()
    let errorOutput = Spawn.pipe()
    let input = Spawn.pipe()

    // Both pipes are drained while the child runs, so a child that fills one pipe's buffer
    // (64 KiB) while we wait on the other can't deadlock.
    let readers = DispatchGroup()
    let stdoutData = collect(output.read, group: readers)
    let stderrData = collect(errorOutput.read, group: readers)

    let pid: pid_t
    do {
      pid = try Spawn.start(
        path, args, environment: childEnvironment, stdin: input.read, stdout: output.write,
        stderr: errorOutput.write, directory: directory)
    } catch {
      for end in [output.write, errorOutput.write, input.read, input.write] { close(end) }
      throw CommandError.launchFailed(command: display, underlying: error)
    }
    // The child has its own copies; the readers see EOF once the child's are closed.
    for end in [output.write, errorOutput.write, input.read] { close(end) }
    let exited = DispatchSemaphore(value: 0)
    let status = LockedBox<Int32>(0)
    Spawn.onExit(pid) { code in
      status.withLock { $0 = code }
      exited.signal()
    }

    // Written on another thread: a child that doesn't read its stdin must not block us.
    let text = Data((stdin ?? "").utf8)
    DispatchQueue.global().async { writeWithoutSIGPIPE(text, to: input.write) }

    var timedOut = false
    if exited.wait(timeout: .now() + timeout) == .timedOut {
      timedOut = true
      stop(pid, exited: exited)
    }

    // The pipes hit EOF when the child exits, unless a grandchild it left behind still holds
    // them; don't wait for such a grandchild forever.
    _ = readers.wait(timeout: .now() + 10)

    let out = String(decoding: stdoutData.current.data, as: UTF8.self)
    let err = String(decoding: stderrData.current.data, as: UTF8.self)
    if timedOut {
      throw CommandError.timedOut(command: display, timeout: timeout, stdout: out, stderr: err)
    }
    return (status.current, out, err)
  }

  /// Finds `executable` like a shell would: as given when it contains a slash, else on PATH.
  static func resolve(_ executable: String, in environment: [String: String]) throws -> URL {
    if executable.contains("/") { return URL(fileURLWithPath: executable) }
    let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in path.split(separator: ":") where !directory.isEmpty {
      let candidate = "\(directory)/\(executable)"
      if FileManager.default.isExecutableFile(atPath: candidate) {
        return URL(fileURLWithPath: candidate)
      }
    }
    throw CommandError.notFound(executable: executable, path: path)
  }

  /// SIGTERM, a one-second grace period, then SIGKILL; returns once the child is gone.
  static func stop(_ pid: pid_t, exited: DispatchSemaphore) {
    kill(pid, SIGTERM)
    if exited.wait(timeout: .now() + 1) == .timedOut {
      kill(pid, SIGKILL)
      exited.wait()
    }
  }

  /// Accumulates everything readable from `handle` until EOF; `group` is left at EOF.
  /// Reads `handle` to EOF on a thread of its own with plain blocking reads. Not
  /// `readabilityHandler`: on Linux, setting up and tearing down many libdispatch read sources
  /// corrupts libdispatch's epoll bookkeeping (swift-corelibs-libdispatch#949).
  private static func collect(_ descriptor: Int32, group: DispatchGroup) -> LockedBox<
    (data: Data, atEOF: Bool)
  > {
    let box = LockedBox((data: Data(), atEOF: false))
    group.enter()
    Thread.detachNewThread {
      var buffer = [UInt8](repeating: 0, count: 64 * 1024)
      while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count > 0 {
          box.withLock { $0.data.append(contentsOf: buffer[..<count]) }
        } else if count < 0, errno == EINTR {
          continue
        } else {
          break
        }
      }
      box.withLock { $0.atEOF = true }
      close(descriptor)
      group.leave()
    }
    return box
  }
}

/// Writes `data` (and closes `descriptor` unless told not to); a reader that has gone away
/// gives EPIPE, not SIGPIPE.
///
/// SIGPIPE from write(2) goes to the writing thread, so it is blocked on this thread only and
/// any pending one is consumed before unblocking. Ignoring SIGPIPE process-wide instead would
/// leak into every child (SIG_IGN survives exec) and change how they behave.
func writeWithoutSIGPIPE(_ data: Data, to descriptor: Int32, thenClose: Bool = true) {
  var pipeSignal = sigset_t()
  var saved = sigset_t()
  sigemptyset(&pipeSignal)
  sigaddset(&pipeSignal, SIGPIPE)
  pthread_sigmask(SIG_BLOCK, &pipeSignal, &saved)
  defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
  data.withUnsafeBytes { bytes in
    var offset = 0
    while offset < bytes.count {
      let written = write(descriptor, bytes.baseAddress?.advanced(by: offset), bytes.count - offset)
      if written < 0, errno == EINTR { continue }
      guard written > 0 else { break }
      offset += written
    }
  }
  if thenClose { close(descriptor) }
  var now = timespec(tv_sec: 0, tv_nsec: 0)
  while sigtimedwait(&pipeSignal, nil, &now) == SIGPIPE {}
}
