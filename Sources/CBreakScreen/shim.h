// XCB with RandR, cairo and pango, for the breakscreen plugin
// (Plugins/BreakScreenPlugin/BreakScreenDisplay.swift and BreakScreenPainter.swift give them
// Swift names). Frames are drawn by cairo into client memory and sent with PutImage: cairo's
// own XCB backend asks the server questions and waits for the answers, which the daemon's loop
// must never do.
#include <string.h>
#include <stdlib.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>  // xcb_poll_for_reply
#include <xcb/randr.h>
#include <cairo.h>
#include <pango/pangocairo.h>

// The RandR extension's key for xcb_get_extension_data.
static inline xcb_extension_t *grow_bs_randr_extension(void) { return &xcb_randr_id; }

// Screen `screen` of the connection's setup, or NULL.
static inline xcb_screen_t *grow_bs_screen(xcb_connection_t *connection, int screen) {
  xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(connection));
  for (int index = 0; it.rem > 0; xcb_screen_next(&it), index++) {
    if (index == screen) return it.data;
  }
  return NULL;
}

// Bits per pixel of ZPixmap images of `depth`, or 0 when the server has no such format.
static inline int grow_bs_bits_per_pixel(xcb_connection_t *connection, uint8_t depth) {
  const xcb_setup_t *setup = xcb_get_setup(connection);
  xcb_format_iterator_t it = xcb_setup_pixmap_formats_iterator(setup);
  for (; it.rem > 0; xcb_format_next(&it)) {
    if (it.data->depth == depth) return it.data->bits_per_pixel;
  }
  return 0;
}

// Whether the server puts the least significant byte first (cairo's RGB24 is native-endian).
static inline int grow_bs_lsb_first(xcb_connection_t *connection) {
  return xcb_get_setup(connection)->image_byte_order == XCB_IMAGE_ORDER_LSB_FIRST;
}

// Monitor `index` of a GetMonitors reply: its rectangle; 0 when out of range.
static inline int grow_bs_monitor(
    const xcb_randr_get_monitors_reply_t *reply, int index, int16_t *x, int16_t *y,
    uint16_t *width, uint16_t *height) {
  xcb_randr_monitor_info_iterator_t it = xcb_randr_get_monitors_monitors_iterator(reply);
  for (int at = 0; it.rem > 0; xcb_randr_monitor_info_next(&it), at++) {
    if (at == index) {
      *x = it.data->x;
      *y = it.data->y;
      *width = it.data->width;
      *height = it.data->height;
      return 1;
    }
  }
  return 0;
}

// Keysym `column` of keycode `code` in a GetKeyboardMapping reply that starts at `first`.
static inline xcb_keysym_t grow_bs_keysym(
    const xcb_get_keyboard_mapping_reply_t *reply, xcb_keycode_t first, xcb_keycode_t code,
    int column) {
  int per = reply->keysyms_per_keycode;
  int count = xcb_get_keyboard_mapping_keysyms_length(reply);
  int at = (code - first) * per + column;
  if (code < first || column >= per || at >= count) return 0;
  return xcb_get_keyboard_mapping_keysyms(reply)[at];
}
