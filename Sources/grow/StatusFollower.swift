import CFrontDBus
import CFrontStatic
import Glibc
import GrowBasics

/// `grow status --follow|--format F|--template T|--icons SET` as the front understands it: each
/// option at most once, every value valid. Anything else (a typo, `--json` beside them, a value
/// missing) is grow-cli's to word: nil.
struct BarRequest {
  var follows = false
  var renderer: BarRenderer

  init?(_ words: [String]) {
    var follows = false
    var values: [String: String] = [:]
    var rest = words[...]
    while let word = rest.popFirst() {
      if word == "--follow", !follows {
        follows = true
        continue
      }
      var name = word
      var value: String?
      if let equals = word.firstIndex(of: "=") {
        name = String(word[..<equals])
        value = String(word[word.index(after: equals)...])
      } else {
        value = rest.popFirst()
      }
      guard ["--format", "--template", "--icons"].contains(name), values[name] == nil,
        let value, !value.hasPrefix("-")
      else { return nil }
      values[name] = value
    }
    guard let format = BarFormat(rawValue: values["--format"] ?? "plain") else { return nil }
    var template = BarTemplate.standard
    if let source = values["--template"] {
      guard let parsed = try? BarTemplate(source) else { return nil }
      template = parsed
    }
    if let icons = values["--icons"] {
      guard ["ascii", "unicode", "nerd"].contains(icons) else { return nil }
      template.icons = icons
    }
    self.follows = follows
    renderer = BarRenderer(
      format: format, template: template, growCommand: Self.growCommand, warnBefore: nil)
  }

  /// How a bar runs this `grow` again (polybar's click commands): the path it was started
  /// by, made absolute when it was relative.
  static var growCommand: String {
    let invoked = CommandLine.arguments.first ?? "grow"
    guard invoked.contains("/"), !invoked.hasPrefix("/") else { return invoked }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return invoked }
    let directory = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: directory, as: UTF8.self) + "/" + invoked
  }
}

/// `grow status --follow`: one line per change for a bar that reads a never-ending script, in
/// the front, so a bar's feed costs a small static process with no Foundation (grow-cli's
/// StatusFollower did it before, in 17 MB). `--format` etc. without `--follow`: one update.
///
/// Costs nothing while nothing changes. State changes arrive as the daemon's
/// `PropertiesChanged` signals; the countdown is computed here from `EndsAt`, and a timerfd on
/// the wall clock wakes the process only when the rendered line can change (every second for
/// `{remaining}`, every minute for `{remaining_min}`, never while paused or idle), armed at
/// that instant and cancelled by a clock jump, so a changed clock redraws at once. When the
/// daemon goes away the line says "off" until `NameOwnerChanged` announces a new one.
///
/// One thread sleeping in `poll` on the bus connection, the timer, stdout (its reader going
/// away), the parent (a pidfd: the bar exiting) and, for i3bar, stdin (clicks). Questions to
/// the daemon are sent without waiting (GetStatus and the two properties at once, matched to
/// their replies by serial) and given up after `answerTimeout`: a stuck daemon never stalls
/// the loop. Ends when the bar does and when the session bus does.
final class StatusFollower {
  private let follows: Bool
  private var feed: BarFeed
  private var renderer: BarRenderer { feed.renderer }
  private let connection: OpaquePointer
  private var snapshot = BarSnapshot(status: nil)
  private let timer: Int32
  private var parent: Int32 = -1
  private var watchesHangUp = false
  private var readsClicks = false
  private var clickBuffer: [UInt8] = []
  private var asking: [Questions] = []

  /// GetStatus and the two properties asked together; answered once all three are.
  private struct Questions {
    var status: UInt32
    var doNotDisturb: UInt32
    var distraction: UInt32
    var deadline: Double
    var waiting = 3
    var facts: StatusFacts?
    var warnBefore: Double?
    var doNotDisturbValue: Bool?
    var distractionValue: String?
  }

  /// What libdbus gives a call without a timeout of its own.
  private static let answerTimeout = 25.0

  init(_ request: BarRequest) {
    follows = request.follows
    feed = BarFeed(renderer: request.renderer)
    var error = DBusError()
    dbus_error_init(&error)
    // No session bus: grow-cli says so in words.
    guard let connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error) else {
      runWholeCommandLine()
    }
    dbus_connection_set_exit_on_disconnect(connection, 0)
    self.connection = connection
    timer = cfront_wall_timer()
  }

  func run() -> Never {
    // A bar that closed our stdout must give EPIPE (then we exit quietly), not SIGPIPE.
    signal(SIGPIPE, SIG_IGN)
    if !follows { once() }
    watchParent()
    var info = stat()
    // Files and terminals never hang up in a way poll reports.
    watchesHangUp =
      fstat(STDOUT_FILENO, &info) == 0
      && (info.st_mode & S_IFMT == S_IFIFO || info.st_mode & S_IFMT == S_IFSOCK)
    let rules = [
      "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
        + "member='NameOwnerChanged',arg0='\(BusNames.busName)'",
      "type='signal',sender='\(BusNames.busName)',path='\(BusNames.objectPath)',"
        + "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
    ]
    for rule in rules {
      var error = DBusError()
      dbus_error_init(&error)
      dbus_bus_add_match(connection, rule, &error)
      if dbus_error_is_set(&error) != 0 { runWholeCommandLine() }
    }
    readsClicks = renderer.format == .i3bar
    if let header = renderer.header { say(header) }
    // Subscribed first, asked second: a daemon starting in between is not missed. The first
    // line waits for the answer, so a bar never flashes "off" while the daemon runs.
    refresh()
    while true { turn() }
  }

  /// One update, then exit: `grow status --format F` on a bar's interval. A click i3blocks
  /// reports (BLOCK_BUTTON) is acted on first, so the line shows its effect.
  private func once() -> Never {
    if renderer.format == .i3blocks,
      let button = getenv("BLOCK_BUTTON").flatMap({ Int(String(cString: $0)) }),
      let click = BarClick(button: button), let call = methodCall(click)
    {
      var error = DBusError()
      dbus_error_init(&error)
      // Refused (say, skip while idle) or no daemon: the line shows how things are.
      if let reply = dbus_connection_send_with_reply_and_block(connection, call, 25_000, &error) {
        dbus_message_unref(reply)
      }
      dbus_error_free(&error)
      dbus_message_unref(call)
    }
    refresh()
    while true { turn() }
  }

  // MARK: The loop

  /// Sleeps until something happens, and handles it.
  private func turn() {
    dbus_connection_flush(connection)
    handleMessages()
    var descriptor: Int32 = -1
    dbus_connection_get_unix_fd(connection, &descriptor)
    var watched = [
      pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
      pollfd(fd: timer, events: Int16(POLLIN), revents: 0),
      pollfd(fd: watchesHangUp ? STDOUT_FILENO : -1, events: 0, revents: 0),
      pollfd(fd: parent, events: Int16(POLLIN), revents: 0),
      pollfd(fd: readsClicks ? STDIN_FILENO : -1, events: Int16(POLLIN), revents: 0),
    ]
    let deadline = asking.map(\.deadline).min()
    let timeout = deadline.map { Int32(max(0, min(($0 - Self.now) * 1000 + 1, 60_000))) } ?? -1
    let ready = poll(&watched, nfds_t(watched.count), timeout)
    if ready < 0 {
      guard errno == EINTR else { exit(1) }
      return
    }
    let happened = { (index: Int) in watched[index].revents != 0 }
    if happened(2) || happened(3) { exit(0) }  // The bar is gone.
    if happened(0) {
      dbus_connection_read_write(connection, 0)
      guard dbus_connection_get_is_connected(connection) != 0 else { lostBus() }
      handleMessages()
    }
    if happened(1) {
      var expirations: UInt64 = 0
      // ECANCELED: the clock was set; either way the line is drawn for the time now.
      _ = read(timer, &expirations, 8)
      redraw()
    }
    if happened(4) { readClicks() }
    giveUpLateQuestions()
  }

  private func lostBus() -> Never {
    writeAll("grow: lost the session bus; exiting\n", to: STDERR_FILENO)
    exit(1)
  }

  /// The parent (the bar) exiting ends the follower: a pidfd of it becomes readable.
  private func watchParent() {
    let pid = getppid()
    guard pid > 1 else { return }
    parent = cfront_pidfd_open(pid)
    // The parent may have died between getppid() and pidfd_open(): then we were reparented.
    if parent >= 0, getppid() != pid { exit(0) }
  }

  private static var now: Double {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  // MARK: Bus

  private func handleMessages() {
    while let message = dbus_connection_pop_message(connection) {
      handle(message)
      dbus_message_unref(message)
    }
  }

  private func handle(_ message: OpaquePointer) {
    switch dbus_message_get_type(message) {
    case DBUS_MESSAGE_TYPE_METHOD_RETURN, DBUS_MESSAGE_TYPE_ERROR:
      answered(dbus_message_get_reply_serial(message), by: message)
    case DBUS_MESSAGE_TYPE_SIGNAL:
      if dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
        lostBus()
      } else if dbus_message_is_signal(message, "org.freedesktop.DBus", "NameOwnerChanged") != 0 {
        ownerChanged(leadingStrings(of: message))
      } else if dbus_message_is_signal(
        message, "org.freedesktop.DBus.Properties", "PropertiesChanged") != 0
      {
        propertiesChanged(message)
      }
    default:
      break
    }
  }

  private func ownerChanged(_ arguments: [String]) {
    guard arguments.count == 3, arguments[0] == BusNames.busName else { return }
    if arguments[2].isEmpty {
      snapshot = BarSnapshot(status: nil)
      redraw()
    } else {
      refresh()
    }
  }

  private func propertiesChanged(_ message: OpaquePointer) {
    var arguments = DBusMessageIter()
    guard dbus_message_iter_init(message, &arguments) != 0,
      case .text(let interface)? = wire(&arguments),
      dbus_message_iter_next(&arguments) != 0, let changed = dictionary(&arguments)
    else { return }
    switch interface {
    case BusNames.timerInterface:
      // Remaining and Elapsed change silently (the signal leaves them out), and a pause
      // needs the remainder it kept; the cycle size and daily goal are only in GetStatus.
      // One call per change of state, never per second.
      refresh()
    case BusNames.doNotDisturbInterface:
      if case .flag(let enabled)? = changed["Enabled"] {
        snapshot.doNotDisturb = enabled
        redraw()
      }
    case BusNames.attentionInterface:
      if case .text(let app)? = changed["Distraction"] {
        snapshot.distraction = app.isEmpty ? nil : app
        redraw()
      }
    default:
      break
    }
  }

  /// Asks the daemon for everything at once; the answer comes on the loop ("off" when there
  /// is no daemon).
  private func refresh() {
    let status = dbus_message_new_method_call(
      BusNames.busName, BusNames.objectPath, BusNames.timerInterface, BusNames.getStatus)
    let questions = Questions(
      status: send(status),
      doNotDisturb: send(property("Enabled", of: BusNames.doNotDisturbInterface)),
      distraction: send(property("Distraction", of: BusNames.attentionInterface)),
      deadline: Self.now + Self.answerTimeout)
    asking.append(questions)
  }

  /// `org.freedesktop.DBus.Properties.Get(interface, name)` on Grow's object.
  private func property(_ name: String, of interface: String) -> OpaquePointer? {
    guard
      let call = dbus_message_new_method_call(
        BusNames.busName, BusNames.objectPath, "org.freedesktop.DBus.Properties", "Get")
    else { return nil }
    var arguments = DBusMessageIter()
    dbus_message_iter_init_append(call, &arguments)
    for text in [interface, name] {
      text.withCString { pointer in
        var value: UnsafePointer<CChar>? = pointer
        _ = dbus_message_iter_append_basic(&arguments, CFRONT_TYPE_STRING, &value)
      }
    }
    return call
  }

  /// Sends `call` without waiting; its serial (0 if it could not be sent: then it counts as
  /// answered with nothing).
  private func send(_ call: OpaquePointer?) -> UInt32 {
    guard let call else { return 0 }
    defer { dbus_message_unref(call) }
    var serial: UInt32 = 0
    return dbus_connection_send(connection, call, &serial) != 0 ? serial : 0
  }

  private func answered(_ serial: UInt32, by message: OpaquePointer) {
    guard serial != 0,
      let index = asking.firstIndex(where: {
        [$0.status, $0.doNotDisturb, $0.distraction].contains(serial)
      })
    else { return }
    let isReply = dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_RETURN
    var arguments = DBusMessageIter()
    let hasArguments = isReply && dbus_message_iter_init(message, &arguments) != 0
    if serial == asking[index].status {
      asking[index].status = 0
      if isReply, let values = firstDictionary(of: message) {
        let reply = StatusReply(values: values)
        asking[index].facts = reply.facts
        asking[index].warnBefore = reply.warnBefore
      }
    } else if serial == asking[index].doNotDisturb {
      asking[index].doNotDisturb = 0
      if hasArguments, case .flag(let enabled)? = wire(&arguments) {
        asking[index].doNotDisturbValue = enabled
      }
    } else {
      asking[index].distraction = 0
      if hasArguments, case .text(let app)? = wire(&arguments), !app.isEmpty {
        asking[index].distractionValue = app
      }
    }
    asking[index].waiting -= 1
    if asking[index].waiting == 0 { settle(asking.remove(at: index)) }
  }

  /// Questions unanswered past their deadline are answered with nothing.
  private func giveUpLateQuestions() {
    let now = Self.now
    while let index = asking.firstIndex(where: { $0.deadline <= now }) {
      settle(asking.remove(at: index))
    }
  }

  private func settle(_ questions: Questions) {
    snapshot = BarSnapshot(
      status: questions.facts, doNotDisturb: questions.doNotDisturbValue,
      distraction: questions.distractionValue)
    if questions.facts != nil { feed.renderer.warnBefore = questions.warnBefore }
    guard follows else {
      writeAll(renderer.once(snapshot, at: Self.now) + "\n", to: STDOUT_FILENO)
      exit(0)
    }
    redraw()
  }

  // MARK: Output

  /// Writes the line if it changed, and sets the timer for the next change the template
  /// shows, aligned to the countdown's own second (or minute) boundary.
  private func redraw() {
    let now = Self.now
    if let line = feed.update(snapshot, at: now) { say(line) }
    _ = cfront_wall_timer_arm(timer, feed.wake(after: now, of: snapshot) ?? 0)
  }

  /// One line to the bar; a bar gone away ends the follower quietly.
  private func say(_ line: String) {
    if !writeAll(line + "\n", to: STDOUT_FILENO) { exit(0) }
  }

  // MARK: Clicks (i3bar)

  /// i3bar writes `[`, then one JSON object per line, every one after the first led by a
  /// comma. Each click calls the daemon; the change comes back as a signal like any other.
  private func readClicks() {
    var chunk = [UInt8](repeating: 0, count: 4096)
    let count = read(STDIN_FILENO, &chunk, chunk.count)
    if count < 0, errno == EINTR || errno == EAGAIN { return }
    // End of input: i3bar is going away, or there never was a click stream.
    guard count > 0 else {
      readsClicks = false
      return
    }
    clickBuffer += chunk[0..<count]
    while let newline = clickBuffer.firstIndex(of: UInt8(ascii: "\n")) {
      let line = String(decoding: clickBuffer[..<newline], as: UTF8.self)
      clickBuffer.removeSubrange(...newline)
      if let click = BarClick.inI3barEvent(line), let call = methodCall(click) {
        // A refusal (nothing to skip while idle) changes nothing; the line already says why.
        dbus_message_set_no_reply(call, 1)
        _ = send(call)
      }
    }
    // A click event is a few hundred bytes: what runs on without a newline is not one, and
    // must not grow without end.
    if clickBuffer.count > 64 * 1024 { clickBuffer.removeAll() }
  }

  private func methodCall(_ click: BarClick) -> OpaquePointer? {
    let method = click.method
    guard
      let call = dbus_message_new_method_call(
        BusNames.busName, BusNames.objectPath, BusNames.timerInterface, method.name)
    else { return nil }
    if var seconds = method.seconds {
      var arguments = DBusMessageIter()
      dbus_message_iter_init_append(call, &arguments)
      _ = dbus_message_iter_append_basic(&arguments, CFRONT_TYPE_UINT32, &seconds)
    }
    return call
  }
}
