#include "canberra_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static struct {
  int (*context_create)(ca_context **);
  int (*context_set_driver)(ca_context *, const char *);
  int (*context_open)(ca_context *);
  int (*context_destroy)(ca_context *);
  int (*context_play_full)(ca_context *, uint32_t, ca_proplist *, ca_finish_callback_t, void *);
  int (*proplist_create)(ca_proplist **);
  int (*proplist_destroy)(ca_proplist *);
  int (*proplist_sets)(ca_proplist *, const char *, const char *);
  const char *(*strerror)(int);
} ca;

static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  // Never closed: its PulseAudio client keeps threads and atexit handlers.
  void *library = dlopen("libcanberra.so.0", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return;
#define FIND(field, name)                      \
  *(void **)&ca.field = dlsym(library, name);  \
  if (ca.field == NULL) return;
  FIND(context_create, "ca_context_create")
  FIND(context_set_driver, "ca_context_set_driver")
  FIND(context_open, "ca_context_open")
  FIND(context_destroy, "ca_context_destroy")
  FIND(context_play_full, "ca_context_play_full")
  FIND(proplist_create, "ca_proplist_create")
  FIND(proplist_destroy, "ca_proplist_destroy")
  FIND(proplist_sets, "ca_proplist_sets")
  FIND(strerror, "ca_strerror")
#undef FIND
  loaded = true;
}

bool grow_ca_load(void) {
  pthread_once(&once, load);
  return loaded;
}

int grow_ca_context_create(ca_context **context) {
  return grow_ca_load() ? ca.context_create(context) : CA_ERROR_NOTAVAILABLE;
}

int grow_ca_context_set_driver(ca_context *context, const char *driver) {
  return grow_ca_load() ? ca.context_set_driver(context, driver) : CA_ERROR_NOTAVAILABLE;
}

int grow_ca_context_open(ca_context *context) {
  return grow_ca_load() ? ca.context_open(context) : CA_ERROR_NOTAVAILABLE;
}

int grow_ca_context_destroy(ca_context *context) {
  return grow_ca_load() ? ca.context_destroy(context) : CA_ERROR_NOTAVAILABLE;
}

int grow_ca_context_play_full(
    ca_context *context, uint32_t id, ca_proplist *properties, ca_finish_callback_t callback,
    void *userdata) {
  return grow_ca_load() ? ca.context_play_full(context, id, properties, callback, userdata)
                        : CA_ERROR_NOTAVAILABLE;
}

int grow_ca_proplist_create(ca_proplist **properties) {
  return grow_ca_load() ? ca.proplist_create(properties) : CA_ERROR_NOTAVAILABLE;
}

int grow_ca_proplist_destroy(ca_proplist *properties) {
  return grow_ca_load() ? ca.proplist_destroy(properties) : CA_ERROR_NOTAVAILABLE;
}

int grow_ca_proplist_sets(ca_proplist *properties, const char *key, const char *value) {
  return grow_ca_load() ? ca.proplist_sets(properties, key, value) : CA_ERROR_NOTAVAILABLE;
}

const char *grow_ca_strerror(int code) {
  if (!grow_ca_load()) return "libcanberra.so.0 is not installed";
  return ca.strerror(code);
}
