/*
 * A long-lived virtual pointer for the Wayland tests (never shipped; GrowTestSupport's
 * VirtualPointer compiles it with cc when a test needs it).
 *
 * A headless sway seat has no input devices, so a bar never gets a wl_pointer and clicks cannot
 * be faked with `swaymsg seat - cursor press`. This client creates one pointer device through
 * zwlr_virtual_pointer_v1 (sway 1.7 offers it) and keeps it for its whole life: a device that
 * comes and goes at once (/usr/lib/wlroots/virtual-pointer) loses events.
 *
 * Reads commands on stdin, one a line, and answers "ok" on stdout once the compositor has
 * handled it (a roundtrip):
 *   move X Y          absolute position in the output layout (WIDTH x HEIGHT from argv)
 *   press BUTTON      left | right | middle: press and release
 *   scroll up|down    one wheel step
 *
 * The protocol's two interfaces are declared here by hand from
 * wlr-virtual-pointer-unstable-v1.xml (request order and signatures), since Debian 12 ships no
 * copy of that XML for wayland-scanner.
 */
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wayland-client.h>

extern const struct wl_interface wl_seat_interface;
static const struct wl_interface virtual_pointer_interface;

/* zwlr_virtual_pointer_v1 requests: motion(u f f), motion_absolute(u u u u u), button(u u u),
 * axis(u u f), frame(), axis_source(u), axis_stop(u u), axis_discrete(u u f i), destroy(). */
enum { MOTION, MOTION_ABSOLUTE, BUTTON, AXIS, FRAME, AXIS_SOURCE, AXIS_STOP, AXIS_DISCRETE };
static const struct wl_interface *no_types[5] = {NULL, NULL, NULL, NULL, NULL};
static const struct wl_message pointer_requests[] = {
    {"motion", "uff", no_types},
    {"motion_absolute", "uuuuu", no_types},
    {"button", "uuu", no_types},
    {"axis", "uuf", no_types},
    {"frame", "", no_types},
    {"axis_source", "u", no_types},
    {"axis_stop", "uu", no_types},
    {"axis_discrete", "uufi", no_types},
    {"destroy", "", no_types},
};
static const struct wl_interface virtual_pointer_interface = {
    "zwlr_virtual_pointer_v1", 1, 9, pointer_requests, 0, NULL};

/* zwlr_virtual_pointer_manager_v1 requests: create_virtual_pointer(?o n), destroy(). */
static const struct wl_interface *create_types[] = {&wl_seat_interface,
                                                    &virtual_pointer_interface};
static const struct wl_message manager_requests[] = {
    {"create_virtual_pointer", "?on", create_types},
    {"destroy", "", no_types},
};
static const struct wl_interface manager_interface = {
    "zwlr_virtual_pointer_manager_v1", 1, 2, manager_requests, 0, NULL};

static struct wl_proxy *manager;
static struct wl_proxy *seat;

static void global(void *data, struct wl_registry *registry, uint32_t name,
                   const char *interface, uint32_t version) {
  (void)data;
  (void)version;
  if (strcmp(interface, manager_interface.name) == 0)
    manager = wl_registry_bind(registry, name, &manager_interface, 1);
  else if (strcmp(interface, "wl_seat") == 0 && seat == NULL)
    seat = wl_registry_bind(registry, name, &wl_seat_interface, 1);
}

static void global_remove(void *data, struct wl_registry *registry, uint32_t name) {
  (void)data;
  (void)registry;
  (void)name;
}

static const struct wl_registry_listener registry_listener = {global, global_remove};

static uint32_t now_ms = 1;


int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s WIDTH HEIGHT (commands on stdin)\n", argv[0]);
    return 2;
  }
  uint32_t width = (uint32_t)atoi(argv[1]), height = (uint32_t)atoi(argv[2]);
  struct wl_display *display = wl_display_connect(NULL);
  if (display == NULL) {
    fprintf(stderr, "cannot connect to the Wayland display\n");
    return 1;
  }
  struct wl_registry *registry = wl_display_get_registry(display);
  wl_registry_add_listener(registry, &registry_listener, NULL);
  wl_display_roundtrip(display);
  if (manager == NULL) {
    fprintf(stderr, "the compositor offers no zwlr_virtual_pointer_manager_v1\n");
    return 1;
  }
  struct wl_proxy *pointer = wl_proxy_marshal_constructor(manager, 0, &virtual_pointer_interface,
                                                          seat, NULL);
  wl_display_roundtrip(display);
  printf("ready\n");
  fflush(stdout);

  char line[256];
  while (fgets(line, sizeof line, stdin) != NULL) {
    char word[32] = "", what[32] = "";
    unsigned x = 0, y = 0;
    now_ms += 20;
    if (sscanf(line, "move %u %u", &x, &y) == 2) {
      wl_proxy_marshal(pointer, MOTION_ABSOLUTE, now_ms, x, y, width, height);
      wl_proxy_marshal(pointer, FRAME);
    } else if (sscanf(line, "%31s %31s", word, what) == 2 && strcmp(word, "press") == 0) {
      uint32_t button = strcmp(what, "right") == 0    ? BTN_RIGHT
                        : strcmp(what, "middle") == 0 ? BTN_MIDDLE
                                                      : BTN_LEFT;
      wl_proxy_marshal(pointer, BUTTON, now_ms, button, WL_POINTER_BUTTON_STATE_PRESSED);
      wl_proxy_marshal(pointer, FRAME);
      wl_proxy_marshal(pointer, BUTTON, now_ms + 10, button, WL_POINTER_BUTTON_STATE_RELEASED);
      wl_proxy_marshal(pointer, FRAME);
    } else if (strcmp(word, "scroll") == 0) {
      int steps = strcmp(what, "up") == 0 ? -1 : 1;
      wl_proxy_marshal(pointer, AXIS_SOURCE, WL_POINTER_AXIS_SOURCE_WHEEL);
      wl_proxy_marshal(pointer, AXIS_DISCRETE, now_ms, WL_POINTER_AXIS_VERTICAL_SCROLL,
                       wl_fixed_from_int(15 * steps), steps);
      wl_proxy_marshal(pointer, FRAME);
    } else {
      printf("unknown command: %s", line);
      fflush(stdout);
      continue;
    }
    if (wl_display_roundtrip(display) < 0) {
      fprintf(stderr, "the compositor closed the connection\n");
      return 1;
    }
    printf("ok\n");
    fflush(stdout);
  }
  wl_proxy_marshal(pointer, 8);
  wl_proxy_destroy(pointer);
  wl_display_roundtrip(display);
  wl_display_disconnect(display);
  return 0;
}
