import Foundation

/// What opening a PostgreSQL store found.
struct OpenedPostgresStore {
    var connection: any SQLConnection
    var created: Bool
    var readOnly: Bool
    var newerSchemaVersion: Int?
}

extension Store {
    /// Connects, and creates the schema (and the named PostgreSQL schema) when `mode` allows
    /// and the store is not there yet; two processes creating it at once take turns.
    static func openPostgres(_ location: PostgresLocation, mode: OpenMode, busyTimeoutMs: Int32) throws -> OpenedPostgresStore {
        #if SUBDESK_NO_POSTGRES
        throw StoreError(operation: "open \(location.conninfo)", message: """
            this subdesk was built without PostgreSQL support (the static deployment build); \
            use one built with `swift build -c release`
            """, code: 0)
        #else
        let c = try PostgresConnection(location: location, lockTimeoutMs: busyTimeoutMs)
        func installed() throws -> Bool {
            try c.first("SELECT to_regclass('schema_version') IS NOT NULL") { $0.bool(0) } ?? false
        }
        var created = false
        if try !installed() {
            guard mode == .createIfMissing else {
                throw StoreNotFound(path: PostgresLocation.redacted(location.conninfo) + (location.schema.map { " (schema \($0))" } ?? ""))
            }
            try c.execute("BEGIN; SELECT pg_advisory_xact_lock(hashtext('subdesk:create'))")
            do {
                if let schema = location.schema { try c.execute("CREATE SCHEMA IF NOT EXISTS \(schema)") }
                if try !installed() {
                    try c.execute(PostgresSchema.sql)
                    created = true
                }
                try c.execute("COMMIT")
            } catch {
                try? c.execute("ROLLBACK")
                throw error
            }
        }
        var version = try c.first("SELECT version FROM schema_version") { $0.int(0) } ?? 0
        if version < PostgresSchema.version && mode != .reading {
            try c.writeTransaction {
                // Read again under the write lock: another process may have upgraded meanwhile.
                let current = try c.first("SELECT version FROM schema_version") { $0.int(0) } ?? 0
                for upgrade in PostgresSchema.upgrades where upgrade.version > current {
                    try c.execute(upgrade.sql)
                    try c.run("UPDATE schema_version SET version = ?", [upgrade.version])
                }
            }
            version = PostgresSchema.version
        }
        if version > PostgresSchema.version && mode != .reading {
            throw StoreError(operation: "open \(location.conninfo)", message: """
                schema version \(version) was written by a newer subdesk (this one knows up to \
                \(PostgresSchema.version)); refusing to change it: use the newer subdesk
                """, code: 0)
        }
        // A role that may not change the subscriptions (the read-only role) cannot bring
        // derived data up to date either: it reads what is there.
        // Who this is, in the same round trip: a refused statement names the user and roles.
        let canWrite = try c.first("""
            SELECT has_table_privilege('subscriptions', 'UPDATE'), session_user,
                   (SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles
                    WHERE rolname IN ('\(PostgresRoles.all.joined(separator: "', '"))') AND pg_has_role(session_user, oid, 'MEMBER'))
            """) { row -> Bool in
            c.identity = (row.string(1), row.isNull(2) ? [] : row.string(2).split(separator: ",").map(String.init))
            return row.bool(0)
        } ?? false
        return OpenedPostgresStore(connection: c, created: created, readOnly: !canWrite,
                                   newerSchemaVersion: version > PostgresSchema.version ? version : nil)
        #endif
    }

    /// `doctor`'s facts for a PostgreSQL store: the server checks its own pages, so the
    /// integrity line says what was checked here (the schema's version and guards).
    func postgresHealth() throws -> StoreHealth {
        let bytes = try db.first("""
            SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'
            """) { $0.int64(0) }
        return StoreHealth(integrity: ["ok"], schemaVersion: schemaVersion, latestSchemaVersion: PostgresSchema.version,
                           walBytes: nil, fileBytes: bytes, subscriptions: try subscriptionCount(),
                           notifications: try notificationCount(), quarantined: try quarantineCount())
    }

    /// What is wrong with the audit log's guards on PostgreSQL, each said as a sentence:
    /// every trigger present, enabled, firing on what it should with no condition, calling
    /// subdesk's function from this schema, whose body is still subdesk's and whose owner
    /// is the audit log's. The owner can replace a function's body without touching the
    /// trigger, so a trigger that exists proves nothing alone.
    func postgresAuditGuardProblems() throws -> [String] {
        struct Found { var enabled: String; var type: Int; var unconditional: Bool; var allColumns: Bool
                       var function: String; var functionHere: Bool; var body: String; var functionOwner: String
                       var tableOwner: String; var language: String }
        var found: [String: Found] = [:]
        try db.scan("""
            SELECT t.tgname, t.tgenabled::text, t.tgtype::int, t.tgqual IS NULL, t.tgattr::text = '', p.proname::text,
                   pn.nspname = current_schema(), p.prosrc, pg_get_userbyid(p.proowner)::text, pg_get_userbyid(c.relowner)::text,
                   l.lanname::text
            FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_namespace pn ON pn.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
            WHERE c.relname = 'audit_log' AND n.nspname = current_schema() AND NOT t.tgisinternal
            """) { row in
            found[row.string(0)] = Found(enabled: row.string(1), type: row.int(2), unconditional: row.bool(3), allColumns: row.bool(4),
                                         function: row.string(5), functionHere: row.bool(6), body: row.string(7),
                                         functionOwner: row.string(8), tableOwner: row.string(9), language: row.string(10))
            return true
        }
        func words(_ text: String) -> [Substring] { text.split(whereSeparator: { $0.isWhitespace }) }
        var problems: [String] = []
        var functionsSaid = Set<String>()
        for expected in PostgresSchema.auditTriggers {
            guard let t = found[expected.name] else {
                problems.append("trigger \(expected.name) is missing")
                continue
            }
            switch t.enabled {
            case "O", "A": break
            case "R": problems.append("trigger \(expected.name) fires only in replication (ENABLE REPLICA TRIGGER)")
            default: problems.append("trigger \(expected.name) is disabled")
            }
            if t.type != expected.type { problems.append("trigger \(expected.name) fires on other events than subdesk's (tgtype \(t.type), not \(expected.type))") }
            if !t.unconditional { problems.append("trigger \(expected.name) has a WHEN condition") }
            if !t.allColumns { problems.append("trigger \(expected.name) fires only for some columns") }
            guard t.function == expected.function && t.functionHere else {
                problems.append("trigger \(expected.name) calls \(t.function)() \(t.functionHere ? "" : "of another schema ")instead of \(expected.function)()")
                continue
            }
            guard functionsSaid.insert(t.function).inserted else { continue }
            let body = PostgresSchema.auditFunctionBodies[expected.function] ?? ""
            if t.language != "plpgsql" || words(t.body) != words(body) {
                problems.append("function \(t.function)() is not subdesk's: its body was replaced (CREATE OR REPLACE FUNCTION)")
            }
            if t.functionOwner != t.tableOwner {
                problems.append("function \(t.function)() belongs to \(t.functionOwner), not to the audit log's owner \(t.tableOwner)")
            }
        }
        return problems
    }

    /// A session holding a lock that writes to this store would wait for.
    public struct WriteLockHolder: Sendable {
        public var pid: Int
        public var user: String
        public var application: String
        /// When its transaction began (UTC), nil when this login may not see other sessions.
        public var since: String?
        public var seconds: Int?
        /// The lock it holds, or whom it keeps waiting.
        public var what: String
    }

    /// Who holds what a write would wait for, as PostgreSQL's lock table says: a lock on
    /// `store_changes` that conflicts with a shared write's, or anything a waiting writer
    /// waits for. Empty on SQLite, and when nothing is held.
    public func writeLockHolders() throws -> [WriteLockHolder] {
        guard dialect == .postgres else { return [] }
        return try db.rows("""
            WITH here AS (SELECT oid FROM pg_database WHERE datname = current_database()),
            held AS (
                SELECT l.pid, upper(regexp_replace(replace(l.mode, 'Lock', ''), '([a-z])([A-Z])', '\\1 \\2', 'g')) || ' lock on store_changes' AS what
                FROM pg_locks l, here
                WHERE l.locktype = 'relation' AND l.database = here.oid AND l.relation = 'store_changes'::regclass AND l.granted
                  AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
                UNION
                SELECT b.pid, 'a lock writer pid ' || w.pid || ' waits for' AS what
                FROM pg_locks w CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS b(pid), here
                WHERE NOT w.granted AND w.locktype = 'relation' AND w.database = here.oid AND w.relation = 'store_changes'::regclass
            )
            SELECT h.pid, COALESCE(a.usename::text, '?'), COALESCE(a.application_name, ''),
                   to_char(a.xact_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'),
                   extract(epoch FROM now() - a.xact_start)::bigint, string_agg(h.what, ', ' ORDER BY h.what)
            FROM held h LEFT JOIN pg_stat_activity a ON a.pid = h.pid
            WHERE h.pid <> pg_backend_pid()
            GROUP BY h.pid, a.usename, a.application_name, a.xact_start
            ORDER BY a.xact_start NULLS LAST, h.pid
            """) { row in
            WriteLockHolder(pid: row.int(0), user: row.string(1), application: row.string(2),
                            since: row.isNull(3) ? nil : row.string(3), seconds: row.isNull(4) ? nil : row.int(4), what: row.string(5))
        }
    }

    /// Whether every login may connect to this store's database (CONNECT left to PUBLIC),
    /// which `db init --roles` revokes. nil on SQLite.
    public func publicMayConnect() throws -> Bool? {
        guard dialect == .postgres else { return nil }
        return try db.first("SELECT has_database_privilege('public', current_database(), 'CONNECT')") { $0.bool(0) }
    }

    /// A consistent copy of a PostgreSQL store: pg_dump of its schema, in pg_dump's custom
    /// format (restore with pg_restore).
    func postgresBackup(to destination: String) throws {
        #if SUBDESK_NO_POSTGRES
        return
        #else
        guard let c = db as? PostgresConnection else { return }
        // pg_dump writes into the file made here, so it keeps mode 0600.
        try Store.createBackupFile(destination)
        let schema = try db.first("SELECT current_schema()") { $0.string(0) } ?? "public"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["pg_dump", "--format=custom", "--schema=\(schema)", "--file=\(destination)", "--dbname=\(c.location.conninfo)"]
        let errors = Pipe()
        process.standardError = errors
        do { try process.run() } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw StoreError(operation: "backup to \(destination)", message: "cannot run pg_dump (\(error.localizedDescription)); install postgresql-client", code: 0)
        }
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            try? FileManager.default.removeItem(atPath: destination)
            throw StoreError(operation: "backup to \(destination)", message: "pg_dump failed: \(message.trimmingCharacters(in: .whitespacesAndNewlines))", code: 0)
        }
        #endif
    }
}

extension Store {
    /// Creates the database roles and grants their rights on this store's schema (`PostgresRoles`).
    public func installRoles() throws {
        guard dialect == .postgres else {
            throw StoreError(operation: "install roles", message: "a SQLite store has no database roles", code: 0)
        }
        let schema = try db.first("SELECT current_schema()") { $0.string(0) } ?? "public"
        try db.execute(PostgresRoles.sql(schema: schema))
        let database = try db.first("SELECT current_database()") { $0.string(0) } ?? "postgres"
        try db.execute(PostgresRoles.databaseSQL(database: database))
        // REVOKE by a user who may not revoke is only a warning: check that it took.
        if try publicMayConnect() == true {
            let owner = try db.first("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()") { $0.string(0) } ?? "?"
            throw StoreError(operation: "install roles on database \(database)", message: """
                CONNECT could not be taken from PUBLIC: only the database's owner (\(owner)) or a superuser may; \
                run `subdesk db init --roles` as \(owner), or have \(owner) run the statements `db init --roles --print` shows
                """, code: 0)
        }
    }

    /// The subdesk roles the connection's user is a member of, on PostgreSQL (none for the
    /// owner or a superuser that is no member).
    public func databaseRoles() throws -> [String] {
        guard dialect == .postgres else { return [] }
        return try db.rows("""
            SELECT rolname FROM pg_roles WHERE rolname IN ('subdesk_read', 'subdesk_intake', 'subdesk_support', 'subdesk_operator')
            AND pg_has_role(session_user, oid, 'MEMBER') ORDER BY rolname
            """) { $0.string(0) }
    }

    /// The database user this store's connection is, on PostgreSQL.
    public func databaseUser() throws -> String? {
        guard dialect == .postgres else { return nil }
        return try db.first("SELECT session_user") { $0.string(0) }
    }
}
