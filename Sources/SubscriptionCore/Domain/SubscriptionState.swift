/// A subscription's true state, derived from its stored history.
public struct SubscriptionState: Equatable, Sendable {
    /// A renewal preference that differs from the current product.
    public struct PendingChange: Equatable, Sendable {
        /// `downgrade` (or crossgrade to another duration) from DID_CHANGE_RENEWAL_PREF, else `change`.
        public var kind: String
        public var productId: String
        /// When it takes effect: the next renewal.
        public var effectiveDate: Millis?
    }

    public var originalTransactionId: String
    public var productId: String
    public var status: SubscriptionStatus
    public var entitled: Bool
    public var expiresDate: Millis?
    public var purchaseDate: Millis?
    public var originalPurchaseDate: Millis?
    public var latestTransactionId: String?
    public var autoRenewStatus: Bool
    public var autoRenewProductId: String?
    public var pendingChange: PendingChange?
    public var gracePeriodExpiresDate: Millis?
    public var isInBillingRetryPeriod: Bool
    public var expirationIntent: Int?
    public var priceIncreaseStatus: Int?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var offerDiscountType: String?
    public var isTrial: Bool
    public var ownershipType: OwnershipType
    public var environment: String
    public var appAccountToken: String?
    /// Transactions superseded by an upgrade (newest first).
    public var upgradedFrom: [String]
    /// Transactions refunded or revoked, which count as never bought.
    public var revokedTransactionIds: [String]
    public var lastEventDate: Millis?
    public var lastNotificationType: String?
    /// The app, as Apple signed it in the transactions: the bundle id of the newest that
    /// names one (nil when none does, as for a V1 record or one known only by its renewal info).
    public var bundleId: String? = nil

    public var isFamilyShared: Bool { ownershipType == .familyShared }
}
