import Foundation
import GrowCore
import GrowLoop
import GrowPluginKit
import GrowPluginTesting
import Testing

@testable import DoNotDisturbPlugin

/// The dnd plugin's restore policy against a scripted server switch, on a manual loop with the
/// real timer: what it switches, what it keeps on disk, how it retries. The real servers
/// (dunst, xfce4-notifyd, …) are in Tests/GrowDaemonTests/DoNotDisturbPluginDesktopTests.swift.
@MainActor
@Suite struct RestorePolicyTests {
  let bed = PluginTestBed()
  let state: URL
  let timer: FocusTimer
  let server: ScriptedSwitch
  let restoreFile: String

  init() throws {
    state = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-dnd-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
    restoreFile = state.path + "/grow/dnd-restore.json"
    timer = FocusTimer(deck: .standard, bus: bed.events, time: bed.loop)
    server = ScriptedSwitch(loop: bed.loop)
  }

  func plugin() throws -> DoNotDisturbPlugin {
    try DoNotDisturbPlugin(
      context: bed.context("dnd", environment: ["XDG_STATE_HOME": state.path], timer: timer),
      servers: ScriptedLookup(server))
  }

  var recordKept: Bool { FileManager.default.fileExists(atPath: restoreFile) }

  @Test func focusSilencesTheServerAndItsEndPutsItBack() throws {
    let plugin = try plugin()
    _ = plugin
    try timer.start()
    #expect(server.isOn)
    #expect(recordKept, "what to put back is on disk while Grow's change stands")
    bed.loop.advance(by: 25 * 60)
    #expect(!server.isOn)
    #expect(!recordKept)
    #expect(server.writes == [true, false])
  }

  /// The end of focus while the server does not answer: the record stays (on disk too, for a
  /// crash), and the restore is asked again, backing off, until the server confirms.
  @Test func aFailedReadKeepsTheRecordAndRetriesWithBackOffUntilConfirmed() throws {
    let plugin = try plugin()
    _ = plugin
    try timer.start()
    server.answering = false
    bed.loop.advance(by: 25 * 60)
    #expect(server.isOn)
    #expect(recordKept)
    let firstTry = try #require(server.readTimes.last)
    bed.loop.advance(by: 30)
    let tries = server.readTimes.filter { $0 >= firstTry }
    #expect(tries.count > 3, "asked again while silent: \(tries)")
    let gaps = zip(tries.dropFirst(), tries).map { $0 - $1 }
    #expect(gaps == gaps.sorted(), "the waits between tries do not shrink: \(gaps)")
    #expect((gaps.last ?? 0) > (gaps.first ?? 0), "it backs off: \(gaps)")
    #expect(gaps.last ?? 0 <= 3 + DoNotDisturbPlugin.longestRetryDelay + 0.001)
    #expect(recordKept && server.isOn, "nothing given up while the server is silent")
    #expect(bed.logs.messages(at: .warning).count == 1, "one warning per silence")

    server.answering = true
    bed.loop.advance(by: 5)
    #expect(!server.isOn)
    #expect(!recordKept)
  }

  /// Switching on that the server does not confirm is made again until it is.
  @Test func anUnconfirmedSwitchOnIsMadeAgain() throws {
    let plugin = try plugin()
    _ = plugin
    server.refusesWrites = true
    try timer.start()
    #expect(!server.isOn)
    #expect(recordKept)
    bed.loop.advance(by: 10)
    server.refusesWrites = false
    bed.loop.advance(by: 5)
    #expect(server.isOn)
    #expect(server.writes.count >= 3)
  }

  /// The person turned Do-Not-Disturb off during focus: at its end Grow leaves it off and
  /// writes nothing, and keeps no record.
  @Test func thePersonsChangeDuringFocusIsRespected() throws {
    let plugin = try plugin()
    _ = plugin
    try timer.start()
    server.personSwitches(false)
    #expect(!recordKept)
    #expect(bed.logs.contains("turned off by hand"))
    bed.loop.advance(by: 25 * 60)
    #expect(!server.isOn, "theirs, not Grow's: left off")
    #expect(server.writes == [true], "nothing written after the person's change")
  }

  /// Already on before the focus: Grow had nothing to change, so it puts nothing back.
  @Test func aServerSilencedByThePersonStaysSilenced() throws {
    server.isOn = true
    let plugin = try plugin()
    _ = plugin
    try timer.start()
    bed.loop.advance(by: 25 * 60)
    #expect(server.isOn)
    #expect(server.writes == [])
  }

  /// A reload during focus restarts the plugin while its read to switch the server on is still
  /// on its way (a loaded machine: the server answers late). The stopped instance had nothing
  /// to put back yet; its late answer must not switch the server on behind the new instance's
  /// back, or the new one reads the server as silenced by the person, keeps no record, and
  /// `grow stop` leaves it silenced (ConfigReloadTests' reload storm, under load).
  @Test func aReloadWhileTheSwitchOnIsOnItsWayLeavesNothingSilencedAfterStop() throws {
    let old = try plugin()
    server.holding = true
    try timer.start()
    // As PluginHost.unload: the old instance hears no more events, then stops.
    bed.events.unsubscribeAll(of: "dnd")
    var oldStopped = false
    old.stop { oldStopped = true }
    #expect(oldStopped, "nothing to put back yet: the host starts the new instance at once")
    let new = try plugin()
    _ = new
    server.answerHeldCalls()
    #expect(server.isOn, "focus goes on: silenced")
    #expect(recordKept)
    try timer.stop()
    server.answerHeldCalls()
    #expect(!server.isOn, "grow stop puts the server back")
    #expect(!recordKept)
    withExtendedLifetime(old) {}
  }

  /// A record left by a daemon that was killed: the next start puts the server back.
  @Test func aRecordLeftByAKilledDaemonIsRestoredAtStart() throws {
    try FileManager.default.createDirectory(
      atPath: state.path + "/grow", withIntermediateDirectories: true)
    try Data(#"{"backend":"scripted","previous":false,"set":true}"#.utf8)
      .write(to: URL(fileURLWithPath: restoreFile))
    server.isOn = true
    let plugin = try plugin()
    _ = plugin
    #expect(!server.isOn)
    #expect(!recordKept)
  }
}

/// A notification server's DND switch, scripted: it answers at once, or (not answering) lets
/// each call run into its timeout on the loop, as a stopped server does. A double because the
/// policy's cases (a server stopped mid-restore, a person's click at the right moment) need
/// exact control; the real servers are driven in GrowDaemonTests.
@MainActor
final class ScriptedSwitch: DndBackend {
  let name = "scripted"
  var isOn = false
  var answering = true
  var refusesWrites = false
  private(set) var writes: [Bool] = []
  /// When each read was asked, on the loop's monotonic clock.
  private(set) var readTimes: [MonotonicInstant] = []
  private var changed: ((Bool) -> Void)?
  private let loop: ManualLoop

  /// Holding: calls wait (in order, as on the bus) until `answerHeldCalls`, as a server on a
  /// loaded machine answers late.
  var holding = false
  private var held: [() -> Void] = []

  init(loop: ManualLoop) { self.loop = loop }

  /// Answers the calls held so far and those they lead to, in the order they were made.
  func answerHeldCalls() {
    while !held.isEmpty { held.removeFirst()() }
  }

  func read(timeout: Int32, _ done: @escaping (Bool?) -> Void) {
    readTimes.append(loop.monotonicNow)
    if holding { return held.append { [unowned self] in done(isOn) } }
    guard answering else {
      _ = loop.after(seconds: Double(timeout) / 1000) { done(nil) }
      return
    }
    done(isOn)
  }

  func write(_ enabled: Bool, timeout: Int32, _ done: @escaping (Bool) -> Void) {
    if holding {
      return held.append { [unowned self] in
        holding = false
        write(enabled, timeout: timeout, done)
        holding = true
      }
    }
    guard answering else {
      _ = loop.after(seconds: Double(timeout) / 1000) { done(false) }
      return
    }
    writes.append(enabled)
    if refusesWrites { return done(false) }
    let was = isOn
    isOn = enabled
    done(true)
    if was != enabled { changed?(enabled) }
  }

  func watch(_ changed: @escaping (Bool) -> Void) { self.changed = changed }

  /// The person clicks the server's own switch.
  func personSwitches(_ on: Bool) {
    isOn = on
    changed?(on)
  }
}

@MainActor
final class ScriptedLookup: DndServerLookup {
  let server: ScriptedSwitch
  init(_ server: ScriptedSwitch) { self.server = server }
  func find(_ done: @escaping (Result<(String, (any DndBackend)?), DndLookupFailure>) -> Void) {
    done(.success(("Scripted", server)))
  }
  func onPresenceChanged(_ changed: @escaping (Bool) -> Void) {}
}
