/// What one notification type, or one type with one subtype, means to subdesk: a row of
/// `NotificationMeanings.standard`. The state derivation, the metrics, the desk's styling
/// and V1 intake read these facts and nothing else of a type's name, so a type Apple adds
/// is one row here.
public struct NotificationMeaning: Sendable, Equatable {
    /// Where a notification moves a subscription's billing: into trouble (the billing grace
    /// period or billing retry) or out of it.
    public enum Billing: Sendable, Equatable {
        /// Renewal failed and access continues: the billing grace period.
        case entersGrace
        /// Renewal failed with no access left, or the grace period ended: billing retry.
        case entersRetry
        /// Out of trouble because Apple renewed it (a billing recovery).
        case recovers
        /// Out of trouble otherwise: bought again, expired, refunded or revoked.
        case leaves

        /// Whether it puts the subscription in billing trouble (the grace period or billing retry).
        public var isTrouble: Bool { self == .entersGrace || self == .entersRetry }
    }

    /// What a notification says about auto-renew during paid access.
    public enum AutoRenew: Sendable, Equatable {
        /// Turned off: set to cancel until turned on, bought again or the access ends.
        case disabled
        /// Turned on again.
        case enabled
        /// Access bought: a set-to-cancel ends, without counting as turned on.
        case boughtAgain
    }

    /// Why paid access ended, as Apple's expiry says: the churn's reason.
    public enum Expiry: Sendable, Equatable {
        case voluntary, billing, priceIncrease, productNotForSale
        /// Expired, for no reason this subdesk knows: the reason comes from the history instead.
        case unstated
    }

    /// Where a notification takes a customer's refund request.
    public enum RefundStep: Sendable, Equatable {
        /// Apple asks for consumption information: a request is open.
        case requested
        /// Apple's decision: the request is closed.
        case refunded, declined
    }

    /// What a notification does to the subscription's state and counts. `noStateEffect`
    /// says so for a type subdesk keeps and shows but does not model.
    public struct Effect: Sendable, Equatable {
        public var billing: Billing?
        public var autoRenew: AutoRenew?
        /// Set when the notification says paid access ended (and why, where it says).
        public var endsPaidAccess: Expiry?
        /// A product change that takes effect at the next renewal (a downgrade), not at once.
        public var pendingDowngrade: Bool
        /// An upgrade, at once: Apple's word that the period before ended at the purchase the
        /// notification carries and was refunded pro rata then, whatever becomes of that
        /// purchase later (a refund of it in full makes it as if never bought, but the old
        /// period stays ended).
        public var upgradesNow: Bool
        public var refund: RefundStep?
        /// False for a notification about the app's download rather than the subscription
        /// (RESCIND_CONSENT): it is never the subscription's last event.
        public var aboutTheSubscription: Bool

        public static let noStateEffect = Effect()

        public init(billing: Billing? = nil, autoRenew: AutoRenew? = nil, endsPaidAccess: Expiry? = nil, pendingDowngrade: Bool = false,
             upgradesNow: Bool = false, refund: RefundStep? = nil, aboutTheSubscription: Bool = true) {
            self.billing = billing
            self.autoRenew = autoRenew
            self.endsPaidAccess = endsPaidAccess
            self.pendingDowngrade = pendingDowngrade
            self.upgradesNow = upgradesNow
            self.refund = refund
            self.aboutTheSubscription = aboutTheSubscription
        }
    }

    /// How the desk colours it, by what it means for the customer (`Styling` picks the role).
    public enum Tone: Sendable, Equatable {
        /// Money in, access kept or given back.
        case gain
        /// Billing failed, access continues (the grace period).
        case grace
        /// Billing failed, no access (billing retry).
        case billingRetry
        /// Access ended.
        case ended
        /// A purchase taken back, or a refund refused.
        case takenBack
        /// A change of plan, renewal or price.
        case change
        case plain
    }

    /// Which notification versions send the name: V2's `notificationType`, V1's
    /// `notification_type`, or both. A V1 name has a lifecycle rank: where its event falls
    /// after the latest purchase the body names (the purchase itself 0, a change of preference
    /// about the next renewal 1, the period ending without a renewal 2, the purchase refunded
    /// or revoked 3), added in milliseconds to the body's newest date to order V1 bodies that
    /// name the same purchase.
    public enum Versions: Sendable, Equatable {
        case v2
        case v1(rank: Millis)
        case v1AndV2(v1Rank: Millis)
    }

    public let type: NotificationType
    /// The subtype this row is for; nil for the type's own row, which also stands for every
    /// subtype without a row of its own.
    public let subtype: NotificationSubtype?
    /// Subtypes Apple sends with the type that mean what the type's row says.
    public let sameMeaningSubtypes: [NotificationSubtype]
    /// What Apple says it means, in a line.
    public let summary: String
    public let versions: Versions
    public let effect: Effect
    public let tone: Tone

    /// The row of a type: it stands for the type with any subtype that has no row of its own.
    public init(_ type: NotificationType, _ summary: String, _ versions: Versions, _ effect: Effect, tone: Tone,
                sameMeaningSubtypes: [NotificationSubtype] = []) {
        self.type = type
        self.subtype = nil
        self.summary = summary
        self.versions = versions
        self.effect = effect
        self.tone = tone
        self.sameMeaningSubtypes = sameMeaningSubtypes
    }

    /// The row of a type with a subtype that changes what it means.
    public init(_ type: NotificationType, _ subtype: NotificationSubtype, _ summary: String, _ versions: Versions,
                _ effect: Effect, tone: Tone) {
        self.type = type
        self.subtype = subtype
        self.summary = summary
        self.versions = versions
        self.effect = effect
        self.tone = tone
        sameMeaningSubtypes = []
    }

    /// The V1 lifecycle rank, for a V1 name.
    public var v1Rank: Millis? {
        switch versions {
        case .v2: return nil
        case .v1(let rank), .v1AndV2(let rank): return rank
        }
    }

    public var isV2: Bool {
        if case .v1 = versions { return false }
        return true
    }
}

/// The table of notification meanings: one row per type, and one per subtype where the
/// subtype changes the meaning, looked up by raw value through a dictionary built once.
/// A type not in the table is still kept, stored and shown as it came; it moves no state.
public struct NotificationMeanings: Sendable {
    private struct Key: Hashable {
        var type: String
        var subtype: String?
    }

    public let rows: [NotificationMeaning]
    private let index: [Key: Int]

    public init(_ rows: [NotificationMeaning]) {
        var index: [Key: Int] = [:]
        for (i, row) in rows.enumerated() {
            let key = Key(type: row.type.rawValue, subtype: row.subtype?.rawValue)
            precondition(index[key] == nil, "two rows for \(row.type)/\(row.subtype?.rawValue ?? "-") in the notification meanings")
            index[key] = i
        }
        self.rows = rows
        self.index = index
    }

    /// The table with `row` added, or put in place of the row for its type and subtype.
    public func adding(_ row: NotificationMeaning) -> NotificationMeanings {
        NotificationMeanings(rows.filter { $0.type != row.type || $0.subtype != row.subtype } + [row])
    }

    /// The row for `type` with `subtype`, else the type's own row; nil for a type not in the table.
    public subscript(_ type: NotificationType, _ subtype: NotificationSubtype?) -> NotificationMeaning? {
        if let subtype, let i = index[Key(type: type.rawValue, subtype: subtype.rawValue)] { return rows[i] }
        return index[Key(type: type.rawValue, subtype: nil)].map { rows[$0] }
    }

    public subscript(_ event: NotificationEvent) -> NotificationMeaning? { self[event.type, event.subtype] }

    /// A V1 body's lifecycle rank (`NotificationMeaning.Versions`): 1, a change of preference,
    /// for a name the table does not give one.
    public func v1Rank(_ type: NotificationType) -> Millis { self[type, nil]?.v1Rank ?? 1 }

    /// The V2 types, in the table's order.
    public var v2Types: [NotificationType] { unique(rows.filter(\.isV2).map(\.type)) }

    /// The V1 names, in the table's order.
    public var v1Types: [NotificationType] { unique(rows.filter { $0.subtype == nil && $0.v1Rank != nil }.map(\.type)) }

    /// Every subtype the table names, with a row of its own or as meaning what its type's row says.
    public var subtypes: [NotificationSubtype] { unique(rows.flatMap { ($0.subtype.map { [$0] } ?? []) + $0.sameMeaningSubtypes }) }

    private func unique<T: Hashable>(_ values: [T]) -> [T] {
        var seen = Set<T>()
        return values.filter { seen.insert($0).inserted }
    }
}

extension NotificationMeanings {
    /// What each type Apple sends means, in the order of Apple's documentation, then the
    /// types Apple added since, then the V1 names V2 does not use.
    public static let standard = NotificationMeanings([
        NotificationMeaning(.subscribed, "a purchase of the subscription: the first, or again after it expired",
                            .v2, .init(billing: .leaves, autoRenew: .boughtAgain), tone: .gain,
                            sameMeaningSubtypes: [.initialBuy, .resubscribe]),
        NotificationMeaning(.didRenew, "a renewal; BILLING_RECOVERY: one that failed before",
                            .v1AndV2(v1Rank: 0), .init(billing: .recovers), tone: .gain, sameMeaningSubtypes: [.billingRecovery]),
        NotificationMeaning(.didChangeRenewalPref, "a change of plan: back to the current plan (V1: or an upgrade now)",
                            .v1AndV2(v1Rank: 1), .noStateEffect, tone: .change),
        NotificationMeaning(.didChangeRenewalPref, .upgrade, "an upgrade, at once: the period before ends, refunded pro rata",
                            .v2, .init(upgradesNow: true), tone: .change),
        NotificationMeaning(.didChangeRenewalPref, .downgrade, "a downgrade, at the next renewal",
                            .v2, .init(pendingDowngrade: true), tone: .change),
        NotificationMeaning(.didChangeRenewalStatus, "a change of renewal status (V1 says which in the renewal info it carries)",
                            .v1AndV2(v1Rank: 1), .noStateEffect, tone: .change),
        NotificationMeaning(.didChangeRenewalStatus, .autoRenewDisabled, "auto-renew turned off, by the customer or after a refund request",
                            .v2, .init(autoRenew: .disabled), tone: .change),
        NotificationMeaning(.didChangeRenewalStatus, .autoRenewEnabled, "auto-renew turned on again",
                            .v2, .init(autoRenew: .enabled), tone: .change),
        NotificationMeaning(.offerRedeemed, "an offer redeemed: a first purchase or a resubscription",
                            .v2, .init(billing: .leaves, autoRenew: .boughtAgain), tone: .gain,
                            sameMeaningSubtypes: [.initialBuy, .resubscribe]),
        NotificationMeaning(.offerRedeemed, .upgrade, "an offer redeemed for an upgrade, at once: the period before ends",
                            .v2, .init(billing: .leaves, autoRenew: .boughtAgain, upgradesNow: true), tone: .gain),
        NotificationMeaning(.offerRedeemed, .downgrade, "an offer redeemed for a downgrade, at the next renewal",
                            .v2, .init(billing: .leaves, autoRenew: .boughtAgain, pendingDowngrade: true), tone: .gain),
        NotificationMeaning(.didFailToRenew, "renewal failed: billing retry, no access",
                            .v1AndV2(v1Rank: 2), .init(billing: .entersRetry), tone: .billingRetry),
        NotificationMeaning(.didFailToRenew, .gracePeriod, "renewal failed: the billing grace period, access continues",
                            .v2, .init(billing: .entersGrace), tone: .grace),
        NotificationMeaning(.gracePeriodExpired, "the grace period ended without a renewal: billing retry",
                            .v2, .init(billing: .entersRetry), tone: .ended),
        NotificationMeaning(.expired, "the subscription expired",
                            .v2, .init(billing: .leaves, endsPaidAccess: .unstated), tone: .ended),
        NotificationMeaning(.expired, .voluntary, "expired after the customer turned auto-renew off",
                            .v2, .init(billing: .leaves, endsPaidAccess: .voluntary), tone: .ended),
        NotificationMeaning(.expired, .billingRetry, "expired: billing retry ended without a renewal",
                            .v2, .init(billing: .leaves, endsPaidAccess: .billing), tone: .ended),
        NotificationMeaning(.expired, .priceIncrease, "expired: the customer did not consent to a price increase",
                            .v2, .init(billing: .leaves, endsPaidAccess: .priceIncrease), tone: .ended),
        NotificationMeaning(.expired, .productNotForSale, "expired: the product was not for sale at renewal",
                            .v2, .init(billing: .leaves, endsPaidAccess: .productNotForSale), tone: .ended),
        NotificationMeaning(.priceIncrease, "a price increase the customer was told of (PENDING) or accepted",
                            .v2, .noStateEffect, tone: .change, sameMeaningSubtypes: [.pending, .accepted]),
        NotificationMeaning(.refund, "a purchase refunded",
                            .v1AndV2(v1Rank: 3), .init(billing: .leaves, refund: .refunded), tone: .takenBack),
        NotificationMeaning(.refundDeclined, "a refund request declined",
                            .v2, .init(refund: .declined), tone: .takenBack),
        NotificationMeaning(.refundReversed, "a refund reversed after a dispute: access restored, the renewal date kept",
                            .v2, .noStateEffect, tone: .gain),
        NotificationMeaning(.consumptionRequest, "a refund request: Apple asks for consumption information",
                            .v1AndV2(v1Rank: 1), .init(refund: .requested), tone: .plain),
        NotificationMeaning(.renewalExtended, "the renewal date extended for one subscription",
                            .v2, .noStateEffect, tone: .gain),
        NotificationMeaning(.renewalExtension, "a renewal date extension for all subscribers: its SUMMARY, or one FAILURE",
                            .v2, .noStateEffect, tone: .plain, sameMeaningSubtypes: [.summary, .failure]),
        NotificationMeaning(.revoke, "family-shared access revoked",
                            .v1AndV2(v1Rank: 3), .init(billing: .leaves), tone: .takenBack),
        NotificationMeaning(.test, "Apple's test notification, on request",
                            .v2, .noStateEffect, tone: .plain),
        NotificationMeaning(.externalPurchaseToken, "an external purchase token: created, unreported, or a reminder about an active one",
                            .v2, .noStateEffect, tone: .plain, sameMeaningSubtypes: [.unreported, .activeTokenReminder, .created]),
        NotificationMeaning(.oneTimeCharge, "a one-time purchase (consumable, non-consumable, non-renewing)",
                            .v2, .noStateEffect, tone: .plain),
        NotificationMeaning(.rescindConsent, "a parent or guardian withdrew consent: about the app's download, not a purchase",
                            .v2, .init(aboutTheSubscription: false), tone: .plain),
        // Added by Apple since (its changelog and libraries): kept and shown, not modelled.
        NotificationMeaning(.metadataUpdate, "an Advanced Commerce subscription's metadata changed",
                            .v2, .noStateEffect, tone: .plain),
        NotificationMeaning(.migration, "a subscription migrated to Advanced Commerce",
                            .v2, .noStateEffect, tone: .plain),
        NotificationMeaning(.priceChange, "an Advanced Commerce subscription's price changed",
                            .v2, .noStateEffect, tone: .plain),
        // V1 names V2 does not use. A V1 body's state comes from the receipt it carries.
        NotificationMeaning(.initialBuy, "the first purchase", .v1(rank: 0), .noStateEffect, tone: .gain),
        NotificationMeaning(.cancel, "cancelled by Apple support, or upgraded from",
                            .v1(rank: 2), .init(billing: .leaves), tone: .takenBack),
        NotificationMeaning(.renewal, "an expired subscription renewed (sent no longer since 2021)",
                            .v1(rank: 0), .noStateEffect, tone: .gain),
        NotificationMeaning(.interactiveRenewal, "renewed by the customer, in the app or in Settings",
                            .v1(rank: 0), .init(billing: .leaves, autoRenew: .boughtAgain), tone: .gain),
        NotificationMeaning(.didRecover, "an expired subscription renewed after failing to",
                            .v1(rank: 0), .init(billing: .recovers), tone: .gain),
        NotificationMeaning(.priceIncreaseConsent, "the customer is asked to consent to a price increase",
                            .v1(rank: 1), .noStateEffect, tone: .change),
    ])
}
