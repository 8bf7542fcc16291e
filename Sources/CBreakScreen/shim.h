// XCB with RandR and MIT-SHM, cairo and pango, for the breakscreen plugin
// (Plugins/BreakScreenPlugin/BreakScreenDisplay.swift and BreakScreenPainter.swift give them
// Swift names). Frames are drawn by cairo into memory shared with the server (MIT-SHM), so a
// frame is a request of a few bytes, not megabytes of pixels that a busy or stopped server
// would leave the daemon blocked writing; cairo's own XCB backend asks the server questions
// and waits for the answers, which the daemon's loop must never do.
#include <string.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/memfd.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>  // xcb_poll_for_reply
#include <xcb/randr.h>
#include <xcb/shm.h>
#include <cairo.h>
#include <pango/pangocairo.h>

// The RandR and MIT-SHM extensions' keys for xcb_get_extension_data.
static inline xcb_extension_t *grow_bs_randr_extension(void) { return &xcb_randr_id; }
static inline xcb_extension_t *grow_bs_shm_extension(void) { return &xcb_shm_id; }

// A private System V shared-memory segment of `size` bytes, mapped at *address; its id, or -1.
// Marked for removal at once: Linux lets the server attach it still, and it goes when the
// last attachment does, even if the daemon dies first.
static inline int grow_bs_shm_create(size_t size, void **address) {
  int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
  if (id < 0) return -1;
  void *mapped = shmat(id, NULL, 0);
  shmctl(id, IPC_RMID, NULL);
  if (mapped == (void *)-1) return -1;
  *address = mapped;
  return id;
}

static inline void grow_bs_shm_unmap(void *address) { shmdt(address); }

// An anonymous memory file (memfd) of `size` bytes, mapped shared at *address, for a Wayland
// compositor's wl_shm pool; its descriptor, or -1. Through syscall(): glibc declares
// memfd_create only under _GNU_SOURCE, which Swift's view of the C library lacks.
static inline int grow_bs_memfd_create(size_t size, void **address) {
  int fd = (int)syscall(SYS_memfd_create, "grow-break", MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (ftruncate(fd, (off_t)size) < 0) { close(fd); return -1; }
  void *mapped = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) { close(fd); return -1; }
  *address = mapped;
  return fd;
}

static inline void grow_bs_memfd_unmap(void *address, size_t size, int fd) {
  munmap(address, size);
  close(fd);
}

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
