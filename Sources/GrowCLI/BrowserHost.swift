import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowDBus
@_spi(GrowHost) import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// The browser's native messaging framing: each message is a 4-byte length in the machine's
/// byte order, then that many bytes of UTF-8 JSON (developer.chrome.com "Native messaging",
/// MDN "Native messaging"; the same in Chromium and Firefox).
struct NativeMessageReader {
  enum Item: Equatable {
    case message([UInt8])
    /// A message longer than `limit`: its bytes are skipped, the stream stays in step.
    case tooLong(Int)
  }

  /// Grow's messages are a few hundred bytes; a browser's own limit is 64 MiB, which a
  /// host need not buffer.
  static let limit = 64 * 1024
  private var buffer: [UInt8] = []
  /// Bytes of an over-long message still to skip.
  private var skipping = 0

  /// Takes what `read` returned and gives the whole messages in it, in order.
  mutating func add(_ bytes: some Collection<UInt8>) -> [Item] {
    buffer.append(contentsOf: bytes)
    var items: [Item] = []
    var offset = 0
    while true {
      if skipping > 0 {
        let skipped = min(skipping, buffer.count - offset)
        skipping -= skipped
        offset += skipped
        if skipping > 0 { break }
      }
      guard buffer.count - offset >= 4 else { break }
      let length = buffer[offset..<offset + 4].withUnsafeBytes {
        Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)))
      }
      if length > Self.limit {
        items.append(.tooLong(length))
        offset += 4
        skipping = length
        continue
      }
      guard buffer.count - offset - 4 >= length else { break }
      items.append(.message(Array(buffer[offset + 4..<offset + 4 + length])))
      offset += 4 + length
    }
    buffer.removeFirst(offset)
    return items
  }

  /// One message to the browser, framed.
  static func frame(_ value: JSONValue) -> [UInt8] {
    let body = Array(value.text.utf8)
    return withUnsafeBytes(of: UInt32(body.count).littleEndian) { Array($0) } + body
  }
}

/// `grow browser-host`: the native messaging host Grow's browser extension (browser/) starts.
/// It relays between the extension (stdin/stdout, `NativeMessageReader`) and the daemon's
/// browser plugin (`org.grow.Grow1.Browser` on the session bus):
///
/// - to the browser, `{"type":"state",…}` whenever the timer or what is blocked changes (and
///   `"running":false` while no daemon runs; a daemon that starts later is found through
///   `NameOwnerChanged`, so the browser never needs a restart), and `{"type":"verdict",…}`
///   for each page it reported;
/// - to the daemon, the page in front of the person (`Visit`; only the newest waits while one
///   call is out, so a flooding browser costs one call at a time) and "Allow 5 minutes".
///
/// Problems with what the browser sends (too long, not JSON, unknown) are said to the daemon
/// (`Report`, at most five a second), so they show in `grow logs`; the host goes on. It ends
/// when the browser closes its stdin.
@MainActor
final class BrowserHost {
  private let loop = EpollLoop.shared
  private let client: GrowClient
  private var reader = NativeMessageReader()
  private var keptWatches: [any DescriptorWatch] = []
  /// The browser's name (its process name), for the history: chromium, firefox-esr.
  let browser: String
  /// A `Visit` call is out; the newest page reported meanwhile waits here.
  private var visiting = false
  private var waitingVisit: (tab: JSONValue, url: String)?
  private var reportWindow: MonotonicInstant?
  private var reportsInWindow = 0
  private var unreported = 0
  static let reportsPerSecond = 5

  init() throws(CLIError) {
    client = try GrowClient(on: loop)
    browser = Self.parentName()
  }

  /// The parent's process name: the browser that started this host.
  static func parentName() -> String {
    let comm = (try? String(contentsOfFile: "/proc/\(getppid())/comm", encoding: .utf8)) ?? ""
    let name = comm.trimmingWhitespace().lowercased()
    return name.isEmpty ? "browser" : name
  }

  func run() -> Never {
    signal(SIGPIPE, SIG_IGN)
    client.connection.onDisconnect = { exit(1) }
    do {
      try client.connection.onSignal(
        match: "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
          + "member='NameOwnerChanged',arg0='\(GrowBusAPI.busName)'"
      ) { [weak self] _ in self?.sendState() }
      try client.connection.onSignal(
        match: "type='signal',sender='\(GrowBusAPI.busName)',path='\(GrowBusAPI.objectPath)',"
          + "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
      ) { [weak self] message in
        let interface = message.arguments.first?.stringValue
        if interface == GrowBusAPI.timerInterface || interface == GrowBusAPI.browserInterface {
          self?.sendState()
        }
      }
    } catch {
      writeAll(
        "grow browser-host: "
          + Message("cannot follow the daemon: {error}").render(["error": error.message]) + "\n",
        to: 2)
    }
    let watch = loop.watch(STDIN_FILENO, for: .readable) { [weak self] _ in
      var chunk = [UInt8](repeating: 0, count: 16 * 1024)
      let count = read(STDIN_FILENO, &chunk, chunk.count)
      // The browser closed the port (the extension reloaded, the browser quit).
      guard count > 0 else { exit(0) }
      self?.received(chunk[0..<count])
    }
    keptWatches.append(watch)
    sendState()
    loop.run()
  }

  // MARK: From the browser

  private func received(_ bytes: ArraySlice<UInt8>) {
    for item in reader.add(bytes) {
      switch item {
      case .tooLong(let length):
        report(
          Message(
            one: "a message of {count} byte is over the limit of {limit}; skipped",
            other: "a message of {count} bytes is over the limit of {limit}; skipped",
            countedBy: "count"
          ).render(["count": length, "limit": NativeMessageReader.limit]))
      case .message(let body):
        guard case .object(let message)? = JSONValue.parse(body) else {
          report(
            Message(
              one: "a message that is not a JSON object ({count} byte); skipped",
              other: "a message that is not a JSON object ({count} bytes); skipped",
              countedBy: "count"
            ).render(["count": body.count]))
          continue
        }
        handle(message)
      }
    }
  }

  private func handle(_ message: [String: JSONValue]) {
    switch message["type"] {
    case .string("site"):
      guard case .string(let url)? = message["url"] else {
        return report(Message("a site message without a url; skipped").render())
      }
      visit(tab: message["tab"] ?? .null, url: url)
    case .string("allow"):
      guard case .string(let url)? = message["url"] else {
        return report(Message("an allow message without a url; skipped").render())
      }
      let minutes = message["minutes"].flatMap { if case .number(let n) = $0 { n } else { nil } }
      let seconds = UInt32(max(1, min(60, minutes ?? 5)) * 60)
      client.send(GrowBusAPI.browserInterface, "Allow", [.string(url), .uint32(seconds)]) {
        [weak self] result in
        if case .failure(let error) = result {
          self?.send(.object(["type": .string("error"), "message": .string(error.message)]))
        }
      }
    case .string("state"):
      sendState()
    default:
      guard let type = message["type"] else {
        return report(Message("a message without a type; skipped").render())
      }
      report(
        Message("a message of unknown type {type}; skipped").render([
          "type": String(type.text.prefix(40))
        ]))
    }
  }

  /// One `Visit` at a time: what the browser said meanwhile waits, and only the newest.
  private func visit(tab: JSONValue, url: String) {
    guard !visiting else {
      waitingVisit = (tab, url)
      return
    }
    visiting = true
    client.send(GrowBusAPI.browserInterface, "Visit", [.string(browser), .string(url)]) {
      [weak self] result in
      guard let self else { return }
      visiting = false
      let blocked = (try? result.get())?.arguments.first?.boolValue ?? false
      send(
        .object([
          "type": .string("verdict"), "tab": tab, "url": .string(url), "blocked": .bool(blocked),
        ]))
      if let next = waitingVisit {
        waitingVisit = nil
        visit(tab: next.tab, url: next.url)
      }
    }
  }

  /// Says a problem to the daemon's log, at most `reportsPerSecond` a second (the next one
  /// after that says how many were left out).
  private func report(_ problem: String) {
    let now = loop.monotonicNow
    if reportWindow.map({ now - $0 >= 1 }) ?? true {
      reportWindow = now
      reportsInWindow = 0
    }
    reportsInWindow += 1
    guard reportsInWindow <= Self.reportsPerSecond else {
      unreported += 1
      return
    }
    let text =
      unreported > 0
      ? Message(
        one: "{problem} (and {count} more since the last report)",
        other: "{problem} (and {count} more since the last report)", countedBy: "count"
      ).render(["problem": problem, "count": unreported])
      : problem
    unreported = 0
    writeAll("grow browser-host: \(text)\n", to: STDERR_FILENO)
    client.send(GrowBusAPI.browserInterface, "Report", [.string(browser), .string(text)]) { _ in }
  }

  // MARK: To the browser

  /// The timer and the block lists, asked for together; `running: false` without a daemon.
  private func sendState() {
    var status: TimerStatus?
    var lists: [String: BusValue]?
    var waiting = 2
    let arrived = { @MainActor [weak self] in
      waiting -= 1
      guard waiting == 0, let self else { return }
      send(Self.state(status: status, lists: lists))
    }
    client.send(GrowBusAPI.timerInterface, "GetStatus") { result in
      status = (try? result.get()).map {
        TimerStatus(busValues: $0.arguments.first?.vardictEntries ?? [:])
      }
      arrived()
    }
    client.send(
      "org.freedesktop.DBus.Properties", "GetAll", [.string(GrowBusAPI.browserInterface)]
    ) { result in
      lists = (try? result.get())?.arguments.first?.vardictEntries
      arrived()
    }
  }

  /// What the extension needs to block and to draw Grow's page. `browser` says whether the
  /// daemon runs the browser plugin at all.
  static func state(status: TimerStatus?, lists: [String: BusValue]?) -> JSONValue {
    guard let status else {
      return .object(["type": .string("state"), "running": .bool(false)])
    }
    func sites(_ name: String) -> JSONValue {
      guard case .array(_, let items)? = lists?[name]?.unwrapped else { return .array([]) }
      return .array(
        items.compactMap(\.stringValue).map { site in
          let slash = site.firstIndex(of: "/") ?? site.endIndex
          return .object([
            "host": .string(String(site[..<slash])), "path": .string(String(site[slash...])),
          ])
        })
    }
    return .object([
      "type": .string("state"), "running": .bool(true), "plugin": .bool(lists != nil),
      "phase": .string(status.state.rawValue), "paused": .bool(status.paused),
      "card": .string(status.card), "intention": .string(status.intention),
      "ends_at": status.endsAt.map { .number(($0.timeIntervalSince1970 * 1000).rounded()) }
        ?? .null,
      "remaining": .number(status.remaining.rounded()),
      "block": sites("BlockedSites"), "allow": sites("AllowedSites"),
    ])
  }

  private func send(_ value: JSONValue) {
    let bytes = NativeMessageReader.frame(value)
    let written = bytes.withUnsafeBytes { buffer -> Bool in
      guard let start = buffer.baseAddress else { return true }
      var offset = 0
      while offset < buffer.count {
        let count = write(STDOUT_FILENO, start + offset, buffer.count - offset)
        if count < 0 {
          if errno == EINTR { continue }
          return false
        }
        offset += count
      }
      return true
    }
    // The browser is gone.
    if !written { exit(0) }
  }
}
