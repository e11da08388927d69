import Foundation

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
            revocationReason: try json.int("revocationReason").map(RevocationReason.init(rawValue:)),
            isUpgraded: try json.bool("isUpgraded") ?? false,
            offerType: try json.int("offerType").map(OfferType.init(rawValue:)),
            offerIdentifier: try json.string("offerIdentifier"),
            offerDiscountType: try json.string("offerDiscountType"),
            ownershipType: try json.string("inAppOwnershipType").map(OwnershipType.init(rawValue:)) ?? .purchased,
            transactionReason: try json.string("transactionReason").map(TransactionReason.init(rawValue:)),
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
        try decodeRefundsAndCommitment(json)
    }

    /// The fields of 2025-2026 (revocation type and share, billing plan, commitment,
    /// Advanced Commerce item refunds), read alike at intake and from a stored payload.
    mutating func decodeRefundsAndCommitment(_ json: JSONFields) throws {
        revocationType = try json.string("revocationType")
        revocationPercentage = try json.int("revocationPercentage")
        billingPlanType = try json.string("billingPlanType")
        commitment = try json.object("commitmentInfo").map(CommitmentInfo.init)
        advancedCommerceRefunds = try json.object("advancedCommerceInfo").map(AdvancedCommerceRefund.all) ?? []
    }

    /// Whether this version carries a field that state or counts read and the
    /// transactions table has no column for: such a version keeps its payload, and the
    /// fields are read from it when loaded.
    var needsPayloadKept: Bool {
        revocationType != nil || revocationPercentage != nil || billingPlanType != nil || commitment != nil
            || !advancedCommerceRefunds.isEmpty
    }

    /// Fills the fields kept only in the payload (see `needsPayloadKept`). The payload was
    /// verified when it arrived; one that no longer reads leaves them empty.
    mutating func adoptPayloadFields() {
        guard let payload, PayloadProbe.mentions(payload, TransactionRecord.payloadOnlyKeys),
              let json = try? JSONFields(data: payload, path: "payload") else { return }
        try? decodeRefundsAndCommitment(json)
    }

    static let payloadOnlyKeys = ["revocationType", "revocationPercentage", "billingPlanType", "commitmentInfo", "advancedCommerceInfo"]
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
            offerType: try json.int("offerType").map(OfferType.init(rawValue:)),
            offerIdentifier: try json.string("offerIdentifier"),
            renewalDate: try json.millis("renewalDate"),
            renewalPrice: try json.int64("renewalPrice"),
            currency: try json.string("currency"),
            environment: AppStoreEnvironment(rawValue: try json.string("environment") ?? "Production"),
            signedDate: signed)
        try decodeTokenOfferAndCommitment(json)
    }

    /// Renewal info's owner, offer and commitment fields (see `TransactionRecord`'s).
    mutating func decodeTokenOfferAndCommitment(_ json: JSONFields) throws {
        appAccountToken = try json.string("appAccountToken").flatMap { $0.isEmpty ? nil : $0 }
        appTransactionId = try json.stringOrNumber("appTransactionId")
        offerDiscountType = try json.string("offerDiscountType")
        offerPeriod = try json.string("offerPeriod")
        renewalBillingPlanType = try json.string("renewalBillingPlanType")
        commitment = try json.object("commitmentInfo").map(RenewalCommitment.init)
    }

    var needsPayloadKept: Bool {
        appAccountToken != nil || appTransactionId != nil || offerDiscountType != nil || offerPeriod != nil
            || renewalBillingPlanType != nil || commitment != nil
    }

    mutating func adoptPayloadFields() {
        guard let payload, PayloadProbe.mentions(payload, RenewalRecord.payloadOnlyKeys),
              let json = try? JSONFields(data: payload, path: "payload") else { return }
        try? decodeTokenOfferAndCommitment(json)
    }

    static let payloadOnlyKeys = ["appAccountToken", "appTransactionId", "offerDiscountType", "offerPeriod",
                                  "renewalBillingPlanType", "commitmentInfo"]
}

/// A byte search that spares parsing the payloads (most of them) that hold none of the keys.
enum PayloadProbe {
    static func mentions(_ payload: Data, _ keys: [String]) -> Bool {
        keys.contains { payload.range(of: Data(("\"" + $0 + "\"").utf8)) != nil }
    }
}
