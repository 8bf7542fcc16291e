import GrowDBus

/// Whether a media player on the session bus is playing (MPRIS: a name
/// `org.mpris.MediaPlayer2.*` whose `PlaybackStatus` is `Playing`): a film or a call in a
/// browser tab that is not fullscreen. Asked without waiting; a player that does not answer
/// within `timeout` counts as not playing.
@MainActor
enum MediaPlayers {
  static let prefix = "org.mpris.MediaPlayer2."
  static let timeout: Int32 = 1000

  static func anyPlaying(on bus: BusConnection, _ done: @escaping (Bool) -> Void) {
    guard
      let list = try? BusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "ListNames")
    else { return done(false) }
    bus.call(list, timeout: timeout) { result in
      guard case .success(let reply) = result, case .array(_, let items)? = reply.arguments.first
      else { return done(false) }
      let players = items.compactMap(\.stringValue).filter { $0.hasPrefix(prefix) }
      var left = players.count
      var playing = false
      guard left > 0 else { return done(false) }
      for player in players {
        status(of: player, on: bus) { status in
          playing = playing || status == "Playing"
          left -= 1
          if left == 0 { done(playing) }
        }
      }
    }
  }

  private static func status(
    of player: String, on bus: BusConnection, _ done: @escaping (String?) -> Void
  ) {
    guard
      let get = try? BusMessage.methodCall(
        destination: player, path: "/org/mpris/MediaPlayer2",
        interface: "org.freedesktop.DBus.Properties", member: "Get",
        arguments: [.string("org.mpris.MediaPlayer2.Player"), .string("PlaybackStatus")])
    else { return done(nil) }
    bus.call(get, timeout: timeout) { result in
      guard case .success(let reply) = result else { return done(nil) }
      done(reply.arguments.first?.unwrapped.stringValue)
    }
  }
}
