import Foundation
import SubscriptionCore

enum CountsCommand {
    static let help = """
    usage: subdesk counts [--from DAY] [--to DAY] [--period day|week|month] [--tz ZONE] [--rates FILE]
                          [--segment paid|family_shared|sandbox|all] [--json|--csv]

    The counts the dashboard's :daily screen shows, per day (or week from Monday, or
    month). From each subscription's transactions, dated by purchase, expiry and refund
    dates (so a missed notification repaired by revalidation or a backfill changes
    nothing): active paid, active trials, new paid subscriptions (a converting trial
    counts, a free trial does not), renewals, reactivations, recoveries from billing
    retry, churned and the churn rate, trial starts, conversions and the conversion rate
    of the period's trial cohort, paid transactions, refunds and the refund rate, MRR and
    revenue (in the store's one currency, or added up by --rates FILE / rates_file: a
    `reporting CODE` line, then `CODE RATE` lines). From
    notifications as they arrived: in grace and in billing retry, billing recoveries,
    renewal failures, grace entries, expirations by reason, revocations, upgrades,
    downgrades, auto-renew off/on. Levels are at the end of each period; rates are
    shares (JSON, CSV) or percentages. DAY is YYYY-MM-DD in ZONE (default UTC); the range
    defaults to the last 30 days. Family-shared and sandbox are counted apart (--segment;
    default paid). The README gives each metric's definition.
    """

    /// `--rates FILE`, else `rates_file` in the config.
    static func exchangeRates(_ context: Context) throws -> ExchangeRates? {
        guard let path = context.setting("rates", "rates_file") else { return nil }
        do { return try ExchangeRates.load(path: path) } catch let e as ConfigurationError { throw UsageError(e.description) }
    }

    static func timeZone(_ context: Context) throws -> TimeZone {
        let name = context.setting("tz", "tz") ?? "UTC"
        guard let zone = TimeZone(identifier: name) else { throw UsageError("unknown time zone \(name) (use e.g. UTC or Europe/Paris)") }
        return zone
    }

    static func segments(_ text: String?) throws -> Set<CountSegment> {
        guard let text else { return [.paid] }
        if text == "all" { return Set(CountSegment.allCases) }
        guard let s = CountSegment(rawValue: text) else { throw UsageError("--segment must be paid, family_shared, sandbox or all") }
        return [s]
    }

    /// Brings every subscription's share of the counts to this version's metrics; a store
    /// this process may not write is counted as it is, with a warning.
    static func catchUp(_ store: Store) throws {
        let pending = try store.pendingMetricsCount()
        guard pending > 0 else { return }
        guard !store.isReadOnly else {
            Output.warn("\(pending) subscriptions' counts predate this version's metrics; counts that write access would bring up to date")
            return
        }
        let showProgress = isatty(STDERR_FILENO) == 1
        try store.catchUpMetrics { done, total in
            guard showProgress else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[Kcounts: recomputing \(done)/\(total) subscriptions for this version's metrics".utf8))
        }
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    static func run(_ context: Context) throws -> Int32 {
        let zone = try timeZone(context)
        let zoneName = context.setting("tz", "tz") ?? "UTC"
        let to = context.arguments.value("to") ?? DailyCountsReport.today(in: zone)
        let from = context.arguments.value("from") ?? DailyCountsReport.day(to, plus: -29, in: zone)
        let periodText = context.arguments.value("period") ?? "day"
        guard let period = CountPeriod(rawValue: periodText) else { throw UsageError("--period is day, week or month, not \(periodText)") }
        let store = try context.openStore(mode: .reading)
        try catchUp(store)
        let rows: [DayCounts]
        do {
            rows = try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: zone,
                                                 segments: try segments(context.arguments.value("segment")), period: period,
                                                 rates: try exchangeRates(context))
        } catch let e as ConfigurationError {
            throw UsageError(e.description)
        }
        if context.wantsJSON {
            Output.json(rows.map { $0.jsonObject() })
        } else if context.arguments.has("csv") {
            Output.line(([period.rawValue] + Metric.allCases.map(\.rawValue) + ["currency"]).joined(separator: ","))
            for r in rows {
                Output.line(([r.day] + Metric.allCases.map { m in
                    m.isRate ? (r.rates[m].map { String(format: "%.4f", $0) } ?? "")
                        : m.isMoney ? (r.money[m].map { String(format: "%.2f", $0) } ?? "") : String(r[m])
                } + [r.currency ?? ""]).joined(separator: ","))
            }
        } else {
            let currencies = Set(rows.flatMap { $0.moneyByCurrency.keys })
            let money = rows.last?.currency.map { "money in \($0)" }
                ?? (currencies.isEmpty ? "no money" : "money in \(currencies.sorted().joined(separator: ", ")): give a rates file (--rates) to add it up")
            Output.line("counts \(from)..\(to) by \(period.rawValue), time zone \(zoneName), \(money)")
            let shown: [(String, Metric)] = [("ACTIVE", .activePaid), ("TRIALS", .activeTrials), ("NEW", .newPaidSubscriptions),
                                             ("RENEW", .renewals), ("REACT", .reactivations), ("RECOV", .recoveries),
                                             ("CHURN", .churned), ("CHURN%", .churnRate), ("T-START", .trialStarts),
                                             ("CONV%", .trialConversionRate), ("REFUND", .refunds), ("REFUND%", .refundRate),
                                             ("MRR", .mrr), ("REVENUE", .revenue),
                                             ("GRACE", .inGracePeriod), ("RETRY", .inBillingRetry)]
            let widths = [10] + shown.map { max(6, $0.0.count) }
            Output.line(ListCommands.pad([period == .month ? "MONTH" : period == .week ? "WEEK OF" : "DAY"] + shown.map(\.0), widths))
            for r in rows { Output.line(ListCommands.pad([r.day] + shown.map { r.text($0.1) }, widths)) }
        }
        return 0
    }
}
