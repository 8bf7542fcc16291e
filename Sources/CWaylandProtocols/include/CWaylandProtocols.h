/* libwayland-client and the generated glue of the protocols the wayland and breakscreen plugins
   speak (scripts/gen-wayland-protocols). Only Plugins/WaylandPlugin/WaylandDisplay.swift and
   Plugins/BreakScreenPlugin/BreakScreenWayland.swift import this. */
#ifndef C_WAYLAND_PROTOCOLS_H
#define C_WAYLAND_PROTOCOLS_H

#include <wayland-client.h>
#include "ext-idle-notify-v1-client-protocol.h"
#include "kde-idle-client-protocol.h"
#include "wlr-foreign-toplevel-client-protocol.h"
#include "wlr-layer-shell-client-protocol.h"

/* Swift imports an `extern const struct wl_interface` as a constant and `&` would point at a
   copy; libwayland compares interface pointers, so they come from C. */
const struct wl_interface *grow_wl_seat_interface(void);
const struct wl_interface *grow_org_kde_kwin_idle_interface(void);
const struct wl_interface *grow_ext_idle_notifier_v1_interface(void);
const struct wl_interface *grow_zwlr_foreign_toplevel_manager_v1_interface(void);
const struct wl_interface *grow_wl_compositor_interface(void);
const struct wl_interface *grow_wl_shm_interface(void);
const struct wl_interface *grow_wl_output_interface(void);
const struct wl_interface *grow_zwlr_layer_shell_v1_interface(void);

#endif
