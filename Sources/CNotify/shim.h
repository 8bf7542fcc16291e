// libnotify (and the GLib/GIO it is built on) for Swift. Only Grow's thin wrappers
// (NotifyPlugin's LibNotify.swift and GLibLoop.swift, DoNotDisturbPlugin's GSettings.swift)
// import this module.
#include <libnotify/notify.h>
#include <gio/gio.h>

typedef void (*cnotify_closed_callback)(NotifyNotification *notification, gpointer data);

// g_signal_connect and G_CALLBACK are macros, which Swift does not import.
static inline gulong cnotify_connect_closed(
    NotifyNotification *notification, cnotify_closed_callback callback, gpointer data) {
  return g_signal_connect(notification, "closed", G_CALLBACK(callback), data);
}

// The "id" property; g_object_get is variadic.
static inline gint cnotify_notification_id(NotifyNotification *notification) {
  gint id = 0;
  g_object_get(G_OBJECT(notification), "id", &id, NULL);
  return id;
}
