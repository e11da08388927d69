/// Migration 23: audit entries no role can forge.
///
/// On PostgreSQL a login of a subdesk role inserts its own audit rows, so whatever the
/// client sends in them it could have made up. From this migration on the server decides
/// what a client would otherwise: a `BEFORE INSERT` trigger stamps every entry written by
/// any login but the store's owner (or a member of its role) with the server's clock (`clock_timestamp()`, in
/// milliseconds) and an id from the log's own sequence, whatever the client sent, and
/// refuses an action the inserting role may not write (`PostgresRoles.auditActions`, the
/// README's table of audit actions). A `sweep` entry therefore comes only from an operator
/// (or the owner), dated when it was written: the on-call metrics that read the audit log
/// (`OnCallMetrics`, each naming its source) read facts only their writer could write.
///
/// The owner is left as it is: it may write any action at any time (a copy between
/// stores, the demo's history), and could drop the trigger anyway; `doctor` names any
/// change to the trigger or its function. SQLite has no roles: whoever may write the file
/// may write anything in it, so its migration 23 changes nothing.
///
/// The function's body is generated from `PostgresRoles.auditActions`: a change to that
/// table needs a later migration that replaces the function, or `doctor` reports the body
/// as not subdesk's.
enum AuditStamp {
    static let version = 23

    /// The trigger (and its function) that stamps and checks each entry.
    static let stamp = "audit_log_stamp"

    /// PostgreSQL's migration 23.
    static var postgres: String {
        """
        CREATE FUNCTION \(stamp)() RETURNS trigger LANGUAGE plpgsql
        SET search_path = \(searchPath) AS $$\(stampBody)$$;
        CREATE TRIGGER \(stamp) BEFORE INSERT ON audit_log
            FOR EACH ROW EXECUTE FUNCTION \(stamp)();
        """
    }

    /// The search path the function runs with, as `SET search_path = ...` gives it; `doctor`
    /// expects exactly this in its `proconfig`.
    static let searchPath = "pg_catalog, pg_temp"

    /// Whether the login that wrote the entry (session_user: the identity the audit log's
    /// `operator` records, and the one the on-call metrics judge the row by) is a member of
    /// one of `roles`; false for a role that does not exist (the roles are made by
    /// `db init --roles`, after the schema). Not current_user: inside an owner's SECURITY
    /// DEFINER function that is the owner, whoever called it.
    static func member(of roles: [String]) -> String {
        "EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname IN ('\(roles.joined(separator: "', '"))') "
            + "AND pg_has_role(session_user, r.oid, 'MEMBER'))"
    }

    /// The trigger function's body, as `doctor` expects to find it.
    static var stampBody: String {
        let rules = PostgresRoles.auditActions.map { rule in
            "(NEW.action IN ('\(rule.actions.map(\.rawValue).joined(separator: "', '"))') AND \(member(of: rule.roles)))"
        } + [
            // Written only inside one of the owner's functions (current_user is the owner
            // there, whoever called it): never by a login's own INSERT.
            "(NEW.action IN ('\(PostgresRoles.ownerFunctionAuditActions.map(\.rawValue).joined(separator: "', '"))') "
                + "AND current_user = (SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = TG_RELID))",
        ]
        return """

            BEGIN
                IF pg_has_role(session_user, (SELECT c.relowner FROM pg_class c WHERE c.oid = TG_RELID), 'MEMBER') THEN
                    RETURN NEW;
                END IF;
                NEW.at_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
                NEW.id := nextval(pg_get_serial_sequence(format('%I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME), 'id'));
                IF NOT (
                    \(rules.joined(separator: "\n            OR "))
                ) THEN
                    RAISE EXCEPTION USING ERRCODE = '42501',
                        MESSAGE = format('permission denied: %s may not write audit entries of action %s', session_user, NEW.action),
                        HINT = 'each role writes only the actions of its commands (the README''s table of audit actions)';
                END IF;
                RETURN NEW;
            END

            """
    }

    /// The trigger as `doctor` checks it: for each row, before, on insert (1 | 2 | 4).
    static let triggers: [(name: String, function: String, type: Int)] = [(stamp, stamp, 1 | 2 | 4)]
}
