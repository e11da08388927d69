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
            "revocationDate": date(revocationDate), "revocationReason": opt(revocationReason), "isUpgraded": isUpgraded,
            "offerType": opt(offerType), "offerIdentifier": opt(offerIdentifier), "offerDiscountType": opt(offerDiscountType),
            "inAppOwnershipType": ownershipType, "transactionReason": opt(transactionReason), "price": opt(price),
            "currency": opt(currency), "environment": environment.rawValue, "appAccountToken": opt(appAccountToken),
            "signedDate": date(signedDate), "webOrderLineItemId": opt(webOrderLineItemId), "bundleId": opt(bundleId),
            "type": opt(type), "storefront": opt(storefront), "appTransactionId": opt(appTransactionId),
            "notificationSignedDate": date(notificationSignedDate),
            "isSubscription": Intake.isSubscription(self),
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
            "offerType": opt(offerType), "offerIdentifier": opt(offerIdentifier), "renewalDate": date(renewalDate),
            "renewalPrice": opt(renewalPrice), "currency": opt(currency), "environment": environment.rawValue,
            "signedDate": date(signedDate), "notificationSignedDate": date(notificationSignedDate),
        ]
    }
}
