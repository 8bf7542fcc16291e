// GIO (GSettings) for Swift, from gio-2.0's pkg-config. Only the dnd plugin's thin wrapper
// (Plugins/DoNotDisturbPlugin/GSettings.swift) imports this module.
#include <gio/gio.h>
