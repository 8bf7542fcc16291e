import FoundationEssentials
import Glibc
import GrowBasics
@_spi(GrowHost) import GrowCore
import GrowDBus
@_spi(GrowHost) import GrowLoop
@_spi(GrowBuiltIn) import GrowPluginKit

/// `grow status --follow`: one line per change for a bar that reads a never-ending script.
///
/// Costs nothing while nothing changes. State changes arrive as the daemon's
/// `PropertiesChanged` signals; the countdown is computed here from `EndsAt`, and a timer
/// wakes the process only when the rendered line can change (every second for `{remaining}`,
/// every minute for `{remaining_min}`, never while paused or idle). When the daemon goes
/// away the line says "off" until `NameOwnerChanged` announces a new one.
///
/// Runs on one thread, the main one, sleeping in `EpollLoop`'s epoll with the countdown's
/// timerfd (`WallClockTimer`) and the bus connection in it: one wake-up per displayed second
/// and none in between. Ends when the bar does (its parent exits, or stdout's reader goes away)
/// and when the session bus does.
@MainActor
final class StatusFollower {
  private var feed: BarFeed
  private var renderer: StatusBarRenderer { feed.renderer }
  private let loop = EpollLoop.shared
  private let client: GrowClient
  private var connection: BusConnection { client.connection }
  private var snapshot = StatusSnapshot(status: nil)
  private lazy var tick = WallClockTimer { [weak self] in self?.redraw() }
  private var keptWatches: [any DescriptorWatch] = []
  private var clickBuffer = Data()

  init(renderer: StatusBarRenderer) throws(CLIError) {
    feed = BarFeed(renderer: renderer)
    client = try GrowClient(on: loop)
  }

  func run() throws(CLIError) -> Never {
    // A bar that closed our stdout must give EPIPE (then `say` exits quietly), not SIGPIPE.
    signal(SIGPIPE, SIG_IGN)
    let leave: @MainActor () -> Void = { exit(0) }
    if let watch = ProcessWatch.onParentExit(leave) { keptWatches.append(watch) }
    if let watch = ProcessWatch.onHangUp(of: STDOUT_FILENO, leave) { keptWatches.append(watch) }
    connection.onDisconnect = {
      writeAll("grow: lost the session bus; exiting\n", to: STDERR_FILENO)
      exit(1)
    }
    do {
      try connection.onSignal(
        match: "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
          + "member='NameOwnerChanged',arg0='\(GrowBusAPI.busName)'"
      ) { [weak self] message in self?.ownerChanged(message) }
      try connection.onSignal(
        match: "type='signal',sender='\(GrowBusAPI.busName)',path='\(GrowBusAPI.objectPath)',"
          + "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
      ) { [weak self] message in self?.propertiesChanged(message) }
    } catch {
      throw .bus(error)
    }
    if renderer.format == .i3bar { readClicks() }
    if let header = renderer.header { say(header) }
    // Subscribed first, asked second: a daemon starting in between is not missed. The first
    // line waits for the answer, so a bar never flashes "off" while the daemon runs.
    refresh()
    loop.run()
  }

  // MARK: Bus

  private func ownerChanged(_ message: BusMessage) {
    let arguments = message.arguments
    guard arguments.count == 3, arguments[0].stringValue == GrowBusAPI.busName else { return }
    if arguments[2].stringValue?.isEmpty ?? true {
      snapshot = StatusSnapshot(status: nil)
      redraw()
    } else {
      refresh()
    }
  }

  private func propertiesChanged(_ message: BusMessage) {
    let arguments = message.arguments
    guard arguments.count >= 2, let changed = arguments[1].vardictEntries else { return }
    switch arguments[0].stringValue {
    case GrowBusAPI.timerInterface:
      // Remaining and Elapsed change silently (the signal leaves them out), and a pause
      // needs the remainder it kept; the cycle size and daily goal are only in GetStatus.
      // One call per change of state, never per second.
      refresh()
    case GrowBusAPI.doNotDisturbInterface:
      if let enabled = changed["Enabled"]?.unwrapped.boolValue {
        snapshot.doNotDisturb = enabled
        redraw()
      }
    case GrowBusAPI.attentionInterface:
      if let app = changed["Distraction"]?.unwrapped.stringValue {
        snapshot.distraction = app.isEmpty ? nil : app
        redraw()
      }
    default:
      break
    }
  }

  /// Asks the daemon for everything; "off" when there is none.
  private func refresh() {
    client.snapshot { [weak self] answer in
      guard let self else { return }
      snapshot = answer ?? StatusSnapshot(status: nil)
      redraw()
    }
  }

  // MARK: Output

  /// Writes the line if it changed, and sets the timer for the next change the template
  /// shows, aligned to the countdown's own second (or minute) boundary.
  private func redraw() {
    let now = loop.now
    let shown = BarSnapshot(snapshot)
    if let line = feed.update(shown, at: now.timeIntervalSince1970) { say(line) }
    guard let next = feed.wake(after: now.timeIntervalSince1970, of: shown) else {
      return tick.disarm()
    }
    tick.fire(at: Date(timeIntervalSince1970: next))
  }

  // MARK: Clicks (i3bar)

  /// i3bar writes `[`, then one JSON object per line, every one after the first led by a
  /// comma. Each click calls the daemon; the change comes back as a signal like any other.
  private func readClicks() {
    let box = WatchBox()
    let watch = loop.watch(STDIN_FILENO, for: .readable) { [weak self] _ in
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = read(STDIN_FILENO, &chunk, chunk.count)
      // End of input: i3bar is going away, or there never was a click stream.
      guard count > 0 else {
        box.watch?.cancel()
        return
      }
      self?.received(Data(chunk[0..<count]))
    }
    box.watch = watch
    keptWatches.append(watch)
  }

  private func received(_ bytes: Data) {
    clickBuffer.append(bytes)
    while let newline = clickBuffer.firstIndex(of: UInt8(ascii: "\n")) {
      let line = clickBuffer[clickBuffer.startIndex..<newline]
      clickBuffer = Data(clickBuffer[clickBuffer.index(after: newline)...])
      if let click = Self.click(in: line) { perform(click) }
    }
  }

  static func click(in line: Data) -> BarClick? {
    BarClick.inI3barEvent(String(decoding: line, as: UTF8.self))
  }

  private func perform(_ click: BarClick) {
    // A refusal (nothing to skip while idle) changes nothing; the line already says why.
    client.send(GrowBusAPI.timerInterface, click.call.method, click.call.arguments) { _ in }
  }
}
