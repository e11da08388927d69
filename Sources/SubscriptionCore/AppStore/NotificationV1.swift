/// A legacy (V1) App Store server notification: unsigned JSON with the unified receipt.
public struct NotificationV1: Sendable {
    /// The V1 names Apple documents (`NotificationMeanings.standard`'s V1 rows).
    public static var documentedTypes: [NotificationType] { NotificationMeanings.standard.v1Types }

    /// The V1 name, as it came (V1 and V2 spell the names they share alike).
    public var notificationType: NotificationType
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

    /// - Parameter meanings: where the type's lifecycle rank comes from.
    public init(json: JSONFields, meanings: NotificationMeanings = .standard) throws {
        notificationType = NotificationType(rawValue: try json.requiredString("notification_type"))
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
        // Locals, not self: closures may not capture self before every property is set.
        let bid = bundleId, autoRenew = autoRenewStatus
        let decoded = try (receipt.objects("latest_receipt_info") ?? []).map {
            try ReceiptInfo.transaction($0, environment: receiptEnvironment, bundleId: bid)
        }
        let newest = max(autoRenewStatusChangeDate ?? 0, ReceiptInfo.newestDate(decoded))
        versionDate = newest
        // Two bodies about the same latest purchase tie on every date they carry; what the
        // type says happened decides between them (a failure to renew comes after the renewal).
        let order = newest + meanings.v1Rank(notificationType)
        transactions = decoded.map { var t = $0; t.signedDate = newest; t.notificationSignedDate = order; return t }
        renewals = try (receipt.objects("pending_renewal_info") ?? []).map {
            var r = try ReceiptInfo.renewal($0, environment: receiptEnvironment, defaultAutoRenewStatus: autoRenew, signedDate: newest)
            r.notificationSignedDate = order
            return r
        }
    }

    /// The auto-renewable subscription the body is about: the body's own
    /// `original_transaction_id` when it has one, else that of its newest receipt entry with
    /// an expiry (entries without one are other purchases), else of its pending renewal info.
    public func subscriptionOriginalTransactionId(explicit: String?) -> String? {
        explicit
            ?? transactions.filter { $0.expiresDate != nil }.max(by: StateDerivation.purchaseOrder)?.originalTransactionId
            ?? renewals.first?.originalTransactionId
    }

    /// The pending renewal info of subscription `originalTransactionId`, if the body has it:
    /// what the notification keeps of it (`NotificationEvent.graceExpires`, `autoRenew`).
    public func renewal(of originalTransactionId: String?) -> RenewalRecord? {
        renewals.first { $0.originalTransactionId == originalTransactionId }
    }
}
