import FoundationEssentials
import Glibc

/// A program the CLI (or the daemon's start, `GnomeBanners`) runs and waits for, with one of
/// its output streams read.
public enum Subprocess {
  /// How it ended, from waitpid's status (the W* macros are not imported).
  public enum Exit: Equatable, Sendable {
    case exited(Int32)
    case killed(signal: Int32)
  }

  /// Runs `arguments` (the program found on PATH unless `executable` names it), reads what it
  /// writes to `stream` (STDOUT_FILENO or STDERR_FILENO; the other goes to /dev/null) and
  /// waits for it; nil if it could not be started. With `timeout` (milliseconds), a program
  /// still running then is killed (SIGKILL), and its exit says so.
  public static func capture(
    _ arguments: [String], executable: String? = nil, stream: Int32, timeout: Int32? = nil
  ) -> (output: String, exit: Exit)? {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { return nil }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, ends[1], stream)
    let other = stream == STDOUT_FILENO ? STDERR_FILENO : STDOUT_FILENO
    posix_spawn_file_actions_addopen(&actions, other, "/dev/null", O_WRONLY, 0)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid: pid_t = 0
    let started =
      if let executable {
        posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0
      } else {
        posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ) == 0
      }
    close(ends[1])
    defer { close(ends[0]) }
    guard started else { return nil }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    let deadline = timeout.map { ContinuousClock.now + .milliseconds(Int($0)) }
    while true {
      if let deadline {
        let left = ((deadline - ContinuousClock.now) / .milliseconds(1)).rounded(.up)
        var reader = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        let ready = left > 0 ? poll(&reader, 1, Int32(min(left, Double(Int32.max)))) : 0
        if ready < 0 && errno == EINTR { continue }
        if ready == 0 {
          kill(pid, SIGKILL)
          break
        }
      }
      let count = read(ends[0], &chunk, chunk.count)
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      bytes += chunk[0..<count]
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7f
    let exit: Exit = signal == 0 ? .exited((status >> 8) & 0xff) : .killed(signal: signal)
    return (String(decoding: bytes, as: UTF8.self), exit)
  }
}
