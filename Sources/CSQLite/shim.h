// The system SQLite (libsqlite3-dev), for GrowHistory. Only GrowHistory imports this module.
#include <sqlite3.h>
