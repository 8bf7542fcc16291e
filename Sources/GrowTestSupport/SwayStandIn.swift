import Foundation

/// A stand-in for sway's IPC socket (`$SWAYSOCK`), to play a hostile or broken compositor:
/// it speaks the i3 IPC wire format (`"i3-ipc"`, u32 length, u32 type, JSON) as sway does,
/// answers SUBSCRIBE, GET_TREE (one focused window, `setFocused`) and RUN_COMMAND, and writes
/// whatever events the test says to every client. Nothing here is sway's behaviour beyond
/// that protocol; a real sway runs in WaylandSession.
public final class SwayStandIn: @unchecked Sendable {
  public static let windowEvent: UInt32 = 0x8000_0003
  public let directory: String
  public var socketPath: String { directory + "/sway-ipc.sock" }
  /// What a daemon sees in a sway session without a Wayland display of its own (so the
  /// wayland plugin runs with the stand-in as its window source, and the x11 plugin stands
  /// down).
  public var environment: [String: String] {
    [
      "SWAYSOCK": socketPath, "WAYLAND_DISPLAY": "grow-no-display", "XDG_CURRENT_DESKTOP": "sway",
      "DISPLAY": "",
    ]
  }

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

  public init() throws {
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

  /// Writes one message to every client; false when there was none or a write failed.
  @discardableResult
  public func emit(type: UInt32 = windowEvent, _ payload: String) -> Bool {
    emit(type: type, bytes: Array(payload.utf8))
  }

  @discardableResult
  public func emit(type: UInt32 = windowEvent, bytes payload: [UInt8]) -> Bool {
    let clients = state.withLock { $0.clients }
    var sent = false
    for client in clients where write(Self.frame(type: type, payload), to: client) { sent = true }
    return sent
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

  static func frame(type: UInt32, _ payload: [UInt8]) -> [UInt8] {
    var bytes = Array("i3-ipc".utf8)
    withUnsafeBytes(of: UInt32(payload.count)) { bytes += $0 }
    withUnsafeBytes(of: type) { bytes += $0 }
    return bytes + payload
  }

  private func write(_ bytes: [UInt8], to client: Int32) -> Bool {
    writing.lock()
    defer { writing.unlock() }
    var offset = 0
    while offset < bytes.count {
      let count = bytes[offset...].withUnsafeBytes {
        send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { return false }
      offset += count
    }
    return true
  }

  private func accept() {
    while true {
      let client = Glibc.accept(listener, nil, nil)
      guard client >= 0 else { return }
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
      state.withLock { $0.clients.removeAll { $0 == client } }
      close(client)
    }
    while let (type, _) = readMessage(client) {
      let answer: String
      switch type {
      case 2: answer = #"{"success":true}"#
      case 4: answer = state.withLock { $0.tree }
      case 0: answer = #"[{"success":true}]"#
      default: answer = "{}"
      }
      guard write(Self.frame(type: type, Array(answer.utf8)), to: client) else { return }
    }
  }

  private func readMessage(_ client: Int32) -> (UInt32, [UInt8])? {
    guard let header = read(client, 14) else { return nil }
    let length = header[6..<10].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    let type = header[10..<14].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    guard let payload = read(client, Int(length)) else { return nil }
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
