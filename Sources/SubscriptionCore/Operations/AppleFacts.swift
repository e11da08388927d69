import Foundation

/// Facts a support agent asks about that Apple sends but state derivation does not use,
/// read from the signed payloads of the winning versions and the notifications.
public struct AppleFacts: Equatable, Sendable {
    /// The storefront (ISO 3166-1 alpha-3) of the current transaction.
    public var storefront: String?
    /// How the current transaction was revoked (`REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`),
    /// and the share refunded in thousandths of a percent (50000 is 50%).
    public var revocationType: String?
    public var revocationPercentage: Int?
    /// The current transaction's offer period (ISO 8601 duration, `P1M`).
    public var offerPeriod: String?
    /// The next renewal's date and price (milliunits of `renewalCurrency`).
    public var renewalDate: Millis?
    public var renewalPrice: Int64?
    public var renewalCurrency: String?
    /// The offer the next renewal applies (FREE_TRIAL, PAY_AS_YOU_GO, PAY_UP_FRONT) and its
    /// period, from the renewal info.
    public var renewalOfferDiscountType: String?
    public var renewalOfferPeriod: String?
    /// Win-back offers the subscriber may redeem.
    public var winBackOfferIds: [String] = []
    /// Why the newest consumption request was made (`UNINTENDED_PURCHASE`, ...).
    public var consumptionRequestReason: String?

    /// `next renewal 2026-07-01 09:14 at 9.99 USD · offer PAY_AS_YOU_GO P1Y`; nil without a
    /// renewal date. Strings from the payload are as sent: escape them before a terminal.
    public func nextRenewal(date: (Millis) -> String) -> String? {
        guard let when = renewalDate else { return nil }
        var text = "next renewal " + date(when)
        if let price = renewalPrice { text += " at " + Money.format(milliunits: price, currency: renewalCurrency ?? "") }
        let offer = [renewalOfferDiscountType, renewalOfferPeriod].compactMap { $0 }
        if !offer.isEmpty { text += " · offer " + offer.joined(separator: " ") }
        return text
    }

    /// The renewal as a fact of `state` at `now`: `renewal 2026-07-01 09:14 at 9.99 USD` while
    /// it is ahead and auto-renew is on; once its date passed, what happened instead
    /// (`renewal was due 2026-11-24 06:47; in billing retry`, `…; in grace until …`, `…; it
    /// did not renew`); nil for a revoked subscription, or auto-renew off with the date ahead.
    public func renewalFact(_ state: SubscriptionState, now: Millis, date: (Millis) -> String) -> String? {
        guard let when = renewalDate, state.status != .revoked else { return nil }
        if when > now {
            guard state.autoRenewStatus, let next = nextRenewal(date: date) else { return nil }
            return String(next.dropFirst("next ".count))
        }
        let due = "renewal was due " + date(when) + "; "
        switch state.status {
        case .gracePeriod:
            return due + (state.gracePeriodExpiresDate.map { "in grace until " + date($0) } ?? "in grace")
        case .billingRetry:
            return due + "in billing retry"
        case .active:
            // Renewed since (a newer period runs): the date is history, not news.
            return nil
        case .expired, .revoked:
            return due + (state.isInBillingRetryPeriod ? "in billing retry" : "it did not renew")
        }
    }

    /// `50%`, `12.5%`.
    public var revocationShare: String? {
        revocationPercentage.map { $0 % 1000 == 0 ? "\($0 / 1000)%" : String(format: "%.3g%%", Double($0) / 1000) }
    }
}

extension SubscriptionReport {
    /// When access ended for a revoked (refunded) subscription: the latest revocation date.
    public var accessEnded: Millis? {
        guard state.status == .revoked else { return nil }
        return history.transactions.filter(\.isRevoked).compactMap(\.revocationDate).max()
    }

    /// The date a list shows for `state` in its expiry column: when access ended for a
    /// revoked subscription (`accessEnded`, as its detail says), else when it expires.
    public static func listedEnd(_ state: SubscriptionState, accessEnded: [String: Millis]) -> Millis? {
        state.status == .revoked ? accessEnded[state.originalTransactionId] ?? state.expiresDate : state.expiresDate
    }

    public var appleFacts: AppleFacts {
        func object(_ data: Data?) -> [String: Any] {
            data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        }
        let currentId = state.latestTransactionId ?? history.transactions.max(by: StateDerivation.purchaseOrder)?.transactionId
        let transaction = object(currentId.flatMap { transactionPayloads[$0] })
        let renewal = object(renewalPayload)
        var facts = AppleFacts()
        facts.storefront = transaction["storefront"] as? String
            ?? currentId.flatMap { id in history.transactions.first { $0.transactionId == id }?.storefront }
        facts.revocationType = transaction["revocationType"] as? String
        facts.revocationPercentage = transaction["revocationPercentage"] as? Int
        facts.offerPeriod = transaction["offerPeriod"] as? String
        facts.renewalDate = history.renewal?.renewalDate
        facts.renewalPrice = history.renewal?.renewalPrice
        facts.renewalCurrency = history.renewal?.currency
        facts.renewalOfferDiscountType = history.renewal?.offerDiscountType
        facts.renewalOfferPeriod = history.renewal?.offerPeriod
        facts.winBackOfferIds = renewal["eligibleWinBackOfferIds"] as? [String] ?? []
        if let request = notificationBodies.last(where: { $0.event.type == .consumptionRequest }),
           let data = ApplePayloads.notificationObject(body: request.body)?["data"] as? [String: Any] {
            facts.consumptionRequestReason = data["consumptionRequestReason"] as? String
        }
        return facts
    }
}
