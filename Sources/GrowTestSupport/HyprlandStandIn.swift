import Foundation

/// A stand-in for Hyprland's two IPC sockets, because Hyprland is not packaged for Debian 12
/// and cannot run here. It speaks the documented protocol (https://wiki.hypr.land/IPC/):
/// `$XDG_RUNTIME_DIR/hypr/$HYPRLAND_INSTANCE_SIGNATURE/.socket2.sock` writes `EVENT>>DATA\n`
/// lines to every client; `.socket.sock` reads one request per connection (`j/activewindow`,
/// `dispatch …`), answers, and closes, as Hyprland does. The test says what happens; nothing
/// here is Hyprland's behaviour beyond that protocol.
public final class HyprlandStandIn: @unchecked Sendable {
  public let signature = "grow-test-\(UUID().uuidString.prefix(8))"
  public let runtimeDirectory: String
  /// What a plugin sees in a Hyprland session.
  public var environment: [String: String] {
    [
      "XDG_RUNTIME_DIR": runtimeDirectory, "HYPRLAND_INSTANCE_SIGNATURE": signature,
      "WAYLAND_DISPLAY": "wayland-1", "XDG_CURRENT_DESKTOP": "Hyprland",
    ]
  }

  private struct State {
    var eventClients: [Int32] = []
    /// `j/activewindow`'s answer (Hyprland's JSON); `{}` when nothing has focus.
    var activeWindow = "{}"
    var requests: [String] = []
    var answersRequests = true
    /// Seconds each answer waits, as a Hyprland busy elsewhere would make it.
    var answerDelay: TimeInterval = 0
    /// Connections read and never answered, oldest first (closed past `unansweredCap`).
    var unanswered: [Int32] = []
    var dropsEventClients = false
    var eventConnections = 0
    var closed = false
  }
  private let state = LockedBox(State())
  private let eventListener: Int32
  private let requestListener: Int32

  public init() throws {
    runtimeDirectory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-hypr-\(UUID().uuidString)").path
    let base = runtimeDirectory + "/hypr/" + signature
    try FileManager.default.createDirectory(
      atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    eventListener = try UnixListener.listen(at: base + "/.socket2.sock")
    requestListener = try UnixListener.listen(at: base + "/.socket.sock")
    let events = Thread { [self] in acceptEvents() }
    events.start()
    let requests = Thread { [self] in acceptRequests() }
    requests.start()
  }

  deinit {
    state.withLock { state in
      state.closed = true
      for client in state.eventClients + state.unanswered { close(client) }
      state.eventClients = []
      state.unanswered = []
    }
    shutdown(eventListener, Int32(SHUT_RDWR))
    shutdown(requestListener, Int32(SHUT_RDWR))
    close(eventListener)
    close(requestListener)
    try? FileManager.default.removeItem(atPath: runtimeDirectory)
  }

  /// Connections to the event socket accepted so far.
  public var eventConnections: Int { state.withLock { $0.eventConnections } }
  /// Whether the event socket closes each client as soon as it connects (a broken Hyprland).
  public func dropEventClients(_ drops: Bool) {
    state.withLock { $0.dropsEventClients = drops }
  }

  /// How many clients are connected to the event socket.
  public var eventClientCount: Int { state.withLock { $0.eventClients.count } }
  /// The requests received so far, in order.
  public var requests: [String] { state.withLock { $0.requests } }

  /// Sets what `j/activewindow` answers: the focused window, or nothing (nil).
  public func setActiveWindow(
    address: String?, class windowClass: String = "", title: String = "",
    pid: Int = 0
  ) {
    let json =
      address.map {
        let object: [String: Any] = [
          "address": "0x\($0)", "class": windowClass, "initialClass": windowClass,
          "title": title, "pid": pid,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
      } ?? "{}"
    state.withLock { $0.activeWindow = json }
  }

  /// Whether the request socket answers (false: it reads and keeps the connection open, as
  /// a Hyprland busy elsewhere would), and how long each answer waits first.
  public func answerRequests(_ answers: Bool, after delay: TimeInterval = 0) {
    state.withLock { state in
      state.answersRequests = answers
      state.answerDelay = delay
      if answers {
        for client in state.unanswered { close(client) }
        state.unanswered = []
      }
    }
  }

  /// Unanswered connections kept open at most; older ones are closed (without an answer) so
  /// that a client opening them without bound cannot exhaust the stand-in's descriptors.
  public static let unansweredCap = 256

  /// Writes raw bytes to every event client (lines end in `\n`); a client that has not read
  /// for a second is skipped (a partial line may then reach it).
  public func emit(_ text: String) {
    let bytes = Array(text.utf8)
    let clients = state.withLock { $0.eventClients }
    for client in clients {
      _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
  }

  /// Starts focus and title lines for ever new windows (whose pid the client cannot know), as
  /// fast as the socket takes them; the closure returned stops them and says how many focus
  /// changes were sent.
  public func startFocusFlood() -> @Sendable () -> Int {
    let sent = LockedBox(0)
    let stop = GetStatusProbe.flood { [self] in
      let first = sent.current
      var lines = ""
      for step in first..<first + 50 {
        let address = String(step, radix: 16)
        lines += "activewindow>>Game,level \(step)\nactivewindowv2>>\(address)\n"
        lines += "windowtitlev2>>\(address),level \(step)b\n"
      }
      emit(lines)
      sent.withLock { $0 += 50 }
    }
    return {
      stop()
      return sent.current
    }
  }

  /// Drops every event client, as a restarting Hyprland would.
  public func disconnectEventClients() {
    state.withLock { state in
      for client in state.eventClients { close(client) }
      state.eventClients = []
    }
  }

  private func acceptEvents() {
    while true {
      let client = accept(eventListener, nil, nil)
      guard client >= 0 else { return }
      var limit = timeval(tv_sec: 1, tv_usec: 0)
      setsockopt(
        client, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
      let keep = state.withLock { state -> Bool in
        state.eventConnections += 1
        guard !state.closed, !state.dropsEventClients else { return false }
        state.eventClients.append(client)
        return true
      }
      if !keep { close(client) }
    }
  }

  private func acceptRequests() {
    while true {
      let client = accept(requestListener, nil, nil)
      guard client >= 0 else { return }
      var buffer = [UInt8](repeating: 0, count: 8192)
      let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
      let request = String(decoding: buffer[..<max(0, count)], as: UTF8.self)
      let (answer, answers, delay) = state.withLock { state -> (String, Bool, TimeInterval) in
        state.requests.append(request)
        let answer = request == "j/activewindow" ? state.activeWindow : "ok"
        if !state.answersRequests {
          state.unanswered.append(client)
          if state.unanswered.count > Self.unansweredCap { close(state.unanswered.removeFirst()) }
        }
        return (answer, state.answersRequests, state.answerDelay)
      }
      guard answers else { continue }  // left open, never answered
      if delay > 0 { Thread.sleep(forTimeInterval: delay) }
      let bytes = Array(answer.utf8)
      _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      close(client)
    }
  }
}
