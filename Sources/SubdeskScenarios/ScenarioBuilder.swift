import Foundation
import SubscriptionCore

/// Turns a `Scenario` into the signed V2 notification bodies Apple would have sent.
public struct ScenarioBuilder {
    public let signer: JWSSigner
    public var bundleId: String
    public var appAppleId: Int64
    public var environment: AppStoreEnvironment

    public static let demoBundleId = "com.example.subdesk.demo"
    public static let demoAppAppleId: Int64 = 1_234_567_890

    public init(signer: JWSSigner, bundleId: String = ScenarioBuilder.demoBundleId,
                appAppleId: Int64 = ScenarioBuilder.demoAppAppleId, environment: AppStoreEnvironment = .production) {
        self.signer = signer
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
    }

    /// The originalTransactionId a scenario gets for a given instance number.
    public static func originalTransactionId(instance: Int) -> String {
        String(2_000_000_400_000_000 + Int64(instance) * 100 + 1)
    }

    /// The app account token a scenario instance's purchases carry.
    public static func appAccountToken(instance: Int) -> String {
        let hex = String(format: "%012x", instance)
        return "5e1f0000-0000-4000-8000-\(hex)"
    }

    /// `count` distinct signed notifications for load: whole lifecycles, scenario
    /// `instance % scenarios.count` for each instance from `instance` on, which is left at
    /// the next unused instance number.
    public func bodies(count: Int, cycling scenarios: [Scenario], instance: inout Int, anchor: Millis) throws -> [Data] {
        var out: [Data] = []
        out.reserveCapacity(count)
        while out.count < count {
            for body in try bodies(for: scenarios[instance % scenarios.count], instance: instance, anchor: anchor)
            where out.count < count {
                out.append(body)
            }
            instance += 1
        }
        return out
    }

    /// The bodies for one instance of `scenario`, in step order, with dates relative to `anchor`.
    public func bodies(for scenario: Scenario, instance: Int, anchor: Millis) throws -> [Data] {
        let otid = Int64(ScenarioBuilder.originalTransactionId(instance: instance))!
        var transactions: [[String: Any]] = []
        var current = 0
        var renewal: [String: Any] = ["autoRenewStatus": 1, "originalTransactionId": String(otid)]
        var result: [Data] = []

        // A scenario whose customer's parent withdraws consent ties its purchases to the app
        // download (appTransactionId) the RESCIND_CONSENT names.
        let appTransactionId = scenario.steps.contains { $0.type == ScenarioBuilder.rescindConsent }
            ? ScenarioBuilder.appTransactionId(instance: instance) : nil

        for (index, step) in scenario.steps.enumerated() {
            let signedDate = anchor + step.at
            if step.type == ScenarioBuilder.rescindConsent {
                result.append(try rescindConsent(appTransactionId: appTransactionId ?? "", downloaded: transactions.first?["purchaseDate"] as? Millis,
                                                 uuid: uuid(scenario.name, instance: instance, step: index), signedDate: signedDate))
                continue
            }
            if let spec = step.transaction {
                if let ref = spec.ref {
                    guard ref >= 1 && ref <= transactions.count else {
                        throw DecodingFault(path: "\(scenario.name).steps[\(index)].transaction.ref",
                                            problem: "no transaction \(ref)")
                    }
                    current = ref - 1
                } else {
                    transactions.append(newTransaction(spec, otid: otid, number: transactions.count + 1,
                                                       anchor: anchor, signedDate: signedDate, scenario: scenario, instance: instance))
                    if let appTransactionId { transactions[transactions.count - 1]["appTransactionId"] = appTransactionId }
                    current = transactions.count - 1
                }
                apply(spec, to: &transactions[current], anchor: anchor)
            }
            guard !transactions.isEmpty else {
                throw DecodingFault(path: "\(scenario.name).steps[\(index)]", problem: "no transaction yet")
            }
            transactions[current]["signedDate"] = signedDate
            let product = transactions[current]["productId"] as? String ?? ""
            renewal["productId"] = product
            if renewal["autoRenewProductId"] == nil { renewal["autoRenewProductId"] = product }
            if step.transaction?.ref == nil && step.transaction != nil && step.renewal?.autoRenewProduct == nil {
                renewal["autoRenewProductId"] = product
            }
            if let r = step.renewal { apply(r, to: &renewal, anchor: anchor) }
            renewal["signedDate"] = signedDate
            renewal["environment"] = environment.rawValue
            renewal["recentSubscriptionStartDate"] = transactions.first?["purchaseDate"]
            renewal["renewalDate"] = transactions[current]["expiresDate"]

            let signedTransaction = try signer.sign(payload: try json(transactions[current]))
            let signedRenewal = try signer.sign(payload: try json(renewal))
            var payload: [String: Any] = [
                "notificationType": step.type,
                "notificationUUID": uuid(scenario.name, instance: instance, step: index),
                "version": "2.0",
                "signedDate": signedDate,
                "data": [
                    "appAppleId": appAppleId,
                    "bundleId": bundleId,
                    "bundleVersion": "1.0",
                    "environment": environment.rawValue,
                    "signedTransactionInfo": signedTransaction,
                    "signedRenewalInfo": signedRenewal,
                    "status": 1,
                ] as [String: Any],
            ]
            if let subtype = step.subtype { payload["subtype"] = subtype }
            if let reason = step.consumptionRequestReason, var data = payload["data"] as? [String: Any] {
                data["consumptionRequestReason"] = reason
                payload["data"] = data
            }
            let signedPayload = try signer.sign(payload: try json(payload))
            result.append(try json(["signedPayload": signedPayload]))
        }
        return result
    }

    static let rescindConsent = "RESCIND_CONSENT"

    /// The app download a scenario instance's purchases were made from, when it names one.
    public static func appTransactionId(instance: Int) -> String { String(7_000_000_000 + Int64(instance)) }

    /// RESCIND_CONSENT: a parent or guardian withdrew consent for the app download
    /// `appTransactionId`; Apple sends it in `appData`, with the app transaction signed in.
    private func rescindConsent(appTransactionId: String, downloaded: Millis?, uuid: String, signedDate: Millis) throws -> Data {
        let app: [String: Any] = [
            "receiptType": environment.rawValue,
            "appAppleId": appAppleId,
            "bundleId": bundleId,
            "applicationVersion": "1.0",
            "originalApplicationVersion": "1.0",
            "receiptCreationDate": signedDate,
            "originalPurchaseDate": downloaded ?? signedDate,
            "appTransactionId": appTransactionId,
            "originalPlatform": "iOS",
            "signedDate": signedDate,
        ]
        let payload: [String: Any] = [
            "notificationType": ScenarioBuilder.rescindConsent,
            "notificationUUID": uuid,
            "version": "2.0",
            "signedDate": signedDate,
            "appData": [
                "appAppleId": appAppleId,
                "bundleId": bundleId,
                "environment": environment.rawValue,
                "signedAppTransactionInfo": try signer.sign(payload: try json(app)),
            ] as [String: Any],
        ]
        return try json(["signedPayload": try signer.sign(payload: try json(payload))])
    }

    private func newTransaction(_ spec: Scenario.TransactionSpec, otid: Int64, number: Int, anchor: Millis,
                                signedDate: Millis, scenario: Scenario, instance: Int) -> [String: Any] {
        let start = anchor + (spec.start ?? (signedDate - anchor))
        var t: [String: Any] = [
            "transactionId": String(otid + Int64(number) - 1),
            "originalTransactionId": String(otid),
            "webOrderLineItemId": String(otid + 500_000 + Int64(number)),
            "bundleId": bundleId,
            "productId": spec.product ?? "app.monthly",
            "subscriptionGroupIdentifier": "21000001",
            "purchaseDate": start,
            "originalPurchaseDate": start,
            "quantity": 1,
            "type": "Auto-Renewable Subscription",
            "inAppOwnershipType": scenario.ownership,
            "environment": environment.rawValue,
            "transactionReason": number == 1 ? "PURCHASE" : (spec.reason ?? "RENEWAL"),
            "storefront": "USA",
            "storefrontId": "143441",
            "currency": spec.currency ?? "USD",
            "price": spec.price ?? 9990,
            "appAccountToken": ScenarioBuilder.appAccountToken(instance: instance),
        ]
        if let reason = spec.reason { t["transactionReason"] = reason }
        t["expiresDate"] = start + (spec.period ?? 30 * 86_400_000)
        return t
    }

    private func apply(_ spec: Scenario.TransactionSpec, to t: inout [String: Any], anchor: Millis) {
        if spec.ref != nil, let product = spec.product { t["productId"] = product }
        if let expires = spec.expires { t["expiresDate"] = anchor + expires }
        if let offer = spec.offer {
            let parts = offer.split(separator: ":", maxSplits: 1).map(String.init)
            switch parts[0] {
            case "FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT":
                t["offerType"] = 1
                t["offerDiscountType"] = parts[0]
                if parts[0] == "FREE_TRIAL" { t["price"] = 0 }
            case "PROMOTIONAL": t["offerType"] = 2; t["offerIdentifier"] = parts.count > 1 ? parts[1] : "promo"
            case "OFFER_CODE": t["offerType"] = 3; t["offerIdentifier"] = parts.count > 1 ? parts[1] : "code"
            case "WIN_BACK": t["offerType"] = 4; t["offerIdentifier"] = parts.count > 1 ? parts[1] : "winback"
            default: break
            }
        }
        if let revoked = spec.revoked {
            if let r = revoked {
                t["revocationDate"] = anchor + r
                t["revocationReason"] = spec.revocationReason ?? 0
            } else {
                t.removeValue(forKey: "revocationDate")
                t.removeValue(forKey: "revocationReason")
            }
        }
        if let upgraded = spec.upgraded { t["isUpgraded"] = upgraded }
    }

    private func apply(_ spec: Scenario.RenewalSpec, to r: inout [String: Any], anchor: Millis) {
        if let v = spec.autoRenew { r["autoRenewStatus"] = v ? 1 : 0 }
        if let v = spec.autoRenewProduct { r["autoRenewProductId"] = v }
        if let v = spec.intent { r["expirationIntent"] = v ?? NSNull() }
        if let v = spec.billingRetry { r["isInBillingRetryPeriod"] = v }
        if let v = spec.graceUntil { r["gracePeriodExpiresDate"] = v.map { anchor + $0 } ?? NSNull() }
        if let v = spec.priceIncrease { r["priceIncreaseStatus"] = v ?? NSNull() }
        for (k, v) in r where v is NSNull { r.removeValue(forKey: k) }
    }

    private func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    /// A stable UUID per scenario instance and step, so rebuilding a store yields duplicates, not copies.
    private func uuid(_ name: String, instance: Int, step: Int) -> String {
        let digest = ContentDigest.sha256(Data("\(name)/\(instance)/\(step)".utf8))
        let h = digest.prefix(16).map { String(format: "%02x", $0) }.joined()
        let chars = Array(h)
        return "\(String(chars[0..<8]))-\(String(chars[8..<12]))-4\(String(chars[13..<16]))-a\(String(chars[17..<20]))-\(String(chars[20..<32]))"
    }
}
