import FoundationEssentials
import Glibc
import GrowCore
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// The focused window on Hyprland, from its event socket (`.socket2.sock`: one `EVENT>>DATA`
/// line per event): `activewindow>>CLASS,TITLE` then `activewindowv2>>ADDRESS` say which
/// window has focus (both empty for none), `windowtitlev2>>ADDRESS,TITLE` a new title. The
/// pid comes from `j/activewindow` on the request socket (`.socket.sock`), which Hyprland
/// serves synchronously: each question is a connection of its own, closed at once, with a
/// deadline, so neither side waits on the other.
///
/// Everything a flood of events could make grow is capped: at most one request connection is
/// open (further questions wait in a short queue, a repeated `j/activewindow` is asked once),
/// pids are remembered per window, a batch of events read in one turn tells the plugin only
/// its outcome, a request socket in trouble is logged once per episode, and reconnects back
/// off until a connection stayed up a while.
@MainActor
final class HyprlandWindowSource: WindowSource {
  /// Longest event line taken; a longer one is hostile and ends the connection.
  static let maximumLine = 64 * 1024
  static let requestDeadline: TimeInterval = 1
  static let reconnectDelays: ClosedRange<TimeInterval> = 0.1...5
  /// A connection that lasted this long starts the reconnect delays over.
  static let healthyAfter: TimeInterval = 10
  /// Questions waiting for the request connection; more are dropped (a dispatch is logged).
  static let maximumQueuedRequests = 8
  /// Windows whose pid is remembered; the list starts over when it is full.
  static let maximumKnownPids = 256

  let eventsPath: String
  let requestsPath: String
  var activeWindowFact: Worded { Worded(Message("active window from Hyprland's event socket")) }
  var onWindow: ((DesktopWindow?) -> Void)?
  var onTrouble: ((Worded?) -> Void)?
  var onBlockOutcome: ((Worded?) -> Void)?
  var blockFact: Worded {
    Worded(Message("block = minimize moves the window to the special workspace 'grow'"))
  }

  private let loop: any EventLoop
  private let log: Logger
  private var events: UnixStream?
  /// The one request connection open, if any, and the questions waiting for it.
  private var requestStream: UnixStream?
  private var queuedRequests: [(text: String, done: (String?) -> Void)] = []
  /// Why the request socket failed last; a failure is logged when this changes.
  private var requestTrouble: String?
  /// Pids by window address, from `j/activewindow`.
  private var knownPids: [String: Int] = [:]
  private var reconnectWork: (any Alarm)?
  private var reconnectDelay = reconnectDelays.lowerBound
  private var connectedAt: MonotonicInstant?
  /// From the last `activewindow` line, until its `activewindowv2` names the window.
  private var announced: (windowClass: String, title: String)?
  private var active: DesktopWindow?
  /// What the plugin was last told (see `tell`).
  private var told: DesktopWindow?
  /// Counts `activewindowv2` events, so an answer overtaken by one is not taken for news.
  private var focusEvents = 0
  private var trouble: Worded?
  private var stopped = false

  init(events: String, requests: String, loop: any EventLoop, log: Logger) {
    eventsPath = events
    requestsPath = requests
    self.loop = loop
    self.log = log
    connect()
    // Who has focus already, before any event says.
    askActiveWindow()
  }

  func stop() {
    stopped = true
    reconnectWork?.cancel()
    events?.close()
    events = nil
    requestStream?.close()
    requestStream = nil
    queuedRequests.removeAll()
  }

  func block(_ window: DesktopWindow, _ action: WindowBlock) {
    let address = "address:0x\(window.id)"
    let (dispatch, done) =
      action == .minimize
      ? (
        "movetoworkspacesilent special:grow,\(address)",
        "moved \(window.app) to the special workspace 'grow'"
      )
      // closewindow is Hyprland's polite close (the window's own close request), not a kill.
      : ("closewindow \(address)", "closed \(window.app)")
    request("dispatch \(dispatch)") { [weak self] reply in
      guard let self else { return }
      if reply?.split(whereSeparator: \.isWhitespace) == ["ok"] {
        log.info("\(done) (block = \(action.rawValue))")
        onBlockOutcome?(nil)
      } else {
        log.warning("Hyprland did not run '\(dispatch)' for \(window.app): \(reply ?? "no answer")")
        onBlockOutcome?(
          reply.map {
            Worded(
              Message(
                "Hyprland did not run '{command}' for {app} ({error}): "
                  + "block = {action} only flags windows here"),
              ["command": dispatch, "app": window.app, "error": $0, "action": action.rawValue])
          }
            ?? Worded(
              Message(
                "Hyprland did not answer '{command}' for {app}: "
                  + "block = {action} only flags windows here"),
              ["command": dispatch, "app": window.app, "action": action.rawValue]))
      }
    }
  }

  // MARK: Events

  private func connect() {
    reconnectWork = nil
    guard !stopped else { return }
    do {
      let stream = try UnixStream(path: eventsPath, loop: loop, limit: Self.maximumLine)
      events = stream
      connectedAt = loop.monotonicNow
      stream.onData = { [weak self] buffer in self?.received(&buffer) }
      stream.onClose = { [weak self] error in self?.lost(error) }
      if trouble != nil { report(nil) }
    } catch {
      report(Worded(Message("{error}; trying again"), ["error": "\(error)"]))
      scheduleReconnect()
    }
  }

  private func received(_ buffer: inout [UInt8]) {
    // At most `UnixStream.readPerTurn` bytes arrive per turn; the plugin hears the outcome of
    // their lines once (a title flood is one title per turn).
    defer { tell() }
    var start = 0
    while let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
      let line = String(decoding: buffer[start..<newline], as: UTF8.self)
      start = newline + 1
      handle(line)
      if events == nil { return }
    }
    buffer.removeFirst(start)
  }

  /// One event line; `DATA` fields are comma-separated, and a title may hold commas itself,
  /// so it is always the rest of the line.
  func handle(_ line: String) {
    guard let separator = line.firstRange(of: ">>") else { return }
    let event = line[..<separator.lowerBound]
    let data = String(line[separator.upperBound...])
    switch event {
    case "activewindow":
      let (windowClass, title) = Self.split(data)
      announced = (windowClass, title)
    case "activewindowv2":
      focusEvents += 1
      guard !data.isEmpty else { return publish(nil) }
      let window = DesktopWindow(
        id: data, windowClass: announced?.windowClass ?? "", instance: "",
        title: announced?.title ?? "", pid: knownPids[data])
      announced = nil
      publish(window)
      if window.pid == nil { askActiveWindow() }
    case "windowtitlev2":
      let (address, title) = Self.split(data)
      guard var window = active, window.id == address else { return }
      window.title = title
      publish(window)
    case "windowtitle" where data == active?.id:
      askActiveWindow()
    default:
      break
    }
  }

  private static func split(_ data: String) -> (String, String) {
    guard let comma = data.firstIndex(of: ",") else { return (data, "") }
    return (String(data[..<comma]), String(data[data.index(after: comma)...]))
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

  // MARK: Requests

  /// `j/activewindow`: the focused window's details (its pid, and its title now). The answer
  /// is news only about the window that has focus now, or, when no event has named one since
  /// the question, about who has focus (at start).
  private func askActiveWindow() {
    // One question answers them all: it is asked when the connection is free, and what it
    // says is news about whoever has focus then.
    guard !queuedRequests.contains(where: { $0.text == Self.activeWindowRequest }) else { return }
    let asked = focusEvents
    request(Self.activeWindowRequest) { [weak self] reply in
      guard let self,
        let json = reply.flatMap({
          try? JSONDecoder().decode(HyprlandWindow.self, from: Data($0.utf8))
        }),
        let address = json.address, address.hasPrefix("0x")
      else { return }
      let id = String(address.dropFirst(2))
      if let pid = json.pid {
        if knownPids.count >= Self.maximumKnownPids { knownPids.removeAll() }
        knownPids[id] = pid
      }
      let window = DesktopWindow(
        id: id, windowClass: json.windowClass ?? "", instance: "", title: json.title ?? "",
        pid: json.pid)
      if active?.id == window.id || (active == nil && asked == focusEvents) { publish(window) }
      tell()
    }
  }

  private static let activeWindowRequest = "j/activewindow"

  /// One question on a connection of its own, one connection at a time; `done` gets the whole
  /// answer (Hyprland closes after it), or nil when it did not come within `requestDeadline`.
  private func request(_ text: String, _ done: @escaping (String?) -> Void) {
    guard !stopped else { return }
    guard requestStream == nil else {
      guard queuedRequests.count < Self.maximumQueuedRequests else {
        return requestFailed(
          "Hyprland's request socket has \(queuedRequests.count) questions "
            + "waiting; '\(text)' is not asked", done)
      }
      queuedRequests.append((text, done))
      return
    }
    let stream: UnixStream
    do {
      stream = try UnixStream(path: requestsPath, loop: loop, limit: 1024 * 1024)
    } catch {
      return requestFailed("Hyprland's request socket: \(error)", done)
    }
    requestStream = stream
    var answer: [UInt8] = []
    var finished = false
    var deadline: (any Alarm)?
    let finish: (String?) -> Void = { [weak self] reply in
      guard !finished else { return }
      finished = true
      deadline?.cancel()
      stream.close()
      guard let self else { return }
      if requestStream === stream { requestStream = nil }
      if reply != nil, requestTrouble != nil {
        requestTrouble = nil
        log.info("Hyprland's request socket answers again")
      }
      done(reply)
      if requestStream == nil, !queuedRequests.isEmpty {
        let next = queuedRequests.removeFirst()
        request(next.text, next.done)
      }
    }
    stream.onData = { buffer in
      answer += buffer
      buffer.removeAll()
    }
    stream.onClose = { error in
      finish(error == .closed ? String(decoding: answer, as: UTF8.self) : nil)
    }
    deadline = loop.after(seconds: Self.requestDeadline) { [weak self] in
      guard !finished else { return }
      self?.noteRequestTrouble(
        "Hyprland did not answer '\(text)' within \(DurationText.format(Self.requestDeadline))")
      finish(nil)
    }
    stream.send(Array(text.utf8))
  }

  private func requestFailed(_ why: String, _ done: (String?) -> Void) {
    noteRequestTrouble(why)
    done(nil)
  }

  /// Logs a request socket's trouble once, until it answers again: a flood of events for a
  /// Hyprland that does not answer is one line, not one per event.
  private func noteRequestTrouble(_ why: String) {
    guard requestTrouble == nil else { return }
    requestTrouble = why
    log.warning(why + " (said once until it answers again)")
  }

  // MARK: Losing Hyprland

  private func lost(_ error: StreamError) {
    events = nil
    publish(nil)
    tell()
    guard !stopped else { return }
    report(
      Worded(
        Message("the connection to Hyprland's event socket ended: {error}; reconnecting"),
        ["error": "\(error)"]))
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
    reconnectWork = loop.after(seconds: delay) { [weak self] in self?.connect() }
  }

  private func report(_ problem: Worded?) {
    guard problem != trouble else { return }
    trouble = problem
    if let problem {
      log.warning(problem.english)
    } else {
      log.info("Hyprland's event socket is back")
    }
    onTrouble?(problem)
  }
}

/// `j/activewindow`'s answer: only the fields the plugin reads.
struct HyprlandWindow: Decodable {
  var address: String?
  var windowClass: String?
  var title: String?
  var pid: Int?

  enum CodingKeys: String, CodingKey {
    case address, title, pid
    case windowClass = "class"
  }
}
