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
        let canWrite = try c.first("SELECT has_table_privilege('subscriptions', 'UPDATE')") { $0.bool(0) } ?? false
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

    /// The audit log's guards on PostgreSQL: its triggers, present and enabled.
    func missingPostgresAuditGuards() throws -> [String] {
        let present = Set(try db.rows("""
            SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relname = 'audit_log' AND n.nspname = current_schema() AND t.tgenabled <> 'D' AND NOT t.tgisinternal
            """) { $0.string(0) })
        return PostgresSchema.auditGuards.filter { !present.contains($0) }
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
