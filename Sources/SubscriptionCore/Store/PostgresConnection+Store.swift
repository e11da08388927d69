#if !SUBDESK_NO_POSTGRES
import Foundation

/// What the Store asks of a PostgreSQL connection that it does its own way: a server that
/// checks its own pages and keeps its own settings, writers side by side, users and roles.
extension PostgresConnection {
    /// The version in `schema_version`, which migration 1 creates: 0 before it.
    func schemaVersion() throws -> Int {
        guard try holds("SELECT to_regclass('schema_version') IS NOT NULL") else { return 0 }
        return Int(try integer("SELECT version FROM schema_version") ?? 0)
    }

    func recordSchemaVersion(_ version: Int) throws { try run("UPDATE schema_version SET version = ?", [version]) }

    /// An advisory lock on the database, which needs no table (the store may not exist
    /// yet), then, once the store exists, the write lock too, so writers wait for the
    /// migration rather than meet a schema half changed.
    func beginMigration() throws {
        try execute("BEGIN; SELECT pg_advisory_xact_lock(hashtext('subdesk:create'))")
        if try holds("SELECT to_regclass('store_changes') IS NOT NULL") {
            try execute("LOCK TABLE store_changes IN EXCLUSIVE MODE")
        }
    }

    

    /// Nothing of the store lies beside a location on a server.
    func closeAfterReplacement(emptyingLog: Bool) {}

    /// The schema's tables, indexes and TOAST included; the server's write-ahead log is
    /// the cluster's, not the store's.
    func storageBytes() throws -> (store: Int64?, wal: Int64?) {
        let bytes = try integer("""
            SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'
            """)
        return (bytes, nil)
    }

    /// The server checks its own pages.
    func integrityCheck() throws -> [String]? { nil }

    func missingAuditGuards() throws -> [String] {
        let present = Set(try texts("""
            SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relname = 'audit_log' AND n.nspname = current_schema() AND t.tgenabled <> 'D' AND NOT t.tgisinternal
            """))
        return AuditGuards.postgres.filter { !present.contains($0) }
    }

    /// What is wrong with the audit log's guards on PostgreSQL, each said as a sentence:
    /// every trigger present, enabled, firing on what it should with no condition, calling
    /// subdesk's function from this schema, whose body is still subdesk's and whose owner
    /// is the audit log's. The owner can replace a function's body without touching the
    /// trigger, so a trigger that exists proves nothing alone.
    func auditGuardProblems() throws -> [String] {
        struct Found { var enabled: String; var type: Int; var unconditional: Bool; var allColumns: Bool
                       var function: String; var functionHere: Bool; var body: String; var functionOwner: String
                       var tableOwner: String; var language: String; var securityDefiner: Bool; var config: [String] }
        var found: [String: Found] = [:]
        try scan("""
            SELECT \(AuditGuardFacts.list)
            FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_namespace pn ON pn.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
            WHERE c.relname = 'audit_log' AND n.nspname = current_schema() AND NOT t.tgisinternal
            """) { row in
            let r = AuditGuardFacts.row(row)
            found[r.string(.trigger)] = Found(enabled: r.string(.enabled), type: r.int(.type), unconditional: r.bool(.unconditional),
                                              allColumns: r.bool(.allColumns), function: r.string(.function),
                                              functionHere: r.bool(.functionHere), body: r.string(.body),
                                              functionOwner: r.string(.functionOwner), tableOwner: r.string(.tableOwner),
                                              language: r.string(.language), securityDefiner: r.bool(.securityDefiner),
                                              config: r.string(.config).split(separator: "\n").map(String.init))
            return true
        }
        func words(_ text: String) -> [Substring] { text.split(whereSeparator: { $0.isWhitespace }) }
        var problems: [String] = []
        var functionsSaid = Set<String>()
        for expected in AuditGuards.postgresTriggers {
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
            let body = AuditGuards.postgresFunctionBodies[expected.function] ?? ""
            if t.language != "plpgsql" || words(t.body) != words(body) {
                problems.append("function \(t.function)() is not subdesk's: its body was replaced (CREATE OR REPLACE FUNCTION)")
            }
            if t.securityDefiner {
                problems.append("function \(t.function)() is SECURITY DEFINER (ALTER FUNCTION ... SECURITY INVOKER restores subdesk's)")
            }
            let config = AuditGuards.postgresFunctionConfig[expected.function] ?? []
            if t.config != config {
                let said = { (c: [String]) in c.isEmpty ? "none" : c.joined(separator: "; ") }
                problems.append("function \(t.function)() has settings \(said(t.config)), not subdesk's \(said(config)) (ALTER FUNCTION ... SET)")
            }
            if t.functionOwner != t.tableOwner {
                problems.append("function \(t.function)() belongs to \(t.functionOwner), not to the audit log's owner \(t.tableOwner)")
            }
        }
        // Anything else that acts on the audit log's rows is the owner's addition, and may
        // drop, rewrite or hide entries: another trigger (RETURN NULL, NEW.operator := ...),
        // a rule (DO INSTEAD NOTHING), row-level security or a policy.
        let ours = Set(AuditGuards.postgresTriggers.map(\.name))
        for name in found.keys.sorted() where !ours.contains(name) {
            problems.append("trigger \(name) on audit_log is not subdesk's (it may drop or rewrite entries)")
        }
        problems += try texts("""
            SELECT 'rule ' || r.rulename || ' on audit_log is not subdesk''s (it may drop or rewrite entries)'
            FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
            WHERE c.relname = 'audit_log' AND c.relnamespace = current_schema()::regnamespace
            UNION ALL
            SELECT 'row-level security policy ' || p.polname || ' on audit_log is not subdesk''s (it may hide entries)'
            FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
            WHERE c.relname = 'audit_log' AND c.relnamespace = current_schema()::regnamespace
            UNION ALL
            SELECT 'row-level security is on for audit_log (it may hide entries)'
            FROM pg_class c WHERE c.relname = 'audit_log' AND c.relnamespace = current_schema()::regnamespace
              AND (c.relrowsecurity OR c.relforcerowsecurity)
            UNION ALL
            SELECT 'table ' || quote_ident(ch.relnamespace::regnamespace::text) || '.' || quote_ident(ch.relname)
                   || ' inherits from audit_log (its rows are listed with the log''s, and nothing guards them)'
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent JOIN pg_class ch ON ch.oid = i.inhrelid
            WHERE c.relname = 'audit_log' AND c.relnamespace = current_schema()::regnamespace
            UNION ALL
            SELECT 'constraint ' || k.conname || ' on audit_log is not subdesk''s (it may refuse entries)'
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
            WHERE c.relname = 'audit_log' AND c.relnamespace = current_schema()::regnamespace AND k.contype NOT IN ('p', 'n')
            UNION ALL
            SELECT 'a ' || CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' ELSE 'table' END
                   || ' named audit_log in ' || quote_ident(c.relnamespace::regnamespace::text)
                   || ' comes before the store''s in the search path (what reads audit_log reads it instead)'
            FROM pg_class c
            WHERE c.relname = 'audit_log' AND c.relnamespace <> current_schema()::regnamespace
              AND array_position(current_schemas(true), c.relnamespace::regnamespace::text)
                  < array_position(current_schemas(true), current_schema()::text)
            ORDER BY 1
            """)
        return problems
    }

    func columns(of table: String) throws -> [String] {
        try texts("""
            SELECT column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position
            """, [table])
    }

    /// The tables' triggers are off while rows are copied in (they would open refund
    /// requests again and stamp the audit log with the copying user), which needs the
    /// tables' owner.
    func copyStarts(into tables: [String]) throws {
        for table in tables { try execute("ALTER TABLE \(table) DISABLE TRIGGER USER") }
    }

    func copyEnded(into tables: [String]) throws {
        for table in tables { try execute("ALTER TABLE \(table) ENABLE TRIGGER USER") }
        // Ids generated from now on continue after the copied ones.
        try execute("""
            DO $$
            DECLARE t record;
            BEGIN
                FOR t IN SELECT table_name, column_name FROM information_schema.columns
                         WHERE table_schema = current_schema() AND is_identity = 'YES' LOOP
                    EXECUTE format('SELECT setval(pg_get_serial_sequence(%L, %L), COALESCE((SELECT max(%I) FROM %I), 0) + 1, false)',
                                   t.table_name, t.column_name, t.column_name, t.table_name);
                END LOOP;
            END $$
            """)
    }

    /// A commit is durable when it returns (synchronous_commit is the server's), and
    /// there is no log file of the store's own to keep short.
    func configureForOneShotWrites() throws {}
    func finishOneShotWrites(walLimitBytes: Int64) {}
    /// The server keeps its own log.
    func writeAheadLogIsPast(_ bytes: Int64) -> Bool { false }
    func checkpointBesideWriters(walLimitBytes: Int64) {}
    func reuseWriteAheadLog() throws {}

    /// A statement may run at most 20 s past the write lock's timeout, and a transaction
    /// left idle (a client stopped half-way) ends after 30 s, freeing its locks.
    func boundServerWaitsForIntake() throws {
        try boundServerWaits(statementMs: lockWaitMs + 20_000, idleInTransactionMs: 30_000)
    }

    /// The server keeps its own log and settings.
    func checkpointEvery(pages: Int) throws {}
    func cachePages(kibibytes: Int) throws {}
    var bulkLoad: BulkLoadSettings? { nil }

    /// Asks the owner's function to end each session that holds the writers' lock past its
    /// login's bound (it decides; see `LockHolderEnding`): the logins it ended, with their pids.
    func endOverdueWriteLockHolders() throws -> [(login: String, pid: Int)] {
        let holders = try integers("""
            SELECT DISTINCT l.pid FROM pg_locks l
            WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_backend_pid() AND l.relation = to_regclass('store_changes')
            """).map(Int.init)
        var ended: [(login: String, pid: Int)] = []
        for pid in holders {
            if let login = try text("SELECT \(LockHolderEnding.function)(?)", [pid]) {
                ended.append((login, pid))
            }
        }
        return ended
    }

    /// Who holds what a write would wait for, as PostgreSQL's lock table says: a lock on
    /// any table of the store that conflicts with a write's (SHARE or stronger; on
    /// `store_changes` that stops every writer), or anything a waiting writer waits for.
    /// Empty when nothing is held.
    func writeLockHolders() throws -> [Store.WriteLockHolder] {
        try rows("""
            WITH here AS (SELECT oid FROM pg_database WHERE datname = current_database()),
            store AS (SELECT oid, relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'),
            held AS (
                SELECT l.pid, upper(regexp_replace(replace(l.mode, 'Lock', ''), '([a-z])([A-Z])', '\\1 \\2', 'g')) || ' lock on ' || t.relname AS what
                FROM pg_locks l JOIN store t ON t.oid = l.relation, here
                WHERE l.locktype = 'relation' AND l.database = here.oid AND l.granted
                  AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
                UNION
                SELECT b.pid, 'a lock writer pid ' || w.pid || ' waits for' AS what
                FROM pg_locks w JOIN store t ON t.oid = w.relation CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS b(pid), here
                WHERE NOT w.granted AND w.locktype = 'relation' AND w.database = here.oid
                UNION
                -- A row of the store another transaction changed and keeps (the change counter's,
                -- updated and left uncommitted): a writer waits for that transaction to end.
                SELECT b.pid, 'a row writer pid ' || w.pid || ' waits for' AS what
                FROM pg_locks w JOIN pg_locks mine ON mine.pid = w.pid AND mine.granted AND mine.locktype = 'relation'
                JOIN store t ON t.oid = mine.relation CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS b(pid), here
                WHERE NOT w.granted AND w.locktype IN ('transactionid', 'tuple') AND mine.database = here.oid
                UNION
                -- A session left idle in its transaction while holding the writers' lock.
                SELECT l.pid, 'the writers'' lock (store_changes), idle in its transaction' AS what
                FROM pg_locks l JOIN store t ON t.oid = l.relation JOIN pg_stat_activity a ON a.pid = l.pid, here
                WHERE t.relname = 'store_changes' AND l.granted AND l.database = here.oid AND a.state LIKE 'idle in transaction%'
            )
            SELECT \(LockHolder.list)
            FROM held h LEFT JOIN pg_stat_activity a ON a.pid = h.pid
            WHERE h.pid <> pg_backend_pid()
            GROUP BY h.pid, a.usename, a.application_name, a.xact_start
            ORDER BY a.xact_start NULLS LAST, h.pid
            """) { row in
            let r = LockHolder.row(row)
            return Store.WriteLockHolder(pid: r.int(.pid), user: r.string(.user), application: r.string(.application),
                                         since: r.optionalString(.since), seconds: r.optionalInt(.seconds), what: r.string(.what))
        }
    }

    /// Whether every login may connect to this store's database (CONNECT left to PUBLIC),
    /// which `db init --roles` revokes.
    func publicMayConnect() throws -> Bool? {
        try holds("SELECT has_database_privilege('public', current_database(), 'CONNECT')")
    }

    /// A consistent copy of a PostgreSQL store: pg_dump of its schema, in pg_dump's custom
    /// format (restore with pg_restore).
    func backup(to destination: String) throws {
        // pg_dump writes into the file made here, so it keeps mode 0600.
        try Store.createBackupFile(destination)
        let schema = try text("SELECT current_schema()") ?? "public"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["pg_dump", "--format=custom", "--schema=\(schema)", "--file=\(destination)", "--dbname=\(location.conninfo)"]
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
    }

    /// Creates the database roles and grants their rights on this store's schema (`PostgresRoles`).
    /// On PostgreSQL 16 and later also lets subdesk_intake use the reserved connections,
    /// which only a superuser may grant: a note says so when this user may not.
    func installRoles() throws -> [String] {
        let schema = try text("SELECT current_schema()") ?? "public"
        // Creating a role needs CREATEROLE (or a superuser); the server's own refusal names
        // only the privilege, so say who lacks it and what to do before trying.
        let missing = try texts("""
            SELECT r FROM unnest(ARRAY['\(PostgresRoles.all.joined(separator: "', '"))']) AS r
            WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) ORDER BY r
            """)
        if !missing.isEmpty { try requireCreateRole(doing: "create the roles \(missing.joined(separator: ", "))", command: "db init --roles") }
        try execute(PostgresRoles.sql(schema: schema))
        let database = try text("SELECT current_database()") ?? "postgres"
        try execute(PostgresRoles.databaseSQL(database: database))
        // REVOKE by a user who may not revoke is only a warning: check that it took.
        if try publicMayConnect() == true {
            let owner = try text("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()") ?? "?"
            throw StoreError(operation: "install roles on database \(database)", message: """
                CONNECT could not be taken from PUBLIC: only the database's owner (\(owner)) or a superuser may; \
                run `subdesk db init --roles` as \(owner), or have \(owner) run the statements `db init --roles --print` shows
                """, code: 0)
        }
        return try grantReservedConnectionsToIntake()
    }

    /// PostgreSQL 16 and later keep `reserved_connections` for members of
    /// pg_use_reserved_connections: intake is given them, so a webhook is still answered
    /// when other logins hold every ordinary slot. Untested here (Debian 12 ships 15).
    private func grantReservedConnectionsToIntake() throws -> [String] {
        guard try (integer("SELECT current_setting('server_version_num')::int") ?? 0) >= 160_000 else { return [] }
        let grant = PostgresRoles.reservedConnectionsGrant
        do {
            try execute(grant)
            return []
        } catch let e as StoreError where e.sqlState == "42501" {
            return ["intake may not use the reserved connections (reserved_connections): only a superuser may grant it; "
                    + "as a superuser run: \(grant);"]
        }
    }

    /// Refuses, saying what to do, when this user may create and change roles neither as a
    /// superuser nor with CREATEROLE.
    private func requireCreateRole(doing what: String, command: String) throws {
        if let (user, may) = try first("SELECT \(RoleCreator.list) FROM pg_roles WHERE rolname = current_user", [], { row in
            let r = RoleCreator.row(row)
            return (r.string(.role), r.bool(.mayCreateRoles))
        }), !may {
            throw StoreError(operation: what, message: """
                \(user) may not create roles (it has no CREATEROLE): give it CREATEROLE (as a superuser: \
                ALTER ROLE \(user) CREATEROLE; or create it with createuser --createrole \(user)), \
                or run `subdesk \(command)` as a superuser
                """, code: 0)
        }
    }

    /// Creates or changes `login` in one transaction: LOGIN, its connection limit and
    /// password (when given), membership of its subdesk role only, and its session settings.
    /// Refuses a superuser, the user running it, the store's owner or a member of its role, a
    /// role that cannot log in (a group), one with CREATEROLE, CREATEDB, BYPASSRLS or
    /// REPLICATION, and one that is a member of a role not subdesk's: changing any of those
    /// would give a privileged role a subdesk role's bounds, or a subdesk role more.
    func makeLogin(_ login: PostgresLogin, password: String?) throws -> Bool {
        if let problem = PostgresLogin.problem(name: login.name) { throw StoreError(operation: "make the login \(login.name)", message: problem, code: 0) }
        try requireCreateRole(doing: "make the login \(login.name)", command: "db login")
        let operation = "make the login \(login.name)"
        let missingRole = try !holds("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ?)", [login.role])
        if missingRole {
            throw StoreError(operation: operation, message: "the role \(login.role) does not exist yet: run `subdesk db init --roles` first", code: 0)
        }
        let existing = try first("""
            SELECT \(ExistingLogin.list)
            FROM pg_roles r, pg_roles o
            WHERE r.rolname = ? AND o.oid = (SELECT c.relowner FROM pg_class c WHERE c.oid = 'audit_log'::regclass)
            """, [login.name]) { row in
            let r = ExistingLogin.row(row)
            return (canLogin: r.bool(.canLogin), superuser: r.bool(.superuser), isMe: r.bool(.isMe), inOwner: r.bool(.inOwner),
                    owner: r.string(.owner), attributes: r.string(.attributes), otherRoles: r.string(.otherRoles))
        }
        if let existing {
            func refuse(_ message: String) -> StoreError { StoreError(operation: operation, message: message, code: 0) }
            if existing.isMe { throw refuse("\(login.name) is the user running this (the store's owner); name another login") }
            if existing.superuser { throw refuse("\(login.name) is a superuser; db login makes and changes only ordinary logins") }
            if existing.inOwner {
                throw refuse(login.name == existing.owner
                    ? "\(login.name) owns the store (its audit_log); name another login"
                    : "\(login.name) is a member of \(existing.owner), the store's owner; name another login")
            }
            if !existing.canLogin { throw refuse("\(login.name) is a role that cannot log in (a group); name a login user") }
            if !existing.attributes.isEmpty {
                throw refuse("\(login.name) has \(existing.attributes); db login changes only ordinary logins: name another login, "
                             + "or take that away yourself first (ALTER ROLE ... NO\(existing.attributes.split(separator: ",")[0]))")
            }
            if !existing.otherRoles.isEmpty {
                throw refuse("\(login.name) is a member of \(existing.otherRoles), which is not subdesk's; db login changes only logins "
                             + "of subdesk's roles: name another login, or take that away yourself first (REVOKE ... FROM \(login.name))")
            }
        }
        let name = login.quotedName
        var attributes = "LOGIN CONNECTION LIMIT \(login.connectionLimit ?? -1)"
        if let password {
            let verifier = try encryptedPassword(password, user: login.name)
            attributes += " PASSWORD '" + verifier.replacingOccurrences(of: "'", with: "''") + "'"
        }
        var statements = ["BEGIN", existing == nil ? "CREATE ROLE \(name) \(attributes)" : "ALTER ROLE \(name) \(attributes)"]
        statements.append("GRANT \(login.role) TO \(name)")
        let others = try texts("""
            SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
            WHERE u.rolname = ? AND r.rolname IN ('\(PostgresRoles.all.joined(separator: "', '"))') AND r.rolname <> ?
            """, [login.name, login.role])
        for other in others { statements.append("REVOKE \(other) FROM \(name)") }
        for setting in login.settings { statements.append("ALTER ROLE \(name) SET \(setting.name) = \(setting.ms)") }
        // The owner holds the login's privileges, so its function can end a session of the
        // login that holds the writers' lock past these bounds (LockHolderEnding).
        statements.append("GRANT \(name) TO CURRENT_USER")
        statements.append("COMMIT")
        do {
            try execute(statements.joined(separator: ";\n"))
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        return existing == nil
    }

    /// The server's slots and every login that is a member of a subdesk role, with its limit.
    func connectionSlots() throws -> ConnectionSlots? {
        let settings = try first("SELECT \(Slots.list)") { row in
            let r = Slots.row(row)
            return (r.int(.max), r.int(.superuserReserved), r.int(.reserved), r.bool(.intakeUsesReserved))
        }
        guard let settings else { return nil }
        let logins = try rows("""
            SELECT \(SlotLogin.list)
            FROM pg_roles u JOIN pg_roles g ON g.rolname IN ('\(PostgresRoles.all.joined(separator: "', '"))') AND pg_has_role(u.oid, g.oid, 'MEMBER')
            WHERE u.rolcanlogin GROUP BY u.oid, u.rolname, u.rolconnlimit, u.rolsuper ORDER BY u.rolname
            """) { row in
            let r = SlotLogin.row(row)
            return ConnectionSlots.Login(name: r.string(.name), roles: r.string(.roles).split(separator: ",").map(String.init),
                                         limit: r.int(.limit) < 0 ? nil : r.int(.limit), superuser: r.bool(.superuser),
                                         owner: r.bool(.owner))
        }
        return ConnectionSlots(maxConnections: settings.0, superuserReserved: settings.1, reserved: settings.2,
                               intakeUsesReserved: settings.3, logins: logins)
    }

    /// The subdesk roles the connection's user is a member of (none for the
    /// owner or a superuser that is no member).
    func databaseRoles() throws -> [String] {
        try texts("""
            SELECT rolname FROM pg_roles WHERE rolname IN ('subdesk_read', 'subdesk_intake', 'subdesk_support', 'subdesk_operator')
            AND pg_has_role(session_user, oid, 'MEMBER') ORDER BY rolname
            """)
    }

    /// The database user this store's connection is.
    func databaseUser() throws -> String? {
        try text("SELECT session_user")
    }
}

/// What the catalog reads of the server select, each expression named (`SelectedValues`).
extension PostgresConnection {
    /// A trigger on the audit log, and the function it calls (`auditGuardProblems`).
    enum AuditGuardFacts: Int, SelectedValues {
        case trigger, enabled, type, unconditional, allColumns, function, functionHere, body, functionOwner, tableOwner,
             language, securityDefiner, config
        var sql: String {
            switch self {
            case .trigger: return "t.tgname"
            case .enabled: return "t.tgenabled::text"
            case .type: return "t.tgtype::int"
            case .unconditional: return "t.tgqual IS NULL"
            case .allColumns: return "t.tgattr::text = ''"
            case .function: return "p.proname::text"
            case .functionHere: return "pn.nspname = current_schema()"
            case .body: return "p.prosrc"
            case .functionOwner: return "pg_get_userbyid(p.proowner)::text"
            case .tableOwner: return "pg_get_userbyid(c.relowner)::text"
            case .language: return "l.lanname::text"
            case .securityDefiner: return "p.prosecdef"
            case .config: return "coalesce(array_to_string(p.proconfig, E'\\n'), '')"
            }
        }
    }

    /// A session holding what a write would wait for (`writeLockHolders`).
    enum LockHolder: Int, SelectedValues {
        case pid, user, application, since, seconds, what
        var sql: String {
            switch self {
            case .pid: return "h.pid"
            case .user: return "COALESCE(a.usename::text, '?')"
            case .application: return "COALESCE(a.application_name, '')"
            case .since: return "to_char(a.xact_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
            case .seconds: return "extract(epoch FROM now() - a.xact_start)::bigint"
            case .what: return "string_agg(h.what, ', ' ORDER BY h.what)"
            }
        }
    }

    /// The current user, and whether it may create roles.
    enum RoleCreator: Int, SelectedValues {
        case role, mayCreateRoles
        var sql: String { self == .role ? "rolname" : "rolsuper OR rolcreaterole" }
    }

    /// A login `db login` would change, `r`, beside the store's owner, `o` (`makeLogin`).
    enum ExistingLogin: Int, SelectedValues {
        case canLogin, superuser, isMe, inOwner, owner, attributes, otherRoles
        var sql: String {
            switch self {
            case .canLogin: return "r.rolcanlogin"
            case .superuser: return "r.rolsuper"
            case .isMe: return "r.rolname = current_user"
            case .inOwner: return "pg_has_role(r.oid, o.oid, 'MEMBER')"
            case .owner: return "o.rolname::text"
            case .attributes:
                return """
                    concat_ws(', ', CASE WHEN r.rolcreaterole THEN 'CREATEROLE' END, CASE WHEN r.rolcreatedb THEN 'CREATEDB' END,
                              CASE WHEN r.rolbypassrls THEN 'BYPASSRLS' END, CASE WHEN r.rolreplication THEN 'REPLICATION' END)
                    """
            case .otherRoles:
                return """
                    coalesce((SELECT string_agg(g.rolname, ', ' ORDER BY g.rolname) FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
                              WHERE m.member = r.oid AND g.rolname NOT IN ('\(PostgresRoles.all.joined(separator: "', '"))')), '')
                    """
            }
        }
    }

    /// The server's connection slots (`connectionSlots`).
    enum Slots: Int, SelectedValues {
        case max, superuserReserved, reserved, intakeUsesReserved
        var sql: String {
            switch self {
            case .max: return "current_setting('max_connections')::int"
            case .superuserReserved: return "current_setting('superuser_reserved_connections')::int"
            case .reserved: return "COALESCE(current_setting('reserved_connections', true), '0')::int"
            case .intakeUsesReserved:
                return """
                    EXISTS (SELECT 1 FROM pg_roles i, pg_roles r WHERE i.rolname = 'subdesk_intake' AND r.rolname = 'pg_use_reserved_connections'
                            AND pg_has_role(i.oid, r.oid, 'MEMBER'))
                    """
            }
        }
    }

    /// A login of a subdesk role, `u`, with its roles, `g` (`connectionSlots`).
    enum SlotLogin: Int, SelectedValues {
        case name, roles, limit, superuser, owner
        var sql: String {
            switch self {
            case .name: return "u.rolname"
            case .roles: return "string_agg(g.rolname, ',' ORDER BY g.rolname)"
            case .limit: return "u.rolconnlimit"
            case .superuser: return "u.rolsuper"
            case .owner: return "pg_has_role(u.oid, (SELECT c.relowner FROM pg_class c WHERE c.oid = 'audit_log'::regclass), 'MEMBER')"
            }
        }
    }
}

extension PostgresConnection {
    /// Who a session is, read as the store opens: whether it may change the subscriptions
    /// (the read-only role may not, and cannot bring derived data up to date either), its
    /// user, and the store's roles it is a member of.
    enum Identity: Int, SelectedValues {
        case mayWrite, user, roles
        var sql: String {
            switch self {
            case .mayWrite: return "has_table_privilege('subscriptions', 'UPDATE')"
            case .user: return "session_user"
            case .roles:
                return """
                    (SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles
                     WHERE rolname IN ('\(PostgresRoles.all.joined(separator: "', '"))') AND pg_has_role(session_user, oid, 'MEMBER'))
                    """
            }
        }
    }

    /// Connects, creates the store (and the named PostgreSQL schema) when `mode` allows and
    /// it is not there yet, and brings an older store up to date (`Migrations.migrate`,
    /// as for SQLite); two processes creating or migrating it at once take turns.
    static func openStore(_ location: PostgresLocation, mode: Store.OpenMode, busyTimeoutMs: Int32) throws -> OpenedStore {
        let c = try PostgresConnection(location: location, lockTimeoutMs: busyTimeoutMs)
        var version = try c.schemaVersion()
        var created = false
        if version == 0 {
            guard mode == .createIfMissing else {
                throw StoreNotFound(path: PostgresLocation.redacted(location.conninfo) + (location.schema.map { " (schema \($0))" } ?? ""))
            }
            if let schema = location.schema {
                try c.execute("BEGIN; SELECT pg_advisory_xact_lock(hashtext('subdesk:create')); CREATE SCHEMA IF NOT EXISTS \(schema); COMMIT")
            }
        }
        let newer = try Migrations.newer(version, opening: location.conninfo, for: mode)
        // A reader of an older store reads it as it is.
        if newer == nil && version < Migrations.latestVersion && mode != .reading {
            created = try Migrations.migrate(c) == 0
            version = Migrations.latestVersion
        }
        // A role that may not change the subscriptions (the read-only role) cannot bring
        // derived data up to date either: it reads what is there.
        // Who this is, in the same round trip: a refused statement names the user and roles.
        let canWrite = try c.first("SELECT \(Identity.list)") { row -> Bool in
            let r = Identity.row(row)
            c.identity = (r.string(.user), r.optionalString(.roles)?.split(separator: ",").map(String.init) ?? [])
            return r.bool(.mayWrite)
        } ?? false
        return OpenedStore(connection: c, created: created, readOnly: !canWrite, newerSchemaVersion: newer)
    }
}
#endif
