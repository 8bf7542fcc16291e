// Facts about the product that the daemon, the CLI and plugins share; here so that the CLI
// needs no part of the daemon for them.

/// Grow's version, as `grow --version` prints it and the plugin protocol's hello line sends it.
public let growVersion = "0.1.0"

/// The plugins that ship with Grow (`libgrow-plugin-ID.so` next to `grow`), in the order
/// `grow plugins` lists them: the ids of `builtInPlugins` in Package.swift
/// (Tests/GrowCLITests/BuiltInPluginsTests.swift checks).
@_spi(GrowHost) public let builtInPluginIDs = [
  "notify", "dnd", "x11", "wayland", "statusbar", "sound", "tray", "gnome-pomodoro", "browser",
  "breakscreen",
]

/// Built-in plugins that run only when the config asks for them (`[plugin.ID] enabled = true`
/// or `[plugins] enable`): the tray icon, which on the many desktops without a
/// StatusNotifierItem host (i3bar, polybar, most tiling window managers) has nowhere to go;
/// GNOME Pomodoro's API (`org.gnome.Pomodoro`), a name that belongs to another program; and the
/// break screen, which covers every monitor: only for who asks for it.
@_spi(GrowHost) public let builtInPluginsOffByDefault: Set<String> = [
  "tray", "gnome-pomodoro", "breakscreen",
]
