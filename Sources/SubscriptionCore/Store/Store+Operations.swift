extension Store {
    // MARK: Audit log

    /// Who is recorded as acting, given the name an operator gave: on PostgreSQL the database
    /// user (the audit log's trigger records it whatever the client says, and overrides and
    /// lifts must name the same person), elsewhere the name given.
    public func operatorOfRecord(_ given: String) -> String { db.recordedUser ?? given }

    /// Appends `e` and checks that the row was written: a trigger or rule on the audit log
    /// that drops it (RETURN NULL, DO INSTEAD NOTHING) fails the write, so the action it
    /// records, in the same transaction, is undone rather than left unaudited.
    @discardableResult
    public func appendAudit(_ e: AuditEntry) throws -> Int64 {
        let written = try db.run("""
            INSERT INTO audit_log (at_ms, operator, action, target, reason, outcome, detail) VALUES (?,?,?,?,?,?,?)
            """, [e.at, e.operatorName, e.action, e.target, e.reason, e.outcome, e.detail])
        guard written == 1 else {
            throw StoreError(operation: "audit \(e.action)", message: """
                the audit entry was not written (something on audit_log dropped it; `subdesk doctor` names it): \
                the action it records is undone
                """, code: 0)
        }
        return try db.lastInsertRowID()
    }

    /// Audit entries at or after `since`, for `targets` when given, oldest first; with `app`,
    /// those whose target is one of its subscriptions or notifications; with `readsApp` (or
    /// `app`), each with the app of its target.
    public func audit(since: Millis? = nil, targets: [String]? = nil, limit: Int = 1000, app: AppScope? = nil,
                      readsApp: Bool = false) throws -> [AuditEntry] {
        var sql = "SELECT id, at_ms, operator, action, target, reason, outcome, detail"
            + (app != nil || readsApp ? ", \(Store.auditTargetApp) AS bundle_id" : "") + " FROM audit_log a WHERE at_ms >= ?"
        var values: [SQLBindable?] = [since ?? 0]
        if let targets {
            sql += " AND target IN (\(targets.map { _ in "?" }.joined(separator: ",")))"
            values += targets.map { $0 as SQLBindable? }
        }
        if let app {
            sql = "SELECT * FROM (\(sql)) AS entries WHERE " + app.condition("bundle_id")
            values.append(app.bundleId)
        }
        sql += " ORDER BY id DESC LIMIT ?"
        values.append(limit)
        return try db.rows(sql, values) { r in
            var entry = AuditEntry(id: r.int64(0), at: r.int64(1), operatorName: r.string(2), actionText: r.string(3),
                                   target: r.optionalString(4), reason: r.optionalString(5), outcome: r.string(6), detail: r.optionalString(7))
            if app != nil || readsApp { entry.bundleId = r.optionalString(8) }
            return entry
        }.reversed()
    }

    /// The app an audit entry's target belongs to: the subscription's, else the notification's it names.
    static let auditTargetApp = """
        coalesce((SELECT s.bundle_id FROM subscriptions s WHERE s.original_transaction_id = a.target),
            (SELECT n.bundle_id FROM notifications n WHERE n.notification_uuid = a.target))
        """

    /// How far ahead of `now` an audit entry may be dated and still be read by `lastAudit`:
    /// a few minutes of clock skew between hosts, no more.
    public static let auditFutureToleranceMillis: Int64 = 5 * 60_000

    /// The latest-dated audit entry of `action` (the last sweep, say), if any, the larger id
    /// first among entries of one millisecond; an entry dated more than
    /// `auditFutureToleranceMillis` after `now` is ignored (one written before migration 23
    /// with a far-future date would otherwise stay the last forever). With `trusted`, only
    /// one whose writer may write that action (`PostgresRoles.auditWriters`, or the owner):
    /// what on-call reads as a fact.
    public func lastAudit(action: AuditAction, trusted: Bool = false, now: Int64 = DateText.nowMillis()) throws -> AuditEntry? {
        let writers = trusted ? " AND " + dialect.auditWrittenBy(PostgresRoles.auditWriters(of: action)) : ""
        return try db.rows("""
            SELECT id, at_ms, operator, action, target, reason, outcome, detail FROM audit_log
            WHERE action = ? AND at_ms <= ?\(writers) ORDER BY at_ms DESC, id DESC LIMIT 1
            """, [action.rawValue, now + Self.auditFutureToleranceMillis]) { r in
            AuditEntry(id: r.int64(0), at: r.int64(1), operatorName: r.string(2), actionText: r.string(3),
                       target: r.optionalString(4), reason: r.optionalString(5), outcome: r.string(6), detail: r.optionalString(7))
        }.first
    }

    // MARK: Receipts

    public func putReceipt(_ receipt: String, originalTransactionId: String, at: Millis) throws {
        try db.run("""
            INSERT INTO receipts (original_transaction_id, latest_receipt, updated_ms) VALUES (?,?,?)
            ON CONFLICT (original_transaction_id) DO UPDATE SET latest_receipt = excluded.latest_receipt, updated_ms = excluded.updated_ms
            """,
                   [originalTransactionId, receipt, at])
    }

    public func receipt(originalTransactionId: String) throws -> String? {
        try db.first("SELECT latest_receipt FROM receipts WHERE original_transaction_id = ?", [originalTransactionId]) { $0.string(0) }
    }

    /// Subscriptions an expiry sweep must check: stored expiry passed at `now` while still
    /// counted active, or in grace or billing retry. Keyset-paged by originalTransactionId.
    public func sweepCandidates(now: Millis, after: String = "", limit: Int, app: AppScope? = nil) throws -> [String] {
        let own = Store.appCondition(app)
        return try db.rows("""
            SELECT original_transaction_id FROM subscriptions
            WHERE original_transaction_id > ? AND (
                (status = 1 AND IFNULL(expires_ms, 0) <= ? AND expires_ms IS NOT NULL) OR status IN (3, 4))\(own.sql)
            ORDER BY original_transaction_id LIMIT ?
            """, [after, now] + own.values + [limit]) { $0.string(0) }
    }
}
