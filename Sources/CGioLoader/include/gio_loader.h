// The few GIO calls the dnd plugin's GNOME backend makes (GSettings), reached through
// dlopen: libgio and GLib are loaded only when that backend runs, so the daemon pays their
// ~2 MB of resident pages only on GNOME. Plugins/DoNotDisturbPlugin/GSettings.swift is the one
// caller. GIO's types stay opaque: nothing here needs GLib's headers.
#ifndef GROW_GIO_LOADER_H
#define GROW_GIO_LOADER_H

#include <stdbool.h>

// Called from the plugin's own Swift code only: not exported from the plugin's library.
#define GROW_GIO_HIDDEN __attribute__((visibility("hidden")))

/// Opens libgio-2.0.so.0 once (later calls return the first answer); false when it or one of
/// the functions below is missing. Call before any other function here.
GROW_GIO_HIDDEN bool grow_gio_load(void);

/// The GSettings object for `schema` when that schema is installed and has `key`; NULL
/// otherwise (GSettings would abort the process for a missing schema).
GROW_GIO_HIDDEN void *grow_gsettings_new_checked(const char *schema, const char *key);

GROW_GIO_HIDDEN bool grow_gsettings_get_boolean(void *settings, const char *key);

/// false when the key is not writable.
GROW_GIO_HIDDEN bool grow_gsettings_set_boolean(void *settings, const char *key, bool value);

/// g_settings_sync: blocks until the backend (dconf) has every write made before.
GROW_GIO_HIDDEN void grow_gsettings_sync(void);

GROW_GIO_HIDDEN void grow_gobject_unref(void *object);

#endif
