#include "CWaylandProtocols.h"

const struct wl_interface *grow_wl_seat_interface(void) { return &wl_seat_interface; }
const struct wl_interface *grow_org_kde_kwin_idle_interface(void) {
    return &org_kde_kwin_idle_interface;
}
const struct wl_interface *grow_ext_idle_notifier_v1_interface(void) {
    return &ext_idle_notifier_v1_interface;
}
const struct wl_interface *grow_zwlr_foreign_toplevel_manager_v1_interface(void) {
    return &zwlr_foreign_toplevel_manager_v1_interface;
}
const struct wl_interface *grow_wl_compositor_interface(void) { return &wl_compositor_interface; }
const struct wl_interface *grow_wl_shm_interface(void) { return &wl_shm_interface; }
const struct wl_interface *grow_wl_output_interface(void) { return &wl_output_interface; }
const struct wl_interface *grow_zwlr_layer_shell_v1_interface(void) {
    return &zwlr_layer_shell_v1_interface;
}
