import SubscriptionCore
import TerminalUI

/// What the reducer and the views both work out from the state: the range the daily screen
/// asks for and the days it shows, the cohort table's lines, the quarantined body's and the
/// timeline's lines, the status filters and the override's question. Kept here so neither calls into the other.
enum Selectors {
    // MARK: - Retention messaging

    /// The rows `:retention` reads: the desk's app (its name, or its configured Apple ID), every day.
    static func retentionQuery(_ state: DashboardState) -> RetentionReportQuery {
        guard let scope = state.scope else { return RetentionReportQuery() }
        let id = state.apps.app(named: scope.name)?.appAppleId
        return RetentionReportQuery(app: scope.name, appAppleIds: id.map { [String($0)] } ?? [])
    }

    // MARK: - Daily counts

    /// The range, zone, segment and period the daily screen shows, as the request that loads it.
    static func dailyRequest(_ state: DashboardState) -> DailyRequest {
        let zone = state.time.zone
        let today = DailyCountsReport.today(in: zone, now: state.now)
        let to = DailyCountsReport.day(today, plus: -state.daily.endOffset, in: zone)
        let from: String
        switch state.daily.period {
        case .day: from = DailyCountsReport.day(to, plus: -(state.daily.rangeDays - 1), in: zone)
        // Twelve weeks, the first from its Monday; twelve months, the first from its first day.
        case .week: from = DailyCountsReport.day(to, plus: -(11 * 7 + DailyCountsReport.weekday(to, in: zone)), in: zone)
        case .month: from = DailyCountsReport.monthStart(to, monthsBack: 11)
        }
        return DailyRequest(from: from, to: to, zone: zone, segment: state.daily.segment, period: state.daily.period,
                            filter: state.daily.filter)
    }

    /// The days whose columns are on screen: those that fit, `dayOffset` days back from the last.
    static func visibleDays(_ daily: DailyState, width: Int) -> ArraySlice<DayCounts> {
        let fit = Layout.DailyColumns.fitting(width: width)
        let end = max(0, daily.days.count - min(daily.dayOffset, max(0, daily.days.count - fit)))
        return daily.days[max(0, end - fit)..<end]
    }

    /// How many of the range's days are off screen, `h`/`l` bring them in.
    static func hiddenDays(_ daily: DailyState, width: Int) -> Int {
        max(0, daily.days.count - Layout.DailyColumns.fitting(width: width))
    }

    // MARK: - Cohorts

    /// One line of the cohort table: a cohort, or the `came back` line under a retention cohort.
    struct CohortLine {
        var label: String
        var size: String
        var cells: [TableCell]
    }

    /// Every line of the cohort table, as `subdesk cohorts` prints them: a cohort's shares
    /// (retention, trial) or LTV per member, `~` where its newest members have not reached the
    /// column, and under a retention cohort that has any, who came back in each period.
    static func cohortLines(_ report: CohortReport?) -> [CohortLine] {
        guard let report else { return [] }
        let values = report.rows.flatMap { $0.cells.compactMap { $0.flatMap(report.shown) } }
        let largest = values.max() ?? 0
        var lines: [CohortLine] = []
        for row in report.rows {
            let cells = row.cells.map { cell -> TableCell in
                guard let cell else { return TableCell("") }
                return TableCell(report.text(cell), role: report.shown(cell).map { heat($0, largest: largest) } ?? .dim)
            }
            lines.append(CohortLine(label: row.label, size: String(row.size), cells: cells))
            if report.metric == .retention, row.cells.contains(where: { ($0?.reactivated ?? 0) > 0 }) {
                lines.append(CohortLine(label: "came back", size: "", cells: row.cells.map { cell in
                    guard let cell, cell.reactivated > 0 else { return TableCell("") }
                    return TableCell("+\(cell.reactivated)", role: .accent)
                }))
            }
        }
        return lines
    }

    /// The shade of `value` against the cohort table's `largest`, by quarters.
    static func heat(_ value: Double, largest: Double) -> StyleRole {
        guard largest > 0 else { return .heatLow }
        switch value / largest {
        case ..<0.25: return .heatLow
        case ..<0.5: return .heatMedium
        case ..<0.75: return .heatHigh
        default: return .heatTop
        }
    }

    // MARK: - Subscribers

    /// The statuses digits 1–5 pick, in order; Tab cycles through them and then all.
    static let statusOrder: [SubscriptionStatus] = [.active, .gracePeriod, .billingRetry, .expired, .revoked]

    // MARK: - Detail

    /// Where each timeline entry starts in screen lines (expanded lines included), and the total.
    static func timelineLines(_ detail: DetailState) -> (starts: [Int], total: Int) {
        var starts: [Int] = []
        var line = 0
        for event in detail.timeline {
            starts.append(line)
            line += 1 + (detail.expanded[DetailState.entryKey(event)]?.count ?? 0)
        }
        return (starts, line)
    }

    // MARK: - Quarantine

    /// The body's lines cut to the screen's width, since a body may be one 13 000-character line.
    /// The reason, which can be long, comes first, wrapped at words.
    static func wrappedBody(_ state: DashboardState) -> [String] {
        let width = max(1, state.width - 2)
        let reason = state.quarantine.openEntry.map { TextWidth.wrap("reason: " + SafeText.sanitize($0.reason), toWidth: width) } ?? []
        return reason + [""] + state.quarantine.bodyLines.flatMap { TextLayout.hardWrap($0, width: width) }
    }

    // MARK: - Quit while work runs

    /// The bottom line's quit question, naming the work in progress (the first of several,
    /// and how many more): the keys' words shorten first, then the work's name is cut, never
    /// the keys.
    static func quitQuestion(_ running: [String], width: Int) -> String {
        let work = running.first.map(SafeText.sanitize) ?? "work"
        let more = running.count > 1 ? " and \(running.count - 1) more" : ""
        let keys = ["w: when it is done (audited)  y: now (not audited)  any other key: stay",
                    "w: when done (audited)  y: now (not audited)  other key: stay", "w: when done  y: now  other: stay"]
        for choice in keys {
            let line = " Quit while \(work)\(more)? \(choice)"
            if TextWidth.width(of: line) <= width { return line }
        }
        let room = width - TextWidth.width(of: " Quit while \(more)? \(keys.last!)")
        return " Quit while \(TextWidth.truncate(work, toWidth: max(8, room)))\(more)? \(keys.last!)"
    }

    // MARK: - Override dialog

    /// The y/n question: what will happen, to whom, until when, in words.
    static func confirmationQuestion(_ request: OverrideRequest, _ state: DashboardState) -> String {
        let time = state.time
        let id = request.originalTransactionId
        switch request.kind {
        case .grant(let until):
            return "Grant entitlement to \(id) until \(time.minute(until)) \(time.label)? y/n"
        case .revoke(let until):
            let end = until.map { "until \(time.minute($0)) \(time.label)" } ?? "until lifted"
            return "Revoke entitlement from \(id) \(end)? y/n"
        case .lift(let number):
            let kind = state.detail?.content?.report.overrides.first { $0.id == number }.map { " (\($0.kind.rawValue))" } ?? ""
            return "Lift override #\(number)\(kind) from \(id)? y/n"
        }
    }
}
