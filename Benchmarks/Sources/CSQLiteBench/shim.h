#ifndef CSQLITEBENCH_SHIM_H
#define CSQLITEBENCH_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT and SQLITE_STATIC are macros Swift cannot import: expose them as functions.
static inline sqlite3_destructor_type csqlitebench_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type csqlitebench_static(void) { return SQLITE_STATIC; }
#endif
