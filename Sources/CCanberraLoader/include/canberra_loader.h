// The few libcanberra calls the sound plugin makes, reached through dlopen: libcanberra and
// the PulseAudio client libraries it brings (about 2.4 MB resident) are loaded only when the
// first sound plays, so a daemon whose sounds never play does not map them, and the static
// daemon image can link the sound plugin in. Plugins/SoundPlugin/Canberra.swift is the one
// caller. canberra.h gives the types and the CA_* names; none of its functions is linked.
#ifndef GROW_CANBERRA_LOADER_H
#define GROW_CANBERRA_LOADER_H

#include <canberra.h>
#include <stdbool.h>

// Called from the plugin's own Swift code only: not exported from the plugin's library.
#define GROW_CA_HIDDEN __attribute__((visibility("hidden")))

/// Opens libcanberra.so.0 once (later calls return the first answer); false when it or one of
/// the functions below is missing. Each function below returns CA_ERROR_NOTAVAILABLE (or
/// does nothing) then.
GROW_CA_HIDDEN bool grow_ca_load(void);

GROW_CA_HIDDEN int grow_ca_context_create(ca_context **context);
GROW_CA_HIDDEN int grow_ca_context_set_driver(ca_context *context, const char *driver);
GROW_CA_HIDDEN int grow_ca_context_open(ca_context *context);
GROW_CA_HIDDEN int grow_ca_context_destroy(ca_context *context);
GROW_CA_HIDDEN int grow_ca_context_play_full(
    ca_context *context, uint32_t id, ca_proplist *properties, ca_finish_callback_t callback,
    void *userdata);
GROW_CA_HIDDEN int grow_ca_proplist_create(ca_proplist **properties);
GROW_CA_HIDDEN int grow_ca_proplist_destroy(ca_proplist *properties);
GROW_CA_HIDDEN int grow_ca_proplist_sets(ca_proplist *properties, const char *key, const char *value);
/// "libcanberra.so.0 is not installed" when it could not be opened.
GROW_CA_HIDDEN const char *grow_ca_strerror(int code);

#endif
