/// What keeps the audit log append-only on each engine, as data: the triggers migrations 2
/// and 6 create (`Migrations`), and on PostgreSQL migration 23's stamp (`AuditStamp`),
/// which `doctor` checks are still there and still subdesk's.
enum AuditGuards {
    /// SQLite's triggers; `doctor` reports any that is missing.
    static let sqlite = ["audit_log_no_update", "audit_log_no_delete", "audit_log_no_replace"]

    /// PostgreSQL's triggers; `doctor` reports any that is missing or disabled.
    static let postgres = postgresTriggers.map(\.name)

    /// Each PostgreSQL audit trigger, the function it calls, and its `pg_trigger.tgtype`
    /// (bits: 1 for each row, 2 before, 4 insert, 8 delete, 16 update, 32 truncate):
    /// `doctor` checks all three, since a trigger that exists but fires on something else
    /// guards nothing.
    static let postgresTriggers: [(name: String, function: String, type: Int)] = [
        ("audit_log_no_update", "audit_log_append_only", 1 | 2 | 16),
        ("audit_log_no_delete", "audit_log_append_only", 1 | 2 | 8),
        ("audit_log_no_truncate", "audit_log_append_only", 2 | 32),
        ("audit_log_operator", "audit_log_operator", 1 | 2 | 4),
    ] + AuditStamp.triggers

    /// The bodies of the audit log's trigger functions, as migration 2 creates them, so
    /// `doctor` can tell one replaced (CREATE OR REPLACE FUNCTION ... RETURN NEW) from the original.
    static let postgresFunctionBodies: [String: String] = [
        "audit_log_append_only": """

            BEGIN
                RAISE EXCEPTION 'audit_log is append-only';
                RETURN NULL;
            END

            """,
        "audit_log_operator": """

            BEGIN
                NEW.operator := session_user;
                RETURN NEW;
            END;

            """,
        AuditStamp.stamp: AuditStamp.stampBody,
    ]

    /// The settings (`pg_proc.proconfig`) each audit function carries as the migrations
    /// create it; `doctor` reports any other (`ALTER FUNCTION ... SET search_path = x, ...`
    /// would let another schema's table or operator stand in).
    static let postgresFunctionConfig: [String: [String]] = [
        "audit_log_append_only": [],
        "audit_log_operator": [],
        AuditStamp.stamp: ["search_path=\(AuditStamp.searchPath)"],
    ]
}
