import FoundationEssentials
import Glibc
import GrowBasics
import GrowLoop

// The C side of external plugins, kept in one place: spawning, pipes, pidfd, waitpid,
// kill, and non-blocking read/write. Everything else works with the Swift names below.

/// Why a child could not be started.
enum SpawnError: WordedError {
  case pipeFailed(errno: Int32)
  case spawnFailed(program: String, errno: Int32)
  /// The program is a file someone else could have changed (`TrustedFile`).
  case untrusted(program: String, reason: String)
  case pidfdUnavailable(errno: Int32)

  var worded: Worded {
    switch self {
    case .pipeFailed(let code):
      Worded(Message("cannot create a pipe: {error}"), ["error": String(cString: strerror(code))])
    case .spawnFailed(let program, let code) where code == ENOENT:
      Worded(
        Message("cannot start '{program}': {error} (not found; give a full path or check PATH)"),
        ["program": program, "error": String(cString: strerror(code))])
    case .spawnFailed(let program, let code):
      Worded(
        Message("cannot start '{program}': {error}"),
        ["program": program, "error": String(cString: strerror(code))])
    case .untrusted(let program, let reason):
      Worded(
        Message("refusing to run {program}: {reason}"), ["program": program, "reason": reason])
    case .pidfdUnavailable(let code):
      Worded(
        Message("cannot watch the child (pidfd_open needs Linux 5.3 or later): {error}"),
        ["error": String(cString: strerror(code))])
    }
  }
}

/// A started child: its pid, the parent's ends of its three pipes (non-blocking, close-on-exec)
/// and a pidfd that becomes readable when it exits.
struct SpawnedChild {
  let pid: pid_t
  let stdin: Int32
  let stdout: Int32
  let stderr: Int32
  let exitNotifier: Int32
}

/// How a child ended.
enum ChildExit: Equatable, CustomStringConvertible {
  case exited(Int32)
  case killed(signal: Int32)
  /// Someone else in the process collected the status (a `waitpid(-1)` elsewhere).
  case statusUnavailable

  /// In English for the log (`description`), in the reader's language for `grow plugins`.
  var worded: Worded {
    switch self {
    case .statusUnavailable: Worded(Message("exited"))
    case .exited(let code): Worded(Message("exited with status {status}"), ["status": String(code)])
    case .killed(let signal):
      Worded(
        Message("was killed by signal {number} ({signal})"),
        ["number": String(signal), "signal": String(cString: strsignal(signal))])
    }
  }

  var description: String { worded.english }
}

enum ChildProcess {
  /// The file-creation mask children start with, when it is not the daemon's own: the daemon
  /// keeps 077 for itself (`Daemon.run`), but a plugin's program should write files the way
  /// the user set up.
  @MainActor static var umaskForChildren: mode_t?

  /// Starts `arguments[0]` (looked up on `environment`'s PATH when it has no slash) with
  /// `environment`, in its own process group, with no signals blocked and the signals the
  /// daemon ignores back at their defaults (an ignored SIGTERM or SIGPIPE would otherwise
  /// survive exec). Refuses a program someone else could have changed, or a directory on the
  /// way to it: it would run with the user's rights.
  ///
  /// The file checked is the file run: opened once (`TrustedFile`) and started from that
  /// descriptor, so a script sees itself as `/dev/fd/N`; `GROW_PLUGIN_PROGRAM` tells it the
  /// path it was found at (to find files next to it).
  @MainActor
  static func spawn(_ arguments: [String], environment: [String: String]) throws(SpawnError)
    -> SpawnedChild
  {
    let located = try locate(arguments[0], path: environment["PATH"])
    let program = try openProgram(located)
    var environment = environment
    environment["GROW_PLUGIN_PROGRAM"] = program.path
    var pipes: [(read: Int32, write: Int32)] = []
    defer {
      // The child's ends are closed in the parent whatever happens; ours survive below.
      for pair in pipes {
        close(pair.read)
        close(pair.write)
      }
    }
    for _ in 0..<3 {
      var ends: [Int32] = [-1, -1]
      // pipe2 is not imported; only this code forks, on the main thread, so setting close-on-exec
      // right after pipe() leaves no window in which another spawn could inherit them.
      guard pipe(&ends) == 0 else { throw .pipeFailed(errno: errno) }
      for descriptor in ends { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
      pipes.append((ends[0], ends[1]))
    }
    let (input, output, errorOutput) = (pipes[0], pipes[1], pipes[2])

    // Signals the daemon ignores or handles go back to their defaults (an ignored SIGTERM or
    // SIGPIPE would otherwise survive exec). SIGTERM when the daemon dies, however it dies:
    // the program can still clean up, and its stdin reaches end of file at the same time.
    let pid: pid_t
    do {
      pid = try ProcessLauncher.launch(
        program.descriptor, arguments: arguments,
        environment: environment.map { "\($0.key)=\($0.value)" },
        standardStreams: (input.read, output.write, errorOutput.write), umask: umaskForChildren,
        defaultSignals: [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2],
        deathSignal: SIGTERM)
    } catch {
      throw .spawnFailed(program: arguments[0], errno: error.errno)
    }

    guard let notifier = ProcessDescriptor.open(pid) else {
      let code = errno
      kill(-pid, SIGKILL)
      _ = waitpid(pid, nil, 0)
      throw .pidfdUnavailable(errno: code)
    }
    for descriptor in [input.write, output.read, errorOutput.read] {
      _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }
    // Keep the parent's ends: take them out of the list the defer closes.
    pipes = [(input.read, -1), (-1, output.write), (-1, errorOutput.write)]
    return SpawnedChild(
      pid: pid, stdin: input.write, stdout: output.read, stderr: errorOutput.read,
      exitNotifier: notifier)
  }

  /// The program at `path` (from `locate`), opened and checked.
  static func openProgram(_ path: String) throws(SpawnError) -> TrustedFile {
    do {
      return try TrustedFile.open(path)
    } catch {
      switch error {
      case .cannotOpen(_, let code): throw .spawnFailed(program: path, errno: code)
      case .unsafe(let reason): throw .untrusted(program: path, reason: reason)
      }
    }
  }

  /// Where `program` is: itself when it holds a slash, otherwise the first executable file of
  /// that name in the directories of `path` (as execvp looks; an empty entry is the current
  /// directory, and no PATH means /bin:/usr/bin).
  static func locate(_ program: String, path: String?) throws(SpawnError) -> String {
    guard !program.contains("/") else { return program }
    for directory in (path ?? "/bin:/usr/bin").split(
      separator: ":", omittingEmptySubsequences: false)
    {
      let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + program
      var info = stat()
      if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
        access(candidate, X_OK) == 0
      {
        return candidate
      }
    }
    throw .spawnFailed(program: program, errno: ENOENT)
  }

  /// Collects the child's exit status without waiting; nil while it still runs.
  static func reap(_ pid: pid_t) -> ChildExit? {
    var status: Int32 = 0
    let result = waitpid(pid, &status, WNOHANG)
    // Called once the pidfd says the child has exited, so ECHILD means it was reaped already.
    if result == -1 && errno == ECHILD { return .statusUnavailable }
    guard result == pid else { return nil }
    // The W* macros are not imported; these are their glibc definitions.
    let signal = status & 0x7f
    return signal == 0 ? .exited((status >> 8) & 0xff) : .killed(signal: signal)
  }

  /// Sends `signal` to the child's whole process group (it leads its own).
  static func signalGroup(_ pid: pid_t, _ signal: Int32) {
    if kill(-pid, signal) != 0 { kill(pid, signal) }
  }

  enum Transfer {
    case done(Int)
    case wouldBlock
    /// The other end is gone (EOF when reading, EPIPE when writing) or another error.
    case closed
  }

  /// Writes what it can without blocking. A reader that has gone gives `.closed`, not SIGPIPE:
  /// SIGPIPE is blocked on this thread for the write and a pending one consumed, so the
  /// process-wide disposition (inherited by every other child) stays untouched.
  static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Transfer {
    var pipeSignal = sigset_t()
    var saved = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &saved)
    defer {
      var now = timespec(tv_sec: 0, tv_nsec: 0)
      while sigtimedwait(&pipeSignal, nil, &now) == SIGPIPE {}
      pthread_sigmask(SIG_SETMASK, &saved, nil)
    }
    while true {
      let count = Glibc.write(descriptor, bytes.baseAddress, bytes.count)
      if count >= 0 { return .done(count) }
      switch errno {
      case EINTR: continue
      case EAGAIN: return .wouldBlock
      default: return .closed
      }
    }
  }

  /// Reads what is there without blocking.
  static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Transfer {
    while true {
      let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
      if count > 0 { return .done(count) }
      if count == 0 { return .closed }
      switch errno {
      case EINTR: continue
      case EAGAIN: return .wouldBlock
      default: return .closed
      }
    }
  }

  static func closeDescriptor(_ descriptor: Int32) { close(descriptor) }
}
