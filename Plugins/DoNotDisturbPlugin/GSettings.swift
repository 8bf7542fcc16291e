import CGioLoader
import Dispatch
import Glibc
import GrowLoop

/// One boolean GSettings key, through GIO, with Swift names.
///
/// GIO is opened with dlopen by the first instance (CGioLoader), so only a daemon whose
/// notification server is GNOME Shell maps GLib. The initialiser fails when libgio is not
/// installed, and when the schema or key is not: GSettings would abort the process for them.
@MainActor
final class GSettingsBoolean {
  private let settings: UnsafeMutableRawPointer
  private let key: String

  init?(schema: String, key: String) {
    guard let settings = grow_gsettings_new_checked(schema, key) else { return nil }
    self.settings = settings
    self.key = key
  }

  isolated deinit { grow_gobject_unref(settings) }

  var value: Bool { grow_gsettings_get_boolean(settings, key) }

  /// Writes, and calls `done` on the loop once the backend (dconf) has it, or with false
  /// after `timeout` seconds. `g_settings_sync` blocks for as long as dconf takes, so it runs
  /// on a worker thread, never on the loop, and one at a time: it flushes every write made
  /// before it, so a write made while one runs waits for the next. A stalled dconf thus
  /// holds one thread and one pipe, not one per write; a pipe brings the answer back.
  func set(
    _ value: Bool, on loop: any EventLoop, timeout: Double,
    _ done: @escaping (Bool) -> Void
  ) {
    let written = grow_gsettings_set_boolean(settings, key, value)
    var answered = false
    let alarm = loop.after(seconds: timeout) {
      if !answered {
        answered = true
        done(false)
      }
    }
    waiting.append {
      alarm.cancel()
      if !answered {
        answered = true
        done(written)
      }
    }
    if !syncing { sync(on: loop) }
  }

  /// Writes made since the running sync started, each told once a later sync returns.
  private var waiting: [() -> Void] = []
  private var syncing = false

  private func sync(on loop: any EventLoop) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else {
      let failed = waiting
      waiting = []
      for tell in failed { tell() }
      return
    }
    let (readEnd, writeEnd) = (ends[0], ends[1])
    // pipe2 is not imported: close-on-exec is set at once, so a plugin's child started
    // meanwhile keeps at most these two ends until its exec.
    _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
    _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
    syncing = true
    let flushed = waiting
    waiting = []
    var watch: (any DescriptorWatch)?
    watch = loop.watch(readEnd, for: .readable) { [weak self] _ in
      watch?.cancel()
      watch = nil
      close(readEnd)
      for tell in flushed { tell() }
      guard let self else { return }
      self.syncing = false
      if !self.waiting.isEmpty { self.sync(on: loop) }
    }
    DispatchQueue.global(qos: .utility).async {
      grow_gsettings_sync()
      close(writeEnd)  // the read end sees end-of-file: readable
    }
  }
}
