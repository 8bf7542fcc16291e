import Foundation
import GrowTestSupport
import Testing

/// The sound plugin through libcanberra against a real PulseAudio server with a null sink,
/// whose monitor is recorded (parec) and measured (sox): a phase end is heard, a running phase
/// is silent, a missing or stopped server is reported and never holds the daemon.
// Serialized: each test runs its own sound server and daemon.
@Suite(.serialized) struct SoundPluginDesktopTests {
  static let shortFocus = """
    [timer]
    focus = 2s
    short-break = 2s
    auto-start-breaks = false
    auto-start-focus = false

    [plugins]
    enable = sound
    """

  @Test func theEndOfAFocusIsHeardAndARunningFocusIsSilent() throws {
    let pulse = try PulseAudioServer()
    let harness = try DaemonHarness(config: Self.shortFocus, environment: pulse.environment)
    let quiet = try pulse.loudest(recording: 1.5) {}
    #expect(quiet < 0.01, "nothing plays before a phase ends: \(quiet)")

    var started: Int32?
    let heard = try pulse.loudest(
      during: { started = try harness.grow("start").status },
      until: { (try? harness.status()["state"] as? String) == "waiting" }, heard: 0.05)
    #expect(started == 0)
    #expect(heard > 0.05, "the focus's end was heard: loudest sample \(heard)")
    let sound = try harness.plugins()["sound"] ?? [:]
    #expect(sound["state"] == "running", "\(sound)")
  }

  @Test func withoutASoundServerThePluginSaysSoAndTheTimerGoesOn() throws {
    let harness = try DaemonHarness(
      config: Self.shortFocus,
      environment: ["PULSE_SERVER": "unix:/nonexistent/grow-test/native"])
    #expect(try harness.grow("start").status == 0)
    #expect(
      try harness.eventually(timeout: 30) {
        try harness.plugins()["sound"]?["state"] == "unavailable"
      })
    let sound = try harness.plugins()["sound"] ?? [:]
    #expect(sound["error"]?.hasPrefix("no sound server") == true, "\(sound)")
    #expect(try harness.status()["next"] as? String == "short-break")
  }

  /// A stopped server (SIGSTOP) holds canberra's calls; they run on the plugin's own thread,
  /// so the daemon answers meanwhile, and the sound for a phase that ended while it was
  /// stopped is dropped rather than played late.
  @Test func aStoppedSoundServerNeverHoldsTheDaemon() throws {
    let pulse = try PulseAudioServer()
    let harness = try DaemonHarness(config: Self.shortFocus, environment: pulse.environment)
    kill(pulse.process.pid, SIGSTOP)
    defer { kill(pulse.process.pid, SIGCONT) }
    #expect(try harness.grow("start").status == 0)
    #expect(try harness.eventually { try harness.status()["next"] as? String == "short-break" })
    // A second phase end while the first sound still waits for the server.
    #expect(try harness.grow("start").status == 0)
    #expect(try harness.eventually { try harness.status()["state"] as? String == "short-break" })
    #expect(try harness.grow("skip").status == 0)
    #expect(try harness.grow("status").status == 0)
    kill(pulse.process.pid, SIGCONT)
    let late = try pulse.loudest(recording: 2) {}
    #expect(late < 0.01, "nothing played late: \(late)")
  }
}
