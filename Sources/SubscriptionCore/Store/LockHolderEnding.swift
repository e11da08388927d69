/// Migration 31: a support or operator session cannot hold the writers' lock past its
/// login's bound.
///
/// `db login` bounds each login's sessions (`statement_timeout`,
/// `idle_in_transaction_session_timeout`), but PostgreSQL lets a session `SET` its own
/// timeouts to 0, so a support login could take `store_changes` (its writes' lock) and sit
/// on it, and intake would answer 503 for as long as it liked. The bound is therefore kept
/// from outside the session: intake, when its wait for the lock times out, asks the owner's
/// function below to end each session holding it. The function ends one only when all of
/// these hold, whatever the caller says:
/// - it holds a lock on this store's `store_changes`;
/// - its login is a member of `subdesk_support` or `subdesk_operator`, and of neither
///   `subdesk_intake` nor the owner's role (intake's own writers and the owner are never
///   ended, nor any session of another application);
/// - it has held its transaction idle longer than its login's
///   `idle_in_transaction_session_timeout`, or run its statement longer than its login's
///   `statement_timeout`, as `db login` set them (the role's defaults where none is set):
///   the bounds its own `SET` cannot move.
/// It is ended with `pg_terminate_backend`, which needs the owner to have the login's
/// privileges: `db login` grants the owner each login it makes (a login made before this
/// migration is granted when `db login` is run for it again; until then it is not ended,
/// and `doctor` still names it). Each session ended is audited as `lock_holder_ended`
/// (target the login, the intake login as operator), an action only this function writes.
public enum LockHolderEnding {
    public static let function = "subdesk_end_overdue_lock_holder"
    public static let action = AuditAction.lockHolderEnded
    static let version = 31

    /// The bounds of a login with none of its own, by role (`PostgresLogin.defaults`).
    static func defaultMs(_ role: String, _ setting: KeyPath<PostgresLogin, Int>) -> Int {
        PostgresLogin.defaults[role]?[keyPath: setting] ?? 60_000
    }

    /// The migration's PostgreSQL statements: the audit stamp's body that lets this
    /// function's entries in, the function, and its grant where the roles are installed.
    static var postgres: String {
        """
        CREATE OR REPLACE FUNCTION \(AuditStamp.stamp)() RETURNS trigger LANGUAGE plpgsql
        SET search_path = \(AuditStamp.searchPath) AS $$\(AuditStamp.stampBody)$$;
        DO $$ BEGIN
            EXECUTE format($f$
                CREATE OR REPLACE FUNCTION \(function)(target INTEGER) RETURNS TEXT
                LANGUAGE plpgsql SECURITY DEFINER SET search_path = %I, pg_temp AS $b$\(body.replacingOccurrences(of: "%", with: "%%"))$b$ $f$,
                current_schema());
        END $$;
        REVOKE ALL ON FUNCTION \(function)(INTEGER) FROM PUBLIC;
        DO $$ BEGIN
            IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'subdesk_intake')
               AND has_table_privilege('subdesk_intake', 'schema_version', 'SELECT') THEN
                GRANT EXECUTE ON FUNCTION \(function)(INTEGER) TO subdesk_intake;
            END IF;
        END $$;
        """
    }

    /// The function's body: the login it ended, or NULL for a session it may not end.
    static var body: String {
        func setting(_ name: String) -> String {
            """
            (SELECT split_part(c, '=', 2) FROM pg_db_role_setting s, unnest(s.setconfig) c
                     WHERE s.setrole = a.usesysid AND s.setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = current_database()))
                       AND c LIKE '\(name)=%' ORDER BY s.setdatabase DESC LIMIT 1)
            """
        }
        return """

        DECLARE
            a pg_stat_activity%ROWTYPE;
            is_operator BOOLEAN;
            idle_text TEXT;
            statement_text TEXT;
            bound_ms BIGINT;
            held_ms BIGINT;
        BEGIN
            SELECT * INTO a FROM pg_stat_activity WHERE pid = target AND pid <> pg_backend_pid();
            IF NOT FOUND OR a.usesysid IS NULL THEN RETURN NULL; END IF;
            IF NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = target AND l.granted AND l.locktype = 'relation'
                           AND l.relation = 'store_changes'::regclass) THEN RETURN NULL; END IF;
            IF pg_has_role(a.usesysid, (SELECT relowner FROM pg_class WHERE oid = 'store_changes'::regclass), 'MEMBER')
               OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'subdesk_intake' AND pg_has_role(a.usesysid, r.oid, 'MEMBER'))
               OR NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname IN ('subdesk_support', 'subdesk_operator')
                              AND pg_has_role(a.usesysid, r.oid, 'MEMBER')) THEN
                RETURN NULL;
            END IF;
            is_operator := EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'subdesk_operator' AND pg_has_role(a.usesysid, r.oid, 'MEMBER'));
            IF a.state LIKE 'idle in transaction%' THEN
                idle_text := \(setting("idle_in_transaction_session_timeout"));
                bound_ms := CASE WHEN idle_text ~ '^[0-9]{1,9}$' AND idle_text::bigint > 0 THEN idle_text::bigint
                                 WHEN is_operator THEN \(defaultMs("subdesk_operator", \.idleInTransactionMs))
                                 ELSE \(defaultMs("subdesk_support", \.idleInTransactionMs)) END;
                held_ms := floor(extract(epoch FROM clock_timestamp() - a.state_change) * 1000)::bigint;
            ELSE
                statement_text := \(setting("statement_timeout"));
                bound_ms := CASE WHEN statement_text ~ '^[0-9]{1,9}$' AND statement_text::bigint > 0 THEN statement_text::bigint
                                 WHEN is_operator THEN \(defaultMs("subdesk_operator", \.statementTimeoutMs))
                                 ELSE \(defaultMs("subdesk_support", \.statementTimeoutMs)) END;
                held_ms := floor(extract(epoch FROM clock_timestamp() - coalesce(a.query_start, a.xact_start)) * 1000)::bigint;
            END IF;
            IF held_ms IS NULL OR held_ms <= bound_ms THEN RETURN NULL; END IF;
            IF NOT pg_terminate_backend(target) THEN RETURN NULL; END IF;
            INSERT INTO audit_log (at_ms, operator, action, target, reason, outcome, detail)
                VALUES (0, session_user, '\(action.rawValue)', a.usename,
                        format('held the writers'' lock %s ms, past its bound of %s ms', held_ms, bound_ms), 'ended', format('pid %s', target));
            RETURN a.usename;
        EXCEPTION WHEN insufficient_privilege THEN
            RETURN NULL;
        END

        """
    }
}
