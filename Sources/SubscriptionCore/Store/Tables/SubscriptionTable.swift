import Foundation

/// Every subscription's derived state, with its owner (`subscriptions`, `subscribers`): the
/// only code that names the columns of `subscriptions` (`store.subscriptions`). A saved state
/// moves the counts' aggregates from the subscription's previous share to its new one in
/// the same write (`save`); lists page through it by keyset (`SubscriptionTable+Paging`).
public struct SubscriptionTable {
    let store: Store
    var db: any SQLConnection { store.db }
    var memory: SubscriptionMemory { store.subscriptionMemory }

    /// The table's columns, in its order, and what a saved state writes to each.
    enum Column: Int, StoreColumn {
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
            case .offerType: return s.offerType?.rawValue
            case .offerIdentifier: return s.offerIdentifier
            case .offerDiscountType: return s.offerDiscountType
            case .isTrial: return s.isTrial
            case .ownership: return s.ownershipType.rawValue
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


    /// Saves a subscription's derived state and moves the daily-count aggregates from its
    /// previous share to `metrics`.
    public func save(_ s: SubscriptionState, subscriberId: Int64, now: Millis, metrics: MetricContributions) throws {
        try save(s, subscriberId: subscriberId, stored: try storedShare(s.originalTransactionId), now: now, metrics: metrics)
    }

    /// Saves a subscription's derived state with the subscriber `appAccountToken` names (see
    /// `resolveSubscriber`), reading the stored row once for both.
    public func save(_ s: SubscriptionState, appAccountToken token: String?, now: Millis, metrics: MetricContributions) throws {
        let stored = try storedShare(s.originalTransactionId)
        let subscriber = try store.subscribers.resolve(current: stored?.subscriberId, appAccountToken: token, now: now)
        try save(s, subscriberId: subscriber, stored: stored, now: now, metrics: metrics)
    }

    /// What a saved subscription row already holds: its owner, status, share of the counts
    /// (as stored), and the values of its indexed columns (`indexed`, in that order).
    private typealias StoredShare = (subscriberId: Int64, status: Int, blob: Data?, indexed: [SQLValue])

    private func storedShare(_ otid: String) throws -> StoredShare? {
        try db.first(Self.selectStoredShare, [otid]) {
            let r = Self.storedShareColumns.row($0)
            return (r.int64(.subscriberId), r.int(.status), r.optionalData(.metrics), Self.indexed.map(r.value))
        }
    }

    private static let storedShareColumns = table.selection([.metrics] + indexed)
    private static let selectStoredShare = """
        SELECT \(storedShareColumns.list) FROM subscriptions WHERE \(table.name(.originalTransactionId)) = ?
        """

    private func save(_ s: SubscriptionState, subscriberId: Int64, stored: StoredShare?, now: Millis,
                           metrics: MetricContributions) throws {
        if stored?.status != s.status.rawValue {
            if let old = stored?.status { store.held.statuses[old, default: 0] -= 1 }
            store.held.statuses[s.status.rawValue, default: 0] += 1
        }
        let share = try store.moveShare(s.originalTransactionId, to: metrics, from: stored?.blob)
        let values = Self.table.values(
            Column.Record(state: s, subscriberId: subscriberId, updated: now, share: share))
        guard let stored else {
            try db.run(Self.table.upsert, values)
            return
        }
        // SQLite keeps up every index over a column the SET names, changed or not: name an
        // indexed column only when its value changes (a renewal moves the expiry and the
        // last event, and leaves owner, product and token as they were).
        var changed = 0
        for (bit, column) in Self.indexed.enumerated()
            where !(values[column.rawValue]?.sqlValue ?? .null).isSame(as: stored.indexed[bit]) { changed |= 1 << bit }
        let update: (sql: String, columns: [Int])
        if let known = memory.updates[changed] {
            update = known
        } else {
            update = Self.update(changing: changed)
            memory.updates[changed] = update
        }
        try db.run(update.sql, update.columns.map { values[$0] } + [s.originalTransactionId])
        if stored.subscriberId != subscriberId { try store.subscribers.dropIfEmpty(stored.subscriberId) }
    }

    /// A subscriber that owns no subscription and carries no user id is no one (a token
    /// whose subscription moved to the owner a newer version names, say): it goes, so
    /// look-ups and search do not find an owner of nothing. The foreign key keeps any
    /// subscriber that still owns something.
    func dropSubscriberIfEmpty(_ id: Int64) throws {
        try db.run(db.dialect.dropEmptySubscriber, [id])
    }

    static let table = StoreTable<Column>("subscriptions", key: .originalTransactionId)

    /// The columns an index other than the key's covers.
    static let indexed: [Column] = [.subscriberId, .productId, .status, .expiresMs,
                                                                   .appAccountToken, .lastEventMs]

    /// The UPDATE for a stored subscription row, and the places in `subscriptionTable` of
    /// the values it binds before the key: every column but the key, and of the indexed
    /// ones only those whose bit is set in `changing`.
    static func update(changing: Int) -> (sql: String, columns: [Int]) {
        let table = Self.table
        let columns = table.columns.filter { column in
            guard column != table.key else { return false }
            guard let bit = indexed.firstIndex(of: column) else { return true }
            return changing & (1 << bit) != 0
        }
        let sql = "UPDATE \(table.name) SET " + columns.map { "\(table.name($0)) = ?" }.joined(separator: ", ")
            + " WHERE \(table.name(table.key)) = ?"
        return (sql, columns.map(\.rawValue))
    }

    /// What a subscription row is read with: its state's columns, then its subscriber's.
    static let state = table.selection(excluding: [.subscriberId, .updatedMs, .metrics], prefix: "s.")
    static let owner = SubscriberTable.owner(from: state.count)
    static let rowColumns = state.list + ", " + owner.list
    /// Where a column selected after `rowColumns` lands.
    static let rowColumnCount = state.count + owner.count

    static func row(_ row: SQLRow) -> SubscriptionRow {
        let r = Self.state.row(row)
        func list(_ column: Column) -> [String] { r.string(column).split(separator: ",").map(String.init) }
        let pending = r.optionalString(.pendingChangeKind).map {
            SubscriptionState.PendingChange(kind: $0, productId: r.string(.pendingChangeProductId), effectiveDate: r.optionalInt64(.expiresMs))
        }
        let derived = SubscriptionState(
            originalTransactionId: r.string(.originalTransactionId), productId: r.string(.productId),
            status: SubscriptionStatus(rawValue: r.int(.status)) ?? .expired, entitled: r.bool(.entitled),
            expiresDate: r.optionalInt64(.expiresMs), purchaseDate: r.optionalInt64(.purchaseMs),
            originalPurchaseDate: r.optionalInt64(.originalPurchaseMs), latestTransactionId: r.optionalString(.latestTransactionId),
            autoRenewStatus: r.bool(.autoRenew), autoRenewProductId: r.optionalString(.autoRenewProductId),
            pendingChange: pending, gracePeriodExpiresDate: r.optionalInt64(.graceExpiresMs), isInBillingRetryPeriod: r.bool(.billingRetry),
            expirationIntent: r.optionalInt(.expirationIntent), priceIncreaseStatus: r.optionalInt(.priceIncreaseStatus),
            offerType: r.optionalInt(.offerType).map(OfferType.init(rawValue:)), offerIdentifier: r.optionalString(.offerIdentifier),
            offerDiscountType: r.optionalString(.offerDiscountType), isTrial: r.bool(.isTrial),
            ownershipType: OwnershipType(rawValue: r.string(.ownership)), environment: r.string(.environment), appAccountToken: r.optionalString(.appAccountToken),
            upgradedFrom: list(.upgradedFrom), revokedTransactionIds: list(.revokedTransactions), lastEventDate: r.optionalInt64(.lastEventMs),
            lastNotificationType: r.optionalString(.lastNotificationType), bundleId: r.optionalString(.bundleId))
        return SubscriptionRow(subscriber: SubscriberTable.subscriber(owner.row(row)), state: derived)
    }

    static let rowSource = "subscriptions s JOIN subscribers b ON b.id = s.subscriber_id"

    public func find(originalTransactionId otid: String) throws -> SubscriptionRow? {
        try db.first("SELECT \(Self.rowColumns) FROM \(Self.rowSource) WHERE s.original_transaction_id = ?", [otid], Self.row)
    }

    public func of(subscriberId: Int64) throws -> [SubscriptionRow] {
        try db.rows("SELECT \(Self.rowColumns) FROM \(Self.rowSource) WHERE s.subscriber_id = ? ORDER BY s.original_purchase_ms",
                    [subscriberId], Self.row)
    }

    /// How many subscriptions the store holds; with `app`, how many are its.
    public func count(app: AppScope? = nil) throws -> Int {
        let own = Store.appCondition(app)
        return try db.count("SELECT count(*) FROM subscriptions WHERE true\(own.sql)", own.values)
    }

    /// The apps (the bundle id their subscriptions were signed for; nil for a record that
    /// names none) and environments whose subscriptions in this store are of `productId`:
    /// where a mass extension of the product is asked.
    static let appAndEnvironment = table.selection([.bundleId, .environment])

    public func appsSelling(productId: String) throws -> [(bundleId: String?, environment: String)] {
        return try db.rows("SELECT DISTINCT \(Self.appAndEnvironment.list) FROM subscriptions WHERE product_id = ?",
                           [productId]) { row in
            let r = Self.appAndEnvironment.row(row)
            return (bundleId: r.optionalString(.bundleId), environment: r.string(.environment))
        }.sorted { ($0.bundleId ?? "", $0.environment) < ($1.bundleId ?? "", $1.environment) }
    }

    /// Subscriptions an expiry sweep must check: stored expiry passed at `now` while still
    /// counted active, or in grace or billing retry. Keyset-paged by originalTransactionId.
    public func sweepCandidates(now: Millis, after: String = "", limit: Int, app: AppScope? = nil) throws -> [String] {
        let own = Store.appCondition(app)
        return try db.texts("""
            SELECT original_transaction_id FROM subscriptions
            WHERE original_transaction_id > ? AND (
                (status = 1 AND IFNULL(expires_ms, 0) <= ? AND expires_ms IS NOT NULL) OR status IN (3, 4))\(own.sql)
            ORDER BY original_transaction_id LIMIT ?
            """, [after, now] + own.values + [limit])
    }
}

extension SubscriptionTable {
    /// Everything stored about one subscription: its transactions, renewal info,
    /// notifications and the real-time retention requests answered for it.
    public func history(originalTransactionId otid: String) throws -> SubscriptionHistory {
        SubscriptionHistory(originalTransactionId: otid, transactions: try store.transactions.of(originalTransactionId: otid),
                            renewal: try store.renewals.find(originalTransactionId: otid),
                            events: try store.notifications.events(originalTransactionId: otid),
                            realtime: try store.retention.decisions.answered(originalTransactionId: otid))
    }
}

/// What a connection remembers between reads and writes of subscriptions: the search plan
/// of each text typed (`SubscriptionTable.textCondition`), and the UPDATE statements for a
/// row by which indexed columns change.
final class SubscriptionMemory {
    var searchPlans: [String: SubscriptionTable.SearchPlan] = [:]
    var updates: [Int: (sql: String, columns: [Int])] = [:]
}

extension Store {
    /// Every subscription's derived state, with its owner.
    public var subscriptions: SubscriptionTable { SubscriptionTable(store: self) }
}
