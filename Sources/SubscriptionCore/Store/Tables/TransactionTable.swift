import Foundation

/// Every transaction of every subscription, each as its newest signed version (`transactions`):
/// the only code that names the table's columns (`store.transactions`). Which version wins is
/// the caller's decision (`Intake`, revalidation); this type stores and reads.
public struct TransactionTable {
    let db: any SQLConnection

    /// The table's columns, in its order, and what a transaction writes to each.
    enum Column: Int, StoreColumn {
        case transactionId, originalTransactionId, productId, subscriptionGroup, purchaseMs, originalPurchaseMs,
             expiresMs, revocationMs, revocationReason, isUpgraded, offerType, offerIdentifier, offerDiscountType,
             ownership, transactionReason, price, currency, environment, appAccountToken, signedMs,
             webOrderLineItemId, bundleId, type, storefront, notificationSignedMs, sourceUuid, payload, appTransactionId

        func value(in t: TransactionRecord) -> SQLBindable? {
            switch self {
            case .transactionId: return t.transactionId
            case .originalTransactionId: return t.originalTransactionId
            case .productId: return t.productId
            case .subscriptionGroup: return t.subscriptionGroupIdentifier
            case .purchaseMs: return t.purchaseDate
            case .originalPurchaseMs: return t.originalPurchaseDate
            case .expiresMs: return t.expiresDate
            case .revocationMs: return t.revocationDate
            case .revocationReason: return t.revocationReason?.rawValue
            case .isUpgraded: return t.isUpgraded
            case .offerType: return t.offerType?.rawValue
            case .offerIdentifier: return t.offerIdentifier
            case .offerDiscountType: return t.offerDiscountType
            case .ownership: return t.ownershipType.rawValue
            case .transactionReason: return t.transactionReason?.rawValue
            case .price: return t.price
            case .currency: return t.currency
            case .environment: return t.environment.rawValue
            case .appAccountToken: return t.appAccountToken
            case .signedMs: return t.signedDate
            case .webOrderLineItemId: return t.webOrderLineItemId
            case .bundleId: return t.bundleId
            case .type: return t.type
            case .storefront: return t.storefront
            case .notificationSignedMs: return t.notificationSignedDate
            case .sourceUuid: return t.sourceNotificationUUID
            case .payload: return t.payload
            case .appTransactionId: return t.appTransactionId
            }
        }
    }

    static let table = StoreTable<Column>("transactions", key: .transactionId)
    static let all = table.selection()
    // Statements built once: interpolating the column lists on every call costs more than running them.
    static let selectOne = "SELECT \(all.list) FROM transactions WHERE transaction_id = ?"
    static let selectOf = "SELECT \(all.list) FROM transactions WHERE original_transaction_id = ?"

    /// A transaction from a row of `all`.
    static func record(_ row: SQLRow) -> TransactionRecord {
        let r = all.row(row)
        var t = TransactionRecord(
            transactionId: r.string(.transactionId), originalTransactionId: r.string(.originalTransactionId),
            productId: r.string(.productId), subscriptionGroupIdentifier: r.optionalString(.subscriptionGroup),
            purchaseDate: r.int64(.purchaseMs), originalPurchaseDate: r.optionalInt64(.originalPurchaseMs),
            expiresDate: r.optionalInt64(.expiresMs), revocationDate: r.optionalInt64(.revocationMs),
            revocationReason: r.optionalInt(.revocationReason).map(RevocationReason.init(rawValue:)), isUpgraded: r.bool(.isUpgraded),
            offerType: r.optionalInt(.offerType).map(OfferType.init(rawValue:)), offerIdentifier: r.optionalString(.offerIdentifier),
            offerDiscountType: r.optionalString(.offerDiscountType), ownershipType: OwnershipType(rawValue: r.string(.ownership)),
            transactionReason: r.optionalString(.transactionReason).map(TransactionReason.init(rawValue:)), price: r.optionalInt64(.price),
            currency: r.optionalString(.currency), environment: AppStoreEnvironment(rawValue: r.string(.environment)),
            appAccountToken: r.optionalString(.appAccountToken), signedDate: r.int64(.signedMs),
            webOrderLineItemId: r.optionalString(.webOrderLineItemId), bundleId: r.optionalString(.bundleId),
            type: r.optionalString(.type), storefront: r.optionalString(.storefront),
            notificationSignedDate: r.optionalInt64(.notificationSignedMs), sourceNotificationUUID: r.optionalString(.sourceUuid),
            payload: r.optionalData(.payload))
        t.appTransactionId = r.optionalString(.appTransactionId)
        t.adoptPayloadFields()
        return t
    }

    /// The transaction `id`, if it is stored.
    public func find(id: String) throws -> TransactionRecord? {
        try db.first(Self.selectOne, [id], Self.record)
    }

    /// Every stored transaction of the subscription `otid`.
    public func of(originalTransactionId otid: String) throws -> [TransactionRecord] {
        try db.rows(Self.selectOf, [otid], Self.record)
    }

    /// Inserts or replaces the stored version of a transaction. Callers decide which version wins.
    public func put(_ t: TransactionRecord) throws {
        try db.run(Self.table.upsert, Self.table.values(t))
    }

    /// When access ended for each revoked subscription among these: its latest revocation
    /// date, what `SubscriptionReport.accessEnded` says on a revoked subscription's detail,
    /// so a list shows the date its detail shows.
    public func accessEnded(of states: [SubscriptionState]) throws -> [String: Millis] {
        try accessEnded(originalTransactionIds: states.filter { $0.status == .revoked }.map(\.originalTransactionId))
    }

    /// What `accessEnded` selects.
    enum LatestRevocation: Int, SelectedValues {
        case subscription, revoked
        var sql: String {
            switch self {
            case .subscription: return "original_transaction_id"
            case .revoked: return "MAX(revocation_ms)"
            }
        }
    }

    /// `accessEnded(of:)` for these ids, whatever their status.
    public func accessEnded(originalTransactionIds: [String]) throws -> [String: Millis] {
        var ended: [String: Millis] = [:]
        // In slices: a search's limit may name more ids than an engine binds in one statement.
        for start in stride(from: 0, to: originalTransactionIds.count, by: 500) {
            let slice = originalTransactionIds[start..<min(start + 500, originalTransactionIds.count)]
            let pairs = try db.rows("""
                SELECT \(LatestRevocation.list) FROM transactions
                WHERE original_transaction_id IN (\(SQLText.placeholders(slice.count))) AND revocation_ms IS NOT NULL
                GROUP BY original_transaction_id
                """, slice.map { $0 as SQLBindable? }) { row in
                let r = LatestRevocation.row(row)
                return (r.string(.subscription), r.int64(.revoked))
            }
            ended.merge(pairs, uniquingKeysWith: max)
        }
        return ended
    }

    /// Each product's subscription group as the stored transactions carry it (the group of
    /// its latest stored transaction that names one): what the retention rules' switch-plan
    /// answers are checked against.
    ///
    /// A seek per product, not a read of every transaction: the products are walked through
    /// the index on (product, purchase, group) (migration 42), the next one after each, and
    /// each one's latest purchase read from its end. The transactions of that purchase time
    /// (one, unless two share a millisecond) come back, and the larger group id wins here,
    /// not by the engine's collation, so both engines give the same answer. The latest
    /// purchase is ordered by purchase and group, as the index is: ordered by purchase alone
    /// PostgreSQL read it backwards through the purchase index instead, filtering.
    ///
    /// Measured on a store of synthetic transactions (six products): reading every
    /// transaction grouped took 3.1 to 4.4 s at 3M on SQLite and 345 ms at 1M on
    /// PostgreSQL; by seeks 8 ms and 1.1 ms. In purchase order it took about a minute at 1M
    /// subscriptions, past serve's statement bound on PostgreSQL.
    public func subscriptionGroups() throws -> [String: String] {
        var latest: [String: String] = [:]
        try db.query(Self.latestGroupsSQL) { row in
            let r = Self.latestGroup.row(row)
            let product = r.string(.productId), group = r.string(.subscriptionGroup)
            if let seen = latest[product], seen >= group { return }
            latest[product] = group
        }
        return latest
    }

    static let latestGroup = table.selection([.productId, .subscriptionGroup], prefix: "t.")
    static let latestGroupsSQL = """
        WITH RECURSIVE products(product_id) AS (
            SELECT min(product_id) FROM transactions WHERE subscription_group IS NOT NULL
            UNION ALL
            SELECT (SELECT min(t.product_id) FROM transactions t
                    WHERE t.subscription_group IS NOT NULL AND t.product_id > products.product_id)
            FROM products WHERE products.product_id IS NOT NULL)
        SELECT \(latestGroup.list) FROM products p
        JOIN transactions t ON t.product_id = p.product_id AND t.subscription_group IS NOT NULL
            AND t.purchase_ms = (SELECT l.purchase_ms FROM transactions l
                                 WHERE l.product_id = p.product_id AND l.subscription_group IS NOT NULL
                                 ORDER BY l.purchase_ms DESC, l.subscription_group DESC LIMIT 1)
        """

    /// The subscription an app transaction (the app's download) bought, by the newest
    /// stored transaction that names it.
    public func originalTransactionId(appTransactionId: String) throws -> String? {
        try db.text("""
            SELECT original_transaction_id FROM transactions WHERE app_transaction_id = ? ORDER BY purchase_ms DESC LIMIT 1
            """, [appTransactionId])
    }

    /// Transactions that belong to no subscription (consumables, non-consumables, non-renewing
    /// purchases) whose transactionId or originalTransactionId is `id`.
    public func purchases(id: String, app: AppScope? = nil) throws -> [TransactionRecord] {
        try db.rows("""
            SELECT \(Self.all.list) FROM transactions t
            WHERE (t.transaction_id = ?1 OR t.original_transaction_id = ?1)
              AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = t.original_transaction_id)
              \(app.map { "AND " + $0.condition("t.bundle_id", placeholder: "?2") } ?? "")
            ORDER BY t.purchase_ms, t.transaction_id
            """, [id] + (app.map { [$0.bundleId] } ?? []), Self.record)
    }

    /// Purchases (as `purchases(id:)`) whose transactionId starts with `prefix`.
    public func searchPurchases(_ prefix: String, limit: Int = 50, app: AppScope? = nil) throws -> [TransactionRecord] {
        try db.rows("""
            SELECT \(Self.all.list) FROM transactions t
            WHERE t.transaction_id >= ?1 AND t.transaction_id < ?2
              AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = t.original_transaction_id)
              \(app.map { "AND " + $0.condition("t.bundle_id", placeholder: "?4") } ?? "")
            ORDER BY t.transaction_id LIMIT ?3
            """, [prefix, prefix + "\u{10FFFF}", limit] + (app.map { [$0.bundleId] } ?? []), Self.record)
    }

    /// Every subscription holding a transaction from the app download `appTransactionId`
    /// (a customer's subscriptions all name the same one).
    public func originalTransactionIds(appTransactionId: String) throws -> [String] {
        try db.texts("""
            SELECT DISTINCT original_transaction_id FROM transactions WHERE app_transaction_id = ? ORDER BY original_transaction_id
            """, [appTransactionId])
    }

    static let appTransactionOf = table.selection([.originalTransactionId, .appTransactionId])

    /// The app transactions (app downloads) these subscriptions' transactions were bought
    /// from, by original transaction id; subscriptions whose transactions name none are absent.
    public func appTransactionIds(originalTransactionIds: [String]) throws -> [String: Set<String>] {
        guard !originalTransactionIds.isEmpty else { return [:] }
        var byId: [String: Set<String>] = [:]
        try db.query("""
            SELECT DISTINCT \(Self.appTransactionOf.list) FROM transactions
            WHERE original_transaction_id IN (\(SQLText.placeholders(originalTransactionIds.count)))
            AND app_transaction_id IS NOT NULL
            """, originalTransactionIds.map { $0 as SQLBindable? }) { row in
            let r = Self.appTransactionOf.row(row)
            byId[r.string(.originalTransactionId), default: []].insert(r.string(.appTransactionId))
        }
        return byId
    }
}

/// Each subscription's renewal info, as its newest signed version (`renewal_info`): the only
/// code that names the table's columns (`store.renewals`).
public struct RenewalTable {
    let db: any SQLConnection

    /// The table's columns, in its order, and what renewal info writes to each.
    enum Column: Int, StoreColumn {
        case originalTransactionId, productId, autoRenewProductId, autoRenew, expirationIntent, billingRetry,
             graceExpiresMs, priceIncreaseStatus, offerType, offerIdentifier, renewalMs, renewalPrice, currency,
             environment, signedMs, notificationSignedMs, sourceUuid, payload

        func value(in r: RenewalRecord) -> SQLBindable? {
            switch self {
            case .originalTransactionId: return r.originalTransactionId
            case .productId: return r.productId
            case .autoRenewProductId: return r.autoRenewProductId
            case .autoRenew: return r.autoRenewStatus
            case .expirationIntent: return r.expirationIntent
            case .billingRetry: return r.isInBillingRetryPeriod
            case .graceExpiresMs: return r.gracePeriodExpiresDate
            case .priceIncreaseStatus: return r.priceIncreaseStatus
            case .offerType: return r.offerType?.rawValue
            case .offerIdentifier: return r.offerIdentifier
            case .renewalMs: return r.renewalDate
            case .renewalPrice: return r.renewalPrice
            case .currency: return r.currency
            case .environment: return r.environment.rawValue
            case .signedMs: return r.signedDate
            case .notificationSignedMs: return r.notificationSignedDate
            case .sourceUuid: return r.sourceNotificationUUID
            case .payload: return r.payload
            }
        }
    }

    static let table = StoreTable<Column>("renewal_info", key: .originalTransactionId)
    static let all = table.selection()
    static let selectOne = "SELECT \(all.list) FROM renewal_info WHERE original_transaction_id = ?"

    /// The renewal info of the subscription `originalTransactionId`, if any is stored.
    public func find(originalTransactionId: String) throws -> RenewalRecord? {
        try db.first(Self.selectOne, [originalTransactionId]) { row in
            let r = Self.all.row(row)
            var renewal = RenewalRecord(
                originalTransactionId: r.string(.originalTransactionId), productId: r.optionalString(.productId),
                autoRenewProductId: r.optionalString(.autoRenewProductId), autoRenewStatus: r.bool(.autoRenew),
                expirationIntent: r.optionalInt(.expirationIntent), isInBillingRetryPeriod: r.bool(.billingRetry),
                gracePeriodExpiresDate: r.optionalInt64(.graceExpiresMs), priceIncreaseStatus: r.optionalInt(.priceIncreaseStatus),
                offerType: r.optionalInt(.offerType).map(OfferType.init(rawValue:)), offerIdentifier: r.optionalString(.offerIdentifier),
                renewalDate: r.optionalInt64(.renewalMs), renewalPrice: r.optionalInt64(.renewalPrice),
                currency: r.optionalString(.currency), environment: AppStoreEnvironment(rawValue: r.string(.environment)),
                signedDate: r.int64(.signedMs), notificationSignedDate: r.optionalInt64(.notificationSignedMs),
                sourceNotificationUUID: r.optionalString(.sourceUuid), payload: r.optionalData(.payload))
            renewal.adoptPayloadFields()
            return renewal
        }
    }

    /// Inserts or replaces a subscription's stored renewal info. Callers decide which version wins.
    public func put(_ r: RenewalRecord) throws {
        try db.run(Self.table.upsert, Self.table.values(r))
    }
}

extension Store {
    /// Every transaction of every subscription.
    public var transactions: TransactionTable { TransactionTable(db: db) }
    /// Each subscription's renewal info.
    public var renewals: RenewalTable { RenewalTable(db: db) }
}
