import CX11
import Foundation

/// A hostile X client for the tests: retitles a window as fast as the server takes it, the way
/// a misbehaving client was seen to (XStoreName in a loop, XSync every 50), on a thread of its own
/// with its own connection. XCB's ChangeProperty on WM_NAME and a GetInputFocus round trip are
/// what those two Xlib calls send.
public final class TitleFlood: @unchecked Sendable {
  /// Titles set so far.
  public var count: Int { state.current.count }

  private let state = LockedBox((count: 0, stop: false, done: false))

  /// Starts retitling `window` (an id as xdotool prints it) on `display` until `stop()`.
  public init(display: String, window: String) throws {
    guard
      let id = UInt32(window) ?? UInt32(window.replacingOccurrences(of: "0x", with: ""), radix: 16)
    else { throw HarnessError("not a window id: \(window)") }
    var screen: Int32 = 0
    guard let opened = xcb_connect(display, &screen), xcb_connection_has_error(opened) == 0
    else { throw HarnessError("cannot connect to \(display) to flood titles") }
    // Handed to the thread, the only one that uses it from here on.
    nonisolated(unsafe) let connection = opened
    let state = self.state
    let thread = Thread {
      defer {
        // Everything set reaches the server before the connection closes.
        free(xcb_get_input_focus_reply(connection, xcb_get_input_focus(connection), nil))
        xcb_disconnect(connection)
        state.withLock { $0.done = true }
      }
      var index = 0
      while !state.current.stop, xcb_connection_has_error(connection) == 0 {
        let title = Array("flood \(index)".utf8)
        xcb_change_property(
          connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), id, XCB_ATOM_WM_NAME.rawValue,
          XCB_ATOM_STRING.rawValue, 8, UInt32(title.count), title)
        index += 1
        if index % 50 == 0 {
          // XSync: wait until the server has handled everything so far.
          let cookie = xcb_get_input_focus(connection)
          free(xcb_get_input_focus_reply(connection, cookie, nil))
          state.withLock { $0.count = index }
        }
      }
      state.withLock { $0.count = index }
    }
    thread.start()
  }

  /// Stops the flood and waits (up to `timeout`) for the thread to close its connection; a
  /// stopped X server holds it until the server continues.
  @discardableResult
  public func stop(timeout: TimeInterval = 10) -> Bool {
    state.withLock { $0.stop = true }
    let deadline = Date().addingTimeInterval(timeout)
    while !state.current.done, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    return state.current.done
  }

  deinit { stop() }
}
