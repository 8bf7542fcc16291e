import FoundationEssentials
import Glibc
import GrowCore
import GrowLoop
import GrowPluginKit

/// The focused window on Hyprland, from its event socket (`.socket2.sock`: one `EVENT>>DATA`
/// line per event): `activewindow>>CLASS,TITLE` then `activewindowv2>>ADDRESS` say which
/// window has focus (both empty for none), `windowtitlev2>>ADDRESS,TITLE` a new title. The
/// pid comes from `j/activewindow` on the request socket (`.socket.sock`), which Hyprland
/// serves synchronously: each question is a connection of its own, closed at once, with a
/// deadline, so neither side waits on the other.
@MainActor
final class HyprlandWindowSource: WindowSource {
  /// Longest event line taken; a longer one is hostile and ends the connection.
  static let maximumLine = 64 * 1024
  static let requestDeadline: TimeInterval = 1
  static let reconnectDelays: ClosedRange<TimeInterval> = 0.1...5

  let eventsPath: String
  let requestsPath: String
  var name: String { "Hyprland's event socket" }
  var onWindow: ((DesktopWindow?) -> Void)?
  var onTrouble: ((String?) -> Void)?
  var blockFact: String { "block = minimize moves the window to the special workspace 'grow'" }

  private let loop: any EventLoop
  private let log: Logger
  private var events: UnixStream?
  private var requestStreams: [ObjectIdentifier: UnixStream] = [:]
  private var reconnectWork: (any Alarm)?
  private var reconnectDelay = reconnectDelays.lowerBound
  /// From the last `activewindow` line, until its `activewindowv2` names the window.
  private var announced: (windowClass: String, title: String)?
  private var active: DesktopWindow?
  /// Counts `activewindowv2` events, so an answer overtaken by one is not taken for news.
  private var focusEvents = 0
  private var trouble: String?
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
    for stream in requestStreams.values { stream.close() }
    requestStreams.removeAll()
  }

  func block(_ window: DesktopWindow) {
    request("dispatch movetoworkspacesilent special:grow,address:0x\(window.id)") {
      [weak self] reply in
      guard let self else { return }
      if reply?.trimming(while: \.isWhitespace) == "ok" {
        log.info("moved \(window.app) to the special workspace 'grow' (block = minimize)")
      } else {
        log.warning("Hyprland did not move \(window.app) away: \(reply ?? "no answer")")
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
      stream.onData = { [weak self] buffer in self?.received(&buffer) }
      stream.onClose = { [weak self] error in self?.lost(error) }
      if trouble != nil { report(nil) }
    } catch {
      report("\(error); trying again")
      scheduleReconnect()
    }
  }

  private func received(_ buffer: inout [UInt8]) {
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
        title: announced?.title ?? "", pid: active?.id == data ? active?.pid : nil)
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
    guard window != active else { return }
    active = window
    onWindow?(window)
  }

  // MARK: Requests

  /// `j/activewindow`: the focused window's details (its pid, and its title now). The answer
  /// is news only about the window that has focus now, or, when no event has named one since
  /// the question, about who has focus (at start).
  private func askActiveWindow() {
    let asked = focusEvents
    request("j/activewindow") { [weak self] reply in
      guard let self, let reply,
        let json = LooseJSON.parse(Array(reply.utf8)) as? [String: Any],
        let address = json["address"] as? String, address.hasPrefix("0x")
      else { return }
      let window = DesktopWindow(
        id: String(address.dropFirst(2)), windowClass: json["class"] as? String ?? "",
        instance: "", title: json["title"] as? String ?? "",
        pid: json["pid"] as? Int)
      if active?.id == window.id || (active == nil && asked == focusEvents) { publish(window) }
    }
  }

  /// One question on a connection of its own; `done` gets the whole answer (Hyprland closes
  /// after it), or nil when it did not come within `requestDeadline`.
  private func request(_ text: String, _ done: @escaping (String?) -> Void) {
    guard !stopped else { return }
    let stream: UnixStream
    do {
      stream = try UnixStream(path: requestsPath, loop: loop, limit: 1024 * 1024)
    } catch {
      log.warning("Hyprland's request socket: \(error)")
      return done(nil)
    }
    let key = ObjectIdentifier(stream)
    requestStreams[key] = stream
    var answer: [UInt8] = []
    var finished = false
    var deadline: (any Alarm)?
    let finish: (String?) -> Void = { [weak self] reply in
      guard !finished else { return }
      finished = true
      deadline?.cancel()
      stream.close()
      self?.requestStreams[key] = nil
      done(reply)
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
      self?.log.warning("Hyprland did not answer '\(text)' within \(Self.requestDeadline)s")
      finish(nil)
    }
    stream.send(Array(text.utf8))
  }

  // MARK: Losing Hyprland

  private func lost(_ error: StreamError) {
    events = nil
    publish(nil)
    guard !stopped else { return }
    report("the connection to Hyprland's event socket ended: \(error); reconnecting")
    reconnectDelay = Self.reconnectDelays.lowerBound
    scheduleReconnect()
  }

  private func scheduleReconnect() {
    guard !stopped, reconnectWork == nil else { return }
    let delay = reconnectDelay
    reconnectDelay = min(delay * 2, Self.reconnectDelays.upperBound)
    reconnectWork = loop.after(seconds: delay) { [weak self] in self?.connect() }
  }

  private func report(_ problem: String?) {
    guard problem != trouble else { return }
    trouble = problem
    if let problem { log.warning(problem) } else { log.info("Hyprland's event socket is back") }
    onTrouble?(problem)
  }
}
