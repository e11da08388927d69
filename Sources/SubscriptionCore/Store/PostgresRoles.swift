/// The database roles of a PostgreSQL store, enforced by the server rather than by subdesk.
///
/// Four group roles (NOLOGIN); each person or host logs in as a user that is a member of one.
/// What each may do is declared once, as data (`rights`): the SQL that `db init --roles`
/// runs, the README's table of rights and the role-matrix test all come from it.
///
/// State derived from Apple's signed data (subscriptions, transactions, renewal info, the
/// counts) is written only by the paths that verify what Apple signed: intake, and the
/// operator's revalidations, sweeps and backfills. Support changes only what its commands
/// change: overrides, the audit log, and the owner of a subscription when it links a user.
/// No human role may write the remembered chain checks; intake may, and its rows are still
/// believed only through a seal under a key the database never sees (`ChainMemoryKey`).
public enum PostgresRoles {
    /// A role as the desk's header and its short messages write it: without its `subdesk_`
    /// prefix (`subdesk_read` is `read`); another role as it is.
    public static func shortName(_ role: String) -> String {
        role.hasPrefix("subdesk_") ? String(role.dropFirst("subdesk_".count)) : role
    }

    public static let all = ["subdesk_read", "subdesk_intake", "subdesk_support", "subdesk_operator"]

    /// What a role may do to a table.
    public enum Privilege: String, CaseIterable, Sendable {
        case select = "SELECT", insert = "INSERT", update = "UPDATE", delete = "DELETE", truncate = "TRUNCATE"
    }

    /// Privileges on tables given to roles, and why they need them.
    public struct Right: Sendable {
        public let roles: [String]
        public let privileges: [Privilege]
        public let tables: [String]
        /// The only columns the privileges cover (UPDATE of some columns); nil for all.
        public let columns: [String]?
        public let why: String

        init(_ roles: [String], _ privileges: [Privilege], _ tables: [String], columns: [String]? = nil, why: String) {
            self.roles = roles
            self.privileges = privileges
            self.tables = tables
            self.columns = columns
            self.why = why
        }
    }

    /// Every table of a PostgreSQL store (`Migrations`), in the order the README lists them.
    public static let tables = [
        "subscribers", "subscriptions", "transactions", "renewal_info", "receipts", "refund_requests",
        "status_counts", "metric_buckets", "metric_segments", "metrics_pending", "metric_segments_pending",
        "metric_segments_catchup", "notifications", "jws_headers", "intake_log", "intake_counts", "quarantine", "verified_chains",
        "overrides", "audit_log", "renewal_extensions", "backfill_runs", "delivery_gaps", "store_facts",
        "forward_owed", "forward_outbox", "forward_attempts", "retention_messaging", "retention_content", "retention_decisions", "store_changes",
        "schema_version",
    ]

    /// The tables a migration later than the first stores with roles made: granted when a
    /// store has them (a store taken back to an earlier version in a test has not), and by
    /// the migration that makes them, on a store whose roles were installed before.
    static let madeLater: Set<String> = ["forward_owed", "forward_outbox", "forward_attempts", "retention_messaging", "retention_content", "retention_decisions"]

    /// The state derived from Apple's signed data.
    static let derived = ["subscribers", "subscriptions", "transactions", "renewal_info", "receipts", "refund_requests",
                          "status_counts", "metric_buckets", "metric_segments", "metrics_pending", "metric_segments_pending",
                          "metric_segments_catchup"]
    /// What intake adds and never changes afterwards.
    static let intakeAppendOnly = ["notifications", "jws_headers", "intake_log"]
    /// What counts intake's outcomes: only ever added to.
    static let intakeCounters = ["intake_counts"]

    static let writers = ["subdesk_intake", "subdesk_support", "subdesk_operator"]
    static let verifiers = ["subdesk_intake", "subdesk_operator"]
    static let people = ["subdesk_support", "subdesk_operator"]

    public static let rights: [Right] = [
        Right(all, [.select], tables, why: "everyone reads everything"),
        Right(verifiers, [.insert, .update, .delete], derived,
              why: "derive state from what Apple signed: intake, and an operator's revalidations, sweeps and backfills"),
        Right(verifiers, [.insert], intakeAppendOnly, why: "add notifications; nobody changes or deletes one"),
        Right(verifiers, [.insert, .update], intakeCounters, why: "count each intake outcome, for the on-call metrics"),
        Right(["subdesk_intake"], [.insert, .update], ["quarantine"], why: "quarantine refused bodies, counting repeats"),
        Right(["subdesk_intake"], [.insert], ["retention_decisions"], why: "log each real-time retention decision serve makes"),
        Right(["subdesk_intake"], [.insert, .update], ["verified_chains"],
              why: "remember chain checks, sealed with the receiver's key"),
        Right(verifiers, [.insert, .update, .delete], ["forward_owed"],
              why: "owe each stored notification to the forward targets in one row, which a deliverer locks, spreads and removes "
                  + "(a locking read needs UPDATE)"),
        Right(verifiers, [.insert, .update], ["forward_outbox"],
              why: "spread what is owed into one delivery per target, and deliver it (serve, forward run)"),
        Right(verifiers, [.insert], ["forward_attempts"], why: "keep each delivery attempt and the target's answer"),
        Right(["subdesk_operator"], [.insert, .update, .delete],
              ["quarantine", "renewal_extensions", "backfill_runs", "delivery_gaps", "store_facts"],
              why: "replay and purge the quarantine, extensions, backfills, pings"),
        Right(["subdesk_operator"], [.insert, .update], ["retention_messaging"],
              why: "import Apple's retention messaging report, a row imported again replacing its counts"),
        Right(["subdesk_operator"], [.insert, .update, .delete], ["retention_content"],
              why: "keep what the retention console put at Apple (messages, images, defaults, real-time URLs) and its review state"),
        Right(people, [.insert], ["overrides", "audit_log"], why: "place overrides, and audit every action"),
        Right(people, [.update], ["overrides"], columns: ["lifted_ms", "lifted_by", "lift_reason"], why: "lift an override"),
        Right(["subdesk_support"], [.update], ["subscriptions"], columns: ["subscriber_id"],
              why: "link a user: move a subscription to the user's subscriber"),
        Right(["subdesk_support"], [.update], ["subscribers"], columns: ["user_id"], why: "link a user id to a subscriber"),
        Right(writers, [.update], ["store_changes"], why: "every write bumps the change counter that live views watch"),
    ]

    /// The audit entries a role may write: each action, and the roles whose commands write
    /// it. On PostgreSQL the audit log's trigger (`AuditStamp`, migration 23) refuses any
    /// other action from that role, and stamps the entry with the server's time, so a fact
    /// read from the audit log (the last sweep, failed revalidations) was written by a role
    /// that runs the command. The owner may write any. Intake and read write none.
    public struct AuditActions: Sendable {
        public let roles: [String]
        public let actions: [AuditAction]
        public let why: String
    }

    public static let auditActions: [AuditActions] = [
        AuditActions(roles: people, actions: [.overrideGrant, .overrideRevoke, .overrideLift, .link, .consentHandled],
                     why: "overrides and their lifts, user links, consent withdrawals handled"),
        AuditActions(roles: ["subdesk_operator"],
                     actions: [.revalidate, .refundHistory, .setAppAccountToken, .appTransactionLookup, .sweep,
                               .extend, .extendAll, .refundAnswer, .refundMissed, .quarantinePurge, .backfill,
                               .retentionReportImport, .forwardReplay, .forwardRetry, .retentionUpload, .retentionDelete,
                               .retentionDefault, .retentionRealtimeURL, .retentionPerformanceTest],
                     why: "revalidations and sweeps, extensions, refund answers and missed deadlines, quarantine purges, backfills, "
                         + "retention report imports, relay replays and retries, the retention console's calls to Apple"),
    ]

    /// The roles that may write audit entries of `action` (besides the owner).
    public static func auditWriters(of action: AuditAction) -> [String] {
        all.filter { role in auditActions.contains { $0.roles.contains(role) && $0.actions.contains(action) } }
    }

    /// A function the store's owner defines and runs (SECURITY DEFINER), which only the
    /// roles named may call: what a role must do to a table without holding the privilege
    /// that would also let it lock the table (LOCK TABLE in any mode stronger than ROW
    /// EXCLUSIVE needs table-wide UPDATE, DELETE or TRUNCATE).
    public struct Routine: Sendable {
        public let name: String
        /// Its argument types, as PostgreSQL names a function by them.
        public let arguments: String
        public let roles: [String]
        public let why: String
        public var signature: String { "\(name)(\(arguments))" }
    }

    public static let routines: [Routine] = [
        Routine(name: "subdesk_drop_empty_subscriber", arguments: "BIGINT", roles: writers,
                why: "drop the subscriber a link or a change of owner left owning nothing (it keeps any that owns something or has a user id)"),
        Routine(name: LockHolderEnding.function, arguments: "INTEGER", roles: ["subdesk_intake"],
                why: "end a support or operator session that has held the writers' lock (store_changes) past its login's bound, "
                    + "audited (lock_holder_ended); no other session"),
    ]

    /// Audit actions no login writes with its own INSERT: only the owner's functions do
    /// (`LockHolderEnding`), whoever called them.
    public static let ownerFunctionAuditActions = [LockHolderEnding.action]

    /// The roles that may hold a lock stronger than ROW EXCLUSIVE on a table intake writes:
    /// those that derive state from Apple's data (and so hold UPDATE and DELETE on it).
    /// Read and support never may, but on `store_changes`, the writers' own lock.
    public static let tableLockers = verifiers

    /// PostgreSQL 16 and later keep `reserved_connections` for the members of
    /// pg_use_reserved_connections: intake is made one (by a superuser), so webhooks are
    /// still answered while other logins hold every ordinary slot.
    public static let reservedConnectionsGrant = "GRANT pg_use_reserved_connections TO subdesk_intake"

    /// What each role is for, in the README's words.
    public static let summaries: [String: String] = [
        "subdesk_read": "read everything (managers, reports); write nothing",
        "subdesk_intake": "add notifications, quarantine bodies, keep the derived state, remember chain checks, owe and deliver forwarded notifications, log real-time retention decisions; never change or delete a notification; no overrides, no audit entries",
        "subdesk_support": "read; overrides, user links, audit entries; never the derived state",
        "subdesk_operator": "support's rights, plus revalidation, extensions, sweeps, backfills, refund answers, quarantine replays and purges (which derive state from what Apple signed), retention report imports and the retention console; never the chain memory",
    ]

    /// The rights that give `role` `privilege` on `table`, on every column or on some.
    static func rights(of role: String, _ privilege: Privilege, on table: String) -> [Right] {
        rights.filter { $0.roles.contains(role) && $0.privileges.contains(privilege) && $0.tables.contains(table) }
    }

    /// Whether `role` may use `privilege` on `table`: on every column when `column` is nil,
    /// else on that column (a column grant, or one on the whole table).
    public static func allows(_ role: String, _ privilege: Privilege, on table: String, column: String? = nil) -> Bool {
        rights(of: role, privilege, on: table).contains { right in
            right.columns == nil || column.map { right.columns!.contains($0) } == true
        }
    }

    /// Whether `role` may use `privilege` on at least some column of `table` (what a row
    /// lock, or a statement naming only those columns, needs).
    public static func holds(_ role: String, _ privilege: Privilege, on table: String) -> Bool {
        !rights(of: role, privilege, on: table).isEmpty
    }

    /// The columns `role` may update in `table` when it may update only some; nil otherwise.
    static func updatableColumns(_ role: String, _ table: String) -> [String]? {
        let columns = rights(of: role, .update, on: table).compactMap(\.columns).flatMap { $0 }
        return columns.isEmpty ? nil : columns
    }

    /// The SQL that creates the roles (when missing) and gives each exactly its rights on
    /// `schema`: every earlier grant is revoked first, so running it again after an upgrade
    /// also takes away what a role no longer needs. One implicit transaction.
    public static func sql(schema: String) -> String {
        let s = schema
        var lines: [String] = []
        lines.append("""
            DO $$
            DECLARE r text;
            BEGIN
                FOREACH r IN ARRAY ARRAY['\(all.joined(separator: "', '"))'] LOOP
                    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
                        EXECUTE format('CREATE ROLE %I NOLOGIN', r);
                    END IF;
                END LOOP;
            END $$;
            """)
        lines.append("REVOKE ALL ON ALL TABLES IN SCHEMA \(s) FROM PUBLIC, \(all.joined(separator: ", "));")
        lines.append("REVOKE ALL ON ALL SEQUENCES IN SCHEMA \(s) FROM PUBLIC, \(all.joined(separator: ", "));")
        lines.append("REVOKE CREATE ON SCHEMA \(s) FROM PUBLIC;")
        for role in all { lines.append("GRANT USAGE ON SCHEMA \(s) TO \(role);") }
        for right in rights {
            let always = right.tables.filter { !madeLater.contains($0) }
            if !always.isEmpty { lines.append(grant(right, on: always.map { "\(s).\($0)" }, to: right.roles)) }
            // Only a table the store's schema has, as for functions below.
            for table in right.tables where madeLater.contains(table) {
                lines.append("""
                    DO $$ BEGIN
                        IF to_regclass('\(s).\(table)') IS NOT NULL THEN
                            \(grant(right, on: ["\(s).\(table)"], to: right.roles))
                        END IF;
                    END $$;
                    """)
            }
        }
        for routine in routines {
            // Only a function the store's schema has: one whose migration is later than the
            // store (a store taken back in a test) is granted when that migration makes it.
            lines.append("""
                DO $$ BEGIN
                    IF to_regprocedure('\(s).\(routine.signature)') IS NOT NULL THEN
                        REVOKE ALL ON FUNCTION \(s).\(routine.signature) FROM PUBLIC, \(all.joined(separator: ", "));
                        GRANT EXECUTE ON FUNCTION \(s).\(routine.signature) TO \(routine.roles.joined(separator: ", "));
                    END IF;
                END $$;
                """)
        }
        // Identity columns draw from sequences; only roles that insert need them.
        lines.append("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA \(s) TO \(writers.joined(separator: ", "));")
        return lines.joined(separator: "\n")
    }

    /// The GRANT statement that gives `roles` `right`'s privileges on `tables`.
    static func grant(_ right: Right, on tables: [String], to roles: [String]) -> String {
        let privileges = right.privileges.map { privilege in
            right.columns.map { "\(privilege.rawValue) (\($0.joined(separator: ", ")))" } ?? privilege.rawValue
        }.joined(separator: ", ")
        return "GRANT \(privileges) ON \(tables.joined(separator: ", ")) TO \(roles.joined(separator: ", "));"
    }

    /// What a migration that makes `tables` (new, or made again) runs on PostgreSQL: a table
    /// made after the roles were installed has no grants, so each role gets its rights on
    /// them (`rights`) there and then, and its logins keep working after `subdesk migrate`
    /// without `db init --roles` again. Only where the store's roles were installed: a role
    /// that exists and reads `schema_version` (every role reads every table, and PUBLIC
    /// none). The statements are unqualified: a migration runs in the store's schema.
    static func grants(onNew tables: [String]) -> String {
        var lines = ["DO $$ BEGIN"]
        for role in all {
            let owed = rights.filter { $0.roles.contains(role) }.compactMap { right -> String? in
                let remade = right.tables.filter(tables.contains)
                return remade.isEmpty ? nil : grant(right, on: remade, to: [role])
            }
            guard !owed.isEmpty else { continue }
            lines.append("""
                IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '\(role)') THEN
                    IF has_table_privilege('\(role)', 'schema_version', 'SELECT') THEN
                        \(owed.joined(separator: "\n            "))
                    END IF;
                END IF;
            """)
        }
        lines.append("END $$;")
        return lines.joined(separator: "\n")
    }

    /// The README's tables: what each role is for, then every table's rights by role
    /// (S select, I insert, U update, D delete; `U(col)` only those columns).
    public static var markdown: String {
        var lines = ["| role | may |", "|---|---|"]
        for role in all { lines.append("| `\(role)` | \(summaries[role] ?? "") |") }
        lines.append("")
        lines.append("| table | " + all.map { "`\($0.replacingOccurrences(of: "subdesk_", with: ""))`" }.joined(separator: " | ") + " |")
        lines.append("|---|" + all.map { _ in "---|" }.joined())
        for table in tables {
            let cells = all.map { role -> String in
                var letters: [String] = []
                for (privilege, letter) in [(Privilege.select, "S"), (.insert, "I"), (.update, "U"), (.delete, "D"), (.truncate, "T")] {
                    if allows(role, privilege, on: table) {
                        letters.append(letter)
                    } else if privilege == .update, let columns = updatableColumns(role, table) {
                        letters.append("U(\(columns.joined(separator: ", ")))")
                    }
                }
                return letters.joined(separator: " ")
            }
            lines.append("| `\(table)` | " + cells.joined(separator: " | ") + " |")
        }
        for routine in routines {
            lines.append("| `\(routine.name)()` | " + all.map { routine.roles.contains($0) ? "X" : "" }.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines.append("| audit action | " + all.map { "`\($0.replacingOccurrences(of: "subdesk_", with: ""))`" }.joined(separator: " | ") + " |")
        lines.append("|---|" + all.map { _ in "---|" }.joined())
        for action in auditActions.flatMap(\.actions) {
            let writers = auditWriters(of: action)
            lines.append("| `\(action.rawValue)` | " + all.map { writers.contains($0) ? "W" : "" }.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    /// The database-wide statements: only subdesk's roles may connect to `database`.
    /// PUBLIC keeps CONNECT on a new database, and a connected login, with no grant on the
    /// store, can still take advisory locks and fill the server's connection slots; so
    /// CONNECT is taken from PUBLIC and given to the four roles (their members inherit it).
    /// Other applications' logins in the same database need CONNECT granted by name.
    public static func databaseSQL(database: String) -> String {
        let name = "\"" + database.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        return """
            GRANT CONNECT ON DATABASE \(name) TO \(all.joined(separator: ", "));
            REVOKE CONNECT ON DATABASE \(name) FROM PUBLIC;
            """
    }
}
