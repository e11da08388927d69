extension Store {
    // MARK: Audit log

    /// Who is recorded as acting, given the name an operator gave: on PostgreSQL the database
    /// user (the audit log's trigger records it whatever the client says, and overrides and
    /// lifts must name the same person), elsewhere the name given.
    public func operatorOfRecord(_ given: String) -> String { db.recordedUser ?? given }

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
