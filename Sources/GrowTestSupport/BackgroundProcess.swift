import Foundation

/// A long-running child (e.g. `grow daemon`) that a test starts, talks to, and stops.
///
/// Its stdout and stderr go to files in a temp dir rather than pipes: nothing has to drain
/// them, grandchildren can't hold the test up, and the test can read them at any time.
/// Thread-safe: the only mutable state (the exit status) is in a `LockedBox`.
public final class BackgroundProcess: @unchecked Sendable {
  /// The command line, for messages.
  public let commandLine: String
  /// The child's process id.
  public let pid: Int32
  /// Where the child's stdout and stderr are written.
  public let stdoutURL: URL
  public let stderrURL: URL

  private let logDirectory: URL
  /// Our end of the child's stdin, when it was started with `writableStdin`.
  private let stdinWriter: Int32?
  private let exited = DispatchSemaphore(value: 0)
  private let status = LockedBox<Int32?>(nil)

  /// Starts `executable` (a path, or a name on the child's `PATH`) with `args`.
  /// `environment` is merged over this process's environment, its locale pinned
  /// (`PinnedLocale`), or is the whole environment when not `inheritingEnvironment`; `directory` is the child's working directory (nil:
  /// ours). Stdin is empty, unless `writableStdin`: then it is a pipe that `writeToStdin`
  /// feeds (as i3bar feeds clicks).
  public init(
    _ executable: String, _ args: [String], environment: [String: String] = [:],
    inheritingEnvironment: Bool = true, directory: String? = nil, writableStdin: Bool = false
  ) throws {
    let childEnvironment =
      inheritingEnvironment
      ? PinnedLocale.childEnvironment(environment) : environment
    commandLine = ([executable] + args).joined(separator: " ")

    logDirectory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-bg-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
    stdoutURL = logDirectory.appendingPathComponent("stdout.log")
    stderrURL = logDirectory.appendingPathComponent("stderr.log")
    for url in [stdoutURL, stderrURL]
    where !FileManager.default.createFile(atPath: url.path, contents: nil) {
      throw CommandError.launchFailed(
        command: commandLine,
        underlying: CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]))
    }

    let path = try Command.resolve(executable, in: childEnvironment).path
    let input: (read: Int32, write: Int32)
    if writableStdin {
      input = Spawn.pipe()
    } else {
      input = (open("/dev/null", O_RDONLY | O_CLOEXEC), -1)
    }
    let output = open(stdoutURL.path, O_WRONLY | O_APPEND | O_CLOEXEC)
    let errorOutput = open(stderrURL.path, O_WRONLY | O_APPEND | O_CLOEXEC)
    // The child has its own copies once it runs; ours would only leak descriptors.
    defer { for descriptor in [input.read, output, errorOutput] { close(descriptor) } }
    do {
      pid = try Spawn.start(
        path, args, environment: childEnvironment, stdin: input.read, stdout: output,
        stderr: errorOutput, directory: directory)
    } catch {
      if input.write >= 0 { close(input.write) }
      throw CommandError.launchFailed(command: commandLine, underlying: error)
    }
    stdinWriter = input.write >= 0 ? input.write : nil
    let status = self.status
    let exited = self.exited
    Spawn.onExit(pid) { code in
      status.withLock { $0 = code }
      exited.signal()
    }
  }

  deinit {
    kill()
    if let stdinWriter { close(stdinWriter) }
    try? FileManager.default.removeItem(at: logDirectory)
  }

  /// Writes `text` to the child's stdin (started with `writableStdin`); a child that has gone
  /// away gives no SIGPIPE.
  public func writeToStdin(_ text: String) {
    guard let stdinWriter else { return }
    writeWithoutSIGPIPE(Data(text.utf8), to: stdinWriter, thenClose: false)
  }

  /// Everything the child has written to stdout so far.
  public var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
  /// Everything the child has written to stderr so far.
  public var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

  /// `nil` while running; then the exit code, or 128 + N when killed by signal N.
  public var exitStatus: Int32? { status.current }
  public var isRunning: Bool { exitStatus == nil }

  /// Polls `condition` every `interval` until it is true (returns true) or `timeout` passes
  /// (returns false). Also returns false early when the child exits, since whatever the test
  /// waits for (a bus name, a log line) usually needs it alive; check `exitStatus` then.
  @discardableResult
  public func waitUntil(
    timeout: TimeInterval, interval: TimeInterval = 0.05, _ condition: () throws -> Bool
  ) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      if try condition() { return true }
      if !isRunning || Date() >= deadline { return try condition() }
      Thread.sleep(forTimeInterval: interval)
    }
  }

  /// Waits for the child to exit; returns its status, or nil if it still runs after `timeout`.
  @discardableResult
  public func waitForExit(timeout: TimeInterval = 10) -> Int32? {
    if let done = exitStatus { return done }
    guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
    exited.signal()  // keep the semaphore "open" for later waiters
    return exitStatus
  }

  /// Sends SIGTERM and waits up to `timeout` for the child to exit; returns its status
  /// (nil if it is still running, e.g. it ignores SIGTERM: then call `kill()`).
  @discardableResult
  public func terminate(timeout: TimeInterval = 5) -> Int32? {
    if isRunning { Foundation.kill(pid, SIGTERM) }
    return waitForExit(timeout: timeout)
  }

  /// Sends SIGKILL and waits for the child to be reaped.
  @discardableResult
  public func kill() -> Int32? {
    if isRunning { Foundation.kill(pid, SIGKILL) }
    return waitForExit(timeout: 10)
  }
}
