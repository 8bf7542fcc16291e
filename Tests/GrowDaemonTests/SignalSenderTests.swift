import Foundation
import GrowTestSupport
import Testing

/// Signals are heard from the services that own the names, not from any client: every match rule
/// the daemon adds names its sender, and a rogue connection sending the notification server's
/// signals (to everyone, or to Grow directly) changes nothing, while the server's own do.
@Suite(.serialized)
struct SignalSenderTests {
  static let config = NotifyPluginDesktopTests.shortCycle

  /// Sends ActionInvoked(7, start-break) and NotificationClosed(7, 2) as a broadcast and
  /// addressed to Grow, then calls GetStatus on the same connection (the bus forwards one
  /// connection's messages in order, and the daemon handles a signal as it reads it, so the
  /// answer comes after the signals were handled); prints the state and the daemon's rules.
  static let rogue = """
    import dbus, dbus.lowlevel, json
    bus = dbus.SessionBus()
    grow = bus.get_name_owner('org.grow.Grow1')
    for destination in (None, grow):
        for member, arguments in (('ActionInvoked', [dbus.UInt32(7), dbus.String('start-break')]),
                                  ('NotificationClosed', [dbus.UInt32(7), dbus.UInt32(2)])):
            signal = dbus.lowlevel.SignalMessage(
                '/org/freedesktop/Notifications', 'org.freedesktop.Notifications', member)
            if destination:
                signal.set_destination(destination)
            signal.append(*arguments)
            bus.send_message(signal)
    status = bus.call_blocking('org.grow.Grow1', '/org/grow/Grow1', 'org.grow.Grow1.Timer',
                               'GetStatus', '', [])
    rules = bus.call_blocking('org.freedesktop.DBus', '/org/freedesktop/DBus',
                              'org.freedesktop.DBus.Debug.Stats', 'GetAllMatchRules', '', [])
    print(json.dumps({'state': str(status['State']), 'next': str(status['Next']),
                      'rules': [str(rule) for rule in rules.get(grow, [])]}))
    """

  @Test func aRogueClientsNotificationSignalsChangeNothing() throws {
    let harness = try DaemonHarness(config: Self.config, startDaemon: false)
    let server = try NotificationServers.mock(harness, name: "mock-notify", vendor: "test")
    try harness.start()
    #expect(try harness.grow("start").status == 0)
    // Focus is over: the prompt to start the break is shown (the mock calls it 7).
    #expect(
      try harness.eventually(timeout: 30) {
        try harness.status()["next"] as? String == "short-break"
      })
    #expect(
      try harness.eventually(timeout: 30) {
        try NotificationServers.mockCalls(harness).contains("grow-focus-over")
      })

    let result = try harness.run("/usr/bin/python3", ["-c", Self.rogue], timeout: 60)
    #expect(result.status == 0, "\(result.stderr)")
    let seen =
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
    #expect(seen["state"] as? String == "waiting", "\(seen)")
    #expect(seen["next"] as? String == "short-break", "\(seen)")
    let rules = seen["rules"] as? [String] ?? []
    #expect(!rules.isEmpty)
    for rule in rules { #expect(rule.contains("sender="), "a rule without its sender: \(rule)") }

    // The server's own ActionInvoked starts the break.
    let emitted = try harness.run(
      "gdbus",
      [
        "call", "--session", "-d", "org.freedesktop.Notifications", "-o",
        "/org/freedesktop/Notifications", "-m", "org.freedesktop.DBus.Mock.EmitSignal",
        "org.freedesktop.Notifications", "ActionInvoked", "us", "[<uint32 7>, <'start-break'>]",
      ])
    #expect(emitted.status == 0, "\(emitted.stderr)")
    #expect(
      try harness.eventually(timeout: 30) {
        try harness.status()["state"] as? String == "short-break"
      }, "\(harness.daemonLog)")
    _ = server
  }
}
