import Foundation
import Glibc

/// A stand-in for sway's IPC socket (`$SWAYSOCK`), for what a real sway cannot be made to do:
/// send a reply or event of any size, or events as fast as a socket takes them. It speaks the
/// i3 IPC framing (`"i3-ipc"`, a u32 payload length and a u32 type in the machine's byte
/// order, the JSON payload) and answers SUBSCRIBE, GET_TREE and RUN_COMMAND; what it sends
/// besides is the caller's (`emit`).
public final class SoakSwayPeer: @unchecked Sendable {
  public static let windowEvent: UInt32 = 0x8000_0003
  public static let workspaceEvent: UInt32 = 0x8000_0000
  public static let getTree: UInt32 = 4

  public let directory: String
  public let socketPath: String
  /// What a plugin sees in a sway session. No compositor listens on `WAYLAND_DISPLAY`: the
  /// window source is the IPC alone (away detection is off).
  public var environment: [String: String] {
    [
      "SWAYSOCK": socketPath, "WAYLAND_DISPLAY": directory + "/no-compositor",
      "XDG_CURRENT_DESKTOP": "sway", "I3SOCK": "", "HYPRLAND_INSTANCE_SIGNATURE": "",
    ]
  }

  private struct State {
    var clients: [Int32] = []
    /// GET_TREE's answer: an empty tree unless set (`treeReply`).
    var tree = #"{"id":1,"type":"root","focused":false,"nodes":[],"floating_nodes":[]}"#
    var closed = false
  }
  private let state = LockedBox(State())
  /// One writer at a time per socket: replies (reader threads) and events (`emit`).
  private let writeLock = NSLock()
  private let listener: Int32

  public init() throws {
    directory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-sway-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    socketPath = directory + "/ipc.sock"
    listener = try UnixListener.listen(at: socketPath)
    let thread = Thread { [self] in acceptClients() }
    thread.start()
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

  public var clientCount: Int { state.withLock { $0.clients.count } }

  /// Sets GET_TREE's answer (JSON).
  public func treeReply(_ json: String) { state.withLock { $0.tree = json } }

  /// Sends one message of `type` with `payload` to every client; a client that has read
  /// nothing for a second is skipped, and one left with half a message is dropped. Returns
  /// the clients it reached.
  @discardableResult
  public func emit(type: UInt32, _ payload: [UInt8]) -> Int {
    emit(frames: Self.frame(type: type, payload))
  }

  /// The same for messages already framed (`frame`), back to back.
  @discardableResult
  public func emit(frames message: [UInt8]) -> Int {
    var reached = 0
    for client in state.withLock({ $0.clients }) {
      switch write(message, to: client) {
      case .whole: reached += 1
      case .none: break
      case .partial: drop(client)
      }
    }
    return reached
  }

  /// Drops every client, as a restarting sway would.
  public func disconnectClients() {
    for client in state.withLock({ $0.clients }) { drop(client) }
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
    writeLock.lock()
    defer { writeLock.unlock() }
    var done = 0
    while done < bytes.count {
      let sent = bytes[done...].withUnsafeBytes {
        send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if sent < 0 {
        if errno == EINTR { continue }
        return done == 0 ? .none : .partial
      }
      done += sent
    }
    return .whole
  }

  private func acceptClients() {
    while true {
      let client = accept(listener, nil, nil)
      guard client >= 0 else { return }
      var limit = timeval(tv_sec: 1, tv_usec: 0)
      setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
      let keep = state.withLock { state -> Bool in
        guard !state.closed else { return false }
        state.clients.append(client)
        return true
      }
      guard keep else {
        close(client)
        continue
      }
      let reader = Thread { [self] in serve(client) }
      reader.start()
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
      if write(Self.frame(type: type, Array(answer.utf8)), to: client) != .whole { return }
    }
  }

  private func readMessage(_ client: Int32) -> (UInt32, [UInt8])? {
    guard let header = read(14, from: client), header.starts(with: Array("i3-ipc".utf8)) else {
      return nil
    }
    var length: UInt32 = 0
    var type: UInt32 = 0
    withUnsafeMutableBytes(of: &length) { $0.copyBytes(from: header[6..<10]) }
    withUnsafeMutableBytes(of: &type) { $0.copyBytes(from: header[10..<14]) }
    guard length < 1 << 20, let payload = read(Int(length), from: client) else { return nil }
    return (type, payload)
  }

  private func read(_ count: Int, from client: Int32) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
      let got = bytes[done...].withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
      if got < 0, errno == EINTR { continue }
      if got <= 0 { return nil }
      done += got
    }
    return bytes
  }
}
