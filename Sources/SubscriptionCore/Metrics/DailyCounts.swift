import Foundation

/// One metric of the daily counts.
public enum Metric: String, CaseIterable, Sendable {
    case newSubscriptions, resubscriptions, renewals, billingRecoveries, renewalFailures, gracePeriodEntries
    case expiredVoluntary, expiredBillingRetry, expiredPriceIncrease, expiredProductNotForSale
    case refunds, revocations, upgrades, downgrades, autoRenewOff, autoRenewOn, trialStarts, trialConversions
    case activeSubscriptions, activeTrials, inGracePeriod, inBillingRetry

    public var label: String {
        switch self {
        case .newSubscriptions: return "new subscriptions"
        case .resubscriptions: return "resubscriptions"
        case .renewals: return "renewals"
        case .billingRecoveries: return "billing recoveries"
        case .renewalFailures: return "renewal failures"
        case .gracePeriodEntries: return "grace period entries"
        case .expiredVoluntary: return "expired: voluntary"
        case .expiredBillingRetry: return "expired: billing retry"
        case .expiredPriceIncrease: return "expired: price increase"
        case .expiredProductNotForSale: return "expired: not for sale"
        case .refunds: return "refunds"
        case .revocations: return "revocations"
        case .upgrades: return "upgrades"
        case .downgrades: return "downgrades"
        case .autoRenewOff: return "auto-renew off"
        case .autoRenewOn: return "auto-renew on"
        case .trialStarts: return "trial starts"
        case .trialConversions: return "trial conversions"
        case .activeSubscriptions: return "active at end of day"
        case .activeTrials: return "active trials at end of day"
        case .inGracePeriod: return "in grace at end of day"
        case .inBillingRetry: return "in billing retry at end of day"
        }
    }

    /// Counted from notifications of these `TYPE/SUBTYPE` keys.
    var notificationKeys: [String] {
        switch self {
        case .newSubscriptions: return ["SUBSCRIBED/INITIAL_BUY", "OFFER_REDEEMED/INITIAL_BUY", "INITIAL_BUY"]
        case .resubscriptions: return ["SUBSCRIBED/RESUBSCRIBE", "OFFER_REDEEMED/RESUBSCRIBE", "INTERACTIVE_RENEWAL"]
        case .renewals: return ["DID_RENEW"]
        case .billingRecoveries: return ["DID_RENEW/BILLING_RECOVERY", "DID_RECOVER"]
        case .renewalFailures: return ["DID_FAIL_TO_RENEW", "DID_FAIL_TO_RENEW/GRACE_PERIOD"]
        case .gracePeriodEntries: return ["DID_FAIL_TO_RENEW/GRACE_PERIOD"]
        case .expiredVoluntary: return ["EXPIRED/VOLUNTARY"]
        case .expiredBillingRetry: return ["EXPIRED/BILLING_RETRY"]
        case .expiredPriceIncrease: return ["EXPIRED/PRICE_INCREASE"]
        case .expiredProductNotForSale: return ["EXPIRED/PRODUCT_NOT_FOR_SALE"]
        case .refunds: return ["REFUND", "CANCEL"]
        case .revocations: return ["REVOKE"]
        case .upgrades: return ["DID_CHANGE_RENEWAL_PREF/UPGRADE", "OFFER_REDEEMED/UPGRADE"]
        case .downgrades: return ["DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "OFFER_REDEEMED/DOWNGRADE"]
        case .autoRenewOff: return ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"]
        case .autoRenewOn: return ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED"]
        default: return []
        }
    }

    /// Whether the value is a level at the end of the day rather than a count of events.
    public var isEndOfDayLevel: Bool {
        [.activeSubscriptions, .activeTrials, .inGracePeriod, .inBillingRetry].contains(self)
    }
}

/// The counts of one day in one time zone.
public struct DayCounts: Equatable, Sendable {
    /// `yyyy-MM-dd` in the report's time zone.
    public var day: String
    public var start: Millis
    public var values: [Metric: Int]

    public subscript(_ m: Metric) -> Int { values[m] ?? 0 }

    /// `{"day": ..., "newSubscriptions": ..., ...}` as `subdesk counts --json` prints it.
    public func jsonObject() -> [String: Any] {
        var o: [String: Any] = ["day": day]
        for m in Metric.allCases { o[m.rawValue] = self[m] }
        return o
    }
}

/// Daily counts over a range of days, computed from the store.
public enum DailyCountsReport {
    /// Days `from`...`to` (inclusive, `yyyy-MM-dd`) in `timeZone`, for the given segments.
    public static func compute(store: Store, from: String, to: String, timeZone: TimeZone,
                               segments: Set<CountSegment> = [.paid]) throws -> [DayCounts] {
        let days = try dayStarts(from: from, to: to, timeZone: timeZone)
        guard let first = days.first, let end = days.last?.end else { return [] }
        var counts = days.map { DayCounts(day: $0.day, start: $0.start, values: [:]) }
        let starts = days.map(\.start)
        func dayIndex(_ t: Millis) -> Int? {
            // Binary search: the last day starting at or before t.
            var lo = 0, hi = starts.count - 1, found: Int? = nil
            while lo <= hi {
                let mid = (lo + hi) / 2
                if starts[mid] <= t { found = mid; lo = mid + 1 } else { hi = mid - 1 }
            }
            guard let f = found, t < (f + 1 < starts.count ? starts[f + 1] : end) else { return nil }
            return f
        }

        var metricsByKey: [String: [Metric]] = [:]
        for m in Metric.allCases { for k in m.notificationKeys { metricsByKey["n:" + k, default: []].append(m) } }
        typealias P = MetricContributions.PeriodKey
        let levelKeys: [P] = [.start, .trialStart, .end, .trialEnd, .graceLevel, .retryLevel]
        // Levels at the range's start: every start, end and phase change before it.
        var level: [P: Int] = [:]
        for row in try store.metricTotals(before: first.start, keys: levelKeys.map(\.name)) where segments.contains(row.segment) {
            if let key = levelKeys.first(where: { $0.name == row.key }) { level[key, default: 0] += row.total }
        }
        var deltas = Array(repeating: [P: Int](), count: days.count)
        // What each key adds to: the metrics a notification key counts, or a period key.
        let notificationKeys = Array(metricsByKey.keys).sorted()
        let keys = notificationKeys + P.allCases.map(\.name)
        let targets: [(metrics: [Metric], period: P?)] = notificationKeys.map { (metricsByKey[$0]!, nil) }
            + P.allCases.map { ([], $0) }
        try store.forEachMetricBucket(keys: keys, from: first.start, to: end, segments: segments) { k, bucket, count in
            guard let i = dayIndex(bucket) else { return }
            let target = targets[k]
            for m in target.metrics { counts[i].values[m, default: 0] += count }
            if let key = target.period {
                switch key {
                case .trialStart: counts[i].values[.trialStarts, default: 0] += count
                case .conversion: counts[i].values[.trialConversions, default: 0] += count
                default: break
                }
                deltas[i][key, default: 0] += count
            }
        }
        // A renewal starts as the period before it ends, so a renewed subscription counts once.
        for i in days.indices {
            for (k, v) in deltas[i] { level[k, default: 0] += v }
            let trials = (level[.trialStart] ?? 0) - (level[.trialEnd] ?? 0)
            counts[i].values[.activeSubscriptions] = max(0, (level[.start] ?? 0) - (level[.end] ?? 0) + trials)
            counts[i].values[.activeTrials] = max(0, trials)
            counts[i].values[.inGracePeriod] = max(0, level[.graceLevel] ?? 0)
            counts[i].values[.inBillingRetry] = max(0, level[.retryLevel] ?? 0)
        }
        return counts
    }

    /// The start of each day from `from` to `to` in `timeZone`, and the end of the last.
    static func dayStarts(from: String, to: String, timeZone: TimeZone) throws -> [(day: String, start: Millis, end: Millis)] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        func parse(_ text: String) throws -> DateComponents {
            let parts = text.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3, (1...12).contains(parts[1]), (1...31).contains(parts[2]) else {
                throw ConfigurationError("day \(text) is not YYYY-MM-DD")
            }
            return DateComponents(year: parts[0], month: parts[1], day: parts[2])
        }
        guard var date = calendar.date(from: try parse(from)), let last = calendar.date(from: try parse(to)) else {
            throw ConfigurationError("cannot read days \(from)..\(to)")
        }
        guard date <= last else { throw ConfigurationError("--from \(from) is after --to \(to)") }
        var result: [(String, Millis, Millis)] = []
        while date <= last {
            guard let next = calendar.date(byAdding: .day, value: 1, to: date) else { break }
            let c = calendar.dateComponents([.year, .month, .day], from: date)
            result.append((String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!), DateText.millis(date), DateText.millis(next)))
            date = next
            if result.count > 3660 { throw ConfigurationError("range \(from)..\(to) is longer than ten years") }
        }
        return result
    }

    /// Today's date, `yyyy-MM-dd`, in `timeZone`.
    public static func today(in timeZone: TimeZone, now: Millis = DateText.nowMillis()) -> String {
        DateText.format(now, "yyyy-MM-dd", zone: timeZone)
    }

    /// The day `offset` days from `day`.
    public static func day(_ day: String, plus offset: Int, in timeZone: TimeZone) -> String {
        guard let d = try? dayStarts(from: day, to: day, timeZone: timeZone).first else { return day }
        return DateText.format(d.start + Millis(offset) * 86_400_000 + 43_200_000, "yyyy-MM-dd", zone: timeZone)
    }
}
