import Foundation

/// A stand-in for sway's IPC socket (`$SWAYSOCK`), to play a hostile or broken compositor, for
/// what a real sway cannot be made to do: send a reply or event of any size, or events as fast
/// as a socket takes them. It speaks the i3 IPC wire format (`"i3-ipc"`, a u32 payload length
/// and a u32 type in the machine's byte order, the JSON payload) as sway does, answers
/// SUBSCRIBE, GET_TREE (one focused window, `setFocused`, or any JSON, `treeReply`) and
/// RUN_COMMAND, and writes whatever events the caller says to every client. Nothing here is
/// sway's behaviour beyond that protocol; a real sway runs in WaylandSession. The tests
/// (HostilePeerTests), `make bench` and the soak's hostile sway peer share it.
public final class SwayStandIn: @unchecked Sendable {
  public static let windowEvent: UInt32 = 0x8000_0003
  public static let workspaceEvent: UInt32 = 0x8000_0000
  public static let getTree: UInt32 = 4
  public let directory: String
  public var socketPath: String { directory + "/sway-ipc.sock" }
  /// What a daemon sees in a sway session without a Wayland display of its own (so the
  /// wayland plugin runs with the stand-in as its window source, away detection off, and the
  /// x11 plugin stands down), keeping the X display for the rest of the desktop (dunst).
  public var sessionEnvironment: [String: String] {
    [
      "SWAYSOCK": socketPath, "WAYLAND_DISPLAY": directory + "/no-compositor",
      "XDG_CURRENT_DESKTOP": "sway", "I3SOCK": "", "HYPRLAND_INSTANCE_SIGNATURE": "",
    ]
  }
  /// The same without an X display at all.
  public var environment: [String: String] { sessionEnvironment.merging(["DISPLAY": ""]) { $1 } }

  private struct State {
    var clients: [Int32] = []
    var connections = 0
    var tree = SwayStandIn.tree(focused: nil)
    var closed = false
  }
  private let state = LockedBox(State())
  /// Held while one message is written, so a reply and an event never interleave.
  private let writing = NSLock()
  private let listener: Int32
  /// See `init`.
  private let sendTimeout: TimeInterval?

  /// - Parameter sendTimeout: nil: a write waits until the client reads it all. With a
  ///   timeout (the soak's peers, which must never hang on a daemon that stopped reading), a
  ///   client that read nothing for that long is skipped, and one left with half a message is
  ///   dropped, as a compositor would.
  public init(sendTimeout: TimeInterval? = nil) throws {
    self.sendTimeout = sendTimeout
    directory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-sway-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    listener = try UnixListener.listen(at: directory + "/sway-ipc.sock")
    Thread { [self] in accept() }.start()
  }

  deinit {
    state.withLock { state in
      state.closed = true
      for client in state.clients { shutdown(client, Int32(SHUT_RDWR)) }
    }
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// Clients connected now, and connections accepted so far.
  public var clientCount: Int { state.withLock { $0.clients.count } }
  public var connections: Int { state.withLock { $0.connections } }

  /// Sets the window GET_TREE says has focus (nil: an empty workspace).
  public func setFocused(id: Int, appID: String, title: String) {
    state.withLock {
      $0.tree = Self.tree(focused: Self.container(id: id, appID: appID, title: title))
    }
  }

  /// A `window` event's JSON, as sway sends it (the fields Grow reads, and a few it does not).
  public static func windowEventJSON(change: String, id: Int, appID: String, title: String)
    -> String
  {
    #"{"change":"\#(change)","container":\#(container(id: id, appID: appID, title: title))}"#
  }

  /// Sets GET_TREE's answer to any JSON (`setFocused` for a well-formed one).
  public func treeReply(_ json: String) { state.withLock { $0.tree = json } }

  /// Writes one message to every client; false when there was none or a write failed.
  @discardableResult
  public func emit(type: UInt32 = windowEvent, _ payload: String) -> Bool {
    emit(type: type, bytes: Array(payload.utf8))
  }

  @discardableResult
  public func emit(type: UInt32 = windowEvent, bytes payload: [UInt8]) -> Bool {
    emit(frames: Self.frame(type: type, payload)) > 0
  }

  /// Writes messages already framed (`frame`), back to back, to every client; returns the
  /// clients it reached (see `init`'s sendTimeout for the ones it did not).
  @discardableResult
  public func emit(frames message: [UInt8]) -> Int {
    var reached = 0
    for client in state.withLock({ $0.clients }) {
      switch write(message, to: client) {
      case .whole: reached += 1
      case .none: break
      case .partial: if sendTimeout != nil { drop(client) }
      }
    }
    return reached
  }

  /// Drops every client, as a restarting sway would.
  public func disconnectClients() {
    for client in state.withLock({ $0.clients }) { drop(client) }
  }

  /// Starts focus events switching between two windows, as fast as the socket takes them;
  /// the closure returned stops them and says how many were sent.
  public func startFocusFlood() -> @Sendable () -> Int {
    let sent = LockedBox(0)
    let events = (0..<2).map {
      Array(
        Self.windowEventJSON(
          change: "focus", id: 100 + $0, appID: "App\($0)", title: "window \($0)"
        )
        .utf8)
    }
    let stop = GetStatusProbe.flood { [self] in
      if emit(bytes: events[sent.current % 2]) { sent.withLock { $0 += 1 } }
    }
    return {
      stop()
      return sent.current
    }
  }

  /// Starts sending a focus event of 4 MiB − 100 B (a title of 4 MiB) to whoever connects,
  /// again and again; the closure returned stops it.
  public func startHugeMessages() -> @Sendable () -> Void {
    let title = String(repeating: "x", count: 4 * 1024 * 1024 - 100 - 200)
    let huge = Array(
      Self.windowEventJSON(change: "focus", id: 7, appID: "Game", title: title).utf8)
    return GetStatusProbe.flood { [self] in
      if !emit(bytes: huge) { Thread.sleep(forTimeInterval: 0.01) }
    }
  }

  private static func container(id: Int, appID: String, title: String) -> String {
    let name = String(
      decoding: (try? JSONEncoder().encode(title)) ?? Data(#""""#.utf8), as: UTF8.self)
    return #"{"id":\#(id),"type":"con","app_id":"\#(appID)","name":\#(name),"pid":4242,"#
      + #""focused":true,"shell":"xdg_shell","nodes":[],"floating_nodes":[]}"#
  }

  private static func tree(focused: String?) -> String {
    let workspace =
      #"{"id":3,"type":"workspace","name":"1","focused":\#(focused == nil),"#
      + #""nodes":[\#(focused ?? "")],"floating_nodes":[]}"#
    return #"{"id":1,"type":"root","name":"root","nodes":[\#(workspace)],"floating_nodes":[]}"#
  }

  public static func frame(type: UInt32, _ payload: [UInt8]) -> [UInt8] {
    var bytes = Array("i3-ipc".utf8)
    withUnsafeBytes(of: UInt32(payload.count)) { bytes += $0 }
    withUnsafeBytes(of: type) { bytes += $0 }
    return bytes + payload
  }

  private func drop(_ client: Int32) {
    let mine = state.withLock { state -> Bool in
      guard let index = state.clients.firstIndex(of: client) else { return false }
      state.clients.remove(at: index)
      return true
    }
    // The reader thread closes it when recv sees the shutdown.
    if mine { shutdown(client, Int32(SHUT_RDWR)) }
  }

  private enum Written { case whole, none, partial }

  private func write(_ bytes: [UInt8], to client: Int32) -> Written {
    writing.lock()
    defer { writing.unlock() }
    var offset = 0
    while offset < bytes.count {
      let count = bytes[offset...].withUnsafeBytes {
        send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { return offset == 0 ? .none : .partial }
      offset += count
    }
    return .whole
  }

  private func accept() {
    while true {
      let client = Glibc.accept(listener, nil, nil)
      guard client >= 0 else { return }
      if let sendTimeout {
        var limit = timeval(
          tv_sec: Int(sendTimeout),
          tv_usec: Int((sendTimeout - sendTimeout.rounded(.down)) * 1_000_000))
        setsockopt(
          client, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
      }
      let keep = state.withLock { state -> Bool in
        guard !state.closed else { return false }
        state.clients.append(client)
        state.connections += 1
        return true
      }
      guard keep else {
        close(client)
        continue
      }
      Thread { [self] in serve(client) }.start()
    }
  }

  /// Answers the client's questions until it goes.
  private func serve(_ client: Int32) {
    defer {
      drop(client)
      close(client)
    }
    while let (type, _) = readMessage(client) {
      let answer: String
      switch type {
      case 2: answer = #"{"success":true}"#  // SUBSCRIBE
      case Self.getTree: answer = state.withLock { $0.tree }
      case 0: answer = #"[{"success":true}]"#  // RUN_COMMAND
      default: answer = "{}"
      }
      guard write(Self.frame(type: type, Array(answer.utf8)), to: client) == .whole else {
        return
      }
    }
  }

  private func readMessage(_ client: Int32) -> (UInt32, [UInt8])? {
    guard let header = read(client, 14), header.starts(with: Array("i3-ipc".utf8)) else {
      return nil
    }
    let length = header[6..<10].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    let type = header[10..<14].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    // Grow's requests are small: a bigger length is a broken client, not a request.
    guard length < 1 << 20, let payload = read(client, Int(length)) else { return nil }
    return (type, payload)
  }

  private func read(_ client: Int32, _ count: Int) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    var offset = 0
    while offset < count {
      let got = bytes[offset...].withUnsafeMutableBytes {
        recv(client, $0.baseAddress, $0.count, 0)
      }
      if got < 0, errno == EINTR { continue }
      guard got > 0 else { return nil }
      offset += got
    }
    return bytes
  }
}
