import FoundationEssentials
import Glibc
@_spi(GrowBuiltIn) import GrowPluginKit

/// The i3 IPC wire format, which sway speaks too: `"i3-ipc"`, a u32 payload length, a u32
/// message type (both in the machine's byte order), then the JSON payload. Events have the
/// high bit of the type set.
enum I3Message {
  static let magic = Array("i3-ipc".utf8)
  static let headerSize = 14
  /// Largest payload taken: a GET_TREE of a big session is a few hundred KiB, a window event
  /// a few KiB (titles are cut later, at `DesktopWindow.maximumTitleBytes`); anything past
  /// this is hostile or broken, and the connection is dropped as soon as the header says so,
  /// rather than the memory and the loop's time taken to read and decode it.
  static let maximumPayload = 1024 * 1024

  static let runCommand: UInt32 = 0
  static let subscribe: UInt32 = 2
  static let getTree: UInt32 = 4
  static let workspaceEvent: UInt32 = 0x8000_0000
  static let windowEvent: UInt32 = 0x8000_0003
  static let shutdownEvent: UInt32 = 0x8000_0006

  static func frame(type: UInt32, _ payload: String) -> [UInt8] {
    let body = Array(payload.utf8)
    var bytes = magic
    withUnsafeBytes(of: UInt32(body.count)) { bytes += $0 }
    withUnsafeBytes(of: type) { bytes += $0 }
    return bytes + body
  }

  /// Takes the complete messages off the front of `buffer`, leaving a partial one. Throws
  /// when the bytes are not i3 IPC or a message claims more than `maximumPayload`.
  static func take(from buffer: inout [UInt8]) throws(StreamError) -> [(
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
  static func window(fromContainer container: I3Container) -> DesktopWindow? {
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
  static func focusedWindow(inTree tree: I3Container) -> DesktopWindow? {
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
  static func decode<T: Decodable>(_ type: T.Type, _ payload: [UInt8]) -> T? {
    try? JSONDecoder().decode(type, from: Data(payload))
  }
}

/// A node of sway's or i3's tree, as GET_TREE and window events describe it: only the fields
/// the plugin reads, decoded into types (a field of another type makes the message unusable,
/// and it is ignored).
struct I3Container: Decodable, Equatable {
  var id: Int64?
  var appID: String?
  var name: String?
  var pid: Int?
  var focused: Bool?
  var windowProperties: Properties?
  var nodes: [I3Container]?
  var floatingNodes: [I3Container]?

  struct Properties: Decodable, Equatable {
    var windowClass: String?
    var instance: String?
    var title: String?

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
struct I3WindowEvent: Decodable {
  var change: String?
  var container: I3Container?
}

/// A reply to SUBSCRIBE, or one entry of a RUN_COMMAND reply.
struct I3Outcome: Decodable {
  var success: Bool?
  var error: String?
}
