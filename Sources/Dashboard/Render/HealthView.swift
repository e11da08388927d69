import SubscriptionCore
import TerminalUI

/// `:health`: every signal `subdesk check` and the alert rules judge, its value, its limit
/// and whether it fires, so an engineer paged at night sees the pager's picture here.
enum HealthView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 2 else { return }
        let health = state.health
        let width = area.width - 2
        guard health.loaded else {
            buffer.put("reading the store's on-call facts…", x: area.x + 1, y: area.y, width: width, alignment: .left, role: .dim)
            return
        }
        let worst = OnCallHealth.level(of: health.signals)
        let firing = health.firing.count
        let title = (firing == 0 ? "All \(health.signals.count) signals OK" : "\(firing) of \(health.signals.count) signals firing, worst \(worst.word)")
            + " · as of \(state.time.clock(health.readAt)) \(state.time.abbreviation(at: health.readAt))"
            + " · limits of subdesk check"
        buffer.put(title, x: area.x + 1, y: area.y, width: width, alignment: .left, role: firing == 0 ? .success : role(worst))

        let wide = area.width >= 110
        var columns: [TableColumn] = [
            TableColumn("SIGNAL", width: .fixed(wide ? 26 : 22)),
            TableColumn("NOW", width: .flex(1)),
            TableColumn("LIMIT", width: .fixed(wide ? 22 : 20)),
            TableColumn("STATE", width: .fixed(8)),
        ]
        if wide { columns.append(TableColumn("ON-CALL RUNS", width: .fixed(30))) }
        let rows: [[TableCell]] = health.signals.map { signal in
            let stateRole = signal.isFiring ? role(signal.level) : StyleRole.success
            var cells = [
                TableCell(signal.name, role: signal.isFiring ? stateRole : nil),
                TableCell(signal.value, role: signal.isFiring ? stateRole : nil),
                TableCell(signal.threshold, role: .dim),
                TableCell(signal.level.word, role: stateRole),
            ]
            if wide { cells.append(TableCell(signal.runs, role: .dim)) }
            return cells
        }
        // The table takes the rows it needs; what is wrong, in words, goes under it.
        let problems = health.signals.compactMap { signal in signal.problem.map { (signal.level, $0) } }
        let tableHeight = min(rows.count + 1, max(1, area.height - 1 - min(problems.count, 1) - 1))
        TableView(columns: columns, rows: rows, selectedRow: nil, scrollOffset: 0, columnSpacing: wide ? 2 : 1,
                  emptyText: "no signals")
            .render(in: Rect(x: area.x + 1, y: area.y + 1, width: width, height: tableHeight), buffer: &buffer)
        var y = area.y + 1 + tableHeight
        if rows.count + 1 > tableHeight, y < area.maxY {
            buffer.put("… \(rows.count + 1 - tableHeight) more signals: a taller terminal shows them (or subdesk check)",
                       x: area.x + 1, y: y, width: width, alignment: .left, role: .dim)
            y += 1
        }
        y += 1
        for (index, problem) in problems.enumerated() where y < area.maxY {
            // The last line left says how many problems did not fit, rather than cutting them silently.
            let left = problems.count - index
            let text = y == area.maxY - 1 && left > 1 ? "… and \(left) more problems: subdesk check lists them all"
                : "▸ " + problem.1
            buffer.put(text, x: area.x + 1, y: y, width: width, alignment: .left, role: role(problem.0))
            y += 1
        }
    }

    /// The feed header's line: all quiet, or what fires, worst first.
    static func summary(_ state: DashboardState) -> (text: String, role: StyleRole) {
        let health = state.health
        guard health.loaded else { return ("health: reading…", .dim) }
        let firing = health.firing.sorted { $0.level > $1.level }
        guard !firing.isEmpty else { return ("health: all \(health.signals.count) signals OK (:health)", .success) }
        let worst = firing[0].level
        let list = firing.map { "\($0.name) \($0.value)" }.joined(separator: "; ")
        return ("health: \(worst.word), \(firing.count) firing (:health): \(list)", role(worst))
    }

    static func role(_ level: HealthSignal.Level) -> StyleRole {
        switch level {
        case .ok: return .success
        case .warning: return .warning
        case .critical: return .error
        }
    }
}
