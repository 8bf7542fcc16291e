import FoundationEssentials
import Glibc
import GrowPluginKit

/// The i3 IPC wire format, which sway speaks too: `"i3-ipc"`, a u32 payload length, a u32
/// message type (both in the machine's byte order), then the JSON payload. Events have the
/// high bit of the type set.
enum I3Message {
  static let magic = Array("i3-ipc".utf8)
  static let headerSize = 14
  /// Largest payload taken: a GET_TREE of a big session is a few hundred KiB; anything past
  /// this is hostile or broken, and the connection is dropped rather than the memory taken.
  static let maximumPayload = 4 * 1024 * 1024

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
  static func window(fromContainer container: [String: Any]) -> DesktopWindow? {
    guard let id = (container["id"] as? Int).map(Int64.init) else { return nil }
    let properties = container["window_properties"] as? [String: Any]
    let appID = container["app_id"] as? String
    guard appID != nil || properties != nil else { return nil }
    let title =
      container["name"] as? String ?? properties?["title"] as? String ?? ""
    return DesktopWindow(
      id: String(id),
      windowClass: appID ?? properties?["class"] as? String ?? "",
      instance: appID == nil ? properties?["instance"] as? String ?? "" : "",
      title: title, pid: container["pid"] as? Int)
  }

  /// The focused window in a GET_TREE reply, or nil when the focus is on a workspace (the
  /// last window closed) or an output. The focused node is the one marked `focused`.
  static func focusedWindow(inTree tree: [String: Any]) -> DesktopWindow? {
    var stack = [tree]
    // A tree is the compositor's own; still, a deep or wide one costs at most this many nodes.
    var visited = 0
    while let node = stack.popLast(), visited < 100_000 {
      visited += 1
      if node["focused"] as? Bool == true { return window(fromContainer: node) }
      for key in ["nodes", "floating_nodes"] {
        stack += (node[key] as? [[String: Any]]) ?? []
      }
    }
    return nil
  }
}
