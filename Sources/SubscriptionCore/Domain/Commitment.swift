/// A transaction's place in a subscription with a commitment (App Store Server API 1.21):
/// a 12-month commitment billed monthly (`billingPlanType` MONTHLY) or up front.
public struct CommitmentInfo: Equatable, Sendable {
    /// Which billing period of the commitment this transaction pays for (3 of 12).
    public var billingPeriodNumber: Int?
    public var totalBillingPeriods: Int?
    /// When the commitment ends: until then the customer keeps paying each period.
    public var expiresDate: Millis?
    /// The price of the whole commitment, in milliunits of the transaction's currency.
    public var price: Int64?

    public init(billingPeriodNumber: Int? = nil, totalBillingPeriods: Int? = nil, expiresDate: Millis? = nil, price: Int64? = nil) {
        self.billingPeriodNumber = billingPeriodNumber
        self.totalBillingPeriods = totalBillingPeriods
        self.expiresDate = expiresDate
        self.price = price
    }

    init(_ json: JSONFields) throws {
        self.init(billingPeriodNumber: try json.int("billingPeriodNumber"),
                  totalBillingPeriods: try json.int("totalBillingPeriods"),
                  expiresDate: try json.millis("commitmentExpiresDate"),
                  price: try json.int64("commitmentPrice"))
    }

    /// `month 3 of 12` for a monthly plan, `period 3 of 12` otherwise.
    public func progress(plan: String?) -> String? {
        guard let n = billingPeriodNumber else { return nil }
        let unit = plan == "MONTHLY" ? "month" : "period"
        return "\(unit) \(n)" + (totalBillingPeriods.map { " of \($0)" } ?? "")
    }
}

/// What happens when a commitment ends, from the renewal info's `commitmentInfo`.
public struct RenewalCommitment: Equatable, Sendable {
    /// Whether the commitment renews into a new one when it ends (Apple's 1), or the
    /// subscription stops then (0); nil when Apple did not say.
    public var autoRenewStatus: Bool?
    public var autoRenewProductId: String?
    /// When the commitment renews (or would), and the next commitment's price.
    public var renewalDate: Millis?
    public var renewalPrice: Int64?
    /// `MONTHLY` or `BILLED_UPFRONT` for the next commitment; other values kept as sent.
    public var renewalBillingPlanType: String?

    public init(autoRenewStatus: Bool? = nil, autoRenewProductId: String? = nil, renewalDate: Millis? = nil,
                renewalPrice: Int64? = nil, renewalBillingPlanType: String? = nil) {
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewProductId = autoRenewProductId
        self.renewalDate = renewalDate
        self.renewalPrice = renewalPrice
        self.renewalBillingPlanType = renewalBillingPlanType
    }

    init(_ json: JSONFields) throws {
        self.init(autoRenewStatus: try json.int("commitmentAutoRenewStatus").map { $0 == 1 },
                  autoRenewProductId: try json.string("commitmentAutoRenewProductId"),
                  renewalDate: try json.millis("commitmentRenewalDate"),
                  renewalPrice: try json.int64("commitmentRenewalPrice"),
                  renewalBillingPlanType: try json.string("commitmentRenewalBillingPlanType"))
    }
}

/// Apple's billing plan names, as a support agent reads them.
public enum BillingPlan {
    public static func describe(_ plan: String) -> String {
        switch plan {
        case "MONTHLY": return "billed monthly"
        case "BILLED_UPFRONT": return "billed up front"
        default: return plan
        }
    }

    /// The `plan` segment's value: `monthly`, `upfront`, `none` when Apple named no plan, or
    /// an unknown plan as sent, lower-cased.
    public static func segmentValue(_ plan: String?) -> String {
        switch plan {
        case nil: return "none"
        case "MONTHLY": return "monthly"
        case "BILLED_UPFRONT": return "upfront"
        case let other?: return other.lowercased()
        }
    }
}

/// A subscription's commitment as support reads it: the plan, which billing period of how
/// many, when the commitment ends and what it costs, and whether it renews ("when can I
/// stop paying?": at `info.expiresDate` when it does not renew).
public struct CommitmentState: Equatable, Sendable {
    public var billingPlanType: String?
    public var info: CommitmentInfo
    /// The current period's price (a month's, for a monthly plan) and its currency.
    public var price: Int64?
    public var currency: String?
    public var renewal: RenewalCommitment?
    public var renewalBillingPlanType: String?

    /// Whether the commitment renews when it ends; nil when no renewal info says.
    public var willRenew: Bool? { renewal?.autoRenewStatus }
}
