import Foundation
import GrowLoop
@_spi(GrowBuiltIn) @_spi(GrowHost) import GrowPluginKit
import GrowTestSupport
import Testing

@testable import WaylandPlugin

/// The i3 IPC wire format under hostile input: a message that claims to be huge, bytes that
/// are not i3 IPC, a message cut in the middle.
@Suite struct I3MessageTests {
  @Test func completeMessagesAreTakenAndAPartialOneWaits() throws {
    var buffer =
      I3Message.frame(type: I3Message.windowEvent, #"{"change":"focus"}"#)
      + I3Message.frame(type: I3Message.getTree, "{}")
    let cut = buffer.count - 1
    let last = buffer.removeLast()
    let messages = try I3Message.take(from: &buffer)
    #expect(messages.map(\.type) == [I3Message.windowEvent])
    #expect(buffer.count == cut - messages[0].payload.count - I3Message.headerSize)
    buffer.append(last)
    #expect(try I3Message.take(from: &buffer).map(\.type) == [I3Message.getTree])
    #expect(buffer.isEmpty)
  }

  /// A length of 4 GiB is refused as soon as the header is in: nothing waits for (or keeps)
  /// the rest.
  @Test func aHugeOrForeignMessageIsRefusedBeforeItsBodyIsKept() {
    var huge = I3Message.magic
    withUnsafeBytes(of: UInt32.max) { huge += $0 }
    withUnsafeBytes(of: I3Message.windowEvent) { huge += $0 }
    #expect(throws: StreamError.self) { try I3Message.take(from: &huge) }
    var foreign = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
    #expect(throws: StreamError.self) { try I3Message.take(from: &foreign) }
  }

  @Test func swayAndI3ContainersBecomeWindows() throws {
    func container(_ json: String) throws -> I3Container {
      try #require(I3Message.decode(I3Container.self, Array(json.utf8)))
    }
    let native = try container(
      #"{"id": 12, "app_id": "grow-editor", "name": "Editor window", "pid": 77}"#)
    #expect(
      I3Message.window(fromContainer: native)
        == DesktopWindow(
          id: "12", windowClass: "grow-editor", instance: "", title: "Editor window", pid: 77))
    let xwayland = try container(
      #"{"id": 13, "app_id": null, "name": "Time sink", "#
        + #""window_properties": {"class": "DistractXterm", "instance": "distract"}}"#)
    #expect(
      I3Message.window(fromContainer: xwayland)
        == DesktopWindow(
          id: "13", windowClass: "DistractXterm", instance: "distract", title: "Time sink"))
    let tree = try container(
      #"{"nodes": [{"nodes": [{"id": 4, "type": "workspace", "name": "1", "focused": true}]}]}"#)
    #expect(I3Message.focusedWindow(inTree: tree) == nil)
    // A field of another type makes the message unusable, not the daemon.
    #expect(I3Message.decode(I3Container.self, Array(#"{"id": "12"}"#.utf8)) == nil)
  }
}

/// The IPC source against a real i3 (4.22 under Xvfb, the same protocol sway speaks): focus
/// changes, a new title, and "nothing focused" on an empty workspace; then i3 is stopped
/// (`kill -STOP`), which the source reports after its reply deadline without holding the loop.
@MainActor @Suite(.serialized) struct I3WindowSourceTests {
  func waitUntil(_ timeout: TimeInterval = 30, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
      if Date() > deadline { return false }
      try await Task.sleep(for: .milliseconds(10))
    }
    return true
  }

  @Test func followsFocusTitlesAndAnEmptyWorkspaceOnRealI3() async throws {
    let display = try PrivateDisplay(windowManager: .i3)
    let editor = try display.openWindow(class: "Editor", title: "notes.md")
    let game = try display.openWindow(class: "Game", title: "Level 3")
    let socket = try #require(display.i3Socket)
    let source = I3WindowSource(
      path: socket, compositor: "i3", loop: MainLoop.shared,
      log: Logger(label: "test", minimumLevel: .error))
    var seen: [DesktopWindow?] = []
    var troubles: [String?] = []
    source.onWindow = { seen.append($0) }
    source.onTrouble = { troubles.append($0?.text) }
    source.start()
    defer { source.stop() }
    // What has focus at the start comes from GET_TREE: the last window opened.
    #expect(try await waitUntil { seen.last??.windowClass == "Game" }, "\(seen)")

    try display.activate(editor)
    #expect(try await waitUntil { seen.last??.windowClass == "Editor" }, "\(seen)")
    let focused = try #require(seen.last ?? nil)
    #expect(focused.instance == "xterm")
    #expect(focused.title == "notes.md")

    try display.xdotool("set_window", "--name", "draft.md", editor)
    #expect(try await waitUntil { seen.last??.title == "draft.md" }, "\(seen)")

    try display.i3msg("workspace", "7")
    #expect(try await waitUntil { seen.last == .some(nil) }, "\(seen)")
    _ = game

    // A stopped i3 answers nothing: the source says so once its question is overdue.
    kill(display.windowManagerPID, SIGSTOP)
    defer { kill(display.windowManagerPID, SIGCONT) }
    source.block(focused, .minimize)
    #expect(try await waitUntil { troubles.last??.contains("has not answered") == true })
    kill(display.windowManagerPID, SIGCONT)
    #expect(try await waitUntil { troubles.last == .some(nil) }, "\(troubles)")
  }
}

/// One i3 command on a connection of its own (what the x11 plugin sends under i3): it runs,
/// a command i3 refuses comes back with i3's reason, and a stopped i3 is an answer at the
/// deadline rather than a wait.
@MainActor @Suite(.serialized) struct I3CommandTests {
  func run(_ command: String, _ socket: String, deadline: TimeInterval = 5) async throws
    -> Result<Void, I3CommandError>
  {
    var outcome: Result<Void, I3CommandError>?
    I3Command.run(command, socket: socket, loop: MainLoop.shared, deadline: deadline) {
      outcome = $0
    }
    let until = Date().addingTimeInterval(30)
    while outcome == nil, Date() < until { try await Task.sleep(for: .milliseconds(10)) }
    return try #require(outcome)
  }

  @Test func runsRefusesAndGivesUpOnAStoppedI3() async throws {
    let display = try PrivateDisplay(windowManager: .i3)
    let game = try display.openWindow(class: "Game", title: "Level 3")
    let socket = try #require(display.i3Socket)

    let moved = try await run(I3Command.blocking("[id=\(game)]", .minimize), socket)
    #expect(throws: Never.self) { try moved.get() }
    #expect(try display.isInI3Scratchpad(game))

    guard case .failure(.refused(let why)) = try await run("no-such-command", socket) else {
      Issue.record("i3 ran a command it does not know")
      return
    }
    #expect(!why.isEmpty)

    guard case .failure(.connection) = try await run("nop", socket + ".missing") else {
      Issue.record("a missing socket was not a connection error")
      return
    }

    kill(display.windowManagerPID, SIGSTOP)
    defer { kill(display.windowManagerPID, SIGCONT) }
    let stopped = try await run("nop", socket, deadline: 0.5)
    guard case .failure(.noAnswer(after: 0.5)) = stopped else {
      Issue.record("a stopped i3 gave \(stopped)")
      return
    }
  }
}
