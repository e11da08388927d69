import CSQLite
import Foundation

/// What the Store asks of a SQLite connection that it does its own way: a file with a
/// write-ahead log beside it, writers that take turns, no server and no users.
extension SQLiteConnection {
    /// Writers take turns on SQLite: a write of a few subscriptions is any write.
    func beginWrite(touching keys: [String]) throws { try execute(beginWrite) }

    func schemaVersion() throws -> Int { try first("PRAGMA user_version") { $0.int(0) } ?? 0 }

    func recordSchemaVersion(_ version: Int) throws { try execute("PRAGMA user_version = \(version)") }

    /// The write lock: a new store is an empty file, locked as any other.
    func beginMigration() throws { try execute(beginWrite) }



    func changeVersion() throws -> Int { try first("PRAGMA data_version") { $0.int(0) } ?? 0 }

    func storageBytes() throws -> (store: Int64?, wal: Int64?) {
        guard path != ":memory:" else { return (nil, nil) }
        func size(_ p: String) -> Int64? {
            (try? FileManager.default.attributesOfItem(atPath: p)[.size] as? NSNumber)?.int64Value
        }
        return (size(path), size(path + "-wal") ?? 0)
    }

    func integrityCheck() throws -> [String]? { try rows("PRAGMA integrity_check") { $0.string(0) } }

    func missingAuditGuards() throws -> [String] {
        let present = Set(try rows("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'audit_log'") { $0.string(0) })
        return AuditGuards.sqlite.filter { !present.contains($0) }
    }

    func auditGuardProblems() throws -> [String] {
        try missingAuditGuards().map { "trigger \($0) is missing" }
    }

    /// SQLite's online backup: consistent, and safe while other processes keep writing
    /// (it restarts its pass if they do).
    func backup(to destination: String) throws {
        try Store.createBackupFile(destination)
        var target: OpaquePointer?
        var rc = sqlite3_open_v2(destination, &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        defer { sqlite3_close_v2(target) }
        guard rc == SQLITE_OK, let target else {
            throw StoreError(operation: "backup to \(destination)", message: target.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open", code: rc)
        }
        guard let backup = sqlite3_backup_init(target, "main", handle, "main") else {
            throw StoreError(operation: "backup to \(destination)", message: String(cString: sqlite3_errmsg(target)), code: sqlite3_errcode(target))
        }
        repeat {
            rc = sqlite3_backup_step(backup, 256)
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { sqlite3_sleep(20) }
        } while rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED
        let finish = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE, finish == SQLITE_OK else {
            try? FileManager.default.removeItem(atPath: destination)
            throw StoreError(operation: "backup to \(destination)", message: String(cString: sqlite3_errmsg(target)), code: rc)
        }
    }

    func columns(of table: String) throws -> [String] {
        try rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [table]) { $0.string(0) }
    }

    /// SQLite takes copied rows as they come: its ids continue after the largest there.
    func copyStarts(into tables: [String]) throws {}
    func copyEnded(into tables: [String]) throws {}

    /// Every commit reaches the disk before it returns (so "stored" survives a power cut),
    /// and closing does not checkpoint the WAL (the next writer's automatic checkpoint
    /// does), keeping the answer fast.
    func configureForOneShotWrites() throws {
        try execute("PRAGMA synchronous = FULL")
        _ = subdesk_sqlite_no_checkpoint_on_close(handle)
    }

    /// A process that opens the store while no other has it open rebuilds the WAL index by
    /// reading the whole WAL, and knows nothing of what earlier checkpoints copied, so with
    /// one process per request the WAL would only grow and every request read all of it.
    /// Past `walLimitBytes` the WAL is copied into the database and truncated; when another
    /// connection is busy that is left to a later request (or, for `serve`, a later group).
    func finishOneShotWrites(walLimitBytes: Int64) {
        guard writeAheadLogIsPast(walLimitBytes) else { return }
        waitWhenBusy(milliseconds: 0)
        try? execute("PRAGMA wal_checkpoint(TRUNCATE)")
        // A long-lived writer (serve) goes on writing through this connection.
        waitWhenBusy(milliseconds: busyTimeoutMs)
    }

    /// stat(2) alone, cheap enough to ask after every commit: not FileManager's attributes,
    /// which also look up the owner's name and cost a one-shot process the whole user database.
    func writeAheadLogIsPast(_ bytes: Int64) -> Bool {
        guard !readOnly, !path.isEmpty, path != ":memory:" else { return false }
        var info = stat()
        return stat(path + "-wal", &info) == 0 && Int64(info.st_size) > bytes
    }

    /// For a long-lived writer (serve), on a connection of its own beside the one that
    /// commits: the WAL's frames are copied into the database without holding up the
    /// writers (PASSIVE), then, in the writers' turn among this process's connections, the
    /// WAL is truncated, with only the frames committed meanwhile left to copy. A commit
    /// then never pays for a checkpoint (with the copy in the committer's path, serve's p99
    /// per request was some 60% higher while a deliverer wrote beside it: BENCHMARKS.md).
    /// A writer of another process holding the lock leaves the truncation to a later call.
    func checkpointBesideWriters(walLimitBytes: Int64) {
        guard writeAheadLogIsPast(walLimitBytes) else { return }
        try? execute("PRAGMA wal_checkpoint(PASSIVE)")
        waitWhenBusy(milliseconds: 0)
        defer { waitWhenBusy(milliseconds: busyTimeoutMs) }
        _ = try? inWriteTurn { try execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// No server: writers wait only for the busy timeout.
    func boundServerWaitsForIntake() throws {}

    func checkpointEvery(pages: Int) throws {
        try execute("PRAGMA wal_autocheckpoint = \(max(1, pages))")
    }

    var bulkLoad: BulkLoadSettings? {
        BulkLoadSettings(
            // No journal and a large page cache: each page is written once, at the end.
            start: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -524288",
            end: "PRAGMA cache_size = -2000; PRAGMA synchronous = NORMAL; PRAGMA journal_mode = WAL",
            setAsideIndexes: """
                SELECT \(IndexDefinition.list) FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'
                """)
    }

    // No server, so no locks held by sessions, no logins and no database roles.

    func writeLockHolders() throws -> [Store.WriteLockHolder] { [] }
    func endOverdueWriteLockHolders() throws -> [(login: String, pid: Int)] { [] }
    func publicMayConnect() throws -> Bool? { nil }
    func databaseRoles() throws -> [String] { [] }
    func databaseUser() throws -> String? { nil }
    func installRoles() throws -> [String] {
        throw StoreError(operation: "install roles", message: "a SQLite store has no database roles", code: 0)
    }
    func makeLogin(_ login: PostgresLogin, password: String?) throws -> Bool {
        throw StoreError(operation: "make the login \(login.name)", message: "a SQLite store has no database logins", code: 0)
    }
    func connectionSlots() throws -> ConnectionSlots? { nil }
}

extension SQLiteConnection {
    /// What the SQLite file at `path` is, read without changing it (`Store.kind(ofFileAt:)`).
    static func kind(ofFileAt path: String) -> Store.FileKind {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        if isDirectory.boolValue { return .other("a directory") }
        guard let db = try? SQLiteConnection(path: path, readOnly: true, busyTimeoutMs: 2000) else { return .other("not readable") }
        guard let tables = try? db.texts("SELECT name FROM sqlite_schema WHERE type = 'table'") else {
            return .other("not a SQLite database")
        }
        guard tables.contains("notifications") else { return .other(tables.isEmpty ? "an empty or foreign SQLite file" : "a SQLite database of another program") }
        if tables.contains("store_facts"), (try? StoreFactsTable(db: db).value("kind")) == "demo" {
            return .demo
        }
        return .store(notifications: (try? db.count("SELECT count(*) FROM notifications")) ?? 0)
    }
}
