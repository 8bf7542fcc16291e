import CCanberraLoader
import Dispatch
import Glibc
import GrowLoop
import GrowMessages
import Synchronization

/// What the sound server said to one sound.
enum PlayOutcome: Equatable, Sendable {
  case played
  /// No sound server to play on (the plugin is unavailable while this holds).
  case noServer(String)
  /// The server is there but could not play this one (an unknown event id, a missing file).
  case failed(String)
}

/// Plays sounds; the sound plugin's logic is tested against a recording one.
@MainActor
protocol SoundOutput: AnyObject {
  /// Plays `sound`; `done` is called on the loop once the server has it (or has refused it).
  func play(_ sound: SoundRequest, _ done: @escaping (PlayOutcome) -> Void)
}

/// One sound: an event id from the sound theme or a file, at a volume in dB (0 is full).
struct SoundRequest: Equatable, Sendable {
  var eventID: String?
  var file: String?
  var decibels: Double
  /// What the sound is for, for the server's event list ("Focus over").
  var description: String
}

/// libcanberra on a thread of its own, behind Swift names. `ca_context_open` connects to
/// PulseAudio (or PipeWire's pulse server) and waits for it, and a stopped server holds that
/// call for as long as it is stopped, so no canberra call is ever made on the loop: the loop
/// hands one sound at a time to the thread and hears back through a pipe (the GSettings
/// wrapper in Plugins/DoNotDisturbPlugin does the same for dconf).
///
/// A sound that waited longer than `staleAfter` for a stuck thread is dropped: a bell that
/// rings seconds after the phase it was for is worse than none.
@MainActor
final class CanberraOutput: SoundOutput {

  private let loop: any EventLoop
  private let worker: CanberraThread
  private var watch: (any DescriptorWatch)?
  private var waiting: [(PlayOutcome) -> Void] = []

  init(loop: any EventLoop, applicationName: String) throws(PluginSoundError) {
    self.loop = loop
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw .cannotStart(String(cString: strerror(errno))) }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
    // The thread closes both ends when it ends: it may still be writing when this is dropped.
    worker = CanberraThread(applicationName: applicationName, wake: ends[1], wakeRead: ends[0])
    let readEnd = ends[0]
    watch = loop.watch(readEnd, for: .readable) { [weak self] _ in
      var bytes = [UInt8](repeating: 0, count: 64)
      while read(readEnd, &bytes, bytes.count) > 0 {}
      self?.deliver()
    }
  }

  isolated deinit {
    watch?.cancel()
    worker.finish()
  }

  func play(_ sound: SoundRequest, _ done: @escaping (PlayOutcome) -> Void) {
    switch worker.enqueue(sound, at: loop.monotonicNow.secondsSinceOrigin) {
    case .queued: waiting.append(done)
    // The thread has been in one call for seconds (a stopped server): this one would be late.
    case .stuck: done(.noServer(Message("the sound server does not answer").render()))
    case .anotherWaits: done(.failed("not played: another sound was still waiting to play"))
    }
  }

  private func deliver() {
    for outcome in worker.takeOutcomes() where !waiting.isEmpty {
      waiting.removeFirst()(outcome)
    }
  }
}

/// Why the sound plugin cannot start.
enum PluginSoundError: WordedError {
  case cannotStart(String)
  var worded: Worded {
    switch self {
    case .cannotStart(let reason):
      Worded(Message("cannot start the sound thread: {reason}"), ["reason": reason])
    }
  }
}

/// The thread that owns the `ca_context`. At most one sound waits behind the one playing;
/// while that one has been stuck in a call for longer than `staleAfter`, the next is refused.
final class CanberraThread: @unchecked Sendable {
  /// Seconds a sound may wait for the thread before it is dropped as late.
  static let staleAfter = 2.0

  enum Enqueued { case queued, stuck, anotherWaits }

  private struct State {
    var next: (sound: SoundRequest, queuedAt: Double)?
    /// When the thread took the sound it is playing; nil while it waits for one.
    var busySince: Double?
    var outcomes: [PlayOutcome] = []
    var finished = false
  }

  private let state = Mutex(State())
  private let wakeThread = DispatchSemaphore(value: 0)
  private let wakeLoop: Int32
  /// The loop's end of the pipe, closed with the thread's (after the loop stopped watching it).
  private let wakeRead: Int32
  private let applicationName: String
  /// Owned by the thread alone.
  private nonisolated(unsafe) var context: OpaquePointer?

  init(applicationName: String, wake: Int32, wakeRead: Int32) {
    self.applicationName = applicationName
    wakeLoop = wake
    self.wakeRead = wakeRead
    var thread = pthread_t()
    let started = pthread_create(
      &thread, nil,
      { argument in
        guard let argument else { return nil }
        Unmanaged<CanberraThread>.fromOpaque(argument).takeRetainedValue().run()
        return nil
      }, Unmanaged.passRetained(self).toOpaque())
    if started == 0 { pthread_detach(thread) }
  }

  /// Queues `sound` behind the one playing, unless that one has been stuck longer than
  /// `staleAfter` or another already waits.
  func enqueue(_ sound: SoundRequest, at now: Double) -> Enqueued {
    let result = state.withLock { state -> Enqueued in
      if let since = state.busySince, now - since > Self.staleAfter { return .stuck }
      guard state.next == nil else { return .anotherWaits }
      state.next = (sound, now)
      return .queued
    }
    if result == .queued { wakeThread.signal() }
    return result
  }

  func takeOutcomes() -> [PlayOutcome] {
    state.withLock { state in
      defer { state.outcomes.removeAll() }
      return state.outcomes
    }
  }

  func finish() {
    state.withLock { $0.finished = true }
    wakeThread.signal()
  }

  private func run() {
    while true {
      wakeThread.wait()
      let job = state.withLock { state -> (SoundRequest, Double)?? in
        if state.finished { return .none }
        guard let next = state.next else { return .some(nil) }
        state.next = nil
        state.busySince = monotonicSeconds()
        return .some((next.sound, next.queuedAt))
      }
      guard let job else { break }
      guard let (sound, queuedAt) = job else { continue }
      let outcome = play(sound, queuedAt: queuedAt)
      state.withLock {
        $0.busySince = nil
        $0.outcomes.append(outcome)
      }
      var byte: UInt8 = 1
      _ = write(wakeLoop, &byte, 1)
    }
    if let context { grow_ca_context_destroy(context) }
    close(wakeLoop)
    close(wakeRead)
  }

  private func play(_ sound: SoundRequest, queuedAt: Double) -> PlayOutcome {
    let late = PlayOutcome.failed("not played: it waited too long for the sound server")
    guard monotonicSeconds() - queuedAt <= Self.staleAfter else { return late }
    if context == nil {
      var created: OpaquePointer?
      let code = Int(grow_ca_context_create(&created))
      guard code == CA_SUCCESS, let created else {
        return .noServer(
          Message("no sound server ({reason})").render(["reason": Self.reason(code)]))
      }
      // PulseAudio's protocol (PipeWire serves it too): without a sound server canberra would
      // fall back to ALSA's default device, which on a desktop is the same server or nothing.
      _ = grow_ca_context_set_driver(created, "pulse")
      let opened = Int(grow_ca_context_open(created))
      guard opened == CA_SUCCESS else {
        grow_ca_context_destroy(created)
        return .noServer(
          Message("no sound server ({reason})").render(["reason": Self.reason(opened)]))
      }
      context = created
      // Connecting can take as long as a stopped server stays stopped.
      guard monotonicSeconds() - queuedAt <= Self.staleAfter else { return late }
    }
    var properties: OpaquePointer?
    guard Int(grow_ca_proplist_create(&properties)) == CA_SUCCESS, let properties else {
      return .failed("out of memory")
    }
    defer { grow_ca_proplist_destroy(properties) }
    _ = grow_ca_proplist_sets(properties, CA_PROP_APPLICATION_NAME, applicationName)
    if let id = sound.eventID { _ = grow_ca_proplist_sets(properties, CA_PROP_EVENT_ID, id) }
    if let file = sound.file { _ = grow_ca_proplist_sets(properties, CA_PROP_MEDIA_FILENAME, file) }
    _ = grow_ca_proplist_sets(properties, CA_PROP_EVENT_DESCRIPTION, sound.description)
    _ = grow_ca_proplist_sets(properties, CA_PROP_CANBERRA_VOLUME, String(sound.decibels))
    // Not cached: a sound that changed on disk (a file of the person's) plays as it is now.
    _ = grow_ca_proplist_sets(properties, CA_PROP_CANBERRA_CACHE_CONTROL, "never")
    let code = Int(grow_ca_context_play_full(context, 0, properties, nil, nil))
    switch code {
    case CA_SUCCESS: return .played
    case CA_ERROR_DISCONNECTED, CA_ERROR_NODRIVER:
      // The server went away: a new context next time.
      grow_ca_context_destroy(context)
      context = nil
      return .noServer(
        Message("the sound server went away ({reason})").render(["reason": Self.reason(code)]))
    default: return .failed(Self.reason(code))
    }
  }

  private static func reason(_ code: Int) -> String {
    String(cString: grow_ca_strerror(Int32(code)))
  }
}

/// CLOCK_MONOTONIC in seconds, the clock the daemon's loop reports (`monotonicNow`).
private func monotonicSeconds() -> Double {
  var spec = timespec()
  clock_gettime(CLOCK_MONOTONIC, &spec)
  return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}
