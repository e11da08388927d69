import Foundation

extension Store {
    // MARK: Transactions and renewal info

    static let transactionTable = StoreTable<TransactionColumn>("transactions", key: .transactionId)
    static let transactionSelection = transactionTable.selection()
    /// Every column of `transactions`, as `transaction(_:)` reads them.
    static let transactionColumns = transactionSelection.list

    static func transaction(_ row: SQLRow) -> TransactionRecord {
        let r = transactionSelection.row(row)
        var t = TransactionRecord(
            transactionId: r.string(.transactionId), originalTransactionId: r.string(.originalTransactionId),
            productId: r.string(.productId), subscriptionGroupIdentifier: r.optionalString(.subscriptionGroup),
            purchaseDate: r.int64(.purchaseMs), originalPurchaseDate: r.optionalInt64(.originalPurchaseMs),
            expiresDate: r.optionalInt64(.expiresMs), revocationDate: r.optionalInt64(.revocationMs),
            revocationReason: r.optionalInt(.revocationReason), isUpgraded: r.bool(.isUpgraded),
            offerType: r.optionalInt(.offerType), offerIdentifier: r.optionalString(.offerIdentifier),
            offerDiscountType: r.optionalString(.offerDiscountType), ownershipType: r.string(.ownership),
            transactionReason: r.optionalString(.transactionReason), price: r.optionalInt64(.price),
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

    /// When access ended for each revoked subscription among these: its latest revocation
    /// date, what `SubscriptionReport.accessEnded` says on a revoked subscription's detail,
    /// so a list shows the date its detail shows.
    public func accessEnded(of states: [SubscriptionState]) throws -> [String: Millis] {
        try accessEnded(originalTransactionIds: states.filter { $0.status == .revoked }.map(\.originalTransactionId))
    }

    /// `accessEnded(of:)` for these ids, whatever their status.
    public func accessEnded(originalTransactionIds: [String]) throws -> [String: Millis] {
        var ended: [String: Millis] = [:]
        // In slices: a search's limit may name more ids than an engine binds in one statement.
        for start in stride(from: 0, to: originalTransactionIds.count, by: 500) {
            let slice = originalTransactionIds[start..<min(start + 500, originalTransactionIds.count)]
            let pairs = try db.rows("""
                SELECT original_transaction_id, MAX(revocation_ms) FROM transactions
                WHERE original_transaction_id IN (\(slice.map { _ in "?" }.joined(separator: ","))) AND revocation_ms IS NOT NULL
                GROUP BY original_transaction_id
                """, slice.map { $0 as SQLBindable? }) { ($0.string(0), $0.int64(1)) }
            ended.merge(pairs, uniquingKeysWith: max)
        }
        return ended
    }

    public func transaction(id: String) throws -> TransactionRecord? {
        try db.first(Store.selectTransaction, [id], Store.transaction)
    }

    /// Inserts or replaces the stored version of a transaction. Callers decide which version wins.
    public func putTransaction(_ t: TransactionRecord) throws {
        try db.run(Store.transactionTable.upsert, Store.transactionTable.values(t))
    }

    // Statements built once: interpolating the column lists on every call costs more than running them.
    static let selectTransaction = "SELECT \(transactionColumns) FROM transactions WHERE transaction_id = ?"
    static let selectTransactionsOf = "SELECT \(transactionColumns) FROM transactions WHERE original_transaction_id = ?"
    static let selectRenewal = "SELECT \(renewalColumns) FROM renewal_info WHERE original_transaction_id = ?"
    /// A subscription's notifications for its history, each with the grace period's end its
    /// renewal info signed (a gap's grace, `MetricContributions.recoveredWithinGrace`).
    static let selectEventsOf = """
        SELECT \(eventColumns), grace_expires_ms, auto_renew, auto_renew_product_id FROM notifications WHERE original_transaction_id = ? ORDER BY signed_ms, notification_uuid
        """

    static let renewalTable = StoreTable<RenewalColumn>("renewal_info", key: .originalTransactionId)
    static let renewalSelection = renewalTable.selection()
    /// Every column of `renewal_info`, as `renewal(originalTransactionId:)` reads them.
    static let renewalColumns = renewalSelection.list

    public func renewal(originalTransactionId: String) throws -> RenewalRecord? {
        try db.first(Store.selectRenewal, [originalTransactionId]) { row in
            let r = Store.renewalSelection.row(row)
            var renewal = RenewalRecord(
                originalTransactionId: r.string(.originalTransactionId), productId: r.optionalString(.productId),
                autoRenewProductId: r.optionalString(.autoRenewProductId), autoRenewStatus: r.bool(.autoRenew),
                expirationIntent: r.optionalInt(.expirationIntent), isInBillingRetryPeriod: r.bool(.billingRetry),
                gracePeriodExpiresDate: r.optionalInt64(.graceExpiresMs), priceIncreaseStatus: r.optionalInt(.priceIncreaseStatus),
                offerType: r.optionalInt(.offerType), offerIdentifier: r.optionalString(.offerIdentifier),
                renewalDate: r.optionalInt64(.renewalMs), renewalPrice: r.optionalInt64(.renewalPrice),
                currency: r.optionalString(.currency), environment: AppStoreEnvironment(rawValue: r.string(.environment)),
                signedDate: r.int64(.signedMs), notificationSignedDate: r.optionalInt64(.notificationSignedMs),
                sourceNotificationUUID: r.optionalString(.sourceUuid), payload: r.optionalData(.payload))
            renewal.adoptPayloadFields()
            return renewal
        }
    }

    public func putRenewal(_ r: RenewalRecord) throws {
        try db.run(Store.renewalTable.upsert, Store.renewalTable.values(r))
    }

    /// Everything stored about one subscription.
    public func history(originalTransactionId otid: String) throws -> SubscriptionHistory {
        let transactions = try db.rows(Store.selectTransactionsOf, [otid], Store.transaction)
        let events = try db.rows(Store.selectEventsOf, [otid]) { row in
            var event = Store.event(row)
            event.graceExpires = row.optionalInt64(9)
            event.autoRenew = row.optionalInt64(10).map { $0 != 0 }
            event.autoRenewProductId = row.optionalString(11)
            return event
        }
        return SubscriptionHistory(originalTransactionId: otid, transactions: transactions,
                                   renewal: try renewal(originalTransactionId: otid), events: events,
                                   realtime: try answeredRetentionRequests(originalTransactionId: otid))
    }
}

/// The columns of `transactions`, in the table's order, and what a transaction writes to each.
enum TransactionColumn: Int, StoreColumn {
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
        case .revocationReason: return t.revocationReason
        case .isUpgraded: return t.isUpgraded
        case .offerType: return t.offerType
        case .offerIdentifier: return t.offerIdentifier
        case .offerDiscountType: return t.offerDiscountType
        case .ownership: return t.ownershipType
        case .transactionReason: return t.transactionReason
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

/// The columns of `renewal_info`, in the table's order, and what renewal info writes to each.
enum RenewalColumn: Int, StoreColumn {
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
        case .offerType: return r.offerType
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
