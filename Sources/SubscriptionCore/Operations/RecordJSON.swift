import Foundation

/// Every stored field of a transaction and of renewal info, as `show --json` prints them:
/// Apple's field names, dates as ISO 8601 (UTC), prices in milliunits, absent as null.
extension TransactionRecord {
    public func jsonObject() -> [String: Any] {
        func date(_ m: Millis?) -> Any { m.map(DateText.iso) ?? NSNull() }
        func opt(_ v: Any?) -> Any { v ?? NSNull() }
        return [
            "transactionId": transactionId, "originalTransactionId": originalTransactionId, "productId": productId,
            "subscriptionGroupIdentifier": opt(subscriptionGroupIdentifier), "purchaseDate": date(purchaseDate),
            "originalPurchaseDate": date(originalPurchaseDate), "expiresDate": date(expiresDate),
            "revocationDate": date(revocationDate), "revocationReason": opt(revocationReason?.rawValue), "isUpgraded": isUpgraded,
            "offerType": opt(offerType?.rawValue), "offerIdentifier": opt(offerIdentifier), "offerDiscountType": opt(offerDiscountType),
            "inAppOwnershipType": ownershipType.rawValue, "transactionReason": opt(transactionReason?.rawValue), "price": opt(price),
            "currency": opt(currency), "environment": environment.rawValue, "appAccountToken": opt(appAccountToken),
            "signedDate": date(signedDate), "webOrderLineItemId": opt(webOrderLineItemId), "bundleId": opt(bundleId),
            "type": opt(type), "storefront": opt(storefront), "appTransactionId": opt(appTransactionId),
            "notificationSignedDate": date(notificationSignedDate),
            "isSubscription": Intake.isSubscription(self),
            "revocationType": opt(revocationType), "revocationPercentage": opt(revocationPercentage),
            "billingPlanType": opt(billingPlanType), "commitmentInfo": commitment.map { $0.jsonObject() } ?? NSNull(),
            "advancedCommerceRefunds": advancedCommerceRefunds.map { r -> [String: Any] in
                ["SKU": opt(r.sku), "refundAmount": r.amount, "refundDate": date(r.date), "refundType": opt(r.type),
                 "refundReason": opt(r.reason)]
            },
        ]
    }
}

extension RenewalRecord {
    public func jsonObject() -> [String: Any] {
        func date(_ m: Millis?) -> Any { m.map(DateText.iso) ?? NSNull() }
        func opt(_ v: Any?) -> Any { v ?? NSNull() }
        return [
            "originalTransactionId": originalTransactionId, "productId": opt(productId),
            "autoRenewProductId": opt(autoRenewProductId), "autoRenewStatus": autoRenewStatus ? 1 : 0,
            "expirationIntent": opt(expirationIntent), "isInBillingRetryPeriod": isInBillingRetryPeriod,
            "gracePeriodExpiresDate": date(gracePeriodExpiresDate), "priceIncreaseStatus": opt(priceIncreaseStatus),
            "offerType": opt(offerType?.rawValue), "offerIdentifier": opt(offerIdentifier), "renewalDate": date(renewalDate),
            "renewalPrice": opt(renewalPrice), "currency": opt(currency), "environment": environment.rawValue,
            "signedDate": date(signedDate), "notificationSignedDate": date(notificationSignedDate),
            "appAccountToken": opt(appAccountToken), "appTransactionId": opt(appTransactionId),
            "offerDiscountType": opt(offerDiscountType), "offerPeriod": opt(offerPeriod),
            "renewalBillingPlanType": opt(renewalBillingPlanType),
            "commitmentInfo": commitment.map { $0.jsonObject() } ?? NSNull(),
        ]
    }
}

extension CommitmentInfo {
    public func jsonObject() -> [String: Any] {
        func opt(_ v: Any?) -> Any { v ?? NSNull() }
        return ["billingPeriodNumber": opt(billingPeriodNumber), "totalBillingPeriods": opt(totalBillingPeriods),
                "commitmentExpiresDate": expiresDate.map(DateText.iso) ?? NSNull(), "commitmentPrice": opt(price)]
    }
}

extension RenewalCommitment {
    public func jsonObject() -> [String: Any] {
        func opt(_ v: Any?) -> Any { v ?? NSNull() }
        return ["commitmentAutoRenewStatus": autoRenewStatus.map { $0 ? 1 : 0 } ?? NSNull(),
                "commitmentAutoRenewProductId": opt(autoRenewProductId),
                "commitmentRenewalDate": renewalDate.map(DateText.iso) ?? NSNull(),
                "commitmentRenewalPrice": opt(renewalPrice), "commitmentRenewalBillingPlanType": opt(renewalBillingPlanType)]
    }
}

extension CommitmentState {
    /// The commitment as `show --json` gives it: the plan, the period of the total, when it
    /// ends, its price, and whether it renews (`stopsPayingAfter`: the commitment's end when
    /// it will not renew, the answer to "when can I stop paying?").
    public func jsonObject() -> [String: Any] {
        func opt(_ v: Any?) -> Any { v ?? NSNull() }
        return ["billingPlanType": opt(billingPlanType), "billingPeriodNumber": opt(info.billingPeriodNumber),
                "totalBillingPeriods": opt(info.totalBillingPeriods),
                "commitmentExpiresDate": info.expiresDate.map(DateText.iso) ?? NSNull(),
                "commitmentPrice": opt(info.price), "periodPrice": opt(price), "currency": opt(currency),
                "willRenew": opt(willRenew),
                "stopsPayingAfter": willRenew == false ? (info.expiresDate.map(DateText.iso) ?? NSNull()) : NSNull(),
                "renewal": renewal.map { $0.jsonObject() } ?? NSNull(),
                "renewalBillingPlanType": opt(renewalBillingPlanType)]
    }

    /// The commitment in words, each phrase on its own so a narrow screen can drop the last:
    /// `billed monthly`, `month 3 of 12`, `commitment ends 2026-10-01 09:14`, `119.88 USD for the
    /// commitment`, `will not renew: payments stop 2026-10-01 09:14`. Strings from the
    /// payload are as sent: escape them before a terminal.
    public func phrases(date: (Millis) -> String) -> [String] {
        func price(_ m: Int64) -> String { Money.format(milliunits: m, currency: currency ?? "") }
        var out: [String] = []
        if let plan = billingPlanType { out.append(BillingPlan.describe(plan)) }
        if let progress = info.progress(plan: billingPlanType) { out.append(progress) }
        if let ends = info.expiresDate { out.append("commitment ends " + date(ends)) }
        if let total = info.price { out.append(price(total) + " for the commitment") }
        switch willRenew {
        case true?:
            var text = "commitment renews"
            if let d = renewal?.renewalDate { text += " " + date(d) }
            if let product = renewal?.autoRenewProductId { text += " into " + product }
            if let plan = renewal?.renewalBillingPlanType ?? renewalBillingPlanType { text += " " + BillingPlan.describe(plan) }
            if let p = renewal?.renewalPrice { text += " at " + price(p) }
            out.append(text)
        case false?:
            out.append("will not renew" + (info.expiresDate.map { ": payments stop " + date($0) } ?? ""))
        case nil:
            out.append("commitment renewal not known")
        }
        return out
    }
}

