/// A legacy (V1) App Store server notification: unsigned JSON with the unified receipt.
public struct NotificationV1: Sendable {
    public static let documentedTypes = [
        "INITIAL_BUY", "CANCEL", "RENEWAL", "INTERACTIVE_RENEWAL", "DID_CHANGE_RENEWAL_PREF",
        "DID_CHANGE_RENEWAL_STATUS", "DID_FAIL_TO_RENEW", "DID_RECOVER", "DID_RENEW",
        "PRICE_INCREASE_CONSENT", "REFUND", "REVOKE", "CONSUMPTION_REQUEST",
    ]

    public var notificationType: String
    public var password: String?
    public var environment: AppStoreEnvironment
    public var bundleId: String?
    public var autoRenewStatus: Bool?
    public var autoRenewProductId: String?
    public var autoRenewStatusChangeDate: Millis?
    public var latestReceipt: String?
    public var transactions: [TransactionRecord]
    public var renewals: [RenewalRecord]
    /// V1 bodies carry no signing time: the newest date they mention stands in for it,
    /// so that a replayed older body cannot overwrite newer state.
    public var versionDate: Millis

    public init(json: JSONFields) throws {
        notificationType = try json.requiredString("notification_type")
        password = try json.string("password")
        environment = AppStoreEnvironment.fromV1(try json.string("environment") ?? "PROD")
        bundleId = try json.string("bid")
        autoRenewStatus = try json.bool("auto_renew_status")
        autoRenewProductId = try json.string("auto_renew_product_id")
        autoRenewStatusChangeDate = try json.millis("auto_renew_status_change_date_ms")
        guard let receipt = try json.object("unified_receipt") else {
            throw DecodingFault(path: json.fieldPath("unified_receipt"), problem: "missing")
        }
        latestReceipt = try receipt.string("latest_receipt")
        let receiptEnvironment = try receipt.string("environment").map(AppStoreEnvironment.fromV1) ?? environment
        let infos = try receipt.objects("latest_receipt_info") ?? []
        var newest: Millis = autoRenewStatusChangeDate ?? 0
        var decoded: [TransactionRecord] = []
        for info in infos {
            let purchase = try info.millis("purchase_date_ms")
                ?? { throw DecodingFault(path: info.fieldPath("purchase_date_ms"), problem: "missing") }()
            let cancellation = try info.millis("cancellation_date_ms")
            newest = max(newest, purchase, cancellation ?? 0)
            let isTrial = try info.bool("is_trial_period") ?? false
            let isIntro = try info.bool("is_in_intro_offer_period") ?? false
            let promotional = try info.string("promotional_offer_id")
            let offerCode = try info.string("offer_code_ref_name")
            let offerType: Int? = (isTrial || isIntro) ? 1 : (promotional != nil ? 2 : (offerCode != nil ? 3 : nil))
            decoded.append(TransactionRecord(
                transactionId: try info.stringOrNumber("transaction_id")
                    ?? { throw DecodingFault(path: info.fieldPath("transaction_id"), problem: "missing") }(),
                originalTransactionId: try info.stringOrNumber("original_transaction_id")
                    ?? { throw DecodingFault(path: info.fieldPath("original_transaction_id"), problem: "missing") }(),
                productId: try info.requiredString("product_id"),
                subscriptionGroupIdentifier: try info.stringOrNumber("subscription_group_identifier"),
                purchaseDate: purchase,
                originalPurchaseDate: try info.millis("original_purchase_date_ms"),
                expiresDate: try info.millis("expires_date_ms"),
                revocationDate: cancellation,
                revocationReason: try info.int("cancellation_reason"),
                isUpgraded: try info.bool("is_upgraded") ?? false,
                offerType: offerType,
                offerIdentifier: promotional ?? offerCode,
                offerDiscountType: isTrial ? "FREE_TRIAL" : nil,
                ownershipType: try info.string("in_app_ownership_type") ?? "PURCHASED",
                transactionReason: nil,
                environment: receiptEnvironment,
                appAccountToken: try info.string("app_account_token").flatMap { $0.isEmpty ? nil : $0 },
                signedDate: 0,
                webOrderLineItemId: try info.stringOrNumber("web_order_line_item_id"),
                bundleId: bundleId))
        }
        versionDate = newest
        transactions = decoded.map { var t = $0; t.signedDate = newest; return t }

        var pending: [RenewalRecord] = []
        for info in try receipt.objects("pending_renewal_info") ?? [] {
            guard let original = try info.stringOrNumber("original_transaction_id") else {
                throw DecodingFault(path: info.fieldPath("original_transaction_id"), problem: "missing")
            }
            pending.append(RenewalRecord(
                originalTransactionId: original,
                productId: try info.string("product_id"),
                autoRenewProductId: try info.string("auto_renew_product_id"),
                autoRenewStatus: try info.bool("auto_renew_status") ?? autoRenewStatus ?? true,
                expirationIntent: try info.int("expiration_intent"),
                isInBillingRetryPeriod: try info.bool("is_in_billing_retry_period") ?? false,
                gracePeriodExpiresDate: try info.millis("grace_period_expires_date_ms"),
                priceIncreaseStatus: try info.int("price_consent_status"),
                offerIdentifier: try info.string("promotional_offer_id") ?? info.string("offer_code_ref_name"),
                environment: receiptEnvironment,
                signedDate: newest))
        }
        renewals = pending
    }
}
