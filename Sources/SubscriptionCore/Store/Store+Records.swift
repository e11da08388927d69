import Foundation

extension Store {
    // MARK: Transactions and renewal info

    static let transactionColumns = """
        transaction_id, original_transaction_id, product_id, subscription_group, purchase_ms, original_purchase_ms,
        expires_ms, revocation_ms, revocation_reason, is_upgraded, offer_type, offer_identifier, offer_discount_type,
        ownership, transaction_reason, price, currency, environment, app_account_token, signed_ms,
        web_order_line_item_id, bundle_id, type, storefront, notification_signed_ms, source_uuid, payload, app_transaction_id
        """

    static func transaction(_ r: SQLRow) -> TransactionRecord {
        var t = TransactionRecord(
            transactionId: r.string(0), originalTransactionId: r.string(1), productId: r.string(2),
            subscriptionGroupIdentifier: r.optionalString(3), purchaseDate: r.int64(4),
            originalPurchaseDate: r.optionalInt64(5), expiresDate: r.optionalInt64(6),
            revocationDate: r.optionalInt64(7), revocationReason: r.optionalInt(8), isUpgraded: r.bool(9),
            offerType: r.optionalInt(10), offerIdentifier: r.optionalString(11),
            offerDiscountType: r.optionalString(12), ownershipType: r.string(13),
            transactionReason: r.optionalString(14), price: r.optionalInt64(15), currency: r.optionalString(16),
            environment: AppStoreEnvironment(rawValue: r.string(17)), appAccountToken: r.optionalString(18),
            signedDate: r.int64(19), webOrderLineItemId: r.optionalString(20), bundleId: r.optionalString(21),
            type: r.optionalString(22), storefront: r.optionalString(23), notificationSignedDate: r.optionalInt64(24),
            sourceNotificationUUID: r.optionalString(25), payload: r.isNull(26) ? nil : r.data(26))
        t.appTransactionId = r.optionalString(27)
        t.adoptPayloadFields()
        return t
    }

    public func transaction(id: String) throws -> TransactionRecord? {
        try db.first(Store.selectTransaction, [id], Store.transaction)
    }

    /// Inserts or replaces the stored version of a transaction. Callers decide which version wins.
    public func putTransaction(_ t: TransactionRecord) throws {
        try db.run(Store.upsertTransaction, [t.transactionId, t.originalTransactionId, t.productId, t.subscriptionGroupIdentifier,
                  t.purchaseDate, t.originalPurchaseDate, t.expiresDate, t.revocationDate, t.revocationReason,
                  t.isUpgraded, t.offerType, t.offerIdentifier, t.offerDiscountType, t.ownershipType,
                  t.transactionReason, t.price, t.currency, t.environment.rawValue, t.appAccountToken,
                  t.signedDate, t.webOrderLineItemId, t.bundleId, t.type, t.storefront, t.notificationSignedDate,
                  t.sourceNotificationUUID, t.payload, t.appTransactionId])
    }

    // Statements built once: interpolating the column lists on every call costs more than running them.
    static let selectTransaction = "SELECT \(transactionColumns) FROM transactions WHERE transaction_id = ?"
    static let selectTransactionsOf = "SELECT \(transactionColumns) FROM transactions WHERE original_transaction_id = ?"
    static let upsertTransaction = """
        INSERT INTO transactions (\(transactionColumns))
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
        ON CONFLICT (transaction_id) DO UPDATE SET \(transactionUpdates)
        """
    static let selectRenewal = "SELECT \(renewalColumns) FROM renewal_info WHERE original_transaction_id = ?"
    static let upsertRenewal = """
        INSERT INTO renewal_info (\(renewalColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
        ON CONFLICT (original_transaction_id) DO UPDATE SET \(renewalUpdates)
        """
    static let selectEventsOf = """
        SELECT \(eventColumns) FROM notifications WHERE original_transaction_id = ? ORDER BY signed_ms, notification_uuid
        """

    static let renewalColumns = """
        original_transaction_id, product_id, auto_renew_product_id, auto_renew, expiration_intent, billing_retry,
        grace_expires_ms, price_increase_status, offer_type, offer_identifier, renewal_ms, renewal_price, currency,
        environment, signed_ms, notification_signed_ms, source_uuid, payload
        """

    public func renewal(originalTransactionId: String) throws -> RenewalRecord? {
        try db.first(Store.selectRenewal, [originalTransactionId]) { r in
            var renewal = RenewalRecord(originalTransactionId: r.string(0), productId: r.optionalString(1),
                          autoRenewProductId: r.optionalString(2), autoRenewStatus: r.bool(3),
                          expirationIntent: r.optionalInt(4), isInBillingRetryPeriod: r.bool(5),
                          gracePeriodExpiresDate: r.optionalInt64(6), priceIncreaseStatus: r.optionalInt(7),
                          offerType: r.optionalInt(8), offerIdentifier: r.optionalString(9),
                          renewalDate: r.optionalInt64(10), renewalPrice: r.optionalInt64(11),
                          currency: r.optionalString(12), environment: AppStoreEnvironment(rawValue: r.string(13)),
                          signedDate: r.int64(14), notificationSignedDate: r.optionalInt64(15),
                          sourceNotificationUUID: r.optionalString(16), payload: r.isNull(17) ? nil : r.data(17))
            renewal.adoptPayloadFields()
            return renewal
        }
    }

    public func putRenewal(_ r: RenewalRecord) throws {
        try db.run(Store.upsertRenewal, [r.originalTransactionId, r.productId, r.autoRenewProductId, r.autoRenewStatus, r.expirationIntent,
                  r.isInBillingRetryPeriod, r.gracePeriodExpiresDate, r.priceIncreaseStatus, r.offerType,
                  r.offerIdentifier, r.renewalDate, r.renewalPrice, r.currency, r.environment.rawValue, r.signedDate,
                  r.notificationSignedDate, r.sourceNotificationUUID, r.payload])
    }

    /// Everything stored about one subscription.
    public func history(originalTransactionId otid: String) throws -> SubscriptionHistory {
        let transactions = try db.rows(Store.selectTransactionsOf, [otid], Store.transaction)
        let events = try db.rows(Store.selectEventsOf, [otid]) { Store.event($0) }
        return SubscriptionHistory(originalTransactionId: otid, transactions: transactions,
                                   renewal: try renewal(originalTransactionId: otid), events: events)
    }
}
