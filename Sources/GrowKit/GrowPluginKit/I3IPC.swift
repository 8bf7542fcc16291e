import FoundationEssentials
import Glibc
import GrowCore
import GrowLoop

/// The i3 IPC wire format, which sway speaks too: `"i3-ipc"`, a u32 payload length, a u32
/// message type (both in the machine's byte order), then the JSON payload. Events have the
/// high bit of the type set. Shared by the wayland plugin (sway, i3 as `$I3SOCK`) and the x11
/// plugin (i3 found through its root window), hence in the kit as `@_spi(GrowBuiltIn)`.
@_spi(GrowBuiltIn) public enum I3Message {
  public static let magic = Array("i3-ipc".utf8)
  public static let headerSize = 14
  /// Largest payload taken: a GET_TREE of a big session is a few hundred KiB, a window event
  /// a few KiB (titles are cut later, at `DesktopWindow.maximumTitleBytes`); anything past
  /// this is hostile or broken, and the connection is dropped as soon as the header says so,
  /// rather than the memory and the loop's time taken to read and decode it.
  public static let maximumPayload = 1024 * 1024

  public static let runCommand: UInt32 = 0
  public static let subscribe: UInt32 = 2
  public static let getTree: UInt32 = 4
  public static let workspaceEvent: UInt32 = 0x8000_0000
  public static let windowEvent: UInt32 = 0x8000_0003
  public static let shutdownEvent: UInt32 = 0x8000_0006

  public static func frame(type: UInt32, _ payload: String) -> [UInt8] {
    let body = Array(payload.utf8)
    var bytes = magic
    withUnsafeBytes(of: UInt32(body.count)) { bytes += $0 }
    withUnsafeBytes(of: type) { bytes += $0 }
    return bytes + body
  }

  /// Takes the complete messages off the front of `buffer`, leaving a partial one. Throws
  /// when the bytes are not i3 IPC or a message claims more than `maximumPayload`.
  public static func take(from buffer: inout [UInt8]) throws(StreamError) -> [(
    type: UInt32, payload: [UInt8]
  )] {
    var messages: [(UInt32, [UInt8])] = []
    var start = 0
    while buffer.count - start >= headerSize {
      guard buffer[start..<start + magic.count].elementsEqual(magic) else {
        throw .malformed("the compositor's IPC socket sent bytes that are not i3 IPC")
      }
      let length = Int(word(buffer, at: start + 6))
      let type = word(buffer, at: start + 10)
      guard length <= maximumPayload else {
        throw .malformed(
          "the compositor's IPC socket announced a \(length)-byte message; "
            + "more than \(maximumPayload) bytes is not taken")
      }
      guard buffer.count - start - headerSize >= length else { break }
      let body = start + headerSize
      messages.append((type, Array(buffer[body..<body + length])))
      start = body + length
    }
    buffer.removeFirst(start)
    return messages
  }

  private static func word(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    var value: UInt32 = 0
    withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes[offset..<offset + 4]) }
    return value
  }

  /// The window a sway/i3 container describes: `app_id` for native Wayland windows,
  /// `window_properties` (WM_CLASS) for X11 and Xwayland ones; nil for a container that
  /// holds no window (a workspace, a split).
  public static func window(fromContainer container: I3Container) -> DesktopWindow? {
    guard let id = container.id else { return nil }
    let properties = container.windowProperties
    let appID = container.appID
    guard appID != nil || properties != nil else { return nil }
    return DesktopWindow(
      id: String(id),
      windowClass: appID ?? properties?.windowClass ?? "",
      instance: appID == nil ? properties?.instance ?? "" : "",
      title: container.name ?? properties?.title ?? "", pid: container.pid)
  }

  /// The focused window in a GET_TREE reply, or nil when the focus is on a workspace (the
  /// last window closed) or an output. The focused node is the one marked `focused`.
  public static func focusedWindow(inTree tree: I3Container) -> DesktopWindow? {
    var stack = [tree]
    // A tree is the compositor's own; still, a deep or wide one costs at most this many nodes.
    var visited = 0
    while let node = stack.popLast(), visited < 100_000 {
      visited += 1
      if node.focused == true { return window(fromContainer: node) }
      stack += node.nodes ?? []
      stack += node.floatingNodes ?? []
    }
    return nil
  }

  /// A message's JSON as `type`; nil when it is not that shape (a broken or hostile peer).
  public static func decode<T: Decodable>(_ type: T.Type, _ payload: [UInt8]) -> T? {
    try? JSONDecoder().decode(type, from: Data(payload))
  }
}

/// A node of sway's or i3's tree, as GET_TREE and window events describe it: only the fields
/// the plugin reads, decoded into types (a field of another type makes the message unusable,
/// and it is ignored).
@_spi(GrowBuiltIn) public struct I3Container: Decodable, Equatable, Sendable {
  public var id: Int64?
  public var appID: String?
  public var name: String?
  public var pid: Int?
  public var focused: Bool?
  public var windowProperties: Properties?
  public var nodes: [I3Container]?
  public var floatingNodes: [I3Container]?

  public struct Properties: Decodable, Equatable, Sendable {
    public var windowClass: String?
    public var instance: String?
    public var title: String?

    enum CodingKeys: String, CodingKey {
      case windowClass = "class"
      case instance, title
    }
  }

  enum CodingKeys: String, CodingKey {
    case id, name, pid, focused, nodes
    case appID = "app_id"
    case windowProperties = "window_properties"
    case floatingNodes = "floating_nodes"
  }
}

/// A `window` event: what changed (`focus`, `title`, `close`, `new`) and the container.
@_spi(GrowBuiltIn) public struct I3WindowEvent: Decodable, Sendable {
  public var change: String?
  public var container: I3Container?
}

/// A reply to SUBSCRIBE, or one entry of a RUN_COMMAND reply.
@_spi(GrowBuiltIn) public struct I3Outcome: Decodable, Sendable {
  public var success: Bool?
  public var error: String?
}

/// Why a command sent over the i3 IPC did not do what it asked.
@_spi(GrowBuiltIn) public enum I3CommandError: Error, Equatable, CustomStringConvertible {
  /// The socket could not be reached or the connection broke before the answer.
  case connection(StreamError)
  /// The window manager answered that it did not run the command, with its reason.
  case refused(String)
  /// No answer within the deadline: the window manager is stopped or hung.
  case noAnswer(after: TimeInterval)

  public var description: String {
    switch self {
    case .connection(let error): "\(error)"
    case .refused(let why): "it refused: \(why)"
    case .noAnswer(let seconds):
      "no answer within \(DurationText.format(seconds)) (is the window manager stopped?)"
    }
  }
}

/// One RUN_COMMAND on a connection of its own, closed once answered or at the deadline: for a
/// plugin that only gives the odd order (the x11 plugin under i3) and keeps no connection
/// open. Nothing waits: the answer comes on the loop, through `done`, exactly once.
@MainActor
@_spi(GrowBuiltIn) public final class I3Command {
  public static let standardDeadline: TimeInterval = 2

  private var stream: UnixStream?
  private var deadlineWork: (any Alarm)?
  private var done: ((Result<Void, I3CommandError>) -> Void)?

  /// The command's text for a flagged window: `criteria` picks it (`[con_id=12]` on sway and
  /// i3's own containers, `[id=0x…]` for an X window id under i3).
  public static func blocking(_ criteria: String, _ action: WindowBlock) -> String {
    switch action {
    case .minimize: "\(criteria) move scratchpad"
    // `kill` is i3's polite close: WM_DELETE_WINDOW where the window takes it (its "save?"
    // question still comes), xdg_toplevel.close on sway; `kill client` would not ask.
    case .close: "\(criteria) kill"
    }
  }

  /// Sends `command` to the i3 or sway listening on `socket`; `done` says whether it ran.
  public static func run(
    _ command: String, socket: String, loop: any EventLoop,
    deadline: TimeInterval = standardDeadline,
    done: @escaping (Result<Void, I3CommandError>) -> Void
  ) {
    let runner = I3Command()
    runner.done = done
    let stream: UnixStream
    do {
      stream = try UnixStream(path: socket, loop: loop, limit: I3Message.maximumPayload + 64)
    } catch {
      return runner.finish(.failure(.connection(error)))
    }
    runner.stream = stream
    // The closures keep the runner alive until `finish` drops them.
    stream.onData = { buffer in runner.received(&buffer) }
    stream.onClose = { error in runner.finish(.failure(.connection(error))) }
    runner.deadlineWork = loop.after(seconds: deadline) {
      runner.finish(.failure(.noAnswer(after: deadline)))
    }
    stream.send(I3Message.frame(type: I3Message.runCommand, command))
  }

  private func received(_ buffer: inout [UInt8]) {
    let messages: [(type: UInt32, payload: [UInt8])]
    do {
      messages = try I3Message.take(from: &buffer)
    } catch {
      return finish(.failure(.connection(error)))
    }
    guard let reply = messages.first(where: { $0.type == I3Message.runCommand }) else { return }
    let outcome = I3Message.decode([I3Outcome].self, reply.payload)?.first
    if outcome?.success == true {
      finish(.success(()))
    } else {
      finish(.failure(.refused(outcome?.error ?? "an answer that is not a command result")))
    }
  }

  private func finish(_ result: Result<Void, I3CommandError>) {
    guard let done else { return }
    self.done = nil
    deadlineWork?.cancel()
    deadlineWork = nil
    stream?.onData = nil
    stream?.onClose = nil
    stream?.close()
    stream = nil
    done(result)
  }
}
