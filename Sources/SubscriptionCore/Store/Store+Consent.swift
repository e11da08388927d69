import Foundation

extension Store {
    /// Every stored RESCIND_CONSENT, newest signed first, with its body; with `app`, its.
    public func consentNotifications(app: AppScope? = nil) throws -> [StoredNotification] {
        let own = Store.appCondition(app)
        return try db.rows("""
            SELECT \(Store.eventColumns), received_ms, body_sha256, body, source, body_format FROM notifications
            WHERE type = 'RESCIND_CONSENT'\(own.sql) ORDER BY signed_ms DESC, notification_uuid
            """, own.values) { r in
            StoredNotification(event: Store.event(r), receivedDate: r.int64(9), bodySHA256: r.string(10),
                               body: try body(format: r.int(13), stored: r.data(11)), source: r.optionalString(12))
        }
    }

    /// The first `consent_handled` audit entry of each of these notification UUIDs.
    public func consentHandled(uuids: [String]) throws -> [String: AuditEntry] {
        guard !uuids.isEmpty else { return [:] }
        var byTarget: [String: AuditEntry] = [:]
        for e in try audit.entries(targets: uuids, limit: 100_000) where e.kind == .consentHandled {
            if let t = e.target, byTarget[t] == nil { byTarget[t] = e }
        }
        return byTarget
    }

    /// Every subscription holding a transaction from the app download `appTransactionId`
    /// (a customer's subscriptions all name the same one).
    public func originalTransactionIds(appTransactionId: String) throws -> [String] {
        try db.rows("""
            SELECT DISTINCT original_transaction_id FROM transactions WHERE app_transaction_id = ? ORDER BY original_transaction_id
            """, [appTransactionId]) { $0.string(0) }
    }
}

extension Store {
    /// Every stored RESCIND_CONSENT's UUID and the subscription intake found for it, without
    /// the bodies: what the subscriber list's badge and the open count read, through the
    /// partial index on RESCIND_CONSENT rows (migration 17), however large the table; with
    /// `app`, its withdrawals only.
    public func consentNotificationKeys(app: AppScope? = nil) throws -> [(uuid: String, originalTransactionId: String?)] {
        let own = Store.appCondition(app)
        return try db.rows("""
            SELECT notification_uuid, original_transaction_id FROM notifications
            WHERE type = 'RESCIND_CONSENT'\(own.sql) ORDER BY signed_ms DESC, notification_uuid
            """, own.values) { (uuid: $0.string(0), originalTransactionId: $0.optionalString(1)) }
    }

    /// The app transactions (app downloads) these subscriptions' transactions were bought
    /// from, by original transaction id; subscriptions whose transactions name none are absent.
    public func appTransactionIds(originalTransactionIds: [String]) throws -> [String: Set<String>] {
        guard !originalTransactionIds.isEmpty else { return [:] }
        var byId: [String: Set<String>] = [:]
        let pairs = try db.rows("""
            SELECT DISTINCT original_transaction_id, app_transaction_id FROM transactions
            WHERE original_transaction_id IN (\(originalTransactionIds.map { _ in "?" }.joined(separator: ",")))
            AND app_transaction_id IS NOT NULL
            """, originalTransactionIds.map { $0 as SQLBindable? }) { ($0.string(0), $0.string(1)) }
        for (otid, app) in pairs { byId[otid, default: []].insert(app) }
        return byId
    }
}
