import SubscriptionCore
import TerminalUI

/// `:cohorts`: the triangle of `subdesk cohorts` (cohorts down, periods since their start
/// across) shaded by value, each cohort's size beside it, and what the numbers mean under it.
enum CohortsView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 4 else { return }
        let cohorts = state.cohorts
        let choice = cohorts.choice
        let width = area.width - 2

        var x = area.x + 1
        x += buffer.put(choice.metric.label, x: x, y: area.y, role: .title, maxWidth: max(0, area.maxX - 1 - x)) + 3
        // The segment before the range: at 80 columns a long one leaves the range cut, which the rows show anyway.
        x = DashboardRenderer.fact("segment", choice.segmentLabel, x: x, y: area.y, maxX: area.maxX - 1, buffer: &buffer) + 3
        let range = cohorts.report.map { "\(choice.period.label($0.from)) … \(choice.period.label($0.to))" } ?? "…"
        x = DashboardRenderer.fact("\(choice.period.rawValue) cohorts", range, x: x, y: area.y, maxX: area.maxX - 1, buffer: &buffer)
        buffer.put(" (UTC)", x: x, y: area.y, role: .accent, maxWidth: max(0, area.maxX - 1 - x))

        guard let report = cohorts.report else {
            buffer.put("computing the cohorts…", x: area.x + 1, y: area.y + 1, width: width, alignment: .left, role: .dim)
            return
        }
        let lines = Selectors.cohortLines(report)
        let rows = Layout.cohortRows(height: state.height, lines: lines.count)
        let fit = Layout.CohortColumns.fitting(width: state.width)
        let first = min(cohorts.columnOffset, max(0, report.columns.count - fit))
        let shown = first..<min(report.columns.count, first + fit)

        let labelWidth = Layout.CohortColumns.labelWidth, sizeWidth = Layout.CohortColumns.sizeWidth
        let cellWidth = Layout.CohortColumns.cellWidth, spacing = Layout.CohortColumns.spacing
        var columns = [TableColumn(report.period == .month ? "COHORT" : "WEEK", width: .fixed(labelWidth)),
                       TableColumn("SIZE", width: .fixed(sizeWidth), alignment: .right)]
        columns += shown.map { TableColumn(report.columns[$0], width: .fixed(cellWidth), alignment: .right) }
        let cells: [[TableCell]] = lines.map { line in
            [TableCell(line.label, role: line.size.isEmpty ? .dim : nil), TableCell(line.size, role: .title)]
                + shown.map { line.cells.indices.contains($0) ? line.cells[$0] : TableCell("") }
        }
        let begun = report.metric == .trial ? "no free trials yet" : "no paid cohorts yet"
        TableView(columns: columns, rows: cells, selectedRow: nil, scrollOffset: cohorts.scrollOffset, columnSpacing: spacing,
                  emptyText: "\(begun): none began in \(range)")
            .render(in: Rect(x: area.x + 1, y: area.y + 1, width: width, height: rows + 1), buffer: &buffer)

        // Under the table: which columns and lines are on screen, what `~` and the shades
        // mean, then the report's definitions, as many lines as the screen has left.
        var notes = [legend(report, shown: shown, lines: lines.count, rows: rows, offset: min(cohorts.scrollOffset, max(0, lines.count - rows)))]
        notes += report.definitions.map { "- " + $0 }
        var text: [String] = []
        for note in notes {
            let wrapped = TextWidth.wrap(note, toWidth: max(10, width - 2))
            text += wrapped.enumerated().map { $0.offset == 0 ? $0.element : "  " + $0.element }
        }
        var y = area.y + 2 + rows
        let room = area.maxY - y
        for (index, line) in text.prefix(room).enumerated() {
            let cut = index == room - 1 && text.count > room
            buffer.put(cut ? "… the rest: subdesk cohorts --metric \(report.metric.rawValue), or the README's Cohorts" : line,
                       x: area.x + 1, y: y, role: .dim, maxWidth: width)
            y += 1
        }
    }

    /// The line right under the table: which columns and lines show, what the columns count,
    /// what `~` and the shading mean.
    static func legend(_ report: CohortReport, shown: Range<Int>, lines: Int, rows: Int, offset: Int) -> String {
        var parts: [String] = []
        if shown.count < report.columns.count, let last = shown.last {
            parts.append("columns \(report.columns[shown.lowerBound])–\(report.columns[last]) of \(report.columns.count) (h/l)")
        }
        if lines > rows { parts.append("lines \(offset + 1)–\(offset + rows) of \(lines) (j/k)") }
        var unit = "columns are \(report.unitDescription)"
        if report.metric == .ltv {
            unit += report.currency.map { ", LTV per member in \($0)" } ?? ", money in several currencies: a rates file adds them up"
        }
        parts.append(unit)
        parts.append("~ the newest members have not reached the column yet")
        parts.append("shades: quarters of the largest value")
        return parts.joined(separator: "; ")
    }
}
