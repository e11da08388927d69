import Foundation

extension Store {
    // MARK: Subscribers

    static func subscriber(_ r: SQLRow, from i: Int32 = 0) -> Subscriber {
        Subscriber(id: r.int64(i), userId: r.optionalString(i + 1), appAccountToken: r.optionalString(i + 2))
    }

    public func subscriber(id: Int64) throws -> Subscriber? {
        try db.first("SELECT id, user_id, app_account_token FROM subscribers WHERE id = ?", [id]) { Store.subscriber($0) }
    }

    /// The subscriber a subscription owned by `current` belongs to, creating or re-linking as
    /// the token says: a token names one subscriber; a subscription without one keeps its
    /// owner or gets a new one.
    func resolveSubscriber(current: Int64?, appAccountToken token: String?, now: Millis) throws -> Int64 {
        if let token {
            if let owner = try db.first("SELECT id FROM subscribers WHERE app_account_token = ?", [token], { $0.int64(0) }) {
                return owner
            }
            if let current, let s = try subscriber(id: current), s.appAccountToken == nil {
                try db.run("UPDATE subscribers SET app_account_token = ? WHERE id = ?", [token, current])
                return current
            }
            try db.run("INSERT INTO subscribers (app_account_token, created_ms) VALUES (?, ?)", [token, now])
            return try db.lastInsertRowID()
        }
        if let current { return current }
        try db.run("INSERT INTO subscribers (created_ms) VALUES (?)", [now])
        return try db.lastInsertRowID()
    }

    /// Adds a subscriber as given, for generated stores.
    public func insertSubscriber(userId: String?, appAccountToken: String?, now: Millis) throws -> Int64 {
        try db.run("INSERT INTO subscribers (user_id, app_account_token, created_ms) VALUES (?,?,?)", [userId, appAccountToken, now])
        return try db.lastInsertRowID()
    }

    /// Links an application user id to the subscriber that owns `originalTransactionId`.
    public func linkUser(_ userId: String, originalTransactionId otid: String) throws {
        try write {
            guard let owner = try db.first("SELECT subscriber_id FROM subscriptions WHERE original_transaction_id = ?", [otid], { $0.int64(0) }) else {
                throw StoreError(operation: "link user \(userId)", message: "no subscription with originalTransactionId \(otid)", code: 0)
            }
            if let other = try db.first("SELECT id FROM subscribers WHERE user_id = ?", [userId], { $0.int64(0) }), other != owner {
                // The user already has a subscriber: move this subscription to it.
                try db.run("UPDATE subscriptions SET subscriber_id = ? WHERE subscriber_id = ?", [other, owner])
                try dropSubscriberIfEmpty(owner)
                return
            }
            try db.run("UPDATE subscribers SET user_id = ? WHERE id = ?", [userId, owner])
        }
    }

    /// Finds the subscriber an id names: a user id, appAccountToken, originalTransactionId,
    /// transactionId, or the appTransactionId (the app download) their purchases carry.
    public func lookup(_ id: String) throws -> Subscriber? {
        if let s = try db.first("SELECT id, user_id, app_account_token FROM subscribers WHERE user_id = ? OR app_account_token = ?",
                                [id, id], { Store.subscriber($0) }) {
            return s
        }
        let otid = try db.first("SELECT original_transaction_id FROM subscriptions WHERE original_transaction_id = ?", [id]) { $0.string(0) }
            ?? db.first("SELECT original_transaction_id FROM transactions WHERE transaction_id = ?", [id]) { $0.string(0) }
            ?? originalTransactionId(appTransactionId: id)
        guard let otid else { return nil }
        return try db.first("""
            SELECT b.id, b.user_id, b.app_account_token FROM subscriptions s JOIN subscribers b ON b.id = s.subscriber_id
            WHERE s.original_transaction_id = ?
            """, [otid]) { Store.subscriber($0) }
    }

    /// The subscription an app transaction (the app's download) bought, by the newest
    /// stored transaction that names it.
    public func originalTransactionId(appTransactionId: String) throws -> String? {
        try db.first("""
            SELECT original_transaction_id FROM transactions WHERE app_transaction_id = ? ORDER BY purchase_ms DESC LIMIT 1
            """, [appTransactionId]) { $0.string(0) }
    }

    /// Transactions that belong to no subscription (consumables, non-consumables, non-renewing
    /// purchases) whose transactionId or originalTransactionId is `id`.
    public func purchases(id: String, app: AppScope? = nil) throws -> [TransactionRecord] {
        try db.rows("""
            SELECT \(TransactionTable.all.list) FROM transactions t
            WHERE (t.transaction_id = ?1 OR t.original_transaction_id = ?1)
              AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = t.original_transaction_id)
              \(app.map { "AND " + $0.condition("t.bundle_id", placeholder: "?2") } ?? "")
            ORDER BY t.purchase_ms, t.transaction_id
            """, [id] + (app.map { [$0.bundleId] } ?? []), TransactionTable.record)
    }

    /// Purchases (as `purchases(id:)`) whose transactionId starts with `prefix`.
    public func searchPurchases(_ prefix: String, limit: Int = 50, app: AppScope? = nil) throws -> [TransactionRecord] {
        try db.rows("""
            SELECT \(TransactionTable.all.list) FROM transactions t
            WHERE t.transaction_id >= ?1 AND t.transaction_id < ?2
              AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = t.original_transaction_id)
              \(app.map { "AND " + $0.condition("t.bundle_id", placeholder: "?4") } ?? "")
            ORDER BY t.transaction_id LIMIT ?3
            """, [prefix, prefix + "\u{10FFFF}", limit] + (app.map { [$0.bundleId] } ?? []), TransactionTable.record)
    }

    /// Subscriptions with `text` anywhere in their ids, product, or owner's user id or
    /// token (ASCII case ignored), those holding a transaction whose id starts with
    /// `text`, and those bought from the app download (appTransactionId) `text`. Every character in `text` means itself (`%` and `_` too).
    /// With `app`, only that app's.
    public func search(_ text: String, limit: Int = 50, app: AppScope? = nil) throws -> [SubscriptionRow] {
        let match = try textCondition(text, placeholder: "?1")
        // Scoped, each way of finding a subscription finds only the app's, so the limit counts only theirs.
        let own = app.map { " AND " + $0.condition("s.bundle_id", placeholder: "?5") } ?? ""
        let ownTransaction = app.map {
            " AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = transactions.original_transaction_id"
                + " AND \($0.condition("s.bundle_id", placeholder: "?5")))"
        } ?? ""
        return try db.rows("""
            SELECT \(Store.stateColumns) FROM \(Store.rowSource)
            WHERE s.original_transaction_id IN (
                SELECT s.original_transaction_id FROM \(Store.rowSource) WHERE \(match.sql)\(own)
                UNION SELECT original_transaction_id FROM transactions WHERE transaction_id >= ?2 AND transaction_id < ?3\(ownTransaction)
                UNION SELECT original_transaction_id FROM transactions WHERE app_transaction_id = ?2\(ownTransaction)
                LIMIT ?4)
            ORDER BY s.original_transaction_id LIMIT ?4
            """,
            [match.value, text, text + "\u{10FFFF}", limit] + (app.map { [$0.bundleId] } ?? []), Store.row)
    }
}

extension Store {
    /// Gives the subscriber `id` an app account token (a UUID), unless another subscriber
    /// already has it.
    public func setAppAccountToken(_ token: String, subscriberId id: Int64) throws {
        try write {
            if let other = try db.first("SELECT id FROM subscribers WHERE app_account_token = ?", [token], { $0.int64(0) }), other != id {
                throw StoreError(operation: "set token", message: "app account token \(token) belongs to subscriber #\(other)", code: 0)
            }
            try db.run("UPDATE subscribers SET app_account_token = ? WHERE id = ?", [token, id])
        }
    }
}
