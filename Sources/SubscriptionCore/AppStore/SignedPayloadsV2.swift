extension TransactionRecord {
    /// Decodes a verified JWSTransactionDecodedPayload.
    public init(v2 json: JSONFields) throws {
        guard let purchase = try json.millis("purchaseDate") else {
            throw DecodingFault(path: json.fieldPath("purchaseDate"), problem: "missing")
        }
        guard let signed = try json.millis("signedDate") else {
            throw DecodingFault(path: json.fieldPath("signedDate"), problem: "missing")
        }
        self.init(
            transactionId: try json.stringOrNumber("transactionId") ?? { throw DecodingFault(path: json.fieldPath("transactionId"), problem: "missing") }(),
            originalTransactionId: try json.stringOrNumber("originalTransactionId") ?? { throw DecodingFault(path: json.fieldPath("originalTransactionId"), problem: "missing") }(),
            productId: try json.requiredString("productId"),
            subscriptionGroupIdentifier: try json.stringOrNumber("subscriptionGroupIdentifier"),
            purchaseDate: purchase,
            originalPurchaseDate: try json.millis("originalPurchaseDate"),
            expiresDate: try json.millis("expiresDate"),
            revocationDate: try json.millis("revocationDate"),
            revocationReason: try json.int("revocationReason"),
            isUpgraded: try json.bool("isUpgraded") ?? false,
            offerType: try json.int("offerType"),
            offerIdentifier: try json.string("offerIdentifier"),
            offerDiscountType: try json.string("offerDiscountType"),
            ownershipType: try json.string("inAppOwnershipType") ?? "PURCHASED",
            transactionReason: try json.string("transactionReason"),
            price: try json.int64("price"),
            currency: try json.string("currency"),
            environment: AppStoreEnvironment(rawValue: try json.string("environment") ?? "Production"),
            appAccountToken: try json.string("appAccountToken").flatMap { $0.isEmpty ? nil : $0 },
            signedDate: signed,
            webOrderLineItemId: try json.stringOrNumber("webOrderLineItemId"),
            bundleId: try json.string("bundleId"),
            type: try json.string("type"),
            storefront: try json.string("storefront"),
            appTransactionId: try json.stringOrNumber("appTransactionId"))
    }
}

extension RenewalRecord {
    /// Decodes a verified JWSRenewalInfoDecodedPayload.
    public init(v2 json: JSONFields) throws {
        guard let signed = try json.millis("signedDate") else {
            throw DecodingFault(path: json.fieldPath("signedDate"), problem: "missing")
        }
        guard let original = try json.stringOrNumber("originalTransactionId") else {
            throw DecodingFault(path: json.fieldPath("originalTransactionId"), problem: "missing")
        }
        self.init(
            originalTransactionId: original,
            productId: try json.string("productId"),
            autoRenewProductId: try json.string("autoRenewProductId"),
            autoRenewStatus: (try json.int("autoRenewStatus") ?? 1) == 1,
            expirationIntent: try json.int("expirationIntent"),
            isInBillingRetryPeriod: try json.bool("isInBillingRetryPeriod") ?? false,
            gracePeriodExpiresDate: try json.millis("gracePeriodExpiresDate"),
            priceIncreaseStatus: try json.int("priceIncreaseStatus"),
            offerType: try json.int("offerType"),
            offerIdentifier: try json.string("offerIdentifier"),
            renewalDate: try json.millis("renewalDate"),
            renewalPrice: try json.int64("renewalPrice"),
            currency: try json.string("currency"),
            environment: AppStoreEnvironment(rawValue: try json.string("environment") ?? "Production"),
            signedDate: signed)
    }
}
