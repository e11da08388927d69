/// The receipt entries that V1 notifications (`unified_receipt`) and verifyReceipt
/// responses share: `latest_receipt_info` / `in_app` transactions and `pending_renewal_info`.
enum ReceiptInfo {
    /// One `latest_receipt_info` or `in_app` entry. Receipts carry no signing time, so
    /// `signedDate` is left 0 for the caller to fill in with its stand-in.
    static func transaction(_ info: JSONFields, environment: AppStoreEnvironment, bundleId: String?) throws -> TransactionRecord {
        let purchase = try info.millis("purchase_date_ms")
            ?? { throw DecodingFault(path: info.fieldPath("purchase_date_ms"), problem: "missing") }()
        let isTrial = try info.bool("is_trial_period") ?? false
        let isIntro = try info.bool("is_in_intro_offer_period") ?? false
        let promotional = try info.string("promotional_offer_id")
        let offerCode = try info.string("offer_code_ref_name")
        let offerType: OfferType? = (isTrial || isIntro) ? .introductory : (promotional != nil ? .promotional : (offerCode != nil ? .offerCode : nil))
        return TransactionRecord(
            transactionId: try info.stringOrNumber("transaction_id")
                ?? { throw DecodingFault(path: info.fieldPath("transaction_id"), problem: "missing") }(),
            originalTransactionId: try info.stringOrNumber("original_transaction_id")
                ?? { throw DecodingFault(path: info.fieldPath("original_transaction_id"), problem: "missing") }(),
            productId: try info.requiredString("product_id"),
            subscriptionGroupIdentifier: try info.stringOrNumber("subscription_group_identifier"),
            purchaseDate: purchase,
            originalPurchaseDate: try info.millis("original_purchase_date_ms"),
            expiresDate: try info.millis("expires_date_ms"),
            revocationDate: try info.millis("cancellation_date_ms"),
            revocationReason: try info.int("cancellation_reason").map(RevocationReason.init(rawValue:)),
            isUpgraded: try info.bool("is_upgraded") ?? false,
            offerType: offerType,
            offerIdentifier: promotional ?? offerCode,
            offerDiscountType: isTrial ? "FREE_TRIAL" : nil,
            ownershipType: try info.string("in_app_ownership_type").map(OwnershipType.init(rawValue:)) ?? .purchased,
            transactionReason: nil,
            environment: environment,
            appAccountToken: try info.string("app_account_token").flatMap { $0.isEmpty ? nil : $0 },
            signedDate: 0,
            webOrderLineItemId: try info.stringOrNumber("web_order_line_item_id"),
            bundleId: bundleId)
    }

    /// The newest date a set of receipt transactions mentions: with no signing time in a
    /// receipt, it is what keeps a replayed older receipt from overwriting newer state.
    static func newestDate(_ transactions: [TransactionRecord]) -> Millis {
        transactions.map { max($0.purchaseDate, $0.revocationDate ?? 0) }.max() ?? 0
    }

    /// One `pending_renewal_info` entry.
    static func renewal(_ info: JSONFields, environment: AppStoreEnvironment, defaultAutoRenewStatus: Bool?,
                        signedDate: Millis) throws -> RenewalRecord {
        guard let original = try info.stringOrNumber("original_transaction_id") else {
            throw DecodingFault(path: info.fieldPath("original_transaction_id"), problem: "missing")
        }
        return RenewalRecord(
            originalTransactionId: original,
            productId: try info.string("product_id"),
            autoRenewProductId: try info.string("auto_renew_product_id"),
            autoRenewStatus: try info.bool("auto_renew_status") ?? defaultAutoRenewStatus ?? true,
            expirationIntent: try info.int("expiration_intent"),
            isInBillingRetryPeriod: try info.bool("is_in_billing_retry_period") ?? false,
            gracePeriodExpiresDate: try info.millis("grace_period_expires_date_ms"),
            priceIncreaseStatus: try info.int("price_consent_status"),
            offerIdentifier: try info.string("promotional_offer_id") ?? info.string("offer_code_ref_name"),
            environment: environment,
            signedDate: signedDate)
    }
}
