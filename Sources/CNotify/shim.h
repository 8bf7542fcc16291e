// GLib/GIO (pulled in through libnotify's pkg-config) for Swift. Only the dnd plugin's thin
// wrapper (Plugins/DoNotDisturbPlugin/GSettings.swift) imports this module; the notify plugin
// speaks the notification protocol over the daemon's own bus connection and needs no GLib.
#include <libnotify/notify.h>
#include <gio/gio.h>
