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
    /// and the values of its indexed columns (`indexedSubscriptionColumns`, in that order).
    private typealias StoredShare = (subscriberId: Int64, status: Int, metrics: MetricContributions, blob: Data?, indexed: [SQLValue])

    private func storedShare(_ otid: String) throws -> StoredShare? {
        try db.first(Store.selectStoredShare, [otid]) {
            let r = Store.storedShareColumns.row($0)
            let blob = r.optionalData(.metrics)
            return (r.int64(.subscriberId), r.int(.status), blob.map(MetricContributions.init(encoded:)) ?? MetricContributions(), blob,
                    Store.indexedSubscriptionColumns.map(r.value))
        }
    }

    private static let storedShareColumns = subscriptionTable.selection([.metrics] + indexedSubscriptionColumns)
    private static let selectStoredShare = """
        SELECT \(storedShareColumns.list) FROM subscriptions WHERE \(subscriptionTable.name(.originalTransactionId)) = ?
        """

    private func saveState(_ s: SubscriptionState, subscriberId: Int64, stored: StoredShare?, now: Millis,
                           metrics: MetricContributions) throws {
        let previous = stored?.metrics ?? MetricContributions()
        if stored?.status != s.status.rawValue {
            if let old = stored?.status { pendingStatusCounts[old, default: 0] -= 1 }
            pendingStatusCounts[s.status.rawValue, default: 0] += 1
        }
        let share = try moveShare(s.originalTransactionId, to: metrics, from: stored?.blob, decoded: previous)
        let values = Store.subscriptionTable.values(
            SubscriptionColumn.Record(state: s, subscriberId: subscriberId, updated: now, share: share))
        guard let stored else {
            try db.run(Store.subscriptionTable.upsert, values)
            return
        }
        // SQLite keeps up every index over a column the SET names, changed or not: name an
        // indexed column only when its value changes (a renewal moves the expiry and the
        // last event, and leaves owner, product and token as they were).
        var changed = 0
        for (bit, column) in Store.indexedSubscriptionColumns.enumerated()
            where !(values[column.rawValue]?.sqlValue ?? .null).isSame(as: stored.indexed[bit]) { changed |= 1 << bit }
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

    static let subscriptionTable = StoreTable<SubscriptionColumn>("subscriptions", key: .originalTransactionId)

    /// The columns an index other than the key's covers.
    static let indexedSubscriptionColumns: [SubscriptionColumn] = [.subscriberId, .productId, .status, .expiresMs,
                                                                   .appAccountToken, .lastEventMs]

    /// The UPDATE for a stored subscription row, and the places in `subscriptionTable` of
    /// the values it binds before the key: every column but the key, and of the indexed
    /// ones only those whose bit is set in `changing`.
    static func subscriptionUpdate(changing: Int) -> (sql: String, columns: [Int]) {
        let table = subscriptionTable
        let columns = table.columns.filter { column in
            guard column != table.key else { return false }
            guard let bit = indexedSubscriptionColumns.firstIndex(of: column) else { return true }
            return changing & (1 << bit) != 0
        }
        let sql = "UPDATE \(table.name) SET " + columns.map { "\(table.name($0)) = ?" }.joined(separator: ", ")
            + " WHERE \(table.name(table.key)) = ?"
        return (sql, columns.map(\.rawValue))
    }

    /// What a subscription row is read with: its state's columns, then its subscriber's.
    static let stateSelection = subscriptionTable.selection(excluding: [.subscriberId, .updatedMs, .metrics], prefix: "s.")
    static let stateColumns = stateSelection.list + ", b.id, b.user_id, b.app_account_token"
    /// Where the columns after `stateColumns` start.
    static let stateColumnCount = stateSelection.count + 3

    static func row(_ row: SQLRow) -> SubscriptionRow {
        let r = stateSelection.row(row)
        func list(_ column: SubscriptionColumn) -> [String] { r.string(column).split(separator: ",").map(String.init) }
        let pending = r.optionalString(.pendingChangeKind).map {
            SubscriptionState.PendingChange(kind: $0, productId: r.string(.pendingChangeProductId), effectiveDate: r.optionalInt64(.expiresMs))
        }
        let state = SubscriptionState(
            originalTransactionId: r.string(.originalTransactionId), productId: r.string(.productId),
            status: SubscriptionStatus(rawValue: r.int(.status)) ?? .expired, entitled: r.bool(.entitled),
            expiresDate: r.optionalInt64(.expiresMs), purchaseDate: r.optionalInt64(.purchaseMs),
            originalPurchaseDate: r.optionalInt64(.originalPurchaseMs), latestTransactionId: r.optionalString(.latestTransactionId),
            autoRenewStatus: r.bool(.autoRenew), autoRenewProductId: r.optionalString(.autoRenewProductId),
            pendingChange: pending, gracePeriodExpiresDate: r.optionalInt64(.graceExpiresMs), isInBillingRetryPeriod: r.bool(.billingRetry),
            expirationIntent: r.optionalInt(.expirationIntent), priceIncreaseStatus: r.optionalInt(.priceIncreaseStatus),
            offerType: r.optionalInt(.offerType), offerIdentifier: r.optionalString(.offerIdentifier),
            offerDiscountType: r.optionalString(.offerDiscountType), isTrial: r.bool(.isTrial),
            ownershipType: r.string(.ownership), environment: r.string(.environment), appAccountToken: r.optionalString(.appAccountToken),
            upgradedFrom: list(.upgradedFrom), revokedTransactionIds: list(.revokedTransactions), lastEventDate: r.optionalInt64(.lastEventMs),
            lastNotificationType: r.optionalString(.lastNotificationType), bundleId: r.optionalString(.bundleId))
        return SubscriptionRow(subscriber: Store.subscriber(row, from: stateSelection.count), state: state)
    }

    static let rowSource = "subscriptions s JOIN subscribers b ON b.id = s.subscriber_id"

    public func subscription(originalTransactionId otid: String) throws -> SubscriptionRow? {
        try db.first("SELECT \(Store.stateColumns) FROM \(Store.rowSource) WHERE s.original_transaction_id = ?", [otid], Store.row)
    }

    public func subscriptions(subscriberId: Int64) throws -> [SubscriptionRow] {
        try db.rows("SELECT \(Store.stateColumns) FROM \(Store.rowSource) WHERE s.subscriber_id = ? ORDER BY s.original_purchase_ms",
                    [subscriberId], Store.row)
    }

    /// How many subscriptions the store holds; with `app`, how many are its.
    public func subscriptionCount(app: AppScope? = nil) throws -> Int {
        let own = Store.appCondition(app)
        return try db.first("SELECT count(*) FROM subscriptions WHERE true\(own.sql)", own.values) { $0.int(0) } ?? 0
    }
}

/// The columns of `subscriptions`, in the table's order, and what a saved state writes to each.
enum SubscriptionColumn: Int, StoreColumn {
    case originalTransactionId, subscriberId, productId, status, entitled, expiresMs, purchaseMs, originalPurchaseMs,
         latestTransactionId, autoRenew, autoRenewProductId, pendingChangeKind, pendingChangeProductId,
         graceExpiresMs, billingRetry, expirationIntent, priceIncreaseStatus, offerType, offerIdentifier,
         offerDiscountType, isTrial, ownership, environment, appAccountToken, upgradedFrom, revokedTransactions,
         lastEventMs, lastNotificationType, updatedMs, metrics, bundleId

    /// A subscription's derived state as saved: with its owner, when, and its encoded share of the counts.
    struct Record {
        var state: SubscriptionState
        var subscriberId: Int64
        var updated: Millis
        var share: Data
    }

    func value(in record: Record) -> SQLBindable? {
        let s = record.state
        switch self {
        case .originalTransactionId: return s.originalTransactionId
        case .subscriberId: return record.subscriberId
        case .productId: return s.productId
        case .status: return s.status.rawValue
        case .entitled: return s.entitled
        case .expiresMs: return s.expiresDate
        case .purchaseMs: return s.purchaseDate
        case .originalPurchaseMs: return s.originalPurchaseDate
        case .latestTransactionId: return s.latestTransactionId
        case .autoRenew: return s.autoRenewStatus
        case .autoRenewProductId: return s.autoRenewProductId
        case .pendingChangeKind: return s.pendingChange?.kind
        case .pendingChangeProductId: return s.pendingChange?.productId
        case .graceExpiresMs: return s.gracePeriodExpiresDate
        case .billingRetry: return s.isInBillingRetryPeriod
        case .expirationIntent: return s.expirationIntent
        case .priceIncreaseStatus: return s.priceIncreaseStatus
        case .offerType: return s.offerType
        case .offerIdentifier: return s.offerIdentifier
        case .offerDiscountType: return s.offerDiscountType
        case .isTrial: return s.isTrial
        case .ownership: return s.ownershipType
        case .environment: return s.environment
        case .appAccountToken: return s.appAccountToken
        case .upgradedFrom: return s.upgradedFrom.joined(separator: ",")
        case .revokedTransactions: return s.revokedTransactionIds.joined(separator: ",")
        case .lastEventMs: return s.lastEventDate
        case .lastNotificationType: return s.lastNotificationType
        case .updatedMs: return record.updated
        case .metrics: return record.share
        case .bundleId: return s.bundleId
        }
    }
}

extension Store {
    /// The apps (the bundle id their subscriptions were signed for; nil for a record that
    /// names none) and environments whose subscriptions in this store are of `productId`:
    /// where a mass extension of the product is asked.
    public func appsSelling(productId: String) throws -> [(bundleId: String?, environment: String)] {
        try db.rows("SELECT DISTINCT bundle_id, environment FROM subscriptions WHERE product_id = ?", [productId]) {
            (bundleId: $0.optionalString(0), environment: $0.string(1))
        }.sorted { ($0.bundleId ?? "", $0.environment) < ($1.bundleId ?? "", $1.environment) }
    }
}
