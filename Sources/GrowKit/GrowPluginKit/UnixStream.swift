import FoundationEssentials
import Glibc
import GrowCore
import GrowLoop

/// Why a compositor's or window manager's socket cannot be used.
@_spi(GrowBuiltIn) public enum StreamError: Error, Equatable, CustomStringConvertible {
  case cannotConnect(path: String, reason: String)
  /// The peer sent more than a message may hold, or bytes that are not its protocol.
  case malformed(String)
  case closed

  public var description: String {
    switch self {
    case .cannotConnect(let path, let reason): "cannot connect to \(path): \(reason)"
    case .malformed(let what): what
    case .closed: "the compositor closed the connection"
    }
  }
}

/// A client end of a Unix stream socket on the daemon's loop: connects without waiting,
/// reads when the loop says the socket is readable, writes what the socket takes and keeps
/// the rest until it is writable again. Nothing here blocks; both buffers are bounded, so a
/// peer that floods or stops reading costs at most `limit` bytes each way before the
/// connection is dropped.
///
/// Shared by the built-in plugins that talk to a window manager's socket (the wayland plugin's
/// compositor sources, the x11 plugin's i3 IPC), hence in the kit as `@_spi(GrowBuiltIn)`.
@MainActor
@_spi(GrowBuiltIn) public final class UnixStream {
  public let path: String
  /// Most bytes kept unread or unsent; beyond that the connection is dropped as hostile.
  public let limit: Int
  /// Most bytes read per turn of the loop, so one flood does not hold it: what they hold is
  /// decoded on the loop, and a turn should cost a few milliseconds at most (64 KiB of
  /// Hyprland's lines took a debug build 30–40 ms, and GetStatus waited that long behind each).
  public static let readPerTurn = 16 * 1024

  private let loop: any EventLoop
  private var descriptor: Int32
  private var watch: (any DescriptorWatch)?
  private var outgoing: [UInt8] = []
  public private(set) var isClosed = false
  /// Called with what arrived; the receiver takes what it can parse off the front.
  public var onData: ((inout [UInt8]) -> Void)?
  /// Called once when the connection ends (peer closed, error, or a flood).
  public var onClose: ((StreamError) -> Void)?
  private var incoming: [UInt8] = []

  public init(path: String, loop: any EventLoop, limit: Int) throws(StreamError) {
    self.path = path
    self.loop = loop
    self.limit = limit
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw .cannotConnect(path: path, reason: "the path is too long for a socket")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    descriptor = socket(
      AF_UNIX,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard descriptor >= 0 else {
      throw .cannotConnect(path: path, reason: String(cString: strerror(errno)))
    }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    // A Unix socket whose backlog is full says EAGAIN: writable once accepted.
    if connected != 0, errno != EAGAIN, errno != EINPROGRESS {
      let reason = String(cString: strerror(errno))
      Glibc.close(descriptor)
      throw .cannotConnect(path: path, reason: reason)
    }
    watch = loop.watch(descriptor, for: connected == 0 ? .readable : [.readable, .writable]) {
      [weak self] readiness in
      self?.ready(readiness)
    }
  }

  /// Queues `bytes` and writes what the socket takes now.
  public func send(_ bytes: [UInt8]) {
    guard !isClosed else { return }
    guard outgoing.count + bytes.count <= limit else {
      return end(.malformed("the compositor does not read what it is sent"))
    }
    outgoing += bytes
    writeOut()
  }

  public func close() {
    guard !isClosed else { return }
    isClosed = true
    watch?.cancel()
    watch = nil
    Glibc.close(descriptor)
    descriptor = -1
  }

  private func end(_ error: StreamError) {
    guard !isClosed else { return }
    close()
    onClose?(error)
  }

  private func ready(_ readiness: FileWatcher.Readiness) {
    if readiness.contains(.writable) { writeOut() }
    if readiness.contains(.readable) { readIn() }
  }

  private func writeOut() {
    while !outgoing.isEmpty, !isClosed {
      let count = outgoing.withUnsafeBytes {
        Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if count > 0 {
        outgoing.removeFirst(count)
      } else if count < 0, errno == EINTR {
        continue
      } else if count < 0, errno == EAGAIN {
        break
      } else {
        return end(.closed)
      }
    }
    watch?.interest = outgoing.isEmpty ? .readable : [.readable, .writable]
  }

  private func readIn() {
    var buffer = [UInt8](repeating: 0, count: Self.readPerTurn)
    var taken = 0
    while taken < Self.readPerTurn, !isClosed {
      let count = buffer.withUnsafeMutableBytes {
        Glibc.recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
      }
      if count > 0 {
        taken += count
        incoming += buffer[..<count]
        onData?(&incoming)
        if isClosed { return }
        // What the receiver left is a message still arriving; it may not grow past the limit.
        if incoming.count > limit {
          return end(.malformed("a message from the compositor is larger than \(limit) bytes"))
        }
      } else if count < 0, errno == EINTR {
        continue
      } else if count < 0, errno == EAGAIN {
        return
      } else {
        return end(.closed)
      }
    }
    // More may be waiting: the loop's watch is level-triggered, so it calls again after
    // whatever else it has to do.
  }
}
