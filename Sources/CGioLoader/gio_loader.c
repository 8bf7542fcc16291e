#include "gio_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

// GLib's gboolean is an int.
static struct {
  void *(*source_get_default)(void);
  void *(*source_lookup)(void *, const char *, int);
  int (*schema_has_key)(void *, const char *);
  void (*schema_unref)(void *);
  void *(*settings_new)(const char *);
  int (*get_boolean)(void *, const char *);
  int (*set_boolean)(void *, const char *, int);
  void (*sync)(void);
  void (*object_unref)(void *);
} gio;

static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  // Never closed: GObject types cannot be unloaded.
  void *library = dlopen("libgio-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return;
#define FIND(field, name)                            \
  *(void **)&gio.field = dlsym(library, name);       \
  if (gio.field == NULL) return;
  FIND(source_get_default, "g_settings_schema_source_get_default")
  FIND(source_lookup, "g_settings_schema_source_lookup")
  FIND(schema_has_key, "g_settings_schema_has_key")
  FIND(schema_unref, "g_settings_schema_unref")
  FIND(settings_new, "g_settings_new")
  FIND(get_boolean, "g_settings_get_boolean")
  FIND(set_boolean, "g_settings_set_boolean")
  FIND(sync, "g_settings_sync")
  FIND(object_unref, "g_object_unref")
#undef FIND
  loaded = true;
}

bool grow_gio_load(void) {
  pthread_once(&once, load);
  return loaded;
}

void *grow_gsettings_new_checked(const char *schema, const char *key) {
  if (!grow_gio_load()) return NULL;
  void *source = gio.source_get_default();
  if (source == NULL) return NULL;
  void *found = gio.source_lookup(source, schema, 1);
  if (found == NULL) return NULL;
  int has_key = gio.schema_has_key(found, key);
  gio.schema_unref(found);
  return has_key ? gio.settings_new(schema) : NULL;
}

bool grow_gsettings_get_boolean(void *settings, const char *key) {
  return gio.get_boolean(settings, key) != 0;
}

bool grow_gsettings_set_boolean(void *settings, const char *key, bool value) {
  return gio.set_boolean(settings, key, value ? 1 : 0) != 0;
}

void grow_gsettings_sync(void) { gio.sync(); }

void grow_gobject_unref(void *object) { gio.object_unref(object); }
