#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call. */
static inline int subdesk_sqlite_no_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

/* sqlite3_config is variadic too. Without memory statistics, an allocation inside SQLite
 * takes no global mutex and updates no counters; only before SQLite is first used (it
 * answers SQLITE_MISUSE after, and nothing changes). */
static inline int subdesk_sqlite_without_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
