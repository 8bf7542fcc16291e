// Xlib, the MIT-SCREEN-SAVER and SYNC extensions, for the x11 plugin. Only
// Plugins/X11Plugin/X11Display.swift uses these; it gives them Swift names.
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/Xatom.h>
#include <X11/extensions/scrnsaver.h>
#include <X11/extensions/sync.h>

// Xlib's default error handler exits the process on any error, and a window that was
// destroyed while we read it (BadWindow) is normal. Errors are ignored: every read checks
// its own result.
static inline int grow_x11_ignore_error(Display *display, XErrorEvent *event) {
  (void)display;
  (void)event;
  return 0;
}

static inline void grow_x11_install_error_handler(void) {
  XSetErrorHandler(grow_x11_ignore_error);
}

// The first half of Xlib's fatal-I/O path: the default prints a message; we stay quiet and
// report it ourselves.
static inline int grow_x11_quiet_io_error(Display *display) {
  (void)display;
  return 0;
}

// Called by Xlib when the connection breaks, instead of exit(): sets *flag and returns, so
// the process lives on and the plugin can take itself out of service (libX11 >= 1.8.4).
static inline void grow_x11_io_error_exit(Display *display, void *flag) {
  (void)display;
  *(volatile int *)flag = 1;
}

static inline void grow_x11_survive_io_errors(Display *display, int *flag) {
  XSetIOErrorHandler(grow_x11_quiet_io_error);
  XSetIOErrorExitHandler(display, grow_x11_io_error_exit, flag);
}

// The alarm event hidden in the XEvent union.
static inline XSyncAlarmNotifyEvent grow_x11_alarm_event(const XEvent *event) {
  return *(const XSyncAlarmNotifyEvent *)event;
}

static inline long long grow_x11_sync_value(XSyncValue value) {
  return ((long long)XSyncValueHigh32(value) << 32) | (unsigned int)XSyncValueLow32(value);
}
