import GrowDBus

/// Asks the session bus whether someone is there without touching the keyboard: a media
/// player that plays (MPRIS `PlaybackStatus` is `Playing`), or an idle inhibitor held through
/// GNOME's session manager (a video call, a presentation). All calls are asynchronous: the
/// answer comes on the loop, which never waits for a slow player.
@MainActor
enum IdleInhibitors {
  static let mprisPrefix = "org.mpris.MediaPlayer2."
  static let sessionManager = "org.gnome.SessionManager"
  /// `IsInhibited` flag 8: inhibit the session being marked idle.
  static let inhibitIdle: UInt32 = 8
  /// Per call: a hung player must not hold the pause back for long.
  static let timeout: Int32 = 2000

  /// Calls `done` with why the person is probably there (`"org.mpris.MediaPlayer2.vlc is
  /// playing"`), or nil when nothing inhibits idleness or the bus does not answer.
  static func check(bus: BusConnection, _ done: @escaping (String?) -> Void) {
    guard
      let list = try? BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "ListNames")
    else { return done(nil) }
    bus.call(list, timeout: timeout) { result in
      let names: [String]
      if case .success(let reply) = result, case .array(_, let values)? = reply.arguments.first {
        names = values.compactMap(\.stringValue)
      } else {
        names = []
      }
      ask(bus: bus, names: names, done)
    }
  }

  /// One call per player plus one to the session manager; the first reason found wins, in
  /// the order of `names`, so the log names the same player each time.
  private static func ask(bus: BusConnection, names: [String], _ done: @escaping (String?) -> Void)
  {
    var questions: [(BusMessage, reason: String, answer: (BusMessage) -> Bool)] = []
    for name in names where name.hasPrefix(mprisPrefix) {
      if let call = try? BusMessage.methodCall(
        destination: name, path: "/org/mpris/MediaPlayer2",
        interface: "org.freedesktop.DBus.Properties", member: "Get",
        arguments: [.string("org.mpris.MediaPlayer2.Player"), .string("PlaybackStatus")])
      {
        questions.append((call, "\(name) is playing", Self.isPlaying))
      }
    }
    if names.contains(sessionManager),
      let call = try? BusMessage.methodCall(
        destination: sessionManager, path: "/org/gnome/SessionManager",
        interface: sessionManager, member: "IsInhibited", arguments: [.uint32(inhibitIdle)])
    {
      questions.append((call, "an application inhibits idleness (\(sessionManager))", isTrue))
    }
    guard !questions.isEmpty else { return done(nil) }
    var answers = [Bool?](repeating: nil, count: questions.count)
    var left = questions.count
    for (index, question) in questions.enumerated() {
      bus.call(question.0, timeout: timeout) { result in
        answers[index] = (try? result.get()).map(question.answer) ?? false
        left -= 1
        guard left == 0 else { return }
        done(questions.indices.first { answers[$0] == true }.map { questions[$0].reason })
      }
    }
  }

  private static func isPlaying(_ reply: BusMessage) -> Bool {
    guard case .variant(let value)? = reply.arguments.first else { return false }
    return value.stringValue == "Playing"
  }

  private static func isTrue(_ reply: BusMessage) -> Bool {
    reply.arguments.first?.boolValue == true
  }
}
