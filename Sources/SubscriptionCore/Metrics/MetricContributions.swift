import Foundation

/// One subscription's share of the daily counts' running levels and period events,
/// keyed by hour bucket, metric key, segment and variant (which of the subscription's
/// products, storefronts and offers the entry is of, for reports by segment).
///
/// Computed from the whole stored history (a pure function, like the state), stored with
/// the subscription, and applied to the store's aggregates as a difference from the
/// previous share, so daily counts read a few thousand aggregate rows instead of
/// replaying millions of transactions, and stay independent of arrival order.
public struct MetricContributions: Equatable, Sendable {
    public struct Key: Hashable, Sendable {
        public var bucket: Millis
        public var key: PeriodKey
        public var segment: CountSegment
        /// Index into `attributes`.
        public var variant: UInt8 = 0
    }

    /// What a report by segment splits on, besides the environment and ownership that
    /// `CountSegment` already keeps apart: the transaction's product, subscription group,
    /// storefront, offer type and billing plan.
    public struct Attributes: Hashable, Sendable {
        public var values: [String]

        public init(_ t: TransactionRecord) {
            let offer = t.offerType.map { $0.segmentValue(freeTrial: t.isFreeTrial) } ?? "none"
            values = [t.productId, t.subscriptionGroupIdentifier ?? "unknown", t.storefront ?? "unknown", offer,
                      BillingPlan.segmentValue(t.billingPlanType), t.bundleId ?? "unknown"]
        }

        init(values: [String]) { self.values = values }

        public subscript(_ d: SegmentDimension) -> String {
            let i = SegmentDimension.allCases.firstIndex(of: d)!
            return i < values.count ? values[i] : "unknown"
        }
    }

    /// The distinct attributes of the subscription's transactions, which entries name by index.
    public var attributes: [Attributes] = []

    /// Period metrics; their raw values are stored, so never renumber them.
    public enum PeriodKey: UInt8, CaseIterable, Sendable {
        case start = 1, trialStart, end, trialEnd, conversion, graceLevel, retryLevel
        // Movement of paid periods, from the transactions (see `of`).
        case newPaid, reactivation, recovery, churn, renewal
        /// Every paid transaction at its purchase (refunded ones too: the refund rate's base).
        case paidTransaction
        /// A purchased transaction refunded, at the revocation date.
        case refund
        /// A free trial that converted, counted on the day the trial started (its cohort).
        case trialConvertedByStart
        /// Paid access with auto-renew turned off: a level, from the notifications.
        case autoRenewOffLevel
        /// Churn (see `churn`) by why the run of paid access ended, named as the metrics
        /// that count them (their stored names keep an earlier spelling: `p:churn_voluntary`).
        case expiredVoluntary, expiredBillingRetry, expiredPriceIncrease, expiredProductNotForSale, expiredOther
        /// Auto-renew turned off during paid access (once until turned on again), and on again.
        case autoRenewDisabled, autoRenewEnabled
        /// A run of paid access moving to another product, storefront or offer (-1 from the
        /// old variant, +1 to the new, at the renewal): levels by segment follow it, and the
        /// whole store's sum is 0.
        case paidShift
        /// Family-shared access revoked, at the revocation date.
        case familyRevoke
        /// A paid period of another product that replaced the previous one at once (an
        /// upgrade, or a crossgrade of the same duration), and one that followed it at a
        /// renewal (a downgrade, or a crossgrade of another duration).
        case productChangeNow, productChangeAtRenewal
        /// Entering billing trouble (grace or billing retry), entering grace, and leaving it
        /// through a renewal.
        case renewalFailure, graceEntry, billingRecovery
        /// A refund of the whole price, and one of a share (prorated), at the refund's date;
        /// `refundShare` is the refunded share in thousandths of a refund (a full refund 1000,
        /// half a price refunded 500), the refund rate's numerator.
        case refundFull, refundProrated, refundShare
        /// A save: the first period of a run bought with a retention offer (offerType 5,
        /// taken on the App Store's cancellation sheet), at its purchase; or a real-time
        /// retention request answered and taken (`RealtimeSave`), at the request.
        case saved

        /// Whether reports read it: `start` and `end` come only from shares stored by an
        /// earlier subdesk (until recomputed), so the by-segment aggregates leave them out.
        public var isReported: Bool { self != .start && self != .end }

        /// The aggregates' key: stored, so never renamed.
        public var name: String {
            switch self {
            case .start: return "p:start"
            case .trialStart: return "p:trial_start"
            case .end: return "p:end"
            case .trialEnd: return "p:trial_end"
            case .conversion: return "p:conversion"
            case .graceLevel: return "p:grace"
            case .retryLevel: return "p:retry"
            case .newPaid: return "p:new_paid"
            case .reactivation: return "p:reactivation"
            case .recovery: return "p:recovery"
            case .churn: return "p:churn"
            case .renewal: return "p:renewal"
            case .paidTransaction: return "p:paid_transaction"
            case .refund: return "p:refund"
            case .trialConvertedByStart: return "p:trial_converted_by_start"
            case .autoRenewOffLevel: return "p:auto_renew_off"
            case .expiredVoluntary: return "p:churn_voluntary"
            case .expiredBillingRetry: return "p:churn_billing"
            case .expiredPriceIncrease: return "p:churn_price_increase"
            case .expiredProductNotForSale: return "p:churn_not_for_sale"
            case .expiredOther: return "p:churn_other"
            case .autoRenewDisabled: return "p:auto_renew_disabled"
            case .autoRenewEnabled: return "p:auto_renew_enabled"
            case .paidShift: return "p:paid_shift"
            case .familyRevoke: return "p:family_revoke"
            case .productChangeNow: return "p:product_change_now"
            case .productChangeAtRenewal: return "p:product_change_at_renewal"
            case .renewalFailure: return "p:renewal_failure"
            case .graceEntry: return "p:grace_entry"
            case .billingRecovery: return "p:billing_recovery"
            case .refundFull: return "p:refund_full"
            case .refundProrated: return "p:refund_prorated"
            case .refundShare: return "p:refund_share"
            case .saved: return "p:saved"
            }
        }
    }

    public var counts: [Key: Int] = [:]

    /// Money, in milliunits of a currency: MRR as a level (a paid period's price per month
    /// from its start to its end) and revenue (a purchase's price when bought, taken back
    /// when refunded).
    public enum AmountKind: UInt8, CaseIterable, Sendable {
        case mrr = 1, revenue

        /// The aggregate key of `currency`: `a:mrr:USD`.
        public func name(_ currency: String) -> String { "a:\(self == .mrr ? "mrr" : "revenue"):\(currency)" }
    }

    public struct AmountKey: Hashable, Sendable {
        public var bucket: Millis
        public var kind: AmountKind
        /// ISO 4217, three upper-case letters.
        public var currency: String
        public var segment: CountSegment
        public var variant: UInt8 = 0
    }

    public var amounts: [AmountKey: Int64] = [:]

    /// The subscription's place in the cohort reports (`CohortShare`).
    public var cohorts = CohortShare()

    public init(counts: [Key: Int] = [:], amounts: [AmountKey: Int64] = [:], attributes: [Attributes] = [],
                cohorts: CohortShare = CohortShare()) {
        self.counts = counts
        self.amounts = amounts
        self.attributes = attributes
        self.cohorts = cohorts
    }

    /// A price per month: weekly, monthly, two-, three-, six-monthly and yearly periods as
    /// Apple sells them (so a 31-day month is a month), any other length pro rata.
    public static func monthly(price: Int64, periodMs: Millis) -> Int64 {
        let days = Double(periodMs) / 86_400_000
        let months: Double
        switch days {
        case 6.5...7.5: months = 12.0 / 52
        case 27.5...31.5: months = 1
        case 58...62.5: months = 2
        case 88...92.5: months = 3
        case 180...184.5: months = 6
        case 364...366.5: months = 12
        default: months = days / 30.4375
        }
        return months > 0 ? Int64(saturating: (Double(price) / months).rounded()) : 0
    }

    /// One hour: a year of aggregates stays small enough to read in milliseconds. Zones whose
    /// offset is not a whole number of hours (Asia/Kolkata, Asia/Kathmandu...) have their days
    /// cut at the hour before local midnight.
    public static let bucketMs: Millis = 3_600_000

    /// How late a paid period may start after the previous one ends and still continue it.
    public static let contiguity: Millis = 3_600_000

    static func bucket(_ t: Millis) -> Millis { t >= 0 ? t / bucketMs * bucketMs : ((t - bucketMs + 1) / bucketMs) * bucketMs }

    static func segment(environment: String, ownership: OwnershipType) -> CountSegment {
        if environment != "Production" { return .sandbox }
        return ownership == .familyShared ? .familyShared : .paid
    }


    /// A notification that put a subscription into billing trouble: into the billing grace
    /// period (`grace`), or billing retry without it.
    struct GapFailure {
        var signedDate: Millis
        var transactionId: String?
        var grace: Bool
    }

    /// Whether `t`, a renewal that came after a gap following the paid period `previous`
    /// (which began at `startedAt`, its kept renewal date where it was itself recovered within
    /// grace), was recovered within the billing grace period, where Apple keeps the renewal
    /// date. The evidence, in this order:
    /// 1. a grace period end Apple signed for this gap (one of `graceEnds`: the renewal info
    ///    a notification carried, the failure's or a later one, or the latest renewal info),
    ///    after the gap's kept expiry, within 60 days of it and before `t`'s expiry: within
    ///    grace when bought before it;
    /// 2. a notification that put the subscription into billing retry without grace for this
    ///    gap (`DID_FAIL_TO_RENEW` without the `GRACE_PERIOD` subtype): no grace;
    /// 3. no failure notification for the gap at all: `t` expires within an hour of where the
    ///    period after `previous` would, counted in whole calendar months from the run's
    ///    anniversary (`anchor`: 31 → 30 → 31) for a duration in months, else the previous
    ///    period's own length on from its expiry.
    /// A recovery after grace moves the renewal date, so it is neither.
    static func recoveredWithinGrace(_ t: TransactionRecord, after previous: TransactionRecord, startedAt: Millis, anchor: Millis,
                                     graceEnds: [Millis], failures: [GapFailure], rules: DerivationRules = .current) -> Bool {
        guard !rules.isTurnedBack(.graceRecovery), !t.isPurchaseByCustomer,
              let kept = previous.expiresDate, let expires = t.expiresDate, t.purchaseDate > kept else { return false }
        // A grace period of this gap ends after its kept expiry and before the recovered
        // period's end (a later gap's grace ends after it).
        if let grace = graceEnds.filter({ $0 > kept && $0 <= kept + 60 * 86_400_000 && $0 < expires }).max() {
            return t.purchaseDate < grace
        }
        let gapFailures = failures.filter {
            $0.transactionId == previous.transactionId || ($0.signedDate >= kept - 86_400_000 && $0.signedDate <= t.purchaseDate)
        }
        let length = kept - startedAt
        if rules.isTurnedBack(.retryTakenAsGrace) {
            // As an earlier subdesk judged: the previous period's own length on from its expiry.
            if abs(expires - (kept + length)) <= contiguity { return true }
        } else if gapFailures.contains(where: { !$0.grace }) {
            return false
        }
        let months: Int64
        switch CohortShare.duration(length).name {
        case "P1M": months = 1
        case "P2M": months = 2
        case "P3M": months = 3
        case "P6M": months = 6
        case "P1Y": months = 12
        default: return abs(expires - (kept + length)) <= contiguity
        }
        // The anniversary the kept expiry falls on, and the one a period later.
        if anchor != .min, anchor < kept, !rules.isTurnedBack(.monthEndAnchor) {
            let estimate = Int64((Double(kept - anchor) / 2_629_800_000).rounded())
            for k in max(1, estimate - 1)...(estimate + 1) where abs(addingMonths(k, to: anchor) - kept) <= contiguity {
                return abs(expires - addingMonths(k + months, to: anchor)) <= contiguity
            }
        }
        return abs(expires - addingMonths(months, to: kept)) <= contiguity
    }

    /// `t` moved on by `months` calendar months in UTC, the day of the month kept (the
    /// month's last day where it has fewer), the time of day kept.
    static func addingMonths(_ months: Int64, to t: Millis) -> Millis {
        let day: Millis = 86_400_000
        let days = t >= 0 ? t / day : (t - day + 1) / day
        let (y, m, d) = CohortCalendar.civil(days)
        let index = y * 12 + (m - 1) + months
        let (ny, nm) = (index >= 0 ? index / 12 : (index - 11) / 12, (index % 12 + 12) % 12 + 1)
        let monthLength = CohortCalendar.days(nm == 12 ? ny + 1 : ny, nm == 12 ? 1 : nm + 1, 1) - CohortCalendar.days(ny, nm, 1)
        return CohortCalendar.days(ny, nm, min(d, monthLength)) * day + (t - days * day)
    }

    static func isCurrency(_ code: String) -> Bool {
        code.utf8.count == 3 && code.utf8.allSatisfy { $0 >= 65 && $0 <= 90 }
    }

    /// The money to add to the aggregates to go from `old` to `self` (every variant as one).
    public func amountDifference(from old: MetricContributions) -> [AmountKey: Int64] {
        var diff: [AmountKey: Int64] = [:]
        for (k, v) in amounts { diff[AmountKey(bucket: k.bucket, kind: k.kind, currency: k.currency, segment: k.segment), default: 0] += v }
        for (k, v) in old.amounts { diff[AmountKey(bucket: k.bucket, kind: k.kind, currency: k.currency, segment: k.segment), default: 0] -= v }
        return diff.filter { $0.value != 0 }
    }

    /// What must be added to the aggregates to go from `old` to `self` (every variant as one).
    public func difference(from old: MetricContributions) -> [Key: Int] {
        var diff: [Key: Int] = [:]
        for (k, v) in counts { diff[Key(bucket: k.bucket, key: k.key, segment: k.segment), default: 0] += v }
        for (k, v) in old.counts { diff[Key(bucket: k.bucket, key: k.key, segment: k.segment), default: 0] -= v }
        return diff.filter { $0.value != 0 }
    }

    // MARK: Stored form
    //
    // Format 4 is format 3 followed by the cohort share (`CohortShare.encode`).
    // Format 3: the number of count entries, then varint-packed (bucket delta, key,
    // segment, variant, count) entries, the number of amount entries, then (bucket delta,
    // kind, currency, segment, variant, amount) ones, then the attributes: their number,
    // and for each its values, a count then length-prefixed UTF-8 strings.
    // Format 2 has no variants and no attributes; format 1 (before money) has the count
    // entries only.

    public func encoded() -> Data {
        var out: [UInt8] = [4]
        CompactBody.appendVarint(&out, UInt64(counts.count))
        var last: Millis = 0
        // Entries in one total order, so an unchanged share encodes to the same bytes (a save
        // compares them to know whether the by-segment aggregates must take the share again).
        for (k, v) in counts.sorted(by: { ($0.key.bucket, $0.key.key.rawValue, $0.key.segment.rawValue, $0.key.variant)
                                        < ($1.key.bucket, $1.key.key.rawValue, $1.key.segment.rawValue, $1.key.variant) }) {
            CompactBody.appendVarint(&out, Self.zigzag((k.bucket - last) / MetricContributions.bucketMs))
            last = k.bucket
            out.append(k.key.rawValue)
            out.append(UInt8(CountSegment.allCases.firstIndex(of: k.segment)!))
            out.append(k.variant)
            CompactBody.appendVarint(&out, Self.zigzag(Int64(v)))
        }
        CompactBody.appendVarint(&out, UInt64(amounts.count))
        last = 0
        for (k, v) in amounts.sorted(by: { ($0.key.bucket, $0.key.kind.rawValue, $0.key.currency, $0.key.segment.rawValue, $0.key.variant)
                                         < ($1.key.bucket, $1.key.kind.rawValue, $1.key.currency, $1.key.segment.rawValue, $1.key.variant) }) {
            CompactBody.appendVarint(&out, Self.zigzag((k.bucket - last) / MetricContributions.bucketMs))
            last = k.bucket
            out.append(k.kind.rawValue)
            out += Array(k.currency.utf8)
            out.append(UInt8(CountSegment.allCases.firstIndex(of: k.segment)!))
            out.append(k.variant)
            CompactBody.appendVarint(&out, Self.zigzag(v))
        }
        CompactBody.appendVarint(&out, UInt64(attributes.count))
        for a in attributes {
            CompactBody.appendVarint(&out, UInt64(a.values.count))
            for value in a.values {
                let bytes = Array(value.utf8)
                CompactBody.appendVarint(&out, UInt64(bytes.count))
                out += bytes
            }
        }
        cohorts.encode(into: &out)
        return Data(out)
    }

    public init(encoded data: Data) {
        let entries = Self.entries(encoded: data)
        counts = Dictionary(entries.counts, uniquingKeysWith: { $1 })
        amounts = Dictionary(entries.amounts, uniquingKeysWith: { $1 })
        attributes = entries.attributes
        if entries.end < data.count { cohorts = CohortShare.decode([UInt8](data), at: entries.end) }
    }

    /// The entries of a stored share as they are stored, without building dictionaries:
    /// what summing many shares needs.
    static func entries(encoded data: Data) -> (counts: [(Key, Int)], amounts: [(AmountKey, Int64)], attributes: [Attributes], end: Int) {
        var counts: [(Key, Int)] = [], amounts: [(AmountKey, Int64)] = [], attributes: [Attributes] = []
        let b = [UInt8](data)
        guard let format = b.first, (1...4).contains(format) else { return ([], [], [], b.count) }
        let variants = format >= 3
        var i = 1
        func varint() -> UInt64? { CompactBody.readVarint(b, &i) }
        var remaining = Int.max
        if format >= 2 {
            guard let n = varint() else { return (counts, amounts, attributes, b.count) }
            remaining = Int(clamping: n)
        }
        var last: Millis = 0
        while i < b.count && remaining > 0 {
            let width = variants ? 3 : 2
            guard let delta = varint(), i + width <= b.count else { return (counts, amounts, attributes, b.count) }
            let keyRaw = b[i], segmentIndex = Int(b[i + 1]), variant = variants ? b[i + 2] : 0
            i += width
            guard let count = varint(), let key = PeriodKey(rawValue: keyRaw), segmentIndex < CountSegment.allCases.count else { return (counts, amounts, attributes, b.count) }
            last += unzigzag(delta) * MetricContributions.bucketMs
            counts.append((Key(bucket: last, key: key, segment: CountSegment.allCases[segmentIndex], variant: variant), Int(unzigzag(count))))
            remaining -= 1
        }
        guard format >= 2 else { return (counts, amounts, attributes, b.count) }
        remaining = Int.max
        if variants {
            guard let n = varint() else { return (counts, amounts, attributes, b.count) }
            remaining = Int(clamping: n)
        }
        last = 0
        while i < b.count && remaining > 0 {
            let width = variants ? 6 : 5
            guard let delta = varint(), i + width <= b.count, let kind = AmountKind(rawValue: b[i]) else { return (counts, amounts, attributes, b.count) }
            let currency = String(decoding: b[(i + 1)...(i + 3)], as: UTF8.self)
            let segmentIndex = Int(b[i + 4]), variant = variants ? b[i + 5] : 0
            i += width
            guard let amount = varint(), segmentIndex < CountSegment.allCases.count else { return (counts, amounts, attributes, b.count) }
            last += unzigzag(delta) * MetricContributions.bucketMs
            amounts.append((AmountKey(bucket: last, kind: kind, currency: currency, segment: CountSegment.allCases[segmentIndex],
                                      variant: variant), unzigzag(amount)))
            remaining -= 1
        }
        guard variants, let n = varint() else { return (counts, amounts, attributes, b.count) }
        for _ in 0..<min(n, 255) {
            guard let m = varint() else { return (counts, amounts, attributes, b.count) }
            var values: [String] = []
            for _ in 0..<min(m, 16) {
                guard let length = varint(), length <= UInt64(b.count - i) else { return (counts, amounts, attributes, b.count) }
                values.append(String(decoding: b[i..<(i + Int(length))], as: UTF8.self))
                i += Int(length)
            }
            attributes.append(Attributes(values: values))
        }
        return (counts, amounts, attributes, format >= 4 ? i : b.count)
    }

    private static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
    private static func unzigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1) }
}
