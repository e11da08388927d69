import Foundation

/// One App Store transaction (a purchase, renewal or upgrade) as subdesk keeps it,
/// whichever wire format it came in.
public struct TransactionRecord: Equatable, Sendable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Millis
    public var originalPurchaseDate: Millis?
    public var expiresDate: Millis?
    public var revocationDate: Millis?
    public var revocationReason: RevocationReason?
    public var isUpgraded: Bool
    public var offerType: OfferType?
    public var offerIdentifier: String?
    /// FREE_TRIAL, PAY_AS_YOU_GO or PAY_UP_FRONT.
    public var offerDiscountType: String?
    public var ownershipType: OwnershipType
    public var transactionReason: TransactionReason?
    /// Price in milliunits of `currency`.
    public var price: Int64?
    public var currency: String?
    public var environment: AppStoreEnvironment
    public var appAccountToken: String?
    /// When Apple signed this version of the transaction; newer versions win.
    public var signedDate: Millis
    /// The signedDate of the notification that carried this version (for V1 bodies, the
    /// order their own facts give); breaks ties between versions signed at the same time.
    /// Nil for versions from API responses.
    public var notificationSignedDate: Millis?
    /// The notification that carried this version, where Apple's signed payload (every
    /// field, those subdesk does not type included) can be read again.
    public var sourceNotificationUUID: String?
    /// The signed payload's JSON bytes, kept for a version no stored notification carried
    /// (an App Store Server API response); nil otherwise.
    public var payload: Data?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var type: String?
    public var storefront: String?
    /// The app download's id; RESCIND_CONSENT names the app transaction, not a purchase.
    public var appTransactionId: String?
    /// `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE` (or a newer value, kept as sent), and
    /// the share refunded in thousandths of a percent (50000 is 50%): see `revocationKind`.
    public var revocationType: String?
    public var revocationPercentage: Int?
    /// `MONTHLY` or `BILLED_UPFRONT` for a subscription with a commitment; nil for the rest.
    public var billingPlanType: String?
    public var commitment: CommitmentInfo?
    /// Refunds of Advanced Commerce items, each by its own amount.
    public var advancedCommerceRefunds: [AdvancedCommerceRefund] = []

    public init(transactionId: String, originalTransactionId: String, productId: String,
                subscriptionGroupIdentifier: String? = nil, purchaseDate: Millis,
                originalPurchaseDate: Millis? = nil, expiresDate: Millis? = nil,
                revocationDate: Millis? = nil, revocationReason: RevocationReason? = nil, isUpgraded: Bool = false,
                offerType: OfferType? = nil, offerIdentifier: String? = nil, offerDiscountType: String? = nil,
                ownershipType: OwnershipType = .purchased, transactionReason: TransactionReason? = nil,
                price: Int64? = nil, currency: String? = nil, environment: AppStoreEnvironment = .production,
                appAccountToken: String? = nil, signedDate: Millis, webOrderLineItemId: String? = nil,
                bundleId: String? = nil, type: String? = nil, storefront: String? = nil, appTransactionId: String? = nil,
                notificationSignedDate: Millis? = nil, sourceNotificationUUID: String? = nil, payload: Data? = nil) {
        self.notificationSignedDate = notificationSignedDate
        self.sourceNotificationUUID = sourceNotificationUUID
        self.payload = payload
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.offerDiscountType = offerDiscountType
        self.ownershipType = ownershipType
        self.transactionReason = transactionReason
        self.price = price
        self.currency = currency
        self.environment = environment
        self.appAccountToken = appAccountToken
        self.signedDate = signedDate
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.type = type
        self.storefront = storefront
        self.appTransactionId = appTransactionId
    }

    public var isRevoked: Bool { revocationDate != nil }

    /// How the transaction was revoked; nil when it was not. Before Apple sent
    /// `revocationType`, a revocation of a family-shared transaction was a family revocation
    /// and any other a full refund; a prorated refund without its percentage is counted as
    /// full, since the share refunded is unknown.
    public var revocationKind: RevocationKind? {
        guard revocationDate != nil else { return nil }
        switch revocationType {
        case "FAMILY_REVOKE": return .familyRevoke
        case "REFUND_FULL": return .fullRefund
        case "REFUND_PRORATED":
            guard let p = revocationPercentage else { return .fullRefund }
            return .proratedRefund(percentMilli: min(100_000, max(0, p)))
        default:
            if isFamilyShared { return .familyRevoke }
            if let p = revocationPercentage, p < 100_000 { return .proratedRefund(percentMilli: max(0, p)) }
            return .fullRefund
        }
    }

    /// Whether the transaction counts as never bought: revoked, but not by a prorated refund,
    /// after which the customer paid for the period up to the revocation.
    public var isVoided: Bool {
        guard let kind = revocationKind else { return false }
        if case .proratedRefund = kind { return false }
        return true
    }

    /// When the paid access this transaction bought ends: its expiry, or the revocation of
    /// a prorated refund if sooner.
    public var accessEnds: Millis? {
        guard let expires = expiresDate else { return nil }
        if case .proratedRefund? = revocationKind, let revoked = revocationDate { return min(expires, revoked) }
        return expires
    }
    public var isFamilyShared: Bool { ownershipType == .familyShared }
    public var isFreeTrial: Bool { offerType == .introductory && offerDiscountType == "FREE_TRIAL" }

    /// Whether Apple billed it as a renewal (`transactionReason` RENEWAL), not a purchase the customer made.
    public var isRenewalByApple: Bool { transactionReason == .renewal }
    /// Whether the customer bought it (`transactionReason` PURCHASE); false when Apple
    /// renewed it and when the reason is unknown (a version 1 receipt carries none).
    public var isPurchaseByCustomer: Bool { transactionReason == .purchase }
    public var isIntroductoryOffer: Bool { offerType == .introductory }

    /// Whether `self` should replace `other` as the stored version of the same transaction.
    /// Versions are totally ordered (see `RecordVersionOrder`): signedDate, then the
    /// enclosing notification's signedDate, then the more final content (revoked, then
    /// upgraded, then the later expiry), then every other field; so the outcome never
    /// depends on arrival order.
    public func supersedes(_ other: TransactionRecord) -> Bool {
        if let decided = RecordVersionOrder.byDates(signedDate, notificationSignedDate, other.signedDate, other.notificationSignedDate) {
            return decided
        }
        if (revocationDate != nil) != (other.revocationDate != nil) { return revocationDate != nil }
        if isUpgraded != other.isUpgraded { return isUpgraded }
        if (expiresDate ?? 0) != (other.expiresDate ?? 0) { return (expiresDate ?? 0) > (other.expiresDate ?? 0) }
        return RecordVersionOrder.contentKey(self) > RecordVersionOrder.contentKey(other)
    }
}
