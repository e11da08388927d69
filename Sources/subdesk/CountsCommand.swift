import Foundation
import SubscriptionCore

enum CountsCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "counts", abstract: "daily counts per day in a time zone (--json, --csv)",
        usage: """
        subdesk counts [--from DAY] [--to DAY] [--period day|week|month] [--tz ZONE] [--rates FILE]
                       [--segment paid|family_shared|sandbox|all] [--where DIMENSION=VALUE]
                       [--by DIMENSION [--metric METRIC]] [--json|--csv]
        subdesk counts --definitions-markdown
        """,
        discussion: """
        The counts the dashboard's :daily screen shows, per day (or week from Monday, or
        month). From each subscription's transactions, dated by purchase, expiry and refund
        dates (so a missed notification repaired by revalidation or a backfill changes
        nothing): active paid, active trials, new paid subscriptions (a converting trial
        counts, a free trial does not), renewals, reactivations, recoveries from billing
        retry, churned and the churn rate, trial starts, conversions and the conversion rate
        of the period's trial cohort, paid transactions, refunds and the refund rate, MRR and
        revenue (in the store's one currency, or added up by --rates FILE / rates_file: a
        `reporting CODE` line, then `CODE RATE` lines), churn by reason, family-sharing
        revocations, upgrades and downgrades. From each subscription's notifications and
        renewal info, each counted once: in grace and in billing retry, set to renew or to
        cancel, auto-renew off/on, renewal failures, grace entries, billing recoveries.
        Levels are at the end of each period; rates are shares (JSON, CSV) or percentages. DAY is
        YYYY-MM-DD in ZONE (default UTC); the range defaults to the last 30 days.
        Family-shared and sandbox are counted apart (--segment; default paid).

        By segment: --where product=ID (or group=ID, storefront=USA, offer=free_trial,
        environment=Sandbox, ownership=FAMILY_SHARED) counts only that part; --by DIMENSION
        shows one metric (--metric, default activePaid) for each value of the dimension,
        side by side. Offer types: \(OfferType.segmentValues.joined(separator: ", ")) (an
        unknown type N is type_N). The README gives each metric's definition;
        --definitions-markdown prints them as the README lists them.
        """,
        options: [
            .value(.from, "DAY", "the first day (default 30 days ago)"),
            .value(.to, "DAY", "the last day (default today)"),
            .value(.period, "day|week|month", "one row per day (default), week from Monday, or month"),
            .timeZone,
            .rates,
            .segment,
            .value(.where, "DIMENSION=VALUE", "count only that part (product, group, storefront, offer, plan, app, environment, "
                   + "ownership; app= takes the app's name or bundle id)",
                   choices: dimensions.map { $0 + "=" }),
            .value(.by, "DIMENSION", "one metric for each value of the dimension, side by side", choices: dimensions),
            .value(.metric, "METRIC", "the metric --by shows (default activePaid)", choices: Metric.all.map(\.key)),
            .csv,
            .flag(.definitionsMarkdown, "print each metric's definition as the README lists them"),
        ],
        run: run)

    /// What --where and --by name: the segment dimensions, and the two that pick segments.
    static let dimensions = SegmentDimension.allCases.map(\.rawValue) + ["environment", "ownership"]

    /// `--rates FILE`, else `rates_file` in the config.
    static func exchangeRates(_ context: Context) throws -> ExchangeRates? {
        guard let path = context.setting(.rates) else { return nil }
        do { return try ExchangeRates.load(path: path) } catch let e as ConfigurationError { throw UsageError(e.description) }
    }

    static func timeZone(_ context: Context) throws -> TimeZone {
        let name = context.setting(.timeZone) ?? "UTC"
        guard let zone = TimeZoneName.zone(name) else { throw UsageError(TimeZoneName.unknown(name)) }
        return zone
    }

    static func segments(_ text: String?) throws -> Set<CountSegment> {
        guard let text else { return [.paid] }
        if text == "all" { return Set(CountSegment.allCases) }
        guard let s = CountSegment(rawValue: text) else { throw UsageError("--segment must be paid, family_shared, sandbox or all") }
        return [s]
    }

    /// `--segment` narrowed by `where` (`DIMENSION=VALUE`): a filter, or fewer segments.
    static func slice(_ context: Context, where given: String?) throws -> (segments: Set<CountSegment>, filter: SegmentFilter?) {
        var segments = try segments(context.arguments.value(.segment))
        // --app NAME counts that app's part, as --where app=NAME does.
        var text = given
        if let app = context.arguments.value(.app) {
            guard given == nil || given?.lowercased().hasPrefix("app=") == true else {
                throw UsageError("--app and --where \(given ?? "") together: counts reads one part (leave --app out, or --where)")
            }
            text = text ?? "app=" + app
            _ = try context.appScope()
        }
        guard let text else { return (segments, nil) }
        var parsed: (filter: SegmentFilter?, segments: Set<CountSegment>?)
        do { parsed = try SegmentFilter.parse(text) } catch let e as ConfigurationError { throw UsageError(e.description) }
        // An app is stored as its bundle id: a configured app's name, bundle id or Apple ID gives it.
        if let filter = parsed.filter, filter.dimension == .app, let bundleId = try context.configuredApps().app(named: filter.value)?.bundleId {
            parsed.filter = SegmentFilter(dimension: .app, value: bundleId)
        }
        if let only = parsed.segments {
            segments = context.arguments.value(.segment) == nil ? only : segments.intersection(only)
            guard !segments.isEmpty else {
                throw UsageError("--segment \(context.arguments.value(.segment) ?? "") and \(text) leave nothing to count")
            }
        }
        return (segments, parsed.filter)
    }

    /// Shows on a terminal how the catch-ups a report runs first get on
    /// (`Store.bringReportsUpToDate`), and warns when the store's shares predate this
    /// version and this connection may not bring them up to date.
    static func showCatchUps(_ store: Store, command: String = "counts") throws {
        if !store.metrics.mayCatchUp, case let pending = try store.metrics.pendingShareCount(), pending > 0 {
            Output.warn("\(pending) subscriptions' counts predate this version's metrics; counts that write access would bring up to date")
        }
        guard isatty(STDERR_FILENO) == 1 else { return }
        store.reportProgress = { progress in
            let text: String
            switch progress {
            case .recomputing(let done, let total): text = "recomputing \(done)/\(total) subscriptions for this version's metrics"
            case .segments(let p) where p.total > 5_000:
                let what = p.phase == .writing ? "aggregate rows" : "subscriptions"
                text = "by segment, \(p.phase.rawValue) \(p.done)/\(p.total) \(what)"
            case .segments: return
            case .waitingForAnotherCatchUp: text = "waiting for another process's catch-up by segment"
            }
            FileHandle.standardError.write(Data("\r\u{1B}[K\(command): \(text)".utf8))
        }
    }

    /// Clears the progress line `showCatchUps` left.
    static func clearProgress(_ store: Store) {
        guard store.reportProgress != nil else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        store.reportProgress = nil
    }

    /// `--by DIMENSION`: the values to show side by side, each with what it counts.
    static func values(of text: String, store: Store, context: Context) throws -> [(name: String, where: String)] {
        switch text.lowercased() {
        case "environment": return [("Production", "environment=Production"), ("Sandbox", "environment=Sandbox")]
        case "ownership": return [("PURCHASED", "ownership=PURCHASED"), ("FAMILY_SHARED", "ownership=FAMILY_SHARED")]
        default:
            guard let dimension = SegmentDimension(rawValue: text.lowercased()) else {
                throw UsageError("--by takes one of \(dimensions.joined(separator: ", ")), not \(text)")
            }
            try store.metrics.bringReportsUpToDate(bySegment: true)
            // Apps are stored by bundle id and shown by the configured name, in the order the
            // config file declares them (the order its author chose, as doctor lists them); an
            // app no longer configured follows, by bundle id.
            let apps = dimension == .app ? try context.configuredApps() : nil
            var values = try store.metrics.segmentValues(dimension)
            if let apps {
                let place = { (value: String) in apps.apps.firstIndex { $0.bundleId == value } ?? apps.apps.count }
                values = values.enumerated().sorted { (place($0.element), $0.offset) < (place($1.element), $1.offset) }.map(\.element)
            }
            return values.map { value in
                (apps?.app(bundleId: value)?.name ?? value, "\(dimension.rawValue)=\(value)")
            }
        }
    }

    /// A metric by its name (`activePaid`) or label (`active paid`).
    static func metric(_ text: String?) throws -> Metric {
        guard let text else { return .activePaid }
        if let m = Metric.all.first(where: { $0.key == text }) ?? Metric.all.first(where: { $0.label == text || $0.key.lowercased() == text.lowercased() }) {
            return m
        }
        throw UsageError("no metric \(text): use one of \(Metric.all.map(\.key).joined(separator: ", "))")
    }

    static func run(_ context: Context) throws -> Int32 {
        if context.arguments.has(.definitionsMarkdown) {
            Output.line(Metric.readmeLists().joined(separator: "\n\n"))
            return 0
        }
        let zone = try timeZone(context)
        let zoneName = context.setting(.timeZone) ?? "UTC"
        let to = context.arguments.value(.to) ?? DailyCountsReport.today(in: zone)
        let from = context.arguments.value(.from) ?? DailyCountsReport.day(to, plus: -29, in: zone)
        let periodText = context.arguments.value(.period) ?? "day"
        guard let period = CountPeriod(rawValue: periodText) else { throw UsageError("--period is day, week or month, not \(periodText)") }
        if context.arguments.value(.metric) != nil && context.arguments.value(.by) == nil {
            throw UsageError("--metric picks the one metric --by shows for each value; without --by every metric is shown "
                             + "(add --by DIMENSION, or leave --metric out)")
        }
        let store = try context.openStore(mode: .reading)
        try showCatchUps(store)
        defer { clearProgress(store) }
        if let by = context.arguments.value(.by) {
            guard context.arguments.value(.where) == nil else { throw UsageError("--by and --where do not go together: --by shows every value") }
            guard context.arguments.value(.app) == nil || by.lowercased() == "app" else {
                throw UsageError("--by \(by) and --app do not go together: a report by segment reads one part at a time "
                                 + "(--app NAME alone, or --by app)")
            }
            return try runBy(context, by: by, store: store, from: from, to: to, zone: zone, period: period)
        }
        let rows: [DayCounts]
        // The app the rows are of (--app, or --where app=): what the notices under them are about too.
        var app: AppScope?
        do {
            let slice = try slice(context, where: context.arguments.value(.where))
            if let filter = slice.filter, filter.dimension == .app {
                app = try context.appScope() ?? AppScope(bundleId: filter.value, includesUnknown: false)
            }
            rows = try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: zone,
                                                 segments: slice.segments, period: period,
                                                 rates: try exchangeRates(context), filter: slice.filter)
        } catch let e as ConfigurationError {
            throw UsageError(e.description)
        }
        clearProgress(store)
        if context.wantsJSON {
            Output.json(rows.map { $0.jsonObject() })
        } else if context.arguments.has(.csv) {
            Output.line(DayCounts.csvHeader(period))
            for r in rows { Output.line(r.csvLine()) }
        } else {
            let currencies = Set(rows.flatMap { $0.moneyByCurrency.keys })
            let money = rows.last?.currency.map { "money in \($0)" }
                ?? (currencies.isEmpty ? "no money" : "money in \(currencies.sorted().joined(separator: ", ")): give a rates file (--rates) to add it up")
            let part = context.arguments.value(.where).map { ", only \($0)" } ?? ""
            Output.line("counts \(from)..\(to) by \(period.rawValue), time zone \(zoneName)\(part), \(money)")
            let shown = Metric.all.compactMap { m in m.column.map { ($0, m) } }
            printTable([periodHeader(period)] + shown.map(\.0), rows.map { r in [r.day] + shown.map { r.text($0.1, money: .cents) } })
            // Not a daily metric: a withdrawal may concern no stored subscription, and it is
            // work waiting for an operator now, whatever the range. On stderr: `counts | awk`
            // reads only days.
            Output.notice(consentLine(try ConsentWithdrawal.openCount(store: store, app: app)))
        }
        return 0
    }

    /// `consent  2 open withdrawals (subdesk consent)`: said on stderr after the counts table.
    static func consentLine(_ open: Int) -> String {
        "consent  \(open) open withdrawal\(open == 1 ? "" : "s") (subdesk consent)"
    }

    /// The first column's heading in a text table.
    static func periodHeader(_ period: CountPeriod) -> String {
        period == .month ? "MONTH" : period == .week ? "WEEK OF" : "DAY"
    }

    /// `--by DIMENSION`: one metric per period for each value of the dimension.
    static func runBy(_ context: Context, by: String, store: Store, from: String, to: String, zone: TimeZone,
                      period: CountPeriod) throws -> Int32 {
        let metric = try metric(context.arguments.value(.metric))
        let values = try values(of: by, store: store, context: context)
        var columns: [(name: String, rows: [DayCounts])] = []
        do {
            let rates = try exchangeRates(context)
            for value in values {
                let slice = try slice(context, where: value.where)
                columns.append((value.name, try DailyCountsReport.compute(store: store, from: from, to: to, timeZone: zone,
                                                                          segments: slice.segments, period: period, rates: rates,
                                                                          filter: slice.filter)))
            }
        } catch let e as ConfigurationError {
            throw UsageError(e.description)
        }
        clearProgress(store)
        let days = columns.first?.rows.map(\.day) ?? []
        let currency = columns.lazy.compactMap { $0.rows.last?.currency }.first
        if context.wantsJSON {
            Output.json([
                "metric": metric.key, "by": by.lowercased(), "period": period.rawValue,
                "currency": currency.map { $0 as Any } ?? NSNull(),
                "periods": days.indices.map { i -> [String: Any] in
                    var values: [String: Any] = [:]
                    for c in columns { values[c.name] = c.rows[i].jsonValue(metric) }
                    return ["day": days[i], "values": values]
                },
            ] as [String: Any])
        } else if context.arguments.has(.csv) {
            Output.line(([period.rawValue] + columns.map(\.name)).joined(separator: ","))
            for i in days.indices { Output.line(([days[i]] + columns.map { $0.rows[i].csvValue(metric) }).joined(separator: ",")) }
        } else {
            let money = metric.isMoney ? (currency.map { ", in \($0)" } ?? ", in several currencies: give a rates file (--rates)") : ""
            Output.line("\(metric.label) by \(by.lowercased()), \(from)..\(to) by \(period.rawValue)\(money): \(metric.definition)")
            guard !columns.isEmpty else {
                Output.line("no \(by.lowercased()) has counts yet")
                return 0
            }
            printTable([periodHeader(period)] + columns.map(\.name),
                       days.indices.map { i in [days[i]] + columns.map { $0.rows[i].text(metric, money: .cents) } })
        }
        return 0
    }

    /// The counts' text table: the period 10 wide, each other column as wide as its title or
    /// its widest value (at least 6), so money to the cent is never cut.
    static func printTable(_ head: [String], _ rows: [[String]]) {
        let widths = head.indices.map { c in c == 0 ? 10 : max(6, head[c].count, rows.map { $0[c].count }.max() ?? 0) }
        Output.line(ListCommands.pad(head, widths))
        for row in rows { Output.line(ListCommands.pad(row, widths)) }
    }
}
