import Foundation

/// The pending renewal information of one subscription (what happens at the next renewal).
public struct RenewalRecord: Equatable, Sendable {
    public var originalTransactionId: String
    public var productId: String?
    public var autoRenewProductId: String?
    public var autoRenewStatus: Bool
    /// 1 voluntary, 2 billing error, 3 declined price increase, 4 not for sale, 5 unknown.
    public var expirationIntent: Int?
    public var isInBillingRetryPeriod: Bool
    public var gracePeriodExpiresDate: Millis?
    /// 0: customer has not responded to a price increase, 1: consented (or none needed).
    public var priceIncreaseStatus: Int?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var renewalDate: Millis?
    public var renewalPrice: Int64?
    public var currency: String?
    public var environment: AppStoreEnvironment
    public var signedDate: Millis
    /// The signedDate of the notification that carried this version (see TransactionRecord).
    public var notificationSignedDate: Millis?
    /// The notification that carried this version, and the payload of one none carried
    /// (see TransactionRecord).
    public var sourceNotificationUUID: String?
    public var payload: Data?
    /// The token the app set at purchase, as the renewal info carries it: it names the
    /// owner as the transaction's does.
    public var appAccountToken: String?
    public var appTransactionId: String?
    /// The offer the next renewal applies: FREE_TRIAL, PAY_AS_YOU_GO, PAY_UP_FRONT (or a
    /// newer value), and its period (ISO 8601, `P1M`).
    public var offerDiscountType: String?
    public var offerPeriod: String?
    /// The billing plan the subscription renews into (`MONTHLY`, `BILLED_UPFRONT`), and
    /// what happens when its commitment ends.
    public var renewalBillingPlanType: String?
    public var commitment: RenewalCommitment?

    /// Whether the subscription is set to go on renewing: for a commitment, the
    /// commitment's own status decides (the monthly billing within it is not the customer's
    /// to stop), else auto-renew.
    public var willRenew: Bool { commitment?.autoRenewStatus ?? autoRenewStatus }

    public init(originalTransactionId: String, productId: String? = nil, autoRenewProductId: String? = nil,
                autoRenewStatus: Bool = true, expirationIntent: Int? = nil, isInBillingRetryPeriod: Bool = false,
                gracePeriodExpiresDate: Millis? = nil, priceIncreaseStatus: Int? = nil,
                offerType: OfferType? = nil, offerIdentifier: String? = nil, renewalDate: Millis? = nil,
                renewalPrice: Int64? = nil, currency: String? = nil,
                environment: AppStoreEnvironment = .production, signedDate: Millis,
                notificationSignedDate: Millis? = nil, sourceNotificationUUID: String? = nil, payload: Data? = nil) {
        self.notificationSignedDate = notificationSignedDate
        self.sourceNotificationUUID = sourceNotificationUUID
        self.payload = payload
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.priceIncreaseStatus = priceIncreaseStatus
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.renewalDate = renewalDate
        self.renewalPrice = renewalPrice
        self.currency = currency
        self.environment = environment
        self.signedDate = signedDate
    }

    /// Versions are totally ordered (see `RecordVersionOrder`): signedDate, then the
    /// enclosing notification's signedDate, then content, so arrival order never matters.
    public func supersedes(_ other: RenewalRecord) -> Bool {
        if let decided = RecordVersionOrder.byDates(signedDate, notificationSignedDate, other.signedDate, other.notificationSignedDate) {
            return decided
        }
        return RecordVersionOrder.contentKey(self) > RecordVersionOrder.contentKey(other)
    }
}

/// Apple's expiration_intent values and what they mean.
public enum ExpirationIntent {
    public static func meaning(_ code: Int) -> String {
        switch code {
        case 1: return "voluntary (customer canceled)"
        case 2: return "billing error (payment method no longer valid)"
        case 3: return "declined price increase"
        case 4: return "product not for sale at renewal"
        case 5: return "unknown error"
        default: return "unrecognised value \(code)"
        }
    }

    public static func shortName(_ code: Int) -> String {
        switch code {
        case 1: return "voluntary"
        case 2: return "billing_error"
        case 3: return "price_increase"
        case 4: return "product_not_for_sale"
        case 5: return "unknown"
        default: return "code_\(code)"
        }
    }
}
