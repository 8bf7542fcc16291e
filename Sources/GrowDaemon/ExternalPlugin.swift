import FoundationEssentials
import Glibc
import GrowCore
import GrowLoop
import GrowMessages
@_spi(GrowHost) import GrowPluginKit

/// A plugin in its own process, in any language: it gets every event as a JSON line on stdin
/// and may send commands as JSON lines on stdout (docs/plugin-protocol.md).
///
/// Everything runs on the plugin context's event loop: one descriptor watch per pipe, one on a
/// pidfd that fires when the child exits, and one-shot alarms only while a restart or a kill is
/// pending. Nothing wakes the daemon while the plugin is quiet. The daemon never blocks on the
/// child: output to it waits in a bounded buffer, and a child that lets it fill up, floods its
/// output or exits is stopped and restarted with backoff, then given up on.
@MainActor
public final class ExternalPlugin {
  public enum State: Equatable, Sendable, CustomStringConvertible {
    case running
    /// Waiting `after` seconds before starting the child again.
    case restarting(after: TimeInterval)
    /// Given up on until the daemon restarts or the plugin is reloaded.
    case failed(reason: String)
    /// Not started, or stopped on purpose.
    case stopped

    public var description: String {
      switch self {
      case .running: "running"
      case .restarting(let delay): "restarting in \(DurationText.format(delay))"
      case .failed(let reason): "failed: \(reason)"
      case .stopped: "stopped"
      }
    }
  }

  /// The bounds that keep a misbehaving child from hurting the daemon.
  public struct Limits: Sendable {
    /// Bytes of events waiting for a child that does not read before it is cut off.
    public var outgoingBuffer = 256 * 1024
    /// Lines (stdout and stderr together) per second before it is cut off.
    public var linesPerSecond = 1000
    public var firstRestartDelay: TimeInterval = 1
    public var maximumRestartDelay: TimeInterval = 60
    /// This many failures within `failureWindow` and the plugin stays failed.
    public var failuresBeforeGivingUp = 5
    public var failureWindow: TimeInterval = 120
    /// A run this long counts as healthy: the backoff starts again at `firstRestartDelay`.
    public var healthyRun: TimeInterval = 60
    /// Between SIGTERM and SIGKILL in `stop()`.
    public var stopGracePeriod: TimeInterval = 2

    public init() {}
    public static let standard = Limits()
  }

  public let id: String
  /// The program and its arguments, as split from `exec`.
  public let arguments: [String]
  public private(set) var state: State = .stopped {
    didSet { if state != oldValue { onStateChange?(state) } }
  }
  /// Why the child last ended or could not start, for `grow plugins`.
  public private(set) var lastError: String?
  /// The last lines the program wrote to stderr (its last words before exiting, usually), for
  /// `grow plugins` and `grow doctor`: at most `lastOutputLines`, each cut to 300 characters.
  public private(set) var lastOutput: [String] = []
  public static let lastOutputLines = 5
  /// Called on the main actor after every change of `state`.
  public var onStateChange: ((State) -> Void)?
  /// The running child's pid, for diagnostics.
  public var pid: Int32? { run?.child.pid }

  private let context: PluginContext
  private var loop: any EventLoop { context.loop }
  private let growVersion: String
  private let limits: Limits
  private var run: Run?
  private var restartTimer: (any Alarm)?
  /// When the last failures happened, on the monotonic clock like every duration here.
  private var recentFailures: [MonotonicInstant] = []
  private var consecutiveFailures = 0
  private var isSubscribed = false
  private var isStopping = false
  private var whenStopped: [() -> Void] = []
  private var stderrLog = LogRateLimiter()
  private var refusalLog = LogRateLimiter()

  public init(
    context: PluginContext, arguments: [String], growVersion: String, limits: Limits = .standard
  ) {
    precondition(!arguments.isEmpty, "ExecCommandLine.split never returns an empty list")
    id = context.id
    self.context = context
    self.arguments = arguments
    self.growVersion = growVersion
    self.limits = limits
  }

  /// Starts the child; also after `failed`, with a clean slate.
  public func start() {
    guard run == nil, restartTimer == nil else { return }
    isStopping = false
    recentFailures = []
    consecutiveFailures = 0
    if !isSubscribed {
      isSubscribed = true
      context.subscribeToAll { [weak self] event in
        guard let self else { return }
        self.send(EventJSON.line(for: event, at: self.loop.now))
      }
    }
    launch()
  }

  /// SIGTERM to the child's process group and EOF on its stdin; SIGKILL after the grace period
  /// if it is still there. `completion` runs once the child is gone (at once if none runs).
  public func stop(then completion: (() -> Void)? = nil) {
    isStopping = true
    restartTimer?.cancel()
    restartTimer = nil
    guard let run else {
      state = .stopped
      completion?()
      return
    }
    if let completion { whenStopped.append(completion) }
    guard run.killTimer == nil else { return }
    run.closeInput()
    ChildProcess.signalGroup(run.child.pid, SIGTERM)
    run.killTimer = loop.after(seconds: limits.stopGracePeriod) { [weak self, weak run] in
      guard let self, let run, self.run === run else { return }
      self.context.log.warning(
        "did not exit \(self.limits.stopGracePeriod)s after SIGTERM; killing it")
      ChildProcess.signalGroup(run.child.pid, SIGKILL)
    }
  }

  // MARK: Running the child

  private func launch() {
    restartTimer = nil
    var environment = context.environment
    environment["GROW_PLUGIN_ID"] = id
    environment["GROW_PROTOCOL"] = String(EventJSON.version)
    let child: SpawnedChild
    do {
      child = try ChildProcess.spawn(arguments, environment: environment)
    } catch {
      if case .untrusted = error {
        // Trying again changes nothing until someone fixes the file.
        refused(error.description, shown: error.message)
      } else {
        failed(error.description, shown: error.message)
      }
      return
    }
    let run = Run(child: child, loop: loop)
    self.run = run
    run.onWritable = { [weak self, weak run] in
      guard let self, let run, self.run === run else { return }
      self.flush(run)
    }
    run.onOutput = { [weak self, weak run] stream, pieces in
      guard let self, let run, self.run === run, run.cutOffReason == nil else { return }
      self.handle(pieces, from: stream, of: run)
    }
    run.onExit = { [weak self, weak run] exit in
      guard let self, let run, self.run === run else { return }
      self.finish(run, exit)
    }
    run.activate()
    state = .running
    context.log.info("started \(arguments.joined(separator: " ")) (pid \(child.pid))")
    send(EventJSON.hello(growVersion: growVersion, status: context.timer.status, at: loop.now))
  }

  /// Queues `line` for the child and writes what the pipe takes now.
  private func send(_ line: String) {
    guard let run, run.cutOffReason == nil, !run.inputClosed else { return }
    run.outgoing.append(contentsOf: line.utf8)
    if run.outgoing.count - run.outgoingSent > limits.outgoingBuffer {
      cutOff(
        run,
        Worded(
          Message("stopped reading its input ({size} KiB of events waiting)"),
          ["size": String(limits.outgoingBuffer / 1024)]))
      return
    }
    flush(run)
  }

  private func flush(_ run: Run) {
    while run.outgoingSent < run.outgoing.count {
      let result = run.outgoing.withUnsafeBytes { bytes in
        ChildProcess.write(
          run.child.stdin, UnsafeRawBufferPointer(rebasing: bytes[run.outgoingSent...]))
      }
      switch result {
      case .done(let count):
        run.outgoingSent += count
      case .wouldBlock:
        run.waitForWritable(true)
        return
      case .closed:
        // The child closed its stdin on purpose; it just wants no more events.
        run.closeInput()
        return
      }
    }
    run.outgoing.removeAll(keepingCapacity: run.outgoing.count <= 64 * 1024)
    run.outgoingSent = 0
    run.waitForWritable(false)
  }

  private func handle(_ pieces: [LineSplitter.Piece], from stream: Run.Stream, of run: Run) {
    for piece in pieces {
      guard run.cutOffReason == nil else { return }
      if run.countLine(limit: limits.linesPerSecond) {
        cutOff(
          run,
          Worded(
            Message("flooded its output (more than {count} lines in a second)"),
            ["count": String(limits.linesPerSecond)]))
        return
      }
      switch (stream, piece) {
      case (.stderr, .line(let bytes)):
        let line = String(decoding: bytes, as: UTF8.self)
        lastOutput.append(String(line.prefix(300)))
        if lastOutput.count > Self.lastOutputLines { lastOutput.removeFirst() }
        logLimited(&stderrLog, line)
      case (.stderr, .tooLong(let count)):
        logLimited(&stderrLog, "(a line of \(count) bytes on stderr, not shown)")
      case (.stdout, .line(let bytes)):
        // A plugin being stopped, or any plugin once the daemon is asked to exit, no longer
        // drives the timer: a backlog of its commands would hold the exit up (each one saves
        // the session and tells every plugin). Checked line by line, so a chunk being carried
        // out when SIGTERM comes stops at the next line.
        if !isStopping, !TerminationSignals.isRequested { execute(bytes) }
      case (.stdout, .tooLong(let count)):
        refuse(.lineTooLong(bytes: count, limit: PluginCommand.maximumLineLength))
      }
    }
  }

  private func execute(_ line: [UInt8]) {
    switch Self.respond(to: line, timer: context.timer, at: loop.now) {
    case .blank:
      return
    case .executed(let command, let reply):
      if case .log(let message) = command { logLimited(&stderrLog, message) }
      send(reply)
    case .refused(let error, let reply):
      logLimited(&refusalLog, "refused a command line: \(error)", level: .warning)
      send(reply)
    }
  }

  private func refuse(_ error: PluginCommandError) {
    logLimited(&refusalLog, "refused a command line: \(error)", level: .warning)
    send(EventJSON.commandResult(command: error.command, error: error.description))
  }

  /// What one line from a plugin's stdout comes to.
  package enum LineOutcome: Equatable {
    /// A blank line: a harmless separator, not a command; no reply.
    case blank
    /// A command that was run on the timer; `reply` says whether the timer took it.
    case executed(PluginCommand, reply: String)
    /// A line that is not a command; `reply` says why.
    case refused(PluginCommandError, reply: String)
  }

  /// Reads `line` (without its newline), runs the command on `timer` and writes the reply line.
  /// Everything the daemon does with a plugin's line except logging and sending, so the fuzzer
  /// can run exactly this on hostile bytes.
  package static func respond(
    to line: [UInt8], timer: any TimerControl, at now: Date
  ) -> LineOutcome {
    guard line.contains(where: { !Character(Unicode.Scalar($0)).isWhitespace }) else {
      return .blank
    }
    let command: PluginCommand
    do {
      command = try PluginCommand.parse(line)
    } catch {
      return .refused(
        error,
        reply: EventJSON.commandResult(command: error.command, error: error.description, at: now))
    }
    do throws(TimerError) {
      switch command {
      case .pause: try timer.pause()
      case .resume: try timer.resume()
      case .toggle: try timer.toggle()
      case .skip: try timer.skip()
      case .stop: try timer.stop()
      case .start(let card): try timer.start(card: card, overrides: SessionOverrides())
      case .extend(let seconds): try timer.extend(by: seconds)
      case .log: break
      }
      return .executed(
        command, reply: EventJSON.commandResult(command: command.name, error: nil, at: now))
    } catch {
      return .executed(
        command,
        reply: EventJSON.commandResult(command: command.name, error: error.message, at: now))
    }
  }

  private func logLimited(
    _ limiter: inout LogRateLimiter, _ message: String, level: Logger.Level = .info
  ) {
    let (allowed, heldBack) = limiter.admit(at: loop.monotonicNow)
    guard allowed else { return }
    if heldBack > 0 { context.log.warning("(\(heldBack) lines not logged: too many)") }
    context.log.log(level, message)
  }

  /// Kills a misbehaving child; its exit then counts as a failure with `reason`.
  private func cutOff(_ run: Run, _ reason: Worded) {
    guard run.cutOffReason == nil else { return }
    run.cutOffReason = reason
    run.outgoing = []
    run.outgoingSent = 0
    context.log.warning("\(reason.english); killing it")
    ChildProcess.signalGroup(run.child.pid, SIGKILL)
  }

  private func finish(_ run: Run, _ exit: ChildExit) {
    // What it wrote before exiting still counts: commands and log lines.
    run.drainOutput()
    run.cancel()
    self.run = nil
    if isStopping {
      state = .stopped
      context.log.info("stopped (\(exit))")
      let completions = whenStopped
      whenStopped = []
      for completion in completions { completion() }
      return
    }
    if loop.monotonicNow - run.startedAt >= limits.healthyRun { consecutiveFailures = 0 }
    let reason = run.cutOffReason ?? exit.worded
    failed(reason.english, shown: reason.text)
  }

  /// Gives up at once, without restarting: the program must not run as it is. Once it is
  /// fixed, `grow plugins reload ID` starts it. `reason` is for the log, `shown` (the same in
  /// the reader's language, when it was worded by a Message) for `grow plugins`.
  private func refused(_ reason: String, shown: String? = nil) {
    lastError = shown ?? reason
    context.log.error(reason)
    state = .failed(reason: shown ?? reason)
  }

  /// Records a failure and restarts with backoff, or gives up after too many. `reason` is for
  /// the log, `shown` as in `refused`.
  private func failed(_ reason: String, shown: String? = nil) {
    lastError = shown ?? reason
    let now = loop.monotonicNow
    recentFailures = recentFailures.filter { now - $0 < limits.failureWindow }
    recentFailures.append(now)
    consecutiveFailures += 1
    guard recentFailures.count < limits.failuresBeforeGivingUp else {
      context.log.error(
        "\(reason); giving up after \(recentFailures.count) failures in "
          + "\(DurationText.format(limits.failureWindow)) (restart the daemon or reload to retry)")
      state = .failed(reason: shown ?? reason)
      return
    }
    let exponent = Double(min(consecutiveFailures - 1, 30))
    let delay = min(limits.maximumRestartDelay, limits.firstRestartDelay * pow(2, exponent))
    context.log.warning("\(reason); restarting in \(DurationText.format(delay))")
    state = .restarting(after: delay)
    restartTimer = loop.after(seconds: delay) { [weak self] in
      guard let self, self.restartTimer != nil else { return }
      self.launch()
    }
  }
}

/// One child process and its descriptor watches. Each descriptor is closed right after its
/// watch is cancelled; the loop unregisters at once, so that is safe.
@MainActor
private final class Run {
  enum Stream { case stdout, stderr }

  let child: SpawnedChild
  private let loop: any EventLoop
  let startedAt: MonotonicInstant
  var outgoing: [UInt8] = []
  /// How much of `outgoing` the pipe has taken.
  var outgoingSent = 0
  private(set) var inputClosed = false
  var cutOffReason: Worded?
  var killTimer: (any Alarm)?

  var onWritable: () -> Void = {}
  var onOutput: (Stream, [LineSplitter.Piece]) -> Void = { _, _ in }
  var onExit: (ChildExit) -> Void = { _ in }

  private var input: (any DescriptorWatch)?
  private var outputs: [Stream: any DescriptorWatch] = [:]
  private var splitters: [Stream: LineSplitter]
  private var exitWatch: (any DescriptorWatch)?
  /// The flood limit's one-second window, on the monotonic clock: measured on the wall clock,
  /// a clock set back kept the window from ever ending, and a healthy plugin was cut off
  /// after its thousandth line.
  private var floodWindowStart: MonotonicInstant?
  private var floodCount = 0

  init(child: SpawnedChild, loop: any EventLoop) {
    self.child = child
    self.loop = loop
    startedAt = loop.monotonicNow
    splitters = [
      .stdout: LineSplitter(limit: PluginCommand.maximumLineLength),
      .stderr: LineSplitter(limit: PluginCommand.maximumLineLength),
    ]
  }

  /// Starts watching. Writability of stdin is only watched while a write would block, so an
  /// idle pipe wakes nobody.
  func activate() {
    input = loop.watch(child.stdin, for: []) { [weak self] _ in self?.onWritable() }
    for (stream, descriptor) in [(Stream.stdout, child.stdout), (.stderr, child.stderr)] {
      outputs[stream] = loop.watch(descriptor, for: .readable) { [weak self] _ in
        self?.readOneChunkThisTurn(stream)
      }
    }
    exitWatch = loop.watch(child.exitNotifier, for: .readable) { [weak self] _ in
      guard let self, let exit = ChildProcess.reap(self.child.pid) else { return }
      self.stopWatchingExit()
      self.onExit(exit)
    }
  }

  private func stopWatchingExit() {
    guard let watch = exitWatch else { return }
    watch.cancel()
    exitWatch = nil
    ChildProcess.closeDescriptor(child.exitNotifier)
  }

  func waitForWritable(_ waiting: Bool) {
    guard !inputClosed else { return }
    input?.interest = waiting ? .writable : []
  }

  /// Gives the child EOF on stdin and drops what was waiting for it.
  func closeInput() {
    guard !inputClosed else { return }
    inputClosed = true
    outgoing = []
    outgoingSent = 0
    input?.cancel()
    input = nil
    ChildProcess.closeDescriptor(child.stdin)
  }

  /// Counts one line against the flood limit; true when the limit is exceeded.
  func countLine(limit: Int) -> Bool {
    let now = loop.monotonicNow
    if floodWindowStart.map({ now - $0 >= 1 }) ?? true {
      floodWindowStart = now
      floodCount = 0
    }
    floodCount += 1
    return floodCount > limit
  }

  /// Reads whatever is still in the pipes after the child exited.
  func drainOutput() {
    for stream in [Stream.stdout, .stderr] {
      for _ in 0..<256 where outputs[stream] != nil {
        if !readAvailable(stream) { break }
      }
    }
  }

  /// Reads one chunk, then lets the rest of the loop's turn go to others (D-Bus callers,
  /// signals, other plugins): a plugin writing commands as fast as it can waits on its full
  /// pipe meanwhile, instead of holding the daemon for seconds.
  ///
  /// Once the daemon is asked to exit, nothing is read while the child runs: what it sends is
  /// not carried out any more, and reading it would only keep the loop from the shutdown. Its
  /// pipe fills and it waits until its SIGTERM; what it wrote last is read once it has exited
  /// (`drainOutput`), so its last words on stderr are still logged.
  private func readOneChunkThisTurn(_ stream: Stream) {
    if TerminationSignals.isRequested {
      outputs[stream]?.interest = []
      return
    }
    guard readAvailable(stream, atMost: Self.turnBytes), let watch = outputs[stream] else {
      return
    }
    watch.interest = []
    _ = loop.after(seconds: 0) { [weak self] in
      guard !TerminationSignals.isRequested else { return }
      if let watch = self?.outputs[stream], !watch.isCancelled { watch.interest = .readable }
    }
  }

  /// What one turn of the loop reads from a running plugin: about two dozen short commands.
  /// Each command saves the session and tells every plugin and the bus, which on a machine
  /// loaded many times over costs milliseconds; with 4 KiB (two hundred commands) a turn took
  /// seconds there, and a `grow status` waiting for the next turn got no answer in time.
  static let turnBytes = 512

  /// Reads one chunk of at most `count` bytes (4 KiB: a few hundred commands, after the child
  /// exited); false when nothing more is there now.
  @discardableResult
  private func readAvailable(_ stream: Stream, atMost count: Int = 4 * 1024) -> Bool {
    guard outputs[stream] != nil else { return false }
    let descriptor = stream == .stdout ? child.stdout : child.stderr
    var buffer = [UInt8](repeating: 0, count: count)
    let result = buffer.withUnsafeMutableBytes { ChildProcess.read(descriptor, into: $0) }
    switch result {
    case .done(let count):
      let chunk: ArraySlice<UInt8> = buffer[..<count]
      let pieces = splitters[stream]?.feed(chunk) ?? []
      if !pieces.isEmpty { onOutput(stream, pieces) }
      return true
    case .wouldBlock:
      return false
    case .closed:
      let pieces = splitters[stream]?.finish() ?? []
      closeOutput(stream)
      if !pieces.isEmpty { onOutput(stream, pieces) }
      return false
    }
  }

  private func closeOutput(_ stream: Stream) {
    guard let watch = outputs.removeValue(forKey: stream) else { return }
    watch.cancel()
    ChildProcess.closeDescriptor(stream == .stdout ? child.stdout : child.stderr)
  }

  func cancel() {
    closeInput()
    closeOutput(.stdout)
    closeOutput(.stderr)
    stopWatchingExit()
    killTimer?.cancel()
    killTimer = nil
  }
}
