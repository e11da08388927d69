import Foundation

/// What a cohort report can be restricted or split by: the first paid transaction's (or
/// the trial's) product, subscription group, storefront and offer type, how the
/// subscription started (`free_trial`, `introductory`, `none`), its duration (`P1M`...),
/// its app (the bundle id that transaction was signed for) and how it was first saved from
/// cancelling (`SaveKind`). New dimensions go last: a stored key lists the values in this order.
public enum CohortDimension: String, CaseIterable, Sendable {
    case product, group, storefront, offer, start, duration, app, saved

    var index: Int { Self.allCases.firstIndex(of: self)! }

    /// Every value of a dimension whose values subdesk declares; nil where they are the
    /// store's (products, storefronts...). A declared value is a known one, though no
    /// cohort may have it yet.
    public var declaredValues: [String]? {
        self == .saved ? SaveKind.allCases.map(\.rawValue) : nil
    }
}

/// One value of one cohort dimension.
public typealias CohortFilter = DimensionFilter<CohortDimension>

extension DimensionFilter where Dimension == CohortDimension {
    /// Reads `DIMENSION=VALUE`; `environment=` and `ownership=` give the segments they are,
    /// as for the daily counts. A dimension with declared values (`saved=`) takes only those.
    public static func parse(_ text: String) throws -> (filter: CohortFilter?, segments: Set<CountSegment>?) {
        let parts = text.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: .whitespaces) }
        if parts.count == 2, !parts[1].isEmpty, let d = CohortDimension(rawValue: parts[0].lowercased()), d == .start || d == .duration || d == .saved {
            if let declared = d.declaredValues {
                guard declared.contains(parts[1].lowercased()) else {
                    throw ConfigurationError("\(d.rawValue) is \(PermissionDenial.either(declared)), not \(parts[1])")
                }
                return (CohortFilter(dimension: d, value: parts[1].lowercased()), nil)
            }
            return (CohortFilter(dimension: d, value: d == .duration ? parts[1].uppercased() : parts[1]), nil)
        }
        do {
            let parsed = try SegmentFilter.parse(text)
            guard let f = parsed.filter else { return (nil, parsed.segments) }
            guard let d = CohortDimension(rawValue: f.dimension.rawValue) else {
                throw ConfigurationError("cohorts are not split by \(f.dimension.rawValue): use one of \(names)")
            }
            return (CohortFilter(dimension: d, value: f.value), nil)
        } catch let e as ConfigurationError where e.description.hasPrefix("no segment dimension") {
            throw ConfigurationError("no cohort dimension \(parts[0]): use one of \(names)")
        }
    }

    static var names: String { (CohortDimension.allCases.map(\.rawValue) + ["environment", "ownership"]).joined(separator: ", ") }
}

/// Which cohort report: retention, realized lifetime value, or trial conversion.
public enum CohortMetric: String, CaseIterable, Sendable {
    case retention, ltv, trial

    public var label: String {
        switch self {
        case .retention: return "subscription retention"
        case .ltv: return "realized lifetime value"
        case .trial: return "trial conversion"
        }
    }

    /// What each number of the report means, shown under the table and on the screen.
    public var definitions: [String] {
        switch self {
        case .retention:
            return [
                "cohort: subscriptions whose first paid period began in the month or week (UTC); a converted trial joins on its conversion, a trial that never converted joins no paid cohort",
                "size: the cohort's subscriptions, as many as new paid subscriptions counts over the same days and segment",
                "period N: still in the first run of paid access at its Nth renewal (period 0 is every member); renewals are the product's own, paid periods that follow one another within the hour, an upgrade continuing the period it replaced",
                "not retained: a period refunded in full or revoked, or access that ended; the grace period counts as the daily counts count it (a renewal recovered within grace continues the run)",
                "came back: paying again in period N after the first run ended (a reactivation or a recovery from billing retry), shown apart and never counted as retained",
                "mixed durations: months since the cohort's start, each subscription read at the renewal period covering the month (--by duration shows each duration in its own periods)",
            ]
        case .ltv:
            return [
                "cohort: as for retention (the first paid period's month or week, UTC)",
                "LTV at period N: revenue net of refunds from the cohort's subscriptions up to the end of period N since their start (Apple's prices, before its commission and taxes; no price is assumed where Apple sent none)",
                "per member: divided by the cohort's size; per payer: divided by the members whose revenue net of refunds up to then is above zero",
                "refunds take money out in the period they happened, so LTV falls only through refunds",
                "money in the store's one currency, or in the reporting currency of a rates file (--rates)",
            ]
        case .trial:
            return [
                "cohort: free trials that began in the month or week (UTC), each subscription's first trial",
                "day N: the share of those trials converted to a paid period by N days after the trial began (a paid period beginning at most a day after the trial ended, as the daily counts' trial conversions)",
            ]
        }
    }
}

/// A cohort report: cohorts down (by month or week of their start), periods since the
/// start across, with each cohort's size and the definitions of what the cells count.
/// Computed from the cohort aggregates (`Store.cohortCells`), which every subscription's
/// share keeps up like the daily counts, so backfill and revalidation repair it too.
public struct CohortReport: Equatable, Sendable {
    /// What the columns count: renewal periods of one duration, months since the start
    /// (durations mixed), or days since a trial began.
    public enum Unit: String, Sendable { case periods, months, days }

    public struct Cell: Equatable, Sendable {
        /// Retention: retained; LTV: paying members (net revenue above zero); trial: converted, so far.
        public var count: Int
        /// `count` over the cohort's size; nil for an empty cohort.
        public var share: Double?
        /// Retention: paying again after the first run ended.
        public var reactivated: Int = 0
        /// LTV: revenue net of refunds so far by currency, in milliunits.
        public var revenue: [String: Int64] = [:]
        /// LTV: refunded so far by currency, in milliunits, and how many refunds.
        public var refunded: [String: Int64] = [:]
        public var refunds: Int = 0
        /// LTV: `revenue` in the report's currency, in units; nil when currencies are mixed
        /// and no rates were given.
        public var total: Double?
        public var perMember: Double?
        public var perPayer: Double?
        /// Whether every member could have reached this column (the whole cohort's start
        /// plus the column's length lies in the past); an incomplete cell counts so far.
        public var complete: Bool
    }

    public struct Row: Equatable, Sendable {
        /// The cohort's month or week start (UTC), and its label (`2026-03`, `2026-W11`).
        public var start: Millis
        public var label: String
        /// The value of the `by` dimension this row is of, when split.
        public var value: String?
        public var size: Int
        /// One per column; nil where the column lies in the cohort's future.
        public var cells: [Cell?]
    }

    public var metric: CohortMetric
    public var period: CohortPeriod
    public var unit: Unit
    /// The duration the columns are periods of (unit `periods`, one duration).
    public var duration: String?
    public var from: Millis
    /// The start of the last cohort in the report.
    public var to: Millis
    public var filters: [CohortFilter]
    public var segments: Set<CountSegment>
    public var by: CohortDimension?
    /// The currency of money (the store's one, or the rates' reporting one); nil when none
    /// or several without rates.
    public var currency: String?
    /// Column headings: `0`, `1`... (periods, months or days since the start).
    public var columns: [String]
    public var rows: [Row]
    public var asOf: Millis

    public var definitions: [String] { metric.definitions }

    /// What a cell shows: the share for retention and trial conversion, LTV per member.
    public func shown(_ cell: Cell) -> Double? {
        metric == .ltv ? cell.perMember : cell.share
    }

    /// A cell as `subdesk cohorts` and `:cohorts` write it: `54.5%`, or money to the cent;
    /// `-` when undefined; `~` first where the cohort's newest members have not reached it.
    public func text(_ cell: Cell) -> String {
        let value = shown(cell).map { metric == .ltv ? String(format: "%.2f", $0) : String(format: "%.1f%%", $0 * 100) } ?? "-"
        return (cell.complete ? "" : "~") + value
    }

    /// Reads the aggregates and builds the report: cohorts starting in the months or weeks
    /// `from`...`to` (any instant within them; default the last 12), as of `now`, first
    /// bringing the shares up to date when the store may be written. A filter value no
    /// cohort has is refused, naming the values there are.
    public static func compute(store: Store, metric: CohortMetric, period: CohortPeriod = .month,
                               from: Millis? = nil, to: Millis? = nil, filters: [CohortFilter] = [],
                               segments: Set<CountSegment> = [.paid], by: CohortDimension? = nil,
                               rates: ExchangeRates? = nil, now: Millis = DateText.nowMillis()) throws -> CohortReport {
        try store.metrics.bringReportsUpToDate(bySegment: false)
        let cells = try store.metrics.cohortCells(kind: metric == .trial ? .trial : .paid, period: period, segments: segments)
        return try build(cells: cells, metric: metric, period: period, from: from, to: to, filters: filters,
                         segments: segments, by: by, rates: rates, now: now)
    }

    /// The report from aggregate cells (pure).
    public static func build(cells: [CohortShare.Cell], metric: CohortMetric, period: CohortPeriod,
                             from: Millis?, to: Millis?, filters: [CohortFilter], segments: Set<CountSegment>,
                             by: CohortDimension?, rates: ExchangeRates?, now: Millis) throws -> CohortReport {
        for f in filters where f.dimension.declaredValues?.contains(f.value) != true
            && !cells.contains(where: { $0.values[f.dimension.index] == f.value }) {
            let known = Set(cells.map { $0.values[f.dimension.index] }).sorted()
            throw ConfigurationError("no cohort has \(f.dimension.rawValue) \(f.value): "
                                     + (known.isEmpty ? "the store has none" : "the \(f.dimension.rawValue) values there are \(known.joined(separator: ", "))"))
        }
        let last = period.start(of: to ?? now)
        var first = period.start(of: from ?? last)
        if from == nil { for _ in 0..<11 { first = period.start(of: first - 1) } }
        let end = period.next(last)

        // Sums by row (start, by value), duration, measure, period and currency.
        struct RowKey: Hashable { var start: Millis; var value: String? }
        typealias Sums = [String: [CohortMeasure: [Int: [String: Int64]]]]
        var sums: [RowKey: Sums] = [:]
        var durations = Set<String>()
        for c in cells where c.start >= first && c.start < end && filters.allSatisfy({ c.values[$0.dimension.index] == $0.value }) {
            let duration = c.values[CohortDimension.duration.index]
            durations.insert(duration)
            sums[RowKey(start: c.start, value: by.map { c.values[$0.index] }), default: [:]][duration, default: [:]][c.measure, default: [:]][c.period, default: [:]][c.currency, default: 0] += c.delta
        }
        let unit: Unit = metric == .trial ? .days : (by == .duration || durations.count <= 1) ? .periods : .months
        let single = unit == .periods && durations.count == 1 ? durations.first : nil
        /// A column's length in milliseconds, for a duration.
        func length(_ duration: String?) -> Millis {
            switch unit {
            case .days: return 86_400_000
            case .months: return 2_629_800_000
            case .periods: return Millis(CohortShare.months(inDuration: duration ?? "P1M") * 2_629_800_000)
            }
        }
        let currencies = Set(sums.values.flatMap { $0.values.flatMap { ($0[.revenue] ?? [:]).values.flatMap(\.keys) } })
        let currency = rates?.reporting ?? (currencies.count == 1 ? currencies.first : nil)
        func inReportCurrency(_ money: [String: Int64]) -> Double? {
            var total = 0.0
            for (code, amount) in money where amount != 0 {
                if let rates {
                    guard let rate = rates.rates[code] else { return nil }
                    total += Double(amount) / 1000 * rate
                } else {
                    guard code == currency else { return nil }
                    total += Double(amount) / 1000
                }
            }
            return total
        }

        var rows: [Row] = []
        var columnCount = 1
        for key in sums.keys.sorted(by: { ($0.start, $0.value ?? "") < ($1.start, $1.value ?? "") }) {
            let byDuration = sums[key]!
            let rowDuration = unit == .periods ? (single ?? byDuration.keys.sorted().first) : nil
            let size = byDuration.values.reduce(0) { $0 + Int($1[.members]?[0]?.values.reduce(0, +) ?? 0) }
            let step = length(rowDuration)
            let rowEnd = period.next(key.start)
            var elapsed = Int(max(0, (now - key.start) / step))
            if metric == .trial {
                let latest = byDuration.values.flatMap { ($0[.conversions] ?? [:]).keys }.max() ?? 0
                elapsed = min(elapsed, max(latest, 14))
            }
            elapsed = min(elapsed, 400)
            var cells: [Cell?] = []
            for k in 0...elapsed {
                var cell = Cell(count: 0, share: nil, complete: rowEnd + Millis(k) * step <= now)
                var payers = 0
                for (duration, measures) in byDuration {
                    // The duration's own period covering column k.
                    let p: Int
                    switch unit {
                    case .periods, .days: p = k
                    case .months: p = Int((Double(k) + 1e-9) / CohortShare.months(inDuration: duration))
                    }
                    func at(_ m: CohortMeasure, _ period: Int) -> Int { Int(measures[m]?[period]?.values.reduce(0, +) ?? 0) }
                    func through(_ m: CohortMeasure) -> [Int: [String: Int64]] { (measures[m] ?? [:]).filter { $0.key <= p } }
                    switch metric {
                    case .retention:
                        cell.count += p == 0 ? at(.members, 0) : at(.retained, p)
                        cell.reactivated += at(.reactivated, p)
                    case .trial:
                        cell.count += Int(through(.conversions).values.reduce(0) { $0 + $1.values.reduce(0, +) })
                    case .ltv:
                        for (_, byCurrency) in through(.revenue) { for (c, v) in byCurrency { cell.revenue[c, default: 0] += v } }
                        for (_, byCurrency) in through(.refunded) { for (c, v) in byCurrency { cell.refunded[c, default: 0] += v } }
                        cell.refunds += Int(through(.refunds).values.reduce(0) { $0 + $1.values.reduce(0, +) })
                        payers += Int(through(.payers).values.reduce(0) { $0 + $1.values.reduce(0, +) })
                    }
                }
                cell.revenue = cell.revenue.filter { $0.value != 0 }
                cell.refunded = cell.refunded.filter { $0.value != 0 }
                if metric == .ltv {
                    cell.count = payers
                    cell.total = inReportCurrency(cell.revenue)
                    if let total = cell.total {
                        cell.perMember = size > 0 ? total / Double(size) : nil
                        cell.perPayer = payers > 0 ? total / Double(payers) : nil
                    }
                }
                cell.share = size > 0 ? Double(cell.count) / Double(size) : nil
                cells.append(cell)
            }
            columnCount = max(columnCount, cells.count)
            rows.append(Row(start: key.start, label: period.label(key.start), value: key.value, size: size, cells: cells))
        }
        for i in rows.indices { rows[i].cells += Array(repeating: nil, count: columnCount - rows[i].cells.count) }
        return CohortReport(metric: metric, period: period, unit: unit, duration: single, from: first, to: last, filters: filters,
                            segments: segments, by: by, currency: currency, columns: (0..<columnCount).map(String.init),
                            rows: rows, asOf: now)
    }

    /// What the columns are, in words: `renewal periods of P1M`, `months since the start`.
    public var unitDescription: String {
        switch unit {
        case .periods: return duration.map { "renewal periods of \($0)" } ?? "renewal periods of each row's duration"
        case .months: return "months since the start (durations mixed)"
        case .days: return "days since the trial began"
        }
    }

    /// The whole report as `subdesk cohorts --json` prints it: every number unrounded
    /// (money in units of its currency, shares as fractions, `null` where undefined).
    public func jsonObject() -> [String: Any] {
        func optional(_ v: Any?) -> Any { v ?? NSNull() }
        func units(_ money: [String: Int64]) -> [String: Any] { money.mapValues { Double($0) / 1000 } }
        return [
            "metric": metric.rawValue, "period": period.rawValue, "unit": unit.rawValue, "duration": optional(duration),
            "from": period.label(from), "to": period.label(to), "asOf": DateText.iso(asOf),
            "where": filters.map(\.description), "segments": CountSegment.allCases.filter(segments.contains).map(\.rawValue),
            "by": optional(by?.rawValue), "currency": optional(currency), "columns": columns, "definitions": definitions,
            "cohorts": rows.map { row -> [String: Any] in
                [
                    "cohort": row.label, "start": DateText.iso(row.start), "value": optional(row.value), "size": row.size,
                    "cells": row.cells.map { cell -> Any in
                        guard let c = cell else { return NSNull() }
                        var o: [String: Any] = ["count": c.count, "share": optional(c.share), "complete": c.complete]
                        switch metric {
                        case .retention: o["reactivated"] = c.reactivated
                        case .ltv:
                            o["revenueByCurrency"] = units(c.revenue)
                            o["refundedByCurrency"] = units(c.refunded)
                            o["refunds"] = c.refunds
                            o["revenue"] = optional(c.total)
                            o["perMember"] = optional(c.perMember)
                            o["perPayer"] = optional(c.perPayer)
                        case .trial: break
                        }
                        return o
                    },
                ]
            },
        ]
    }
}
