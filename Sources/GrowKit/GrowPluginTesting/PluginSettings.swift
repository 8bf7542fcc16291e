import GrowConfig

/// A plugin's `[plugin.ID]` section from the lines a user would write, read by the real
/// config parser (so values, errors and line numbers are what the plugin meets in a real file).
public enum PluginSettings {
  /// The section `[plugin.ID]` with `lines` under it, in a file named `path`.
  ///
  ///     let section = try PluginSettings.section("x11", "grace = 5s", "record-titles = yes")
  public static func section(_ id: String, _ lines: String..., path: String = "test.ini")
    throws(ConfigError) -> ConfigSection
  {
    let text = (["[plugin.\(id)]"] + lines).joined(separator: "\n") + "\n"
    return try GrowConfig.parse(text, path: path).pluginSections[id]
      ?? ConfigSection(name: "plugin.\(id)", path: path, line: 1)
  }
}
