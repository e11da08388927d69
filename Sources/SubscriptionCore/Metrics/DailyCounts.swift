import Foundation

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
    /// The metrics counted, in order: `Metric.all` unless the report was given others.
    public var metrics: [Metric]
    public var values: [Metric: Int]
    /// The rate metrics, as fractions; absent when the count they divide by is 0.
    public var rates: [Metric: Double] = [:]
    /// Levels as at the start of the period, for rates over them (the churn rate's base).
    public var atStart: [Metric: Int] = [:]
    /// The period's sums of the keys rates read directly (the trials of the period's cohort
    /// that converted; refunds weighed by the share refunded, in thousandths).
    public var keySums: [MetricContributions.PeriodKey: Int] = [:]
    /// Money metrics (MRR at the end, revenue) in milliunits, by currency.
    public var moneyByCurrency: [String: [Metric: Int64]] = [:]
    /// The same in units of `currency`, when the money is in one currency or a rates file
    /// converts it; absent otherwise.
    public var money: [Metric: Double] = [:]
    /// The reporting currency.
    public var currency: String?

    public init(day: String, start: Millis, values: [Metric: Int], metrics: [Metric] = Metric.all) {
        self.day = day
        self.start = start
        self.values = values
        self.metrics = metrics
    }

    public subscript(_ m: Metric) -> Int { values[m] ?? 0 }

    /// A number for charts: a count, a rate, or an amount of money.
    public func value(_ m: Metric) -> Double {
        if m.isRate { return rates[m] ?? 0 }
        if m.isMoney { return money[m] ?? 0 }
        return Double(self[m])
    }

    /// How a table writes money: in a few characters where columns are narrow (the
    /// dashboard's days), or to the cent with thousands grouped (`counts`' text table).
    public enum MoneyText: Sendable {
        /// `9.99`, `150`, `1.2k`, `35k`, `1.4M`.
        case compact
        /// `844.87`, `1,499.04`.
        case cents
    }

    /// The value as a table shows it: a count, a rate as a percentage, money as `money`
    /// says; `-` when undefined.
    public func text(_ m: Metric, money style: MoneyText = .compact) -> String {
        if m.isMoney {
            // In cents first, as JSON gives it, so the screen and `counts --json` round alike.
            guard let exact = money[m] else { return "-" }
            if style == .cents { return Money.cents(exact) }
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
            for m in metrics where m.isMoney {
                money[m] = try currencies.reduce(0.0) { sum, code in
                    guard let rate = rates.rates[code] else {
                        throw ConfigurationError("the rates file gives no rate for \(code), which the store holds money in")
                    }
                    return sum + Double(moneyByCurrency[code]?[m] ?? 0) / 1000 * rate
                }
            }
        } else if currencies.count <= 1 {
            currency = currencies.first
            for m in metrics where m.isMoney {
                money[m] = Double(currencies.first.flatMap { moneyByCurrency[$0]?[m] } ?? 0) / 1000
            }
        } else {
            currency = nil
        }
    }

    /// Takes a later day into this period: counts and revenue add up, levels (MRR among
    /// them) are the later day's, and rates are to be computed again from the sums.
    mutating func absorb(_ day: DayCounts) {
        for m in metrics where !m.isRate { values[m] = m.isEndOfDayLevel ? day[m] : self[m] + day[m] }
        for (key, sum) in day.keySums { keySums[key, default: 0] += sum }
        let moneyMetrics = metrics.filter(\.isMoney)
        for code in Set(moneyByCurrency.keys).union(day.moneyByCurrency.keys) {
            let values = day.moneyByCurrency[code] ?? [:]
            for m in moneyMetrics {
                if m.isEndOfDayLevel {
                    moneyByCurrency[code, default: [:]][m] = values[m] ?? 0
                } else {
                    moneyByCurrency[code, default: [:]][m, default: 0] += values[m] ?? 0
                }
            }
        }
        // Every day of a report is converted alike, so converted amounts add up too.
        for m in moneyMetrics {
            money[m] = m.isEndOfDayLevel ? day.money[m] : day.money[m].flatMap { later in money[m].map { $0 + later } }
        }
        currency = day.currency
    }

    mutating func computeRates() {
        rates = [:]
        for m in metrics {
            guard case .ratio(let numerator, let denominator) = m.source else { continue }
            let base = term(denominator)
            if base > 0 { rates[m] = term(numerator) / base }
        }
    }

    /// A rate's numerator or denominator in this period.
    func term(_ term: Metric.RateTerm) -> Double {
        switch term {
        case .metric(let metric): return metrics.contains(metric) ? Double(self[metric]) : 0
        case .atStart(let metric): return metrics.contains(metric) ? Double(atStart[metric] ?? 0) : 0
        case .key(let key): return Double(keySums[key] ?? 0)
        case .weighedRefunds:
            // Refunds a share counted by an earlier subdesk split into neither kind: whole ones.
            let unsplit = max(0, (keySums[.refund] ?? 0) - (keySums[.refundFull] ?? 0) - (keySums[.refundProrated] ?? 0))
            return Double(keySums[.refundShare] ?? 0) / 1000 + Double(unsplit)
        }
    }

    /// `{"day": ..., "newPaidSubscriptions": ..., "churnRate": 0.0123 or null, ...}` as
    /// `subdesk counts --json` prints it.
    public func jsonObject() -> [String: Any] {
        var o: [String: Any] = ["day": day, "currency": currency.map { $0 as Any } ?? NSNull()]
        for m in metrics {
            o[m.key] = jsonValue(m)
            if m.isMoney { o[m.key + "ByCurrency"] = moneyByCurrency.mapValues { Double($0[m] ?? 0) / 1000 } }
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

    /// One metric's value as CSV gives it: a count, a rate as a fraction, money in units;
    /// empty when undefined.
    public func csvValue(_ m: Metric) -> String {
        m.isRate ? (rates[m].map { String(format: "%.4f", $0) } ?? "")
            : m.isMoney ? (money[m].map { String(format: "%.2f", $0) } ?? "") : String(self[m])
    }

    /// The CSV header for a report of `metrics` by `period`, as `subdesk counts --csv` prints it.
    public static func csvHeader(_ period: CountPeriod, metrics: [Metric] = Metric.all) -> String {
        ([period.rawValue] + metrics.map(\.key) + ["currency"]).joined(separator: ",")
    }

    /// This period's CSV line under `csvHeader`.
    public func csvLine() -> String {
        ([day] + metrics.map(csvValue) + [currency ?? ""]).joined(separator: ",")
    }
}

/// Daily counts over a range of days, computed from the store.
public enum DailyCountsReport {
    /// Refuses a segment value no subscription has (`product=app.montly`, a typo that would
    /// read as zeros), naming the values there are (a reader counts those still pending too).
    public static func requireKnown(_ filter: SegmentFilter, store: Store) throws {
        guard try !store.metrics.segmentHasValue(filter.dimension, filter.value) else { return }
        let known = try store.metrics.segmentValues(filter.dimension)
        throw ConfigurationError("no subscription has \(filter.dimension.rawValue) \(filter.value): "
                                 + (known.isEmpty ? "the store has none" : "the \(filter.dimension.rawValue) values there are \(known.joined(separator: ", "))"))
    }

    /// Days `from`...`to` (inclusive, `yyyy-MM-dd`) in `timeZone`, for the given segments
    /// (and only `filter`'s product, group, storefront or offer, when given), by day or
    /// gathered into weeks (from Monday) or months, of `metrics` (the table, `Metric.all`).
    /// Brings what it reads up to date first when it may write (`Store.bringReportsUpToDate`).
    public static func compute(store: Store, from: String, to: String, timeZone: TimeZone,
                               segments: Set<CountSegment> = [.paid], period: CountPeriod = .day,
                               rates: ExchangeRates? = nil, filter: SegmentFilter? = nil,
                               metrics: [Metric] = Metric.all) throws -> [DayCounts] {
        let days = try dayStarts(from: from, to: to, timeZone: timeZone)
        guard !days.isEmpty else { return [] }
        try store.metrics.bringReportsUpToDate(bySegment: filter != nil)
        func tally() throws -> [DayCounts] {
            try DailyCountsReport.tally(store: store, days: days, segments: segments, period: period, rates: rates,
                                        filter: filter, metrics: metrics, timeZone: timeZone)
        }
        guard let filter else { return try tally() }
        // One part's report reads in one snapshot: one read transaction, where each of its
        // reads would open its own (a round trip to begin and one to end on PostgreSQL).
        return try store.inOneSnapshot {
            try requireKnown(filter, store: store)
            return try tally()
        }
    }

    /// `compute`'s reading and sums, once what it reads is up to date.
    static func tally(store: Store, days: [(day: String, start: Millis, end: Millis)], segments: Set<CountSegment>,
                      period: CountPeriod, rates: ExchangeRates?, filter: SegmentFilter?, metrics: [Metric],
                      timeZone: TimeZone) throws -> [DayCounts] {
        guard let first = days.first, let end = days.last?.end else { return [] }
        var counts = days.map { DayCounts(day: $0.day, start: $0.start, values: [:], metrics: metrics) }
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
        let plan = MetricPlan(metrics)
        // Levels at the range's start: every change before it.
        var level: [P: Int] = [:]
        let levelKeys = P.allCases.filter(plan.levelKeys.contains)
        for row in try store.metrics.totals(before: first.start, keys: levelKeys.map(\.name), filter: filter) where segments.contains(row.segment) {
            if let key = levelKeys.first(where: { $0.name == row.key }) { level[key, default: 0] += row.total }
        }
        // Each period's sum of every key read: the flows, and what moves the levels.
        let read = P.allCases.filter { $0.isReported && (plan.levelKeys.contains($0) || plan.flowKeys.contains($0)) }
        var deltas = Array(repeating: [P: Int](), count: days.count)
        try store.metrics.forEachBucket(keys: read.map(\.name), from: first.start, to: end, segments: segments, filter: filter) { k, bucket, count in
            guard let i = dayIndex(bucket) else { return }
            deltas[i][read[k], default: 0] += count
        }
        // Money: levels (MRR) from every change before the range, flows (revenue) per day.
        let currencies = try store.metrics.currencies()
        let money = metrics.filter(\.isMoney)
        let moneyKeys = money.flatMap { m in currencies.map { m.amountKind!.name($0) } }
        var moneyLevel = Array(repeating: [String: Int64](), count: money.count)
        let levelMoneyKeys = money.enumerated().filter { $0.element.isEndOfDayLevel }.flatMap { index, m in
            currencies.map { (name: m.amountKind!.name($0), metric: index, code: $0) }
        }
        for row in try store.metrics.totals(before: first.start, keys: levelMoneyKeys.map(\.name), filter: filter) where segments.contains(row.segment) {
            if let key = levelMoneyKeys.first(where: { $0.name == row.key }) { moneyLevel[key.metric][key.code, default: 0] += Int64(row.total) }
        }
        var moneyDeltas = Array(repeating: Array(repeating: [String: Int64](), count: money.count), count: days.count)
        // The currencies this report holds money in (these segments, this range).
        var reportCurrencies = Set(moneyLevel.flatMap { $0.filter { $0.value != 0 }.keys })
        try store.metrics.forEachBucket(keys: moneyKeys, from: first.start, to: end, segments: segments, filter: filter) { k, bucket, amount in
            guard let i = dayIndex(bucket) else { return }
            let index = k / max(1, currencies.count), code = currencies[k % max(1, currencies.count)]
            if amount != 0 { reportCurrencies.insert(code) }
            if money[index].isEndOfDayLevel {
                moneyDeltas[i][index][code, default: 0] += Int64(amount)
            } else {
                counts[i].moneyByCurrency[code, default: [:]][money[index], default: 0] += Int64(amount)
            }
        }
        let reportCodes = reportCurrencies.sorted()
        for i in days.indices {
            counts[i].atStart = plan.levelsAtStart(level)
            for (k, v) in deltas[i] { level[k, default: 0] += v }
            counts[i].values = plan.values(levels: level, flows: deltas[i])
            for key in plan.rateKeys { counts[i].keySums[key] = deltas[i][key] ?? 0 }
            for (index, m) in money.enumerated() where m.isEndOfDayLevel {
                for (code, delta) in moneyDeltas[i][index] { moneyLevel[index][code, default: 0] += delta }
                for (code, amount) in moneyLevel[index] where amount != 0 || counts[i].moneyByCurrency[code] != nil {
                    counts[i].moneyByCurrency[code, default: [:]][m] = amount
                }
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

/// How a report computes a table's metrics from the shares' keys: which keys are running
/// levels, which are summed per period, and each metric's value from them.
struct MetricPlan {
    typealias P = MetricContributions.PeriodKey
    let metrics: [Metric]
    /// Each metric's place in `metrics`, by name: evaluation memoises by place, not by
    /// hashing metrics.
    let index: [String: Int]
    /// Keys summed from the beginning (levels), and per period (flows and rates' terms).
    private(set) var levelKeys = Set<P>(), flowKeys = Set<P>()
    /// Keys rates read directly, kept per period so longer periods can add them up.
    private(set) var rateKeys: [P] = []
    /// Level metrics rates read as at the period's start.
    private(set) var startLevels: [Metric] = []

    init(_ metrics: [Metric]) {
        self.metrics = metrics
        index = Dictionary(metrics.indices.map { (metrics[$0].key, $0) }, uniquingKeysWith: { first, _ in first })
        var rateKeys = Set<P>()
        for m in metrics {
            note(m.source, level: m.isEndOfDayLevel)
            guard case .ratio(let numerator, let denominator) = m.source else { continue }
            for term in [numerator, denominator] {
                switch term {
                case .key(let key): rateKeys.insert(key)
                case .weighedRefunds: rateKeys.formUnion([.refund, .refundFull, .refundProrated, .refundShare])
                case .atStart(let level): if let i = index[level.key], !startLevels.contains(metrics[i]) { startLevels.append(metrics[i]) }
                case .metric: break
                }
            }
        }
        flowKeys.formUnion(rateKeys)
        self.rateKeys = P.allCases.filter(rateKeys.contains)
    }

    private mutating func note(_ source: Metric.Source, level: Bool) {
        switch source {
        case .keys(let plus, let minus):
            if level { levelKeys.formUnion(plus + minus) } else { flowKeys.formUnion(plus + minus) }
        case .within(let inner, _): note(inner, level: level)
        case .sum, .remainder, .ratio, .money: break
        }
    }

    /// The count metrics' values: levels from `levels` (every change up to the period's
    /// end), flows from `flows` (the period's).
    func values(levels: [P: Int], flows: [P: Int]) -> [Metric: Int] {
        var memo = [Int?](repeating: nil, count: metrics.count)
        var result: [Metric: Int] = [:]
        result.reserveCapacity(metrics.count)
        for (i, m) in metrics.enumerated() where !m.isRate && !m.isMoney {
            result[m] = value(i, levels: levels, flows: flows, memo: &memo)
        }
        return result
    }

    /// The levels rates read as at the period's start.
    func levelsAtStart(_ levels: [P: Int]) -> [Metric: Int] {
        var memo = [Int?](repeating: nil, count: metrics.count)
        return Dictionary(uniqueKeysWithValues: startLevels.map { ($0, value(index[$0.key]!, levels: levels, flows: [:], memo: &memo)) })
    }

    private func value(_ i: Int, levels: [P: Int], flows: [P: Int], memo: inout [Int?]) -> Int {
        if let known = memo[i] { return known }
        let m = metrics[i]
        func named(_ metric: Metric) -> Int { index[metric.key].map { value($0, levels: levels, flows: flows, memo: &memo) } ?? 0 }
        func evaluate(_ source: Metric.Source) -> Int {
            switch source {
            case .keys(let plus, let minus):
                let sums = m.isEndOfDayLevel ? levels : flows
                let total = plus.reduce(0) { $0 + (sums[$1] ?? 0) } - minus.reduce(0) { $0 + (sums[$1] ?? 0) }
                return m.isEndOfDayLevel ? max(0, total) : total
            case .sum(let terms): return terms.reduce(0) { $0 + named($1) }
            case .within(let inner, let cap): return min(named(cap), evaluate(inner))
            case .remainder(let whole, let less): return named(whole) - named(less)
            case .ratio, .money: return 0
            }
        }
        let result = evaluate(m.source)
        memo[i] = result
        return result
    }
}
