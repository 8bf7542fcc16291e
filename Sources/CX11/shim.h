// XCB and its SYNC extension, for the x11 plugin (Plugins/X11Plugin/X11Display.swift gives
// them Swift names) and the tests' title flood (Sources/GrowTestSupport/TitleFlood.swift).
// XCB rather than Xlib: every request hands back a cookie at once and its reply is collected
// when it has arrived (xcb_poll_for_reply), so the daemon's loop never waits for the server.
#include <string.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>  // xcb_poll_for_reply
#include <xcb/sync.h>

// The SYNC extension's key for xcb_get_extension_data (a C global Swift cannot take the
// address of safely).
static inline xcb_extension_t *grow_xcb_sync_extension(void) { return &xcb_sync_id; }

// The root window of screen `screen` (as xcb_connect returned it), or 0.
static inline xcb_window_t grow_xcb_root(xcb_connection_t *connection, int screen) {
  xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(connection));
  for (int index = 0; it.rem > 0; xcb_screen_next(&it), index++) {
    if (index == screen) return it.data->root;
  }
  return 0;
}

// The IDLETIME system counter in a ListSystemCounters reply, or 0. Walked by hand: on the
// wire an entry is a counter (4 bytes), a resolution (8), a name length (2) and the name,
// padded to 4 bytes; xcb_sync_systemcounter_next (libxcb 1.15) gets the padding wrong.
static inline xcb_sync_counter_t grow_xcb_idle_counter(
    const xcb_sync_list_system_counters_reply_t *reply) {
  const uint8_t *entry = (const uint8_t *)(reply + 1);
  const uint8_t *end = (const uint8_t *)reply + 32 + (size_t)reply->length * 4;
  for (uint32_t index = 0; index < reply->counters_len; index++) {
    if (entry + 14 > end) return 0;
    uint32_t counter;
    uint16_t length;
    memcpy(&counter, entry, 4);
    memcpy(&length, entry + 12, 2);
    size_t size = (14 + (size_t)length + 3) & ~(size_t)3;
    if (entry + 14 + length > end) return 0;
    if (length == 8 && memcmp(entry + 14, "IDLETIME", 8) == 0) return counter;
    entry += size;
  }
  return 0;
}

// ICCCM 4.1.4: ask the window manager to iconify `window` (WM_CHANGE_STATE, IconicState).
static inline void grow_xcb_request_iconify(
    xcb_connection_t *connection, xcb_window_t root, xcb_window_t window,
    xcb_atom_t change_state) {
  xcb_client_message_event_t event;
  memset(&event, 0, sizeof event);
  event.response_type = XCB_CLIENT_MESSAGE;
  event.format = 32;
  event.window = window;
  event.type = change_state;
  event.data.data32[0] = 3;  // IconicState
  xcb_send_event(
      connection, 0, root,
      XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
      (const char *)&event);
}

// ICCCM 4.2.8.1: ask the client that owns `window` to close it (WM_PROTOCOLS /
// WM_DELETE_WINDOW), as a window manager does for its close button; for window managers
// without _NET_CLOSE_WINDOW. Event mask 0: delivered to the window's own client.
static inline void grow_xcb_send_delete_window(
    xcb_connection_t *connection, xcb_window_t window, xcb_atom_t protocols,
    xcb_atom_t delete_window) {
  xcb_client_message_event_t event;
  memset(&event, 0, sizeof event);
  event.response_type = XCB_CLIENT_MESSAGE;
  event.format = 32;
  event.window = window;
  event.type = protocols;
  event.data.data32[0] = delete_window;
  event.data.data32[1] = XCB_CURRENT_TIME;
  xcb_send_event(connection, 0, window, XCB_EVENT_MASK_NO_EVENT, (const char *)&event);
}

// EWMH _NET_CLOSE_WINDOW: ask the window manager to close `window` as its close button does
// (WM_DELETE_WINDOW where the client takes it, so it may still ask to save). Source 2: a
// pager or tool acting for the person, which window managers do not second-guess.
static inline void grow_xcb_request_close(
    xcb_connection_t *connection, xcb_window_t root, xcb_window_t window,
    xcb_atom_t close_window) {
  xcb_client_message_event_t event;
  memset(&event, 0, sizeof event);
  event.response_type = XCB_CLIENT_MESSAGE;
  event.format = 32;
  event.window = window;
  event.type = close_window;
  event.data.data32[0] = XCB_CURRENT_TIME;
  event.data.data32[1] = 2;
  xcb_send_event(
      connection, 0, root,
      XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
      (const char *)&event);
}
