import Foundation
import SubscriptionCore

enum CohortsCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "cohorts", abstract: "retention, realized lifetime value and trial conversion by cohort",
        usage: """
        subdesk cohorts [--from MONTH] [--to MONTH] [--period month|week] [--metric retention|ltv|trial]
                        [--where DIMENSION=VALUE]... [--by DIMENSION] [--rates FILE]
                        [--segment paid|family_shared|sandbox|all] [--json|--csv]
        """,
        discussion: """
        How each month's (or ISO week's, --period week) new paid subscriptions hold up and what
        they are worth, cohorts down and periods since their start across, from the same
        per-subscription history as the daily counts (so backfill and revalidation repair it).
        Cohorts are by the first paid period's start in UTC.

          retention  the share still in their first run of paid access at each renewal period
                     (period 0 is 100%); those who came back after leaving are shown apart
          ltv        realized lifetime value: revenue net of refunds so far, per member and per
                     paying member, at the end of each period (--rates FILE adds currencies up)
          trial      free trials by the month or week they began, and the share converted by
                     each day since

        MONTH is YYYY-MM, 1970 to 9999 (a week: YYYY-Www or a day in it); the range defaults
        to the last 12.
        --where product=ID (group=, storefront=, offer=, start=free_trial|introductory|none,
        duration=P1M, app=, saved=retention|realtime|none, environment=, ownership=) keeps only
        that part; repeat it to narrow further. saved= is how a subscription was first saved
        from cancelling: retention once it took a retention offer (offerType 5), realtime once
        a real-time Retention Messaging answer of serve's saved it (the daily counts' saved),
        whichever came first, else none. --by DIMENSION
        splits each cohort by the dimension's values. Subscriptions of several durations are
        read in months since their start; --by duration shows each duration in its own renewal
        periods. --json and --csv give every number unrounded.
        The README gives each number's definition.
        """,
        options: [
            .value(.from, "MONTH", "the first cohort (default 11 months before --to)"),
            .value(.to, "MONTH", "the last cohort (default this month)"),
            .value(.period, "month|week", "cohorts by month (default) or ISO week"),
            .value(.metric, "retention|ltv|trial", "what the cells hold (default retention)"),
            .repeatable(.where, "DIMENSION=VALUE", "keep only that part (product, group, storefront, offer, start, duration, app, "
                        + "saved, environment, ownership; app= takes the app's name or bundle id)",
                        choices: (CohortDimension.allCases.map(\.rawValue) + ["environment", "ownership"]).map { $0 + "=" }),
            .value(.by, "DIMENSION", "split each cohort by the dimension's values", choices: CohortDimension.allCases.map(\.rawValue)),
            .rates,
            .segment,
            .csv,
        ],
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        let args = context.arguments
        let periodText = args.value(.period) ?? "month"
        guard let period = CohortPeriod(rawValue: periodText) else { throw UsageError("--period is month or week, not \(periodText)") }
        let metricText = args.value(.metric) ?? "retention"
        guard let metric = CohortMetric(rawValue: metricText.lowercased()) else {
            throw UsageError("--metric is retention, ltv or trial, not \(metricText)")
        }
        func bound(_ name: OptionName) throws -> Millis? {
            guard let text = args.value(name) else { return nil }
            guard let t = period.parse(text) else {
                throw UsageError("--\(name) \(text) is not a \(period == .month ? "month (YYYY-MM)" : "week (YYYY-Www, or a day YYYY-MM-DD)") "
                                 + "from \(CohortPeriod.years.lowerBound) to \(CohortPeriod.years.upperBound)")
            }
            return t
        }
        let from = try bound(.from), to = try bound(.to)
        if let from, let to, from > to { throw UsageError("--from \(args.value(.from)!) is after --to \(args.value(.to)!)") }
        var segments = try CountsCommand.segments(args.value(.segment))
        // The default segment gives way to the first --where naming segments; a chosen one
        // (by --segment, or by an earlier --where) keeps what both name.
        var chosen = args.value(.segment) != nil
        var filters: [CohortFilter] = []
        let apps = try context.configuredApps()
        // --app NAME reports that app's cohorts, as --where app=NAME does.
        if args.value(.app) != nil { _ = try context.appScope() }
        for text in args.values(.where) + (args.value(.app).map { ["app=" + $0] } ?? []) {
            let parsed: (filter: CohortFilter?, segments: Set<CountSegment>?)
            do { parsed = try CohortFilter.parse(text) } catch let e as ConfigurationError { throw UsageError(e.description) }
            // An app is stored as its bundle id: a configured app's name, bundle id or Apple ID gives it.
            if var f = parsed.filter {
                if f.dimension == .app, let bundleId = apps.app(named: f.value)?.bundleId { f.value = bundleId }
                filters.append(f)
            }
            if let only = parsed.segments {
                segments = chosen ? segments.intersection(only) : only
                chosen = true
                guard !segments.isEmpty else { throw UsageError("--segment and --where \(text) leave nothing to report") }
            }
        }
        var by: CohortDimension?
        if let text = args.value(.by) {
            guard let d = CohortDimension(rawValue: text.lowercased()) else {
                throw UsageError("--by takes one of \(CohortDimension.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)")
            }
            by = d
        }
        let store = try context.openStore(mode: .reading)
        try CountsCommand.showCatchUps(store, command: "cohorts")
        var report: CohortReport
        do {
            report = try CohortReport.compute(store: store, metric: metric, period: period, from: from, to: to, filters: filters,
                                              segments: segments, by: by, rates: try CountsCommand.exchangeRates(context))
        } catch let e as ConfigurationError {
            CountsCommand.clearProgress(store)
            throw UsageError(e.description)
        }
        CountsCommand.clearProgress(store)
        // Apps are stored by bundle id and shown by the configured name.
        if by == .app {
            for i in report.rows.indices { report.rows[i].value = report.rows[i].value.map { apps.app(bundleId: $0)?.name ?? $0 } }
        }
        if context.wantsJSON {
            Output.json(report.jsonObject())
        } else if args.has(.csv) {
            csv(report).forEach(Output.line)
        } else {
            text(report).forEach(Output.line)
        }
        return 0
    }

    /// One line per cohort and column, every number unrounded.
    static func csv(_ r: CohortReport) -> [String] {
        var lines = ["cohort,value,size,column,unit,count,share,reactivated,revenue,per_member,per_payer,refunds,currency,complete"]
        func number(_ v: Double?) -> String { v.map { String($0) } ?? "" }
        func quoted(_ s: String) -> String { s.contains(where: { $0 == "," || $0 == "\"" }) ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s }
        for row in r.rows {
            for (k, cell) in row.cells.enumerated() {
                guard let c = cell else { continue }
                lines.append([row.label, quoted(row.value ?? ""), String(row.size), r.columns[k], r.unit.rawValue, String(c.count),
                              number(c.share), r.metric == .retention ? String(c.reactivated) : "",
                              number(c.total), number(c.perMember), number(c.perPayer),
                              r.metric == .ltv ? String(c.refunds) : "", r.currency ?? "", c.complete ? "1" : "0"].joined(separator: ","))
            }
        }
        return lines
    }

    /// The triangle as a person reads it: shares as percentages (retention, trial) or LTV
    /// per member, with the cohort's size, then what the numbers mean.
    static func text(_ r: CohortReport) -> [String] {
        var lines: [String] = []
        let part = r.filters.isEmpty ? "" : ", only " + r.filters.map(\.description).joined(separator: ", ")
        let money = r.metric == .ltv ? (r.currency.map { ", per member in \($0)" } ?? ", money in several currencies: give a rates file (--rates)") : ""
        lines.append("\(r.metric.label) by \(r.period.rawValue) cohort (UTC), \(r.period.label(r.from))..\(r.period.label(r.to)), "
                     + "columns are \(r.unitDescription)\(part)\(money)")
        guard !r.rows.isEmpty else {
            lines.append("no cohort in this range")
            return lines
        }
        let cameBack = "  came back"
        let labelWidth = max(cameBack.count, r.rows.map { $0.label.count + ($0.value.map { $0.count + 1 } ?? 0) }.max() ?? 0)
        let widths = [labelWidth, 6] + r.columns.map { _ in 7 }
        lines.append(ListCommands.pad([r.period == .month ? "COHORT" : "WEEK", "SIZE"] + r.columns, widths))
        for row in r.rows {
            let label = row.label + (row.value.map { " " + $0 } ?? "")
            let cells = row.cells.map { cell in cell.map(r.text) ?? "" }
            lines.append(ListCommands.pad([label, String(row.size)] + cells, widths).replacingOccurrences(of: "  +$", with: "", options: .regularExpression))
            if r.metric == .retention, row.cells.contains(where: { ($0?.reactivated ?? 0) > 0 }) {
                lines.append(ListCommands.pad([cameBack, ""] + row.cells.map { $0.map { $0.reactivated > 0 ? "+\($0.reactivated)" : "" } ?? "" }, widths))
            }
        }
        lines.append("~ the cohort's newest members have not reached this column yet")
        for d in r.definitions { lines.append("- " + d) }
        return lines
    }
}
