import CGio
import Dispatch
import Glibc
import GrowLoop

/// One boolean GSettings key, through GIO, with Swift names.
///
/// GSettings aborts the process for a schema that is not installed, so the schema is looked
/// up first and the initialiser fails instead.
@MainActor
final class GSettingsBoolean {
  private let settings: UnsafeMutablePointer<GSettings>
  private let key: String

  init?(schema: String, key: String) {
    guard let source = g_settings_schema_source_get_default(),
      let found = g_settings_schema_source_lookup(source, schema, 1)
    else { return nil }
    let hasKey = g_settings_schema_has_key(found, key) != 0
    g_settings_schema_unref(found)
    guard hasKey, let settings = g_settings_new(schema) else { return nil }
    self.settings = settings
    self.key = key
  }

  isolated deinit { g_object_unref(settings) }

  var value: Bool { g_settings_get_boolean(settings, key) != 0 }

  /// Writes, and calls `done` on the loop once the backend (dconf) has it. `g_settings_sync`
  /// blocks for as long as dconf takes, so it runs on a worker thread, never on the loop; a
  /// pipe brings the answer back.
  func set(_ value: Bool, on loop: any EventLoop, _ done: @escaping (Bool) -> Void) {
    let written = g_settings_set_boolean(settings, key, value ? 1 : 0) != 0
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return done(false) }
    let (readEnd, writeEnd) = (ends[0], ends[1])
    // pipe2 is not imported: close-on-exec is set at once, so a plugin's child started
    // meanwhile keeps at most these two ends until its exec.
    _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
    _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
    var watch: (any DescriptorWatch)?
    watch = loop.watch(readEnd, for: .readable) { _ in
      watch?.cancel()
      watch = nil
      close(readEnd)
      done(written)
    }
    DispatchQueue.global(qos: .utility).async {
      g_settings_sync()
      close(writeEnd)  // the read end sees end-of-file: readable
    }
  }
}
