/// What keeps the audit log append-only on each engine, as data: the triggers migrations 2
/// and 6 create (`Migrations`), which `doctor` checks are still there and still subdesk's.
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
    ]

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
    ]

    /// Migration 2's PostgreSQL part: the functions and triggers above.
    static let postgresSQL = """
        CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$\(postgresFunctionBodies["audit_log_append_only"]!)$$;
        -- Row-level, as SQLite's: an UPDATE or DELETE that matches no row is not an error.
        CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
            FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
        CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
            FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
        -- TRUNCATE fires no row trigger; SQLite has no TRUNCATE (and a DELETE without WHERE
        -- fires its delete trigger).
        CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
            FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
        -- Who did it is the database user the entry was written as, not a name the
        -- client chose: the server fills it in on every insert.
        CREATE FUNCTION audit_log_operator() RETURNS trigger LANGUAGE plpgsql AS $$\(postgresFunctionBodies["audit_log_operator"]!)$$;
        CREATE TRIGGER audit_log_operator BEFORE INSERT ON audit_log
            FOR EACH ROW EXECUTE FUNCTION audit_log_operator();
        """
}
