import SubscriptionCore
import TerminalUI

// The cohort triangle: its keys, `:cohorts` and what its loads come to.
extension DashboardReducer {
    static func cohortsCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        var next = state.cohorts.choice
        switch command {
        case .cycleCohortMetric:
            next.metric = following(next.metric)
        case .cyclePeriod:
            next.period = following(next.period)
        case .cycleSegment:
            next.segment = following(next.segment)
        case .columnsLeft, .columnsRight:
            let hidden = max(0, (state.cohorts.report?.columns.count ?? 0) - Layout.CohortColumns.fitting(width: state.width))
            guard hidden > 0 else {
                flash("every period of the report is on screen", &state)
                return []
            }
            state.cohorts.columnOffset = min(max(0, state.cohorts.columnOffset + (command == .columnsLeft ? -1 : 1)), hidden)
            return []
        default:
            let lines = Selectors.cohortLines(state.cohorts.report).count
            let visible = Layout.cohortRows(height: state.height, lines: lines)
            guard let delta = delta(for: command, visible: visible, count: lines) else { return [] }
            state.cohorts.scrollOffset += delta
            clampCohortsScroll(&state)
            return []
        }
        return askCohorts(next, &state)
    }

    /// The case after `value`, the first after the last.
    static func following<T: CaseIterable & Equatable>(_ value: T) -> T {
        let all = Array(T.allCases)
        return all[((all.firstIndex(of: value) ?? 0) + 1) % all.count]
    }

    /// Asks for the report `request` describes; the screen shows it once it arrives.
    static func askCohorts(_ request: CohortsRequest, _ state: inout DashboardState) -> [DashboardEffect] {
        state.cohorts.asked = request
        return [.loadCohorts(request)]
    }

    /// `:cohorts [retention|ltv|trial] [month|week] [DIMENSION=VALUE|all]`: the screen, with
    /// what the words change; a word it does not know is refused before anything is asked.
    static func openCohorts(_ argument: String, _ state: inout DashboardState) -> [DashboardEffect] {
        var wanted = state.cohorts.choice
        for word in argument.split(separator: " ").map(String.init) {
            if let metric = CohortMetric(rawValue: word.lowercased()) {
                wanted.metric = metric
            } else if let period = CohortPeriod(rawValue: word.lowercased()) {
                wanted.period = period
            } else if word.lowercased() == "all" {
                wanted.filter = nil
            } else if word.contains("=") {
                do {
                    let parsed = try CohortFilter.parse(word)
                    guard let filter = parsed.filter else {
                        flash("f switches between paid, family shared, sandbox and all", error: true, &state)
                        return []
                    }
                    wanted.filter = filter
                } catch {
                    flash("\(error)", error: true, &state)
                    return []
                }
            } else {
                flash(":cohorts takes retention, ltv or trial, month or week, DIMENSION=VALUE or all (not \(word))", error: true, &state)
                return []
            }
        }
        let effects = switchTo(.cohorts, &state)
        return wanted == state.cohorts.choice ? effects : askCohorts(wanted, &state)
    }

    static func applyCohorts(_ request: CohortsRequest, _ report: CohortReport, _ state: inout DashboardState) {
        guard request == state.cohorts.asked else { return }
        if request.metric != state.cohorts.choice.metric || request.period != state.cohorts.choice.period {
            state.cohorts.columnOffset = 0
        }
        state.cohorts.choice = request
        state.cohorts.report = report
        clampCohortsScroll(&state)
    }

    /// A segment value no cohort has: said on the message line, the screen stays as it was.
    static func refuseCohorts(_ request: CohortsRequest, _ message: String, _ state: inout DashboardState) -> [DashboardEffect] {
        guard request == state.cohorts.asked else { return [] }
        flash(message, error: true, &state)
        if request == state.cohorts.choice {
            // What was shown is refused now (another store was opened): everything again.
            guard request.filter != nil else { return [] }
            state.cohorts.choice.filter = nil
            return state.screen == .cohorts ? askCohorts(state.cohorts.choice, &state) : []
        }
        state.cohorts.asked = state.cohorts.choice
        return state.cohorts.report == nil && state.screen == .cohorts ? askCohorts(state.cohorts.choice, &state) : []
    }

    static func clampCohortsScroll(_ state: inout DashboardState) {
        let lines = Selectors.cohortLines(state.cohorts.report).count
        let visible = Layout.cohortRows(height: state.height, lines: lines)
        state.cohorts.scrollOffset = min(max(0, state.cohorts.scrollOffset), max(0, lines - visible))
        let hidden = max(0, (state.cohorts.report?.columns.count ?? 0) - Layout.CohortColumns.fitting(width: state.width))
        state.cohorts.columnOffset = min(max(0, state.cohorts.columnOffset), hidden)
    }
}
