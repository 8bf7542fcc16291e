// libdbus for the `grow` front (Sources/grow), which links no GrowKit (so not its CDBus): the
// type codes it reads, which Swift does not import as written (`((int) 's')`).
#include <dbus/dbus.h>

static const int CFRONT_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int CFRONT_TYPE_INT32 = DBUS_TYPE_INT32;
static const int CFRONT_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int CFRONT_TYPE_INT64 = DBUS_TYPE_INT64;
static const int CFRONT_TYPE_STRING = DBUS_TYPE_STRING;
static const int CFRONT_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int CFRONT_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int CFRONT_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;
