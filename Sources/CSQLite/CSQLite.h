// SQLite 3 for Swift. Shims are `static inline`, prefixed `csqlite_`, and each says why it exists.
#ifndef STUDIO_CSQLITE_H
#define STUDIO_CSQLITE_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer: Swift cannot import it, and without it
// sqlite3_bind_text would keep a pointer to Swift memory that does not outlive the call.
static inline int csqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
#endif
