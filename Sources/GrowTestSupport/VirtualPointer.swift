import Foundation

/// A pointer device for a headless compositor, whose seat has none: the test tool in
/// Tests/Fixtures/VirtualPointer (zwlr_virtual_pointer_v1 through libwayland-client), compiled
/// with cc the first time a test needs it and kept running, so the device stays on the seat
/// between moves and clicks (a bar only takes clicks from a pointer that has entered it).
public final class VirtualPointer: @unchecked Sendable {
  public enum Button: String, Sendable {
    case left, middle, right
  }

  private let process: BackgroundProcess
  private let answered = LockedBox(0)

  /// Connects to `session`'s compositor (as root: see WaylandSession) and adds the device.
  /// `layoutWidth` and `layoutHeight`: the whole output layout's size when it has more than
  /// the session's one output (positions are fractions of it); the output's size by default.
  public init(_ session: WaylandSession, layoutWidth: Int? = nil, layoutHeight: Int? = nil)
    throws
  {
    let tool = try Self.build()
    process = try BackgroundProcess(
      tool, ["\(layoutWidth ?? session.width)", "\(layoutHeight ?? session.height)"],
      environment: session.environment,
      writableStdin: true)
    guard process.waitUntil(timeout: 10, { process.stdout.hasPrefix("ready\n") }) else {
      process.kill()
      throw HarnessError("the virtual pointer did not start: \(process.stderr)")
    }
  }

  deinit { process.kill() }

  /// Moves to (`x`, `y`) in the output layout.
  public func move(x: Int, y: Int) throws { try send("move \(x) \(y)") }

  /// Presses and releases `button` where the pointer is.
  public func click(_ button: Button = .left) throws { try send("press \(button.rawValue)") }

  /// One wheel step.
  public func scroll(up: Bool) throws { try send("scroll \(up ? "up" : "down")") }

  /// Sends one command and waits until the compositor has handled it (the tool answers "ok"
  /// after a roundtrip).
  private func send(_ command: String) throws {
    let wanted = answered.withLock {
      $0 += 1
      return $0
    }
    process.writeToStdin(command + "\n")
    let done = process.waitUntil(timeout: 5, interval: 0.01) {
      process.stdout.components(separatedBy: "ok\n").count - 1 >= wanted
    }
    guard done else {
      throw HarnessError(
        "virtual pointer: '\(command)' got no answer: \(process.stdout)\(process.stderr)")
    }
  }

  private static let built = LockedBox<String?>(nil)

  /// Compiles the tool into `.build/test-tools` (once, and again when the source is newer).
  private static func build() throws -> String {
    try built.withLock { path in
      if let path { return path }
      let source = RepoPaths.root.appendingPathComponent(
        "Tests/Fixtures/VirtualPointer/virtual-pointer.c"
      ).path
      let directory = RepoPaths.root.appendingPathComponent(".build/test-tools")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      let output = directory.appendingPathComponent("virtual-pointer").path
      func modified(_ path: String) -> Date? {
        try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
      }
      if let built = modified(output), let written = modified(source), built >= written {
        path = output
        return output
      }
      let flags = try Command.run("pkg-config", ["--cflags", "--libs", "wayland-client"])
      guard flags.status == 0 else { throw HarnessError("pkg-config wayland-client: \(flags)") }
      // Into a file of its own, then renamed: another test process may run the old one.
      let temporary = output + ".\(getpid())"
      // The Swift toolchain's clang is there wherever the tests build; cc may not be.
      let compiler =
        ["clang", "cc"].first {
          (try? Command.resolve($0, in: ProcessInfo.processInfo.environment)) != nil
        } ?? "clang"
      let compiled = try Command.run(
        compiler,
        ["-O1", "-o", temporary, source]
          + flags.stdout.split(whereSeparator: \.isWhitespace).map(String.init), timeout: 60)
      guard compiled.status == 0, rename(temporary, output) == 0 else {
        throw HarnessError("\(compiler) virtual-pointer.c: \(compiled)")
      }
      path = output
      return output
    }
  }
}
