import Foundation

/// One metric of the counts, each summed from the subscriptions' shares. The first group
/// is derived from each subscription's transactions and renewal info (so a notification
/// that never arrived, once revalidation or a backfill has brought its transaction, changes
/// nothing), dated in Apple's terms: purchase, expiry and revocation dates. The second
/// follows the subscription's notifications, each counted once, and its renewal info.
public enum Metric: String, CaseIterable, Sendable {
    // From the transactions (and renewal info)
    case activePaid, activeTrials, activeSubscriptions
    case newPaidSubscriptions, renewals, reactivations, recoveries, churned, churnRate
    case expiredVoluntary, expiredBillingRetry, expiredPriceIncrease, expiredProductNotForSale, expiredOther
    case trialStarts, trialConversions, trialConversionRate
    case paidTransactions, refunds, refundsFull, refundsProrated, refundRate
    case mrr, revenue
    case revocations, upgrades, downgrades
    // From the subscription's notifications (and renewal info)
    case inGracePeriod, inBillingRetry, setToRenew, setToCancel, autoRenewOff, autoRenewOn
    case renewalFailures, gracePeriodEntries, billingRecoveries

    public var label: String {
        switch self {
        case .activePaid: return "active paid"
        case .activeTrials: return "active trials"
        case .activeSubscriptions: return "active in all"
        case .newPaidSubscriptions: return "new paid subscriptions"
        case .renewals: return "renewals"
        case .reactivations: return "reactivations"
        case .recoveries: return "back from billing retry"
        case .churned: return "churned"
        case .churnRate: return "churn rate"
        case .trialStarts: return "trial starts"
        case .trialConversions: return "trial conversions"
        case .trialConversionRate: return "trial conversion (cohort)"
        case .paidTransactions: return "paid transactions"
        case .refunds: return "refunds"
        case .refundsFull: return "refunds: full"
        case .refundsProrated: return "refunds: prorated"
        case .refundRate: return "refund rate"
        case .mrr: return "MRR"
        case .revenue: return "revenue"
        case .inGracePeriod: return "in grace"
        case .inBillingRetry: return "in billing retry"
        case .setToRenew: return "set to renew"
        case .setToCancel: return "set to cancel"
        case .billingRecoveries: return "billing recoveries"
        case .renewalFailures: return "renewal failures"
        case .gracePeriodEntries: return "grace period entries"
        case .expiredVoluntary: return "churned: voluntary"
        case .expiredBillingRetry: return "churned: billing"
        case .expiredPriceIncrease: return "churned: price rise"
        case .expiredProductNotForSale: return "churned: not for sale"
        case .expiredOther: return "churned: other"
        case .revocations: return "revocations"
        case .upgrades: return "upgrades"
        case .downgrades: return "downgrades"
        case .autoRenewOff: return "auto-renew off"
        case .autoRenewOn: return "auto-renew on"
        }
    }

    /// What the metric counts, as the README and the dashboard's `?` say it.
    public var definition: String {
        switch self {
        case .activePaid:
            return "subscriptions in a paid period at the end of the period: runs of paid periods that follow one another within the hour count once"
        case .activeTrials: return "subscriptions in a free trial at the end of the period"
        case .activeSubscriptions: return "active paid plus active trials at the end of the period"
        case .newPaidSubscriptions:
            return "subscriptions whose first paid period began (a trial that converts counts, on its conversion; a free trial does not)"
        case .renewals: return "paid periods that continue the one before within the hour"
        case .reactivations: return "paid access bought again after a gap (a resubscription, a win-back)"
        case .recoveries: return "paid access Apple renewed after a gap, once billing succeeded in the billing retry period"
        case .churned: return "runs of paid access that ended (at the expiry, or the start of an upgrade's replacement) with nothing following within the hour; a renewal arriving later takes it back"
        case .churnRate: return "churned in the period divided by active paid at its start"
        case .trialStarts: return "free trials that began"
        case .trialConversions: return "paid periods that began at most a day after a free trial ended, on the day they began"
        case .trialConversionRate: return "of the trials that began in the period, the share that converted (so far)"
        case .paidTransactions: return "purchases and renewals of paid periods, refunded ones included"
        case .refunds:
            return "purchased transactions refunded, in full or in part, on the refund's date (each Advanced Commerce item refund counts; family-sharing revocations apart)"
        case .refundsFull: return "refunds of the whole price (REFUND_FULL, or a revocation that names no type; an Advanced Commerce item refund of type FULL)"
        case .refundsProrated:
            return "refunds of a share of the price (REFUND_PRORATED with its revocationPercentage; an Advanced Commerce item refund of another type); the customer paid for the period until the refund"
        case .refundRate:
            return "refunds in the period, each weighed by the share refunded (a full refund 1, half the price 0.5), divided by paid transactions in it"
        case .mrr:
            return "monthly recurring revenue at the end of the period: each active paid period's price per month (weekly x 52/12, yearly / 12, other lengths pro rata; a commitment billed monthly at its monthly price, one billed up front as its period's price), in the reporting currency"
        case .revenue:
            return "prices of paid transactions when bought, less what was refunded when refunded (the whole price, a prorated refund's share, an Advanced Commerce item's refundAmount), in the reporting currency (Apple's prices, before its commission and taxes)"
        case .inGracePeriod: return "subscriptions in the billing grace period at the end of the period (from DID_FAIL_TO_RENEW/GRACE_PERIOD until the next change)"
        case .inBillingRetry: return "subscriptions in billing retry at the end of the period (from DID_FAIL_TO_RENEW until the next change)"
        case .setToCancel:
            return "active paid with auto-renew turned off at the end of the period (from DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED, or renewal info saying auto-renew is off, until it is turned on, bought again, or the access ends)"
        case .setToRenew:
            return "active paid not set to cancel at the end of the period (a subscription in the grace period or billing retry is not active paid: its paid period has ended; see in grace, in billing retry)"
        case .expiredVoluntary:
            return "churned because the customer turned auto-renew off (EXPIRED/VOLUNTARY, expiration intent 1, a commitment set not to renew, or auto-renew off at the end)"
        case .expiredBillingRetry:
            return "churned because billing failed (EXPIRED/BILLING_RETRY, expiration intent 2, or a failed renewal at the end)"
        case .expiredPriceIncrease:
            return "churned because the customer did not consent to a price increase (EXPIRED/PRICE_INCREASE, expiration intent 3)"
        case .expiredProductNotForSale:
            return "churned because the product was not for sale at renewal (EXPIRED/PRODUCT_NOT_FOR_SALE, expiration intent 4)"
        case .expiredOther:
            return "churned for any other reason or none known (a refund of the last period, an upgrade never renewed, intent 5)"
        case .autoRenewOff:
            return "customers turning auto-renew off during paid access (DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED, or renewal info saying so when it came without one)"
        case .autoRenewOn:
            return "customers turning auto-renew on again before their paid access ended (DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED)"
        case .revocations: return "family-shared access revoked (the purchaser stopped sharing, or was refunded), on the revocation date"
        case .upgrades:
            return "paid periods of another product that replaced the previous one at once (an upgrade, or a crossgrade of the same duration)"
        case .downgrades:
            return "paid periods of another product that followed the previous one at a renewal (a downgrade, or a crossgrade of another duration)"
        case .renewalFailures:
            return "subscriptions entering billing trouble, the grace period or billing retry (DID_FAIL_TO_RENEW, or renewal info saying so when it came without one)"
        case .gracePeriodEntries: return "subscriptions entering the billing grace period (DID_FAIL_TO_RENEW/GRACE_PERIOD, or renewal info within a grace period)"
        case .billingRecoveries:
            return "subscriptions leaving the grace period or billing retry through a renewal (DID_RENEW, DID_RECOVER, or renewal info after a paid period began)"
        }
    }


    /// The transaction-derived key each event metric sums.
    var periodKey: MetricContributions.PeriodKey? {
        switch self {
        case .newPaidSubscriptions: return .newPaid
        case .renewals: return .renewal
        case .reactivations: return .reactivation
        case .recoveries: return .recovery
        case .churned: return .churn
        case .trialStarts: return .trialStart
        case .trialConversions: return .conversion
        case .paidTransactions: return .paidTransaction
        case .refunds: return .refund
        case .refundsFull: return .refundFull
        case .refundsProrated: return .refundProrated
        case .expiredVoluntary: return .churnVoluntary
        case .expiredBillingRetry: return .churnBilling
        case .expiredPriceIncrease: return .churnPriceIncrease
        case .expiredProductNotForSale: return .churnNotForSale
        case .expiredOther: return .churnOther
        case .autoRenewOff: return .autoRenewDisabled
        case .autoRenewOn: return .autoRenewEnabled
        case .revocations: return .familyRevoke
        case .upgrades: return .productChangeNow
        case .downgrades: return .productChangeAtRenewal
        case .renewalFailures: return .renewalFailure
        case .gracePeriodEntries: return .graceEntry
        case .billingRecoveries: return .billingRecovery
        default: return nil
        }
    }

    /// Whether the value is a level at the end of the day rather than a count of events.
    public var isEndOfDayLevel: Bool {
        [.activePaid, .activeTrials, .activeSubscriptions, .mrr, .inGracePeriod, .inBillingRetry, .setToRenew, .setToCancel].contains(self)
    }

    /// Whether the value is money (`money`), in the report's currency.
    public var isMoney: Bool { self == .mrr || self == .revenue }

    /// Whether the value is a share of two counts (`rates`), not a count.
    public var isRate: Bool { [.churnRate, .trialConversionRate, .refundRate].contains(self) }

    /// Whether it is derived from the transactions (the rest count notifications).
    public var isFromTransactions: Bool { self < .inGracePeriod }

    static func < (a: Metric, b: Metric) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// How long the periods of a report are.
public enum CountPeriod: String, CaseIterable, Sendable {
    case day, week, month
}

/// The counts of one period (a day, an ISO week from Monday, a month) in one time zone.
public struct DayCounts: Equatable, Sendable {
    /// `yyyy-MM-dd` in the report's time zone: the day, or the first day of the week or
    /// month (`yyyy-MM` for a month).
    public var day: String
    public var start: Millis
    public var values: [Metric: Int]
    /// The rate metrics, as fractions; absent when the count they divide by is 0.
    public var rates: [Metric: Double] = [:]
    /// Active paid at the start of the period: the churn rate's base.
    public var activePaidAtStart = 0
    /// Trials that began in the period and converted: the cohort rate's numerator.
    public var trialsConvertedByStart = 0
    /// Refunds weighed by the share refunded, in thousandths: the refund rate's numerator.
    public var refundShareMilli = 0
    /// MRR (at the end) and revenue in milliunits, by currency.
    public var moneyByCurrency: [String: [Metric: Int64]] = [:]
    /// The same in units of `currency`, when the money is in one currency or a rates file
    /// converts it; absent otherwise.
    public var money: [Metric: Double] = [:]
    /// The reporting currency.
    public var currency: String?

    public init(day: String, start: Millis, values: [Metric: Int]) {
        self.day = day
        self.start = start
        self.values = values
    }

    public subscript(_ m: Metric) -> Int { values[m] ?? 0 }

    /// A number for charts: a count, a rate, or an amount of money.
    public func value(_ m: Metric) -> Double {
        if m.isRate { return rates[m] ?? 0 }
        if m.isMoney { return money[m] ?? 0 }
        return Double(self[m])
    }

    /// The value as a table shows it: a count, a rate as a percentage, money in a few
    /// characters (`9.99`, `150`, `1.2k`, `35k`, `1.4M`); `-` when undefined.
    public func text(_ m: Metric) -> String {
        if m.isMoney {
            // In cents first, as JSON gives it, so the screen and `counts --json` round alike.
            guard let exact = money[m] else { return "-" }
            let v = (exact * 100).rounded() / 100
            let a = abs(v)
            if a < 0.005 { return "0" }
            switch a {
            case ..<10: return String(format: "%.2f", v)
            case ..<1_000: return String(format: "%.0f", v)
            case ..<10_000: return String(format: "%.1fk", v / 1_000)
            case ..<1_000_000: return String(format: "%.0fk", v / 1_000)
            default: return String(format: "%.1fM", v / 1_000_000)
            }
        }
        guard m.isRate else { return String(self[m]) }
        guard let rate = rates[m] else { return "-" }
        let percent = rate * 100
        return percent >= 10 || percent == 0 ? String(format: "%.0f%%", percent) : String(format: "%.1f%%", percent)
    }

    /// Converts `moneyByCurrency` into `money`: with `rates`, into its reporting currency;
    /// without, only when the report's money is all in one currency (`currencies`: those
    /// of the whole report, so every period is converted alike).
    mutating func convertMoney(_ rates: ExchangeRates?, currencies: [String]) throws {
        money = [:]
        if let rates {
            currency = rates.reporting
            for m in [Metric.mrr, .revenue] {
                money[m] = try currencies.reduce(0.0) { sum, code in
                    guard let rate = rates.rates[code] else {
                        throw ConfigurationError("the rates file gives no rate for \(code), which the store holds money in")
                    }
                    return sum + Double(moneyByCurrency[code]?[m] ?? 0) / 1000 * rate
                }
            }
        } else if currencies.count <= 1 {
            currency = currencies.first
            for m in [Metric.mrr, .revenue] {
                money[m] = Double(currencies.first.flatMap { moneyByCurrency[$0]?[m] } ?? 0) / 1000
            }
        } else {
            currency = nil
        }
    }

    /// Takes a later day into this period: counts and revenue add up, levels (MRR among
    /// them) are the later day's, and rates are to be computed again from the sums.
    mutating func absorb(_ day: DayCounts) {
        for m in Metric.allCases where !m.isRate { values[m] = m.isEndOfDayLevel ? day[m] : self[m] + day[m] }
        trialsConvertedByStart += day.trialsConvertedByStart
        refundShareMilli += day.refundShareMilli
        for code in Set(moneyByCurrency.keys).union(day.moneyByCurrency.keys) {
            let values = day.moneyByCurrency[code] ?? [:]
            moneyByCurrency[code, default: [:]][.revenue, default: 0] += values[.revenue] ?? 0
            moneyByCurrency[code, default: [:]][.mrr] = values[.mrr] ?? 0
        }
        // Every day of a report is converted alike, so converted amounts add up too.
        money[.mrr] = day.money[.mrr]
        money[.revenue] = day.money[.revenue].flatMap { later in money[.revenue].map { $0 + later } }
        currency = day.currency
    }

    mutating func computeRates() {
        rates = [:]
        if activePaidAtStart > 0 { rates[.churnRate] = Double(self[.churned]) / Double(activePaidAtStart) }
        if self[.trialStarts] > 0 { rates[.trialConversionRate] = Double(trialsConvertedByStart) / Double(self[.trialStarts]) }
        // Refunds a share counted by an earlier subdesk split into neither kind: whole ones.
        let unsplit = max(0, self[.refunds] - self[.refundsFull] - self[.refundsProrated])
        if self[.paidTransactions] > 0 {
            rates[.refundRate] = (Double(refundShareMilli) / 1000 + Double(unsplit)) / Double(self[.paidTransactions])
        }
    }

    /// `{"day": ..., "newPaidSubscriptions": ..., "churnRate": 0.0123 or null, ...}` as
    /// `subdesk counts --json` prints it.
    public func jsonObject() -> [String: Any] {
        var o: [String: Any] = ["day": day, "currency": currency.map { $0 as Any } ?? NSNull()]
        for m in Metric.allCases {
            o[m.rawValue] = jsonValue(m)
            if m.isMoney { o[m.rawValue + "ByCurrency"] = moneyByCurrency.mapValues { Double($0[m] ?? 0) / 1000 } }
        }
        return o
    }

    /// One metric's value as JSON gives it: a count, a rate rounded to 4 places, money to
    /// cents, or `null` when undefined.
    public func jsonValue(_ m: Metric) -> Any {
        if m.isMoney { return money[m].map { (($0 * 100).rounded() / 100) as Any } ?? NSNull() }
        if m.isRate { return rates[m].map { (($0 * 10_000).rounded() / 10_000) as Any } ?? NSNull() }
        return self[m]
    }
}

/// Daily counts over a range of days, computed from the store.
public enum DailyCountsReport {
    /// Refuses a segment value no subscription has (`product=app.montly`, a typo that would
    /// read as zeros), naming the values there are (a reader counts those still pending too).
    public static func requireKnown(_ filter: SegmentFilter, store: Store) throws {
        let known = try store.segmentValues(filter.dimension)
        guard !known.contains(filter.value) else { return }
        throw ConfigurationError("no subscription has \(filter.dimension.rawValue) \(filter.value): "
                                 + (known.isEmpty ? "the store has none" : "the \(filter.dimension.rawValue) values there are \(known.joined(separator: ", "))"))
    }

    /// Days `from`...`to` (inclusive, `yyyy-MM-dd`) in `timeZone`, for the given segments
    /// (and only `filter`'s product, group, storefront or offer, when given), by day or
    /// gathered into weeks (from Monday) or months. A report by segment first brings the
    /// by-segment aggregates up to date when it may write.
    public static func compute(store: Store, from: String, to: String, timeZone: TimeZone,
                               segments: Set<CountSegment> = [.paid], period: CountPeriod = .day,
                               rates: ExchangeRates? = nil, filter: SegmentFilter? = nil) throws -> [DayCounts] {
        let days = try dayStarts(from: from, to: to, timeZone: timeZone)
        guard let first = days.first, let end = days.last?.end else { return [] }
        if let filter {
            if !store.isReadOnly { try store.catchUpSegments() }
            try requireKnown(filter, store: store)
        }
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

        typealias P = MetricContributions.PeriodKey
        let levelKeys: [P] = [.trialStart, .trialEnd, .graceLevel, .retryLevel, .newPaid, .reactivation, .recovery, .churn, .autoRenewOffLevel,
                              .paidShift]
        // Levels at the range's start: every change before it.
        var level: [P: Int] = [:]
        for row in try store.metricTotals(before: first.start, keys: levelKeys.map(\.name), filter: filter) where segments.contains(row.segment) {
            if let key = levelKeys.first(where: { $0.name == row.key }) { level[key, default: 0] += row.total }
        }
        var deltas = Array(repeating: [P: Int](), count: days.count)
        var metricsByPeriodKey: [P: [Metric]] = [:]
        for m in Metric.allCases { if let k = m.periodKey { metricsByPeriodKey[k, default: []].append(m) } }
        // What each key adds to: the metrics that sum it, and the levels it moves.
        let reported = P.allCases.filter(\.isReported)
        let keys = reported.map(\.name)
        let targets: [(metrics: [Metric], period: P?)] = reported.map { (metricsByPeriodKey[$0] ?? [], $0) }
        try store.forEachMetricBucket(keys: keys, from: first.start, to: end, segments: segments, filter: filter) { k, bucket, count in
            guard let i = dayIndex(bucket) else { return }
            let target = targets[k]
            for m in target.metrics { counts[i].values[m, default: 0] += count }
            if let key = target.period {
                if key == .trialConvertedByStart { counts[i].trialsConvertedByStart += count }
                if key == .refundShare { counts[i].refundShareMilli += count }
                deltas[i][key, default: 0] += count
            }
        }
        // Money: MRR as a level from every change before the range, revenue per day.
        let currencies = try store.metricCurrencies()
        let mrrKeys = currencies.map { MetricContributions.AmountKind.mrr.name($0) }
        let revenueKeys = currencies.map { MetricContributions.AmountKind.revenue.name($0) }
        var mrrLevel: [String: Int64] = [:]
        for row in try store.metricTotals(before: first.start, keys: mrrKeys, filter: filter) where segments.contains(row.segment) {
            if let code = row.key.split(separator: ":").last { mrrLevel[String(code), default: 0] += Int64(row.total) }
        }
        var mrrDeltas = Array(repeating: [String: Int64](), count: days.count)
        // The currencies this report holds money in (these segments, this range).
        var reportCurrencies = Set(mrrLevel.filter { $0.value != 0 }.keys)
        try store.forEachMetricBucket(keys: mrrKeys + revenueKeys, from: first.start, to: end, segments: segments, filter: filter) { k, bucket, amount in
            guard let i = dayIndex(bucket) else { return }
            let code = currencies[k % max(1, currencies.count)]
            if amount != 0 { reportCurrencies.insert(code) }
            if k < mrrKeys.count {
                mrrDeltas[i][code, default: 0] += Int64(amount)
            } else {
                counts[i].moneyByCurrency[code, default: [:]][.revenue, default: 0] += Int64(amount)
            }
        }
        let reportCodes = reportCurrencies.sorted()
        func activePaid() -> Int {
            (level[.newPaid] ?? 0) + (level[.reactivation] ?? 0) + (level[.recovery] ?? 0) - (level[.churn] ?? 0) + (level[.paidShift] ?? 0)
        }
        for i in days.indices {
            counts[i].activePaidAtStart = max(0, activePaid())
            for (k, v) in deltas[i] { level[k, default: 0] += v }
            let paid = max(0, activePaid())
            let trials = max(0, (level[.trialStart] ?? 0) - (level[.trialEnd] ?? 0))
            counts[i].values[.activePaid] = paid
            counts[i].values[.activeTrials] = trials
            counts[i].values[.activeSubscriptions] = paid + trials
            counts[i].values[.inGracePeriod] = max(0, level[.graceLevel] ?? 0)
            counts[i].values[.inBillingRetry] = max(0, level[.retryLevel] ?? 0)
            let cancelling = min(paid, max(0, level[.autoRenewOffLevel] ?? 0))
            counts[i].values[.setToCancel] = cancelling
            counts[i].values[.setToRenew] = paid - cancelling
            for (code, delta) in mrrDeltas[i] { mrrLevel[code, default: 0] += delta }
            for (code, amount) in mrrLevel where amount != 0 || counts[i].moneyByCurrency[code] != nil {
                counts[i].moneyByCurrency[code, default: [:]][.mrr] = amount
            }
            try counts[i].convertMoney(rates, currencies: reportCodes)
            counts[i].computeRates()
        }
        return period == .day ? counts : gather(counts, by: period, timeZone: timeZone)
    }

    /// The whole range as one period: counts added up, levels as at its end, rates from the sums.
    public static func total(_ days: [DayCounts]) -> DayCounts? {
        guard let first = days.first else { return nil }
        var sum = first
        for day in days.dropFirst() { sum.absorb(day) }
        sum.computeRates()
        return sum
    }

    /// Days gathered into weeks (from Monday) or months: counts add up, levels are the
    /// last day's, rates are taken again from the sums.
    static func gather(_ days: [DayCounts], by period: CountPeriod, timeZone: TimeZone) -> [DayCounts] {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        var result: [DayCounts] = []
        var currentKey: String?
        for day in days {
            let date = Date(timeIntervalSince1970: Double(day.start) / 1000 + 43_200)
            let key: String
            switch period {
            case .day: key = day.day
            case .week:
                let monday = calendar.date(from: calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date)) ?? date
                key = DateText.format(DateText.millis(monday), "yyyy-MM-dd", zone: timeZone)
            case .month: key = String(day.day.prefix(7))
            }
            if key != currentKey {
                currentKey = key
                var opened = day
                opened.day = key
                result.append(opened)
            } else {
                result[result.count - 1].absorb(day)
            }
            result[result.count - 1].computeRates()
        }
        return result
    }

    /// The start of each day from `from` to `to` in `timeZone`, and the end of the last.
    static func dayStarts(from: String, to: String, timeZone: TimeZone) throws -> [(day: String, start: Millis, end: Millis)] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        func parse(_ text: String) throws -> DateComponents {
            let fields = text.split(separator: "-", omittingEmptySubsequences: false)
            let parts = fields.compactMap { Int($0) }
            guard fields.count == 3, parts.count == 3, fields[0].count == 4, fields[1].count == 2, fields[2].count == 2 else {
                throw ConfigurationError("day \(text) is not YYYY-MM-DD")
            }
            let components = DateComponents(year: parts[0], month: parts[1], day: parts[2])
            // The calendar rolls 2026-02-30 over to March: a day must come back as written.
            guard (1...12).contains(parts[1]), let date = calendar.date(from: components),
                  calendar.dateComponents([.year, .month, .day], from: date) == DateComponents(year: parts[0], month: parts[1], day: parts[2]) else {
                throw ConfigurationError("day \(text) is not a date: " + ((1...12).contains(parts[1])
                    ? "month \(parts[1]) of \(parts[0]) has no day \(parts[2])" : "there is no month \(parts[1])"))
            }
            return components
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

    /// Days since the Monday of `day`'s week (0 on a Monday).
    public static func weekday(_ day: String, in timeZone: TimeZone) -> Int {
        guard let d = try? dayStarts(from: day, to: day, timeZone: timeZone).first else { return 0 }
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        let weekday = calendar.component(.weekday, from: Date(timeIntervalSince1970: Double(d.start) / 1000 + 43_200))
        return (weekday + 5) % 7
    }

    /// The first day of the month `monthsBack` months before `day`'s.
    public static func monthStart(_ day: String, monthsBack: Int) -> String {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return day }
        let index = parts[0] * 12 + (parts[1] - 1) - monthsBack
        return String(format: "%04d-%02d-01", index / 12, index % 12 + 1)
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
