/// The database roles of a PostgreSQL store, enforced by the server rather than by subdesk.
///
/// Four group roles (NOLOGIN); each person or host logs in as a user that is a member of one:
///
/// - `subdesk_read`: reads everything (managers, reports). Writes nothing.
/// - `subdesk_intake`: what `subdesk ingest` does: adds notifications, quarantines bodies,
///   and keeps the state derived from them (subscriptions, transactions, renewal info,
///   metrics). Never updates or deletes a notification; no overrides, no audit entries.
/// - `subdesk_support`: reads, and marks overrides, links users, adds audit entries.
/// - `subdesk_operator`: support's rights, plus revalidation, extensions, sweeps, backfills,
///   refund answers and quarantine purges.
///
/// Every role may only add to the audit log: its triggers refuse UPDATE, DELETE and TRUNCATE
/// for everyone, owner included, and record the database user as the operator.
public enum PostgresRoles {
    public static let all = ["subdesk_read", "subdesk_intake", "subdesk_support", "subdesk_operator"]

    /// The tables the state derived from notifications lives in: every role that writes
    /// keeps them up to date (an override or a revalidation derives the state again).
    static let derived = ["subscribers", "subscriptions", "transactions", "renewal_info", "status_counts",
                          "metric_buckets", "metric_segments", "metrics_pending", "metric_segments_pending",
                          "verified_chains", "receipts", "refund_requests", "store_changes"]
    /// What intake adds and never changes afterwards.
    static let intakeAppendOnly = ["notifications", "jws_headers", "intake_log"]

    /// The SQL that creates the roles (when missing) and grants each its rights on `schema`.
    /// Idempotent: running it again after an upgrade grants rights on new tables.
    public static func sql(schema: String) -> String {
        let s = schema
        func tables(_ names: [String]) -> String { names.map { "\(s).\($0)" }.joined(separator: ", ") }
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
        lines.append("REVOKE ALL ON ALL TABLES IN SCHEMA \(s) FROM PUBLIC;")
        lines.append("REVOKE CREATE ON SCHEMA \(s) FROM PUBLIC;")
        for role in all {
            lines.append("GRANT USAGE ON SCHEMA \(s) TO \(role);")
            lines.append("GRANT SELECT ON ALL TABLES IN SCHEMA \(s) TO \(role);")
        }
        let writers = ["subdesk_intake", "subdesk_support", "subdesk_operator"]
        for role in writers {
            lines.append("GRANT INSERT, UPDATE, DELETE ON \(tables(derived)) TO \(role);")
            lines.append("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA \(s) TO \(role);")
        }
        // Intake: notifications and what arrives with them, added and never changed.
        lines.append("GRANT INSERT ON \(tables(intakeAppendOnly)) TO subdesk_intake;")
        lines.append("GRANT INSERT, UPDATE ON \(s).quarantine TO subdesk_intake;")
        // Support: overrides, user links, and the audit entries that record them.
        for role in ["subdesk_support", "subdesk_operator"] {
            lines.append("GRANT INSERT, UPDATE ON \(s).overrides TO \(role);")
            lines.append("GRANT INSERT ON \(s).audit_log TO \(role);")
        }
        // Operator: what talks to Apple and changes many subscriptions at once.
        lines.append("""
            GRANT INSERT ON \(tables(intakeAppendOnly)) TO subdesk_operator;
            GRANT INSERT, UPDATE, DELETE ON \(tables(["quarantine", "renewal_extensions", "backfill_runs", "delivery_gaps", "store_facts"])) TO subdesk_operator;
            """)
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
