import CSQLite
import Foundation

/// Facts `subdesk doctor` reports about a store.
public struct StoreHealth: Sendable {
    public var integrity: [String]
    public var schemaVersion: Int
    public var latestSchemaVersion: Int
    public var walBytes: Int64?
    public var fileBytes: Int64?
    public var subscriptions: Int
    public var notifications: Int
    public var quarantined: Int
}

extension Store {
    /// Runs SQLite's integrity check and gathers the store's vital signs.
    public func health() throws -> StoreHealth {
        if dialect == .postgres { return try postgresHealth() }
        let integrity = try db.rows("PRAGMA integrity_check") { $0.string(0) }
        func size(_ p: String) -> Int64? {
            (try? FileManager.default.attributesOfItem(atPath: p)[.size] as? NSNumber)?.int64Value
        }
        return StoreHealth(integrity: integrity, schemaVersion: schemaVersion, latestSchemaVersion: Migrations.latestVersion,
                           walBytes: size(path + "-wal"), fileBytes: size(path), subscriptions: try subscriptionCount(),
                           notifications: try notificationCount(), quarantined: try quarantineCount())
    }

    /// Marks the store as one `subdesk demo` built (test-CA data, replaceable by the next demo).
    public func markAsDemo() throws {
        try write { _ = try db.run("INSERT INTO store_facts (key, value) VALUES ('kind', 'demo') ON CONFLICT (key) DO UPDATE SET value = 'demo'") }
    }

    /// Whether `subdesk demo` built this store.
    public var isDemo: Bool {
        (try? db.first("SELECT value FROM store_facts WHERE key = 'kind'") { $0.string(0) }) == "demo"
    }

    /// What is at `path`, read without changing it: nothing, a demo store, another subdesk
    /// store (with its notification count), or a file that is no subdesk store.
    public enum FileKind: Equatable { case missing, demo, store(notifications: Int), other(String) }

    public static func kind(ofFileAt path: String) -> FileKind {
        if PostgresLocation.isPostgres(path) {
            do {
                let store = try Store(path: path, mode: .reading)
                return store.isDemo ? .demo : .store(notifications: (try? store.notificationCount()) ?? 0)
            } catch is StoreNotFound {
                return .missing
            } catch {
                return .other("not readable (\(error))")
            }
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        if isDirectory.boolValue { return .other("a directory") }
        guard let db = try? SQLiteConnection(path: path, readOnly: true, busyTimeoutMs: 2000) else { return .other("not readable") }
        guard let tables = try? db.rows("SELECT name FROM sqlite_schema WHERE type = 'table'", [], { $0.string(0) }) else {
            return .other("not a SQLite database")
        }
        guard tables.contains("notifications") else { return .other(tables.isEmpty ? "an empty or foreign SQLite file" : "a SQLite database of another program") }
        if tables.contains("store_facts"), (try? db.first("SELECT value FROM store_facts WHERE key = 'kind'") { $0.string(0) }) == "demo" {
            return .demo
        }
        return .store(notifications: (try? db.first("SELECT count(*) FROM notifications") { $0.int(0) }) ?? 0)
    }

    /// Whether the store holds data signed under the test CA (chains it remembers name it).
    public func holdsTestCAData() throws -> Bool {
        try db.first("SELECT count(*) FROM verified_chains WHERE subjects LIKE '%TEST ONLY%'") { $0.int(0) } ?? 0 > 0
    }

    /// The triggers that keep the audit log append-only and are not in the store (someone
    /// dropped them with another tool); empty when all are there.
    public func missingAuditGuards() throws -> [String] {
        if dialect == .postgres {
            let present = Set(try db.rows("""
                SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relname = 'audit_log' AND n.nspname = current_schema() AND t.tgenabled <> 'D' AND NOT t.tgisinternal
                """) { $0.string(0) })
            return PostgresSchema.auditGuards.filter { !present.contains($0) }
        }
        let present = Set(try db.rows("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'audit_log'") { $0.string(0) })
        return Migrations.auditGuards.filter { !present.contains($0) }
    }

    /// What keeps the audit log from being append-only, one sentence each; empty when its
    /// guards are whole. On PostgreSQL that covers the trigger functions' bodies and owners.
    public func auditGuardProblems() throws -> [String] {
        if dialect == .postgres { return try postgresAuditGuardProblems() }
        return try missingAuditGuards().map { "trigger \($0) is missing" }
    }

    /// Copies the store to `destination` with SQLite's online backup: consistent, and
    /// safe while other processes keep writing (it restarts its pass if they do).
    public func backup(to destination: String) throws {
        if dialect == .postgres { return try postgresBackup(to: destination) }
        guard let db = db as? SQLiteConnection else { return }
        try Store.createBackupFile(destination)
        var target: OpaquePointer?
        var rc = sqlite3_open_v2(destination, &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        defer { sqlite3_close_v2(target) }
        guard rc == SQLITE_OK, let target else {
            throw StoreError(operation: "backup to \(destination)", message: target.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open", code: rc)
        }
        guard let backup = sqlite3_backup_init(target, "main", db.handle, "main") else {
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
}

extension Store {
    /// Creates `path` for a backup, readable and writable by this user only (a backup holds
    /// the same user ids, tokens and purchases as the store); refuses a path that exists,
    /// atomically, so nothing is ever overwritten.
    static func createBackupFile(_ path: String) throws {
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            throw StoreError(operation: "backup to \(path)",
                             message: code == EEXIST ? "file exists; refusing to overwrite it" : String(cString: strerror(code)), code: 0)
        }
        // The mode asked for is cut by the umask only towards fewer rights; make it exact.
        fchmod(fd, 0o600)
        close(fd)
    }
}

extension Store {
    /// For one short-lived writer per request (CGI): every commit reaches the disk before
    /// it returns (so "stored" survives a power cut), and closing does not checkpoint the
    /// WAL (the next writer's automatic checkpoint does), keeping the answer fast.
    public func configureForOneShotWrites() throws {
        // A PostgreSQL commit is durable when it returns (synchronous_commit is the server's).
        guard let db = db as? SQLiteConnection else { return }
        try db.execute("PRAGMA synchronous = FULL")
        _ = subdesk_sqlite_no_checkpoint_on_close(db.handle)
    }

    /// Bounds the server's waits for a writer someone is waiting on (CGI, batch intake):
    /// a statement may run at most 20 s past the write lock's timeout, and a transaction
    /// left idle (a client stopped half-way) ends after 30 s, freeing its locks; unless the
    /// connection's settings (URI, PGOPTIONS, the role's) bound them already. SQLite has
    /// no server, and its writers wait only for the busy timeout.
    public func boundServerWaitsForIntake() throws {
        #if !SUBDESK_NO_POSTGRES
        guard let c = db as? PostgresConnection else { return }
        try c.boundServerWaits(statementMs: c.lockWaitMs + 20_000, idleInTransactionMs: 30_000)
        #endif
    }

    /// Ends a one-shot writer's work. A process that opens the store while no other has it
    /// open rebuilds the WAL index by reading the whole WAL, and knows nothing of what earlier
    /// checkpoints copied, so with one process per request the WAL would only grow and every
    /// request read all of it. Past `walLimitBytes` the WAL is copied into the database and
    /// truncated; when another connection is busy that is left to a later request.
    public func finishOneShotWrites(walLimitBytes: Int64 = 1 << 20) {
        // stat(2), not FileManager's attributes: those also look up the owner's name,
        // which costs a one-shot process the whole user database.
        guard let db = db as? SQLiteConnection else { return }
        var info = stat()
        guard stat(path + "-wal", &info) == 0, Int64(info.st_size) > walLimitBytes else { return }
        sqlite3_busy_timeout(db.handle, 0)
        try? db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Stored size of V2 notification bodies against their size as received.
    public func bodyStatistics() throws -> (count: Int, storedBytes: Int64, jwsHeaders: Int, headerBytes: Int64) {
        let bodies = try db.first("SELECT count(*), IFNULL(sum(length(body)), 0) FROM notifications WHERE version = 2 AND source IS DISTINCT FROM 'generate'") {
            ($0.int(0), $0.int64(1))
        } ?? (0, 0)
        let headers = try db.first("SELECT count(*), IFNULL(sum(length(segment)), 0) FROM jws_headers") { ($0.int(0), $0.int64(1)) } ?? (0, 0)
        return (bodies.0, bodies.1, headers.0, headers.1)
    }
}
