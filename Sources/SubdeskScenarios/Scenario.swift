import Foundation
import SubscriptionCore

/// A subscription lifecycle written as data (`sample-data/scenarios/*.json`): the
/// notifications Apple would send, at times relative to an anchor, and the state
/// the subscription must end in. The demo store and the tests are built from these.
public struct Scenario: Sendable {
    public struct TransactionSpec: Sendable {
        /// Refers to an earlier transaction (1-based, in order of creation) to re-send it changed.
        public var ref: Int?
        public var product: String?
        public var start: Millis?
        public var period: Millis?
        public var offer: String?
        public var price: Int64?
        public var currency: String?
        public var revoked: Millis??
        public var revocationReason: Int?
        public var upgraded: Bool?
        public var expires: Millis?
        public var reason: String?
    }

    public struct RenewalSpec: Sendable {
        public var autoRenew: Bool?
        public var autoRenewProduct: String?
        public var intent: Int??
        public var billingRetry: Bool?
        public var graceUntil: Millis??
        public var priceIncrease: Int??
    }

    public struct Step: Sendable {
        public var at: Millis
        public var type: String
        public var subtype: String?
        public var transaction: TransactionSpec?
        public var renewal: RenewalSpec?
        /// Why the customer asked for a refund, on a CONSUMPTION_REQUEST step.
        public var consumptionRequestReason: String?

        /// A step that changes only the auto-renew status.
        public static func autoRenew(_ on: Bool, at: Millis) -> Step {
            Step(at: at, type: "DID_CHANGE_RENEWAL_STATUS", subtype: on ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED",
                 transaction: nil, renewal: RenewalSpec(autoRenew: on))
        }
    }

    public struct Expectation: Sendable {
        public var status: SubscriptionStatus
        public var entitled: Bool
        public var expires: Millis??
        public var expirationIntent: Int??
        public var autoRenew: Bool?
        public var pendingProduct: String??
    }

    public var name: String
    public var description: String
    public var userId: String?
    public var ownership: String
    public var steps: [Step]
    public var expect: Expectation

    public init(json: JSONFields) throws {
        name = try json.requiredString("name")
        description = try json.string("description") ?? ""
        userId = try json.string("userId")
        ownership = try json.string("ownership") ?? "PURCHASED"
        guard let rawSteps = try json.objects("steps"), !rawSteps.isEmpty else {
            throw DecodingFault(path: json.fieldPath("steps"), problem: "missing or empty")
        }
        steps = try rawSteps.map { s in
            let notification = try s.requiredString("notification")
            let parts = notification.split(separator: "/", maxSplits: 1).map(String.init)
            return Step(at: try Scenario.offset(s, "at") ?? 0, type: parts[0], subtype: parts.count > 1 ? parts[1] : nil,
                        transaction: try s.object("transaction").map(Scenario.transactionSpec),
                        renewal: try s.object("renewal").map(Scenario.renewalSpec),
                        consumptionRequestReason: try s.string("consumptionRequestReason"))
        }
        guard let e = try json.object("expect") else {
            throw DecodingFault(path: json.fieldPath("expect"), problem: "missing")
        }
        guard let statusName = try e.string("status"), let status = SubscriptionStatus(name: statusName) else {
            throw DecodingFault(path: e.fieldPath("status"), problem: "missing or not a status name")
        }
        expect = Expectation(status: status, entitled: try e.bool("entitled") ?? (status == .active || status == .gracePeriod),
                             expires: try Scenario.nullableOffset(e, "expires"),
                             expirationIntent: e.dictionary.keys.contains("expirationIntent") ? .some(try e.int("expirationIntent")) : nil,
                             autoRenew: try e.bool("autoRenew"),
                             pendingProduct: e.dictionary.keys.contains("pendingProduct") ? .some(try e.string("pendingProduct")) : nil)
    }

    public static func load(path: String) throws -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DecodingFault(path: path, problem: "cannot be read")
        }
        return try Scenario(json: JSONFields(data: data, path: (path as NSString).lastPathComponent))
    }

    /// Every `*.json` scenario in `directory`, by file name.
    public static func loadAll(directory: String) throws -> [Scenario] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { try load(path: directory + "/" + $0) }
    }

    private static func transactionSpec(_ t: JSONFields) throws -> TransactionSpec {
        TransactionSpec(ref: try t.int("ref"), product: try t.string("product"), start: try offset(t, "start"),
                        period: try offset(t, "period"), offer: try t.string("offer"), price: try t.int64("price"),
                        currency: try t.string("currency"), revoked: try nullableOffset(t, "revoked"),
                        revocationReason: try t.int("revocationReason"), upgraded: try t.bool("upgraded"),
                        expires: try offset(t, "expires"), reason: try t.string("reason"))
    }

    private static func renewalSpec(_ r: JSONFields) throws -> RenewalSpec {
        RenewalSpec(autoRenew: try r.bool("autoRenew"), autoRenewProduct: try r.string("autoRenewProduct"),
                    intent: r.dictionary.keys.contains("intent") ? .some(try r.int("intent")) : nil,
                    billingRetry: try r.bool("billingRetry"),
                    graceUntil: try nullableOffset(r, "graceUntil"),
                    priceIncrease: r.dictionary.keys.contains("priceIncrease") ? .some(try r.int("priceIncrease")) : nil)
    }

    private static func offset(_ j: JSONFields, _ key: String) throws -> Millis? {
        guard let text = try j.string(key) else { return nil }
        guard let v = DateText.parseOffset(text) else {
            throw DecodingFault(path: j.fieldPath(key), problem: "expected an offset like -30d, +6d12h or 45m, found \(text)")
        }
        return v
    }

    /// Absent: nil; JSON null: .some(nil); an offset: .some(value).
    private static func nullableOffset(_ j: JSONFields, _ key: String) throws -> Millis?? {
        guard j.dictionary.keys.contains(key) else { return nil }
        if !j.has(key) { return .some(nil) }
        return .some(try offset(j, key))
    }
}
