/// How a revoked transaction was revoked, from `revocationType` and `revocationPercentage`
/// (App Store Server API 1.19, Notifications 2.20).
public enum RevocationKind: Equatable, Sendable {
    /// The whole price refunded; the period is as if never bought.
    case fullRefund
    /// A share refunded, in thousandths of a percent (50000 is 50%); the customer paid for
    /// the period up to the revocation and kept the rest of the price.
    case proratedRefund(percentMilli: Int)
    /// Family-shared access taken away: no money moved, so it is not a refund.
    case familyRevoke

    /// The refunded share of the price in thousandths of a percent (100000 is all of it).
    public var refundedPercentMilli: Int {
        switch self {
        case .fullRefund: return 100_000
        case .proratedRefund(let p): return p
        case .familyRevoke: return 0
        }
    }

    /// Money refunded of `price`, rounded to the milliunit.
    public func refunded(of price: Int64) -> Int64 {
        (price * Int64(refundedPercentMilli) + 50_000) / 100_000
    }
}

/// One refund of an Advanced Commerce item (`advancedCommerceInfo.items[].refunds[]`): Apple
/// refunds items one by one, each by its own amount.
public struct AdvancedCommerceRefund: Equatable, Sendable {
    public var sku: String?
    /// Milliunits of the transaction's currency.
    public var amount: Int64
    public var date: Millis?
    /// `FULL`, `PRORATED`, `CUSTOM`, or a newer value as sent.
    public var type: String?
    public var reason: String?

    public init(sku: String? = nil, amount: Int64, date: Millis? = nil, type: String? = nil, reason: String? = nil) {
        self.sku = sku
        self.amount = amount
        self.date = date
        self.type = type
        self.reason = reason
    }

    /// Every item refund of an `advancedCommerceInfo` object, in the order Apple lists them.
    static func all(in info: JSONFields) throws -> [AdvancedCommerceRefund] {
        var result: [AdvancedCommerceRefund] = []
        for item in try info.objects("items") ?? [] {
            let sku = try item.string("SKU")
            for refund in try item.objects("refunds") ?? [] {
                guard let amount = try refund.int64("refundAmount") else {
                    throw DecodingFault(path: refund.fieldPath("refundAmount"), problem: "missing")
                }
                result.append(AdvancedCommerceRefund(sku: sku, amount: amount, date: try refund.millis("refundDate"),
                                                     type: try refund.string("refundType"),
                                                     reason: try refund.string("refundReason")))
            }
        }
        return result
    }
}
