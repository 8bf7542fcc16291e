// Facts about the product that the daemon, the CLI and plugins share; here so that the CLI
// needs no part of the daemon for them.

/// Grow's version, as `grow --version` prints it and the plugin protocol's hello line sends it.
public let growVersion = "0.1.0"

/// The plugins that ship with Grow (`libgrow-plugin-ID.so` next to `grow`), in the order
/// `grow plugins` lists them: the ids of `builtInPlugins` in Package.swift
/// (Tests/GrowCLITests/BuiltInPluginsTests.swift checks).
@_spi(GrowHost) public let builtInPluginIDs = [
  "notify", "dnd", "x11", "wayland", "statusbar", "sound",
]
