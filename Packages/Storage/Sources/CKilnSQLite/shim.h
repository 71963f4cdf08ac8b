#ifndef CKILNSQLITE_SHIM_H
#define CKILNSQLITE_SHIM_H

// The system SQLite library (libsqlite3-dev on Debian/Ubuntu, part of the SDK on Apple
// platforms). KilnStorage's SQLiteStore is built on it; no package is fetched.
#include <sqlite3.h>

#endif
