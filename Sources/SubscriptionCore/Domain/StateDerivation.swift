/// Derives a subscription's state from its stored history.
///
/// A pure function of (transactions, renewal info, notifications, now): the store keeps
/// the newest signed version of each transaction and of the renewal info, so the
/// result is the same whatever order the notifications arrived in.
public enum StateDerivation {
    public static func derive(originalTransactionId: String,
                              transactions: [TransactionRecord],
                              renewal: RenewalRecord?,
                              events: [NotificationEvent],
                              now: Millis,
                              meanings: NotificationMeanings = .standard,
                              rules: DerivationRules = .current) -> SubscriptionState? {
        let ordered = transactions.sorted(by: purchaseOrder)
        guard let newest = ordered.last else {
            return renewal.map { expiredFromRenewalOnly($0, events: events, meanings: meanings) }
        }
        let superseded = replacedByUpgrade(ordered, events: events, meanings: meanings, rules: rules)
        let current = ordered.last(where: { !superseded.contains($0.transactionId) }) ?? newest
        let freshRenewal = renewal.flatMap { $0.signedDate >= current.purchaseDate ? $0 : nil }

        var status: SubscriptionStatus
        var entitled: Bool
        if current.isRevoked {
            // Refunded in full, revoked, or refunded in part: a prorated refund ends the paid
            // access at the refund (Apple refunds the time left), which has come by the time
            // Apple signs it, so the subscription is revoked either way.
            status = .revoked
            entitled = false
        } else if current.expiresDate.map({ $0 > now }) ?? true {
            // No expiry means a non-renewing product: entitled until revoked.
            status = .active
            entitled = true
        } else if let r = freshRenewal, let grace = r.gracePeriodExpiresDate, grace > now,
                  r.isInBillingRetryPeriod || grace > (current.expiresDate ?? 0) {
            status = .gracePeriod
            entitled = true
        } else if let r = freshRenewal, r.isInBillingRetryPeriod {
            status = .billingRetry
            entitled = false
        } else {
            status = .expired
            entitled = false
        }

        let autoRenewProduct = renewal?.autoRenewProductId
        var pending: SubscriptionState.PendingChange?
        if let renewal, renewal.autoRenewStatus, let target = autoRenewProduct, target != current.productId,
           status != .revoked {
            let lastPrefChange = events.sorted(by: NotificationEvent.chronological).last {
                meanings[$0]?.effect.pendingDowngrade == true
            }
            pending = .init(kind: lastPrefChange != nil ? "downgrade" : "change",
                            productId: target, effectiveDate: current.expiresDate)
        }
        let lastEvent = lastSubscriptionEvent(events, meanings: meanings)
        let notActive = status != .active
        return SubscriptionState(
            originalTransactionId: originalTransactionId,
            productId: current.productId,
            status: status,
            entitled: entitled,
            expiresDate: current.expiresDate,
            purchaseDate: current.purchaseDate,
            originalPurchaseDate: ordered.compactMap(\.originalPurchaseDate).min() ?? ordered.first?.purchaseDate,
            latestTransactionId: current.transactionId,
            autoRenewStatus: renewal?.autoRenewStatus ?? false,
            autoRenewProductId: autoRenewProduct,
            pendingChange: pending,
            gracePeriodExpiresDate: status == .gracePeriod ? freshRenewal?.gracePeriodExpiresDate : nil,
            isInBillingRetryPeriod: status == .billingRetry || status == .gracePeriod,
            expirationIntent: notActive && status != .revoked ? renewal?.expirationIntent : nil,
            priceIncreaseStatus: renewal?.priceIncreaseStatus,
            offerType: current.offerType,
            offerIdentifier: current.offerIdentifier,
            offerDiscountType: current.offerDiscountType,
            isTrial: current.isFreeTrial,
            ownershipType: current.ownershipType,
            environment: current.environment.rawValue,
            appAccountToken: owningToken(ordered, renewal),
            upgradedFrom: ordered.filter { superseded.contains($0.transactionId) }.map(\.transactionId).reversed(),
            revokedTransactionIds: ordered.filter(\.isRevoked).map(\.transactionId),
            lastEventDate: lastEvent?.signedDate,
            lastNotificationType: lastEvent?.typeAndSubtype,
            bundleId: ordered.last(where: { $0.bundleId != nil })?.bundleId)
    }

    /// The token that names the owner: of the newest transaction that carries one, or of
    /// the renewal info when Apple signed that later (it carries the token as the
    /// transaction does); so whichever arrives first, the owner ends the same.
    static func owningToken(_ ordered: [TransactionRecord], _ renewal: RenewalRecord?) -> String? {
        let fromTransaction = ordered.last(where: { $0.appAccountToken != nil })
        guard let renewalToken = renewal?.appAccountToken, let renewal else { return fromTransaction?.appAccountToken }
        guard let t = fromTransaction, let token = t.appAccountToken else { return renewalToken }
        return renewal.signedDate > t.signedDate ? renewalToken : token
    }

    /// Where the subscription stands in its commitment, when its current transaction has one.
    public static func commitment(transactions: [TransactionRecord], renewal: RenewalRecord?) -> CommitmentState? {
        let ordered = transactions.sorted(by: purchaseOrder)
        let superseded = supersededByUpgrade(ordered)
        guard let current = ordered.last(where: { !superseded.contains($0.transactionId) }) ?? ordered.last,
              current.billingPlanType != nil || current.commitment != nil else { return nil }
        let fresh = renewal.flatMap { $0.signedDate >= current.purchaseDate ? $0 : nil }
        return CommitmentState(billingPlanType: current.billingPlanType, info: current.commitment ?? CommitmentInfo(),
                               price: current.price, currency: current.currency, renewal: fresh?.commitment,
                               renewalBillingPlanType: fresh?.renewalBillingPlanType)
    }

    /// Purchase order with a total tie-break, so sorting never depends on input order.
    static func purchaseOrder(_ a: TransactionRecord, _ b: TransactionRecord) -> Bool {
        if a.purchaseDate != b.purchaseDate { return a.purchaseDate < b.purchaseDate }
        if (a.expiresDate ?? 0) != (b.expiresDate ?? 0) { return (a.expiresDate ?? 0) < (b.expiresDate ?? 0) }
        return a.transactionId < b.transactionId
    }

    /// Transactions an upgrade replaced at once: flagged by Apple (`isUpgraded`), or
    /// overlapped by a later purchase of another product before they expired.
    /// A downgrade starts when the old period ends, so it never overlaps.
    /// A purchase refunded in full or revoked is as if never bought, so it replaced nothing;
    /// one refunded in part (`REFUND_PRORATED`, the time left refunded) was paid access from
    /// its purchase until the refund, so it replaced the old period at its purchase, as Apple
    /// did when it refunded the old period pro rata at the upgrade.
    static func supersededByUpgrade(_ ordered: [TransactionRecord], rules: DerivationRules = .current) -> Set<String> {
        var result = Set<String>()
        let refundedInPartReplacesNothing = rules.isTurnedBack(.upgradeRefundedInPart)
        for (index, old) in ordered.enumerated() {
            if old.isUpgraded { result.insert(old.transactionId); continue }
            guard let ends = old.expiresDate else { continue }
            for new in ordered[(index + 1)...] where !(refundedInPartReplacesNothing ? new.isRevoked : new.isVoided)
                && new.productId != old.productId
                && new.purchaseDate > old.purchaseDate && new.purchaseDate < ends {
                result.insert(old.transactionId)
                break
            }
        }
        return result
    }

    /// Every transaction an upgrade replaced: those `supersededByUpgrade` finds in the
    /// transactions alone, and those an upgrade's own notification names
    /// (`upgradeEnds`), though its purchase was refunded in full later.
    static func replacedByUpgrade(_ ordered: [TransactionRecord], events: [NotificationEvent],
                                  meanings: NotificationMeanings, rules: DerivationRules = .current) -> Set<String> {
        let found = supersededByUpgrade(ordered, rules: rules)
        guard !rules.isTurnedBack(.upgradeRefundedInFull), !rules.isTurnedBack(.upgradeRefundedInPart) else { return found }
        let upgrades = events.filter { meanings[$0]?.effect.upgradesNow == true }
        return upgrades.isEmpty ? found : found.union(upgradeEnds(ordered, upgrades: upgrades).keys)
    }

    /// The paid periods an upgrade ended at once, each with the upgrade's purchase date: for
    /// each of `upgrades` (the notifications that say so, `Effect.upgradesNow`), the
    /// transaction it carries and the period of another product before it that had not
    /// expired at that purchase. The notification is Apple's word that the old period ended
    /// there (refunded pro rata at the upgrade), whatever becomes of the upgrade's purchase.
    static func upgradeEnds(_ ordered: [TransactionRecord], upgrades: [NotificationEvent]) -> [String: Millis] {
        var ends: [String: Millis] = [:]
        for e in upgrades {
            guard let id = e.transactionId, let index = ordered.firstIndex(where: { $0.transactionId == id }) else { continue }
            let upgrade = ordered[index]
            guard let old = ordered[..<index].last(where: { !$0.isVoided }),
                  old.productId != upgrade.productId, old.purchaseDate < upgrade.purchaseDate,
                  (old.expiresDate ?? .max) > upgrade.purchaseDate else { continue }
            ends[old.transactionId] = min(ends[old.transactionId] ?? .max, upgrade.purchaseDate)
        }
        return ends
    }

    /// The newest notification about the subscription itself. A consent withdrawal
    /// (RESCIND_CONSENT) is about the app download: it is tied to the subscription only once
    /// a purchase naming that download is stored, so it would make the last event depend on
    /// the order things arrived in; it is marked on its own (the consent badge) instead.
    static func lastSubscriptionEvent(_ events: [NotificationEvent], meanings: NotificationMeanings) -> NotificationEvent? {
        events.filter { meanings[$0]?.effect.aboutTheSubscription ?? true }.max(by: NotificationEvent.chronological)
    }

    private static func expiredFromRenewalOnly(_ renewal: RenewalRecord, events: [NotificationEvent],
                                               meanings: NotificationMeanings) -> SubscriptionState {
        let lastEvent = lastSubscriptionEvent(events, meanings: meanings)
        return SubscriptionState(
            originalTransactionId: renewal.originalTransactionId, productId: renewal.productId ?? "",
            status: .expired, entitled: false, expiresDate: nil, purchaseDate: nil, originalPurchaseDate: nil,
            latestTransactionId: nil, autoRenewStatus: renewal.autoRenewStatus,
            autoRenewProductId: renewal.autoRenewProductId, pendingChange: nil, gracePeriodExpiresDate: nil,
            isInBillingRetryPeriod: false, expirationIntent: renewal.expirationIntent,
            priceIncreaseStatus: renewal.priceIncreaseStatus, offerType: nil, offerIdentifier: nil,
            offerDiscountType: nil, isTrial: false, ownershipType: .purchased,
            environment: renewal.environment.rawValue, appAccountToken: renewal.appAccountToken, upgradedFrom: [],
            revokedTransactionIds: [], lastEventDate: lastEvent?.signedDate,
            lastNotificationType: lastEvent?.typeAndSubtype)
    }
}
