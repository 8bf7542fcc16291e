import FoundationEssentials
import Glibc
import GrowCore
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// What a window source tells the wayland plugin, on the loop.
@MainActor
protocol WindowSource: AnyObject {
  /// Where the active window comes from, for the plugin's note.
  var activeWindowFact: Worded { get }
  /// The focused window, or nil when nothing is focused; said again only on a change.
  var onWindow: ((DesktopWindow?) -> Void)? { get set }
  /// Nil while the compositor answers; why not otherwise (stalled, gone, reconnecting).
  var onTrouble: ((Worded?) -> Void)? { get set }
  /// What `block = minimize` does on this compositor, for the plugin's note.
  var blockFact: Worded { get }
  /// Takes the window out of sight or asks it to close, if the compositor allows it; logs
  /// what it did or could not.
  func block(_ window: DesktopWindow, _ action: WindowBlock)
  /// After each block: nil when it worked, else what the compositor did not do, for the note.
  var onBlockOutcome: ((Worded?) -> Void)? { get set }
  func stop()
}

/// The focused window over the i3 IPC, as sway (`$SWAYSOCK`) and i3 (`$I3SOCK`) speak it:
/// subscribes to `window` and `workspace` events; asks GET_TREE when a workspace event or a
/// closed window may have left nothing focused. Replies have a deadline: a stopped compositor
/// shows as not answering, and a dead one is reconnected to, backing off.
@MainActor
final class I3WindowSource: WindowSource {
  /// A question unanswered this long counts as the compositor not answering.
  static let replyDeadline: TimeInterval = 2
  /// Reconnects back off from the first to the last delay, doubling; the delay starts over
  /// only once a connection stayed up `healthyAfter`, so a peer that drops (or is dropped)
  /// at once is not hammered.
  static let reconnectDelays: ClosedRange<TimeInterval> = 0.1...5
  static let healthyAfter: TimeInterval = 10

  let path: String
  /// `sway` or `i3`.
  let compositor: String
  var activeWindowFact: Worded {
    Worded(Message("active window from {compositor} IPC"), ["compositor": compositor])
  }
  var onWindow: ((DesktopWindow?) -> Void)?
  var onTrouble: ((Worded?) -> Void)?
  var onBlockOutcome: ((Worded?) -> Void)?
  var blockFact: Worded { Worded(Message("block = minimize moves the window to the scratchpad")) }

  private let loop: any EventLoop
  private let log: Logger
  private var stream: UnixStream?
  /// Replies come in the order of the questions; each with its handler and when it was sent.
  private var pending: [(type: UInt32, sentAt: MonotonicInstant, handle: ([UInt8]?) -> Void)] = []
  private var deadlineWork: (any Alarm)?
  private var reconnectWork: (any Alarm)?
  private var reconnectDelay = reconnectDelays.lowerBound
  private var connectedAt: MonotonicInstant?
  private var treeAsked = false
  private var treeStale = false
  /// The focused window as the messages so far say, and as the plugin was last told: a
  /// batch of events read in one turn is told once, with its outcome.
  private var active: DesktopWindow?
  private var told: DesktopWindow?
  private var trouble: Worded?
  private var stopped = false

  init(path: String, compositor: String, loop: any EventLoop, log: Logger) {
    self.path = path
    self.compositor = compositor
    self.loop = loop
    self.log = log
  }

  /// Connects; a compositor that is not there yet is tried again, backing off.
  func start() {
    reconnectWork = nil
    guard !stopped else { return }
    let stream: UnixStream
    do {
      stream = try UnixStream(path: path, loop: loop, limit: I3Message.maximumPayload + 64)
    } catch {
      report(Worded(Message("{error}; trying again"), ["error": "\(error)"]))
      return scheduleReconnect()
    }
    self.stream = stream
    connectedAt = loop.monotonicNow
    stream.onData = { [weak self] buffer in self?.received(&buffer) }
    stream.onClose = { [weak self] error in self?.lost(error) }
    ask(I3Message.subscribe, #"["window","workspace","shutdown"]"#) { [weak self] reply in
      guard let self else { return }
      if reply.flatMap({ I3Message.decode(I3Outcome.self, $0) })?.success != true {
        log.warning("\(compositor) refused the window and workspace subscription")
      }
    }
    askTree()
  }

  func stop() {
    stopped = true
    deadlineWork?.cancel()
    reconnectWork?.cancel()
    stream?.close()
    stream = nil
  }

  func block(_ window: DesktopWindow, _ action: WindowBlock) {
    guard Int64(window.id) != nil else { return }
    let done =
      action == .minimize ? "moved \(window.app) to the scratchpad" : "closed \(window.app)"
    let command = I3Command.blocking("[con_id=\(window.id)]", action)
    ask(I3Message.runCommand, command) { [weak self] reply in
      guard let self else { return }
      let result = reply.flatMap { I3Message.decode([I3Outcome].self, $0) }?.first
      if result?.success == true {
        log.info("\(done) (block = \(action.rawValue))")
        onBlockOutcome?(nil)
      } else {
        let why = result?.error ?? "no answer"
        log.warning("\(compositor) did not run '\(command)' for \(window.app): \(why)")
        onBlockOutcome?(
          Worded(
            Message(
              "{compositor} did not run '{command}' for {app} ({error}): "
                + "block = {action} only flags windows here"),
            [
              "compositor": compositor, "command": command, "app": window.app, "error": why,
              "action": action.rawValue,
            ]))
      }
    }
  }

  // MARK: Questions and answers

  private func ask(_ type: UInt32, _ payload: String, _ handle: @escaping ([UInt8]?) -> Void) {
    guard let stream else { return }
    pending.append((type, loop.monotonicNow, handle))
    stream.send(I3Message.frame(type: type, payload))
    armDeadline()
  }

  private func askTree() {
    guard !treeAsked else {
      treeStale = true
      return
    }
    treeAsked = true
    treeStale = false
    ask(I3Message.getTree, "") { [weak self] tree in
      guard let self else { return }
      treeAsked = false
      if treeStale { return askTree() }
      if let tree = tree.flatMap({ I3Message.decode(I3Container.self, $0) }) {
        publish(I3Message.focusedWindow(inTree: tree))
      }
    }
  }

  private func armDeadline() {
    deadlineWork?.cancel()
    deadlineWork = nil
    guard let oldest = pending.first else { return }
    let wait = oldest.sentAt + Self.replyDeadline - loop.monotonicNow
    deadlineWork = loop.after(seconds: max(0, wait)) { [weak self] in
      guard let self, let first = pending.first, first.sentAt == oldest.sentAt else { return }
      report(
        Worded(
          Message("{compositor} has not answered for {duration}; waiting for it"),
          ["compositor": compositor, "duration": DurationText.format(Self.replyDeadline)]))
    }
  }

  private func received(_ buffer: inout [UInt8]) {
    let messages: [(type: UInt32, payload: [UInt8])]
    do {
      messages = try I3Message.take(from: &buffer)
    } catch {
      stream?.close()
      return lost(error)
    }
    // At most `UnixStream.readPerTurn` bytes arrive per turn; whatever they say, the plugin
    // hears the outcome once (only the latest focus matters).
    defer { tell() }
    for message in messages {
      if message.type & 0x8000_0000 != 0 {
        event(message.type, message.payload)
      } else if let index = pending.firstIndex(where: { $0.type == message.type }) {
        let question = pending.remove(at: index)
        question.handle(message.payload)
        if trouble != nil { report(nil) }
        armDeadline()
      }
      if stream == nil { return }
    }
  }

  private func event(_ type: UInt32, _ payload: [UInt8]) {
    switch type {
    case I3Message.windowEvent:
      guard let body = I3Message.decode(I3WindowEvent.self, payload) else { return }
      let window = body.container.flatMap(I3Message.window(fromContainer:))
      switch body.change {
      case "focus":
        publish(window)
      case "title" where window?.id == active?.id:
        publish(window)
      case "close" where window?.id == active?.id:
        askTree()
      default:
        if body.container?.focused == true, window != nil { publish(window) }
      }
    case I3Message.workspaceEvent:
      // Focus moved to a workspace, maybe an empty one: only the tree says what has focus.
      askTree()
    case I3Message.shutdownEvent:
      log.info("\(compositor) is shutting down")
    default:
      break
    }
  }

  private func publish(_ window: DesktopWindow?) {
    active = window
  }

  /// Tells the plugin the focused window if it changed since it was last told.
  private func tell() {
    guard active != told else { return }
    told = active
    onWindow?(active)
  }

  private func report(_ problem: Worded?) {
    guard problem != trouble else { return }
    trouble = problem
    if let problem {
      log.warning(problem.english)
    } else {
      log.info("\(compositor) answers again")
    }
    onTrouble?(problem)
  }

  // MARK: Losing the compositor

  private func lost(_ error: StreamError) {
    stream = nil
    pending.removeAll()
    deadlineWork?.cancel()
    treeAsked = false
    publish(nil)
    tell()
    guard !stopped else { return }
    report(
      Worded(
        Message("the connection to {compositor} ({path}) ended: {error}; reconnecting"),
        ["compositor": compositor, "path": path, "error": "\(error)"]))
    if let connectedAt, loop.monotonicNow - connectedAt >= Self.healthyAfter {
      reconnectDelay = Self.reconnectDelays.lowerBound
    }
    connectedAt = nil
    scheduleReconnect()
  }

  private func scheduleReconnect() {
    guard !stopped, reconnectWork == nil else { return }
    let delay = reconnectDelay
    reconnectDelay = min(delay * 2, Self.reconnectDelays.upperBound)
    reconnectWork = loop.after(seconds: delay) { [weak self] in self?.start() }
  }
}
