import CNotify

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

  /// Writes and waits until the backend (dconf) has it.
  func set(_ value: Bool) -> Bool {
    let written = g_settings_set_boolean(settings, key, value ? 1 : 0) != 0
    g_settings_sync()
    return written
  }
}
