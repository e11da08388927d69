import Foundation

extension Store {
    // MARK: Derived state

    /// Saves a subscription's derived state and moves the daily-count aggregates from its
    /// previous share to `metrics`.
    public func saveState(_ s: SubscriptionState, subscriberId: Int64, now: Millis, metrics: MetricContributions) throws {
        try saveState(s, subscriberId: subscriberId, stored: try storedShare(s.originalTransactionId), now: now, metrics: metrics)
    }

    /// Saves a subscription's derived state with the subscriber `appAccountToken` names (see
    /// `resolveSubscriber`), reading the stored row once for both.
    public func saveState(_ s: SubscriptionState, appAccountToken token: String?, now: Millis, metrics: MetricContributions) throws {
        let stored = try storedShare(s.originalTransactionId)
        let subscriber = try resolveSubscriber(current: stored?.subscriberId, appAccountToken: token, now: now)
        try saveState(s, subscriberId: subscriber, stored: stored, now: now, metrics: metrics)
    }

    /// What a saved subscription row already holds: its owner, status, share of the counts,
    /// and the values of its other indexed columns.
    private typealias StoredShare = (subscriberId: Int64, status: Int, metrics: MetricContributions, blob: Data?, indexed: [SQLBindable?])

    /// Reads `metrics` and then the columns of `indexedSubscriptionColumnNames`, in that order.
    private func storedShare(_ otid: String) throws -> StoredShare? {
        try db.first("""
            SELECT metrics, subscriber_id, product_id, status, expires_ms, app_account_token, last_event_ms
            FROM subscriptions WHERE original_transaction_id = ?
            """, [otid]) {
            let blob = $0.isNull(0) ? nil : $0.data(0)
            return ($0.int64(1), $0.int(3), blob.map(MetricContributions.init(encoded:)) ?? MetricContributions(), blob,
                    [$0.int64(1), $0.string(2), $0.int(3), $0.optionalInt64(4), $0.optionalString(5), $0.optionalInt64(6)])
        }
    }

    private func saveState(_ s: SubscriptionState, subscriberId: Int64, stored: StoredShare?, now: Millis,
                           metrics: MetricContributions) throws {
        let previous = stored?.metrics ?? MetricContributions()
        if stored?.status != s.status.rawValue {
            if let old = stored?.status { pendingStatusCounts[old, default: 0] -= 1 }
            pendingStatusCounts[s.status.rawValue, default: 0] += 1
        }
        let share = try moveShare(s.originalTransactionId, to: metrics, from: stored?.blob, decoded: previous)
        let values: [SQLBindable?] = [s.originalTransactionId, subscriberId, s.productId, s.status.rawValue, s.entitled, s.expiresDate,
                  s.purchaseDate, s.originalPurchaseDate, s.latestTransactionId, s.autoRenewStatus,
                  s.autoRenewProductId, s.pendingChange?.kind, s.pendingChange?.productId, s.gracePeriodExpiresDate,
                  s.isInBillingRetryPeriod, s.expirationIntent, s.priceIncreaseStatus, s.offerType,
                  s.offerIdentifier, s.offerDiscountType, s.isTrial, s.ownershipType, s.environment,
                  s.appAccountToken, s.upgradedFrom.joined(separator: ","), s.revokedTransactionIds.joined(separator: ","),
                  s.lastEventDate, s.lastNotificationType, now, share, s.bundleId]
        guard let stored else {
            try db.run(Store.upsertSubscription, values)
            return
        }
        // SQLite keeps up every index over a column the SET names, changed or not: name an
        // indexed column only when its value changes (a renewal moves the expiry and the
        // last event, and leaves owner, product and token as they were).
        var changed = 0
        for (bit, column) in Store.indexedSubscriptionColumns.enumerated()
            where !Store.sameValue(values[column], stored.indexed[bit]) { changed |= 1 << bit }
        let update: (sql: String, columns: [Int])
        if let known = subscriptionUpdates[changed] {
            update = known
        } else {
            update = Store.subscriptionUpdate(changing: changed)
            subscriptionUpdates[changed] = update
        }
        try db.run(update.sql, update.columns.map { values[$0] } + [s.originalTransactionId])
        if stored.subscriberId != subscriberId { try dropSubscriberIfEmpty(stored.subscriberId) }
    }

    /// A subscriber that owns no subscription and carries no user id is no one (a token
    /// whose subscription moved to the owner a newer version names, say): it goes, so
    /// look-ups and search do not find an owner of nothing. The foreign key keeps any
    /// subscriber that still owns something.
    func dropSubscriberIfEmpty(_ id: Int64) throws {
        try db.run(db.dialect.dropEmptySubscriber, [id])
    }

    /// The columns an index other than the key's covers, in the order `storedShare` reads them.
    static let indexedSubscriptionColumnNames = ["subscriber_id", "product_id", "status", "expires_ms",
                                                 "app_account_token", "last_event_ms"]
    static let subscriptionColumnNames = columnNames(subscriptionColumns)
    /// Their positions in `subscriptionColumns`.
    static let indexedSubscriptionColumns = indexedSubscriptionColumnNames.map { subscriptionColumnNames.firstIndex(of: $0)! }

    /// The UPDATE for a stored subscription row, and the positions in `subscriptionColumns`
    /// of the values it binds before the key: every column but the key, and of the indexed
    /// ones only those whose bit is set in `changing`.
    static func subscriptionUpdate(changing: Int) -> (sql: String, columns: [Int]) {
        let columns = (1..<subscriptionColumnNames.count).filter { column in
            guard let bit = indexedSubscriptionColumns.firstIndex(of: column) else { return true }
            return changing & (1 << bit) != 0
        }
        let sql = "UPDATE subscriptions SET " + columns.map { "\(subscriptionColumnNames[$0]) = ?" }.joined(separator: ", ")
            + " WHERE original_transaction_id = ?"
        return (sql, columns)
    }

    /// Whether a value about to be bound equals one read back from the store.
    static func sameValue(_ a: SQLBindable?, _ b: SQLBindable?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x as Int64, y as Int64): return x == y
        case let (x as Int, y as Int): return x == y
        case let (x as String, y as String): return x == y
        default: return false
        }
    }

    static let upsertSubscription = """
        INSERT INTO subscriptions (\(subscriptionColumns))
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
        ON CONFLICT (original_transaction_id) DO UPDATE SET \(subscriptionUpdates)
        """

    static let subscriptionColumns = """
        original_transaction_id, subscriber_id, product_id, status, entitled, expires_ms, purchase_ms, original_purchase_ms,
        latest_transaction_id, auto_renew, auto_renew_product_id, pending_change_kind, pending_change_product_id,
        grace_expires_ms, billing_retry, expiration_intent, price_increase_status, offer_type, offer_identifier,
        offer_discount_type, is_trial, ownership, environment, app_account_token, upgraded_from, revoked_transactions,
        last_event_ms, last_notification_type, updated_ms, metrics, bundle_id
        """

    /// `a = excluded.a, b = excluded.b, ...` for an upsert that updates a row in place
    /// (REPLACE would delete and re-insert it, touching every index twice).
    static func updateAll(_ columns: String, except key: String) -> String {
        columnNames(columns).filter { $0 != key }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    }

    /// The names in a comma-separated column list.
    static func columnNames(_ columns: String) -> [String] {
        columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    static let transactionUpdates = updateAll(transactionColumns, except: "transaction_id")
    static let renewalUpdates = updateAll(renewalColumns, except: "original_transaction_id")
    static let subscriptionUpdates = updateAll(subscriptionColumns, except: "original_transaction_id")

    static let stateColumns = """
        s.original_transaction_id, s.product_id, s.status, s.entitled, s.expires_ms, s.purchase_ms,
        s.original_purchase_ms, s.latest_transaction_id, s.auto_renew, s.auto_renew_product_id, s.pending_change_kind,
        s.pending_change_product_id, s.grace_expires_ms, s.billing_retry, s.expiration_intent, s.price_increase_status,
        s.offer_type, s.offer_identifier, s.offer_discount_type, s.is_trial, s.ownership, s.environment,
        s.app_account_token, s.upgraded_from, s.revoked_transactions, s.last_event_ms, s.last_notification_type,
        b.id, b.user_id, b.app_account_token, s.bundle_id
        """

    static func row(_ r: SQLRow) -> SubscriptionRow {
        func list(_ i: Int32) -> [String] { r.string(i).split(separator: ",").map(String.init) }
        let pending = r.optionalString(10).map {
            SubscriptionState.PendingChange(kind: $0, productId: r.string(11), effectiveDate: r.optionalInt64(4))
        }
        let state = SubscriptionState(
            originalTransactionId: r.string(0), productId: r.string(1),
            status: SubscriptionStatus(rawValue: r.int(2)) ?? .expired, entitled: r.bool(3),
            expiresDate: r.optionalInt64(4), purchaseDate: r.optionalInt64(5), originalPurchaseDate: r.optionalInt64(6),
            latestTransactionId: r.optionalString(7), autoRenewStatus: r.bool(8), autoRenewProductId: r.optionalString(9),
            pendingChange: pending, gracePeriodExpiresDate: r.optionalInt64(12), isInBillingRetryPeriod: r.bool(13),
            expirationIntent: r.optionalInt(14), priceIncreaseStatus: r.optionalInt(15), offerType: r.optionalInt(16),
            offerIdentifier: r.optionalString(17), offerDiscountType: r.optionalString(18), isTrial: r.bool(19),
            ownershipType: r.string(20), environment: r.string(21), appAccountToken: r.optionalString(22),
            upgradedFrom: list(23), revokedTransactionIds: list(24), lastEventDate: r.optionalInt64(25),
            lastNotificationType: r.optionalString(26), bundleId: r.optionalString(30))
        return SubscriptionRow(subscriber: Store.subscriber(r, from: 27), state: state)
    }

    static let rowSource = "subscriptions s JOIN subscribers b ON b.id = s.subscriber_id"

    public func subscription(originalTransactionId otid: String) throws -> SubscriptionRow? {
        try db.first("SELECT \(Store.stateColumns) FROM \(Store.rowSource) WHERE s.original_transaction_id = ?", [otid], Store.row)
    }

    public func subscriptions(subscriberId: Int64) throws -> [SubscriptionRow] {
        try db.rows("SELECT \(Store.stateColumns) FROM \(Store.rowSource) WHERE s.subscriber_id = ? ORDER BY s.original_purchase_ms",
                    [subscriberId], Store.row)
    }

    public func subscriptionCount() throws -> Int {
        try db.first("SELECT count(*) FROM subscriptions") { $0.int(0) } ?? 0
    }
}
