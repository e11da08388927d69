import SubscriptionCore
import TerminalUI

/// `:retention`: Apple's retention messaging report, as `subdesk retention report` prints it:
/// the cancellation sheet's views, saves (offers redeemed, plans switched, don't cancel),
/// cancellations and Apple's save rate, by product, territory, message type or selection type,
/// the total last.
enum RetentionView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 2 else { return }
        if state.retention.pane == .content { return renderContent(state, in: area, buffer: &buffer) }
        let width = area.width - 2
        guard state.retention.loaded, let report = state.retention.report else {
            buffer.put("reading the retention messaging report…", x: area.x + 1, y: area.y, width: width, alignment: .left, role: .dim)
            return
        }
        guard let first = report.firstDay, let last = report.lastDay else {
            buffer.put("no retention messaging rows: import Apple's report with subdesk retention report import FILE",
                       x: area.x + 1, y: area.y, width: width, alignment: .left, role: .dim)
            return
        }
        let title = "Retention messaging \(first) to \(last) · by \(report.grouping.rawValue) · save rate \(report.total.saveRateText)"
        buffer.put(title, x: area.x + 1, y: area.y, width: width, alignment: .left, role: .title)

        // The label, then the figures: their widths as the headings need, a number the least.
        let columns = [TableColumn(report.grouping.rawValue.uppercased(), width: .flex(1))]
            + RetentionReport.headings.map { TableColumn($0, width: .fixed(max(6, $0.count)), alignment: .right) }
        func cells(_ label: String, _ f: RetentionFigures, role: StyleRole? = nil) -> [TableCell] {
            ([label] + f.cells).map { TableCell($0, role: role) }
        }
        let rows = report.groups.map { cells($0.label, $0.figures) } + [cells("total", report.total, role: .title)]
        let tableHeight = max(1, min(rows.count + 1, area.height - 2))
        TableView(columns: columns, rows: rows, selectedRow: nil, scrollOffset: 0, columnSpacing: 1, emptyText: "no rows")
            .render(in: Rect(x: area.x + 1, y: area.y + 1, width: width, height: tableHeight), buffer: &buffer)
        let foot = TextWidth.wrap("save rate = " + RetentionReport.saveRateDefinition + " · days as Apple's report dates them"
                                  + (report.earlierNote.map { " · " + $0 } ?? ""), toWidth: max(10, width))
        for (index, line) in foot.enumerated() where area.y + 1 + tableHeight + index < area.maxY {
            buffer.put(line, x: area.x + 1, y: area.y + 1 + tableHeight + index, width: width, alignment: .left, role: .dim)
        }
    }
}

/// `:retention`'s console side (Tab): the app's messages and images as the store keeps them,
/// with Apple's review state as last read, the default messages per product and locale, and
/// the last performance test beside Apple's thresholds.
extension RetentionView {
    static func renderContent(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        let retention = state.retention
        let width = area.width - 2
        let rows = retention.contentRows
        let messages = rows.filter { $0.kind == .message }.count
        let read = retention.refreshedAt.map { "read \(state.time.format($0, "MM-dd HH:mm")) \(state.time.label)" } ?? "u reads Apple's lists"
        let title = "Retention console · \(retention.environment)" + (state.appName.map { " · \($0)" } ?? "")
            + " · \(messages) message\(messages == 1 ? "" : "s"), \(rows.count - messages) image\(rows.count - messages == 1 ? "" : "s") · \(read)"
        buffer.put(title, x: area.x + 1, y: area.y, width: width, alignment: .left, role: .title)

        let wide = area.width >= 110
        var columns = [TableColumn("KIND", width: .fixed(7)), TableColumn("ID", width: .fixed(36)), TableColumn("STATE", width: .fixed(8))]
        if wide { columns.append(TableColumn("AT APPLE", width: .fixed(17))) }
        columns.append(TableColumn("HEADER / SIZE", width: .flex(1)))
        let cells: [[TableCell]] = rows.map { row in
            var line = [TableCell(row.kind.rawValue), TableCell(row.identifier), TableCell(row.state ?? "-", role: stateRole(row.state))]
            if wide { line.append(TableCell(row.difference?.rawValue ?? "-", role: row.difference == nil || row.difference == .same ? nil : .warning)) }
            line.append(TableCell(SafeText.sanitize(row.summary)))
            return line
        }
        let panel = area.height > Layout.retentionPanelHeight + 4 ? Layout.retentionPanelHeight : 0
        TableView(columns: columns, rows: cells, selectedRow: cells.isEmpty ? nil : retention.selection, scrollOffset: retention.scrollOffset,
                  columnSpacing: 1,
                  emptyText: retention.contentLoaded ? "no message or image kept for \(retention.environment): u reads Apple's lists, "
                    + "subdesk retention messages upload puts one there" : "loading…")
            .render(in: area.inset(top: 1, left: 1, bottom: panel, right: 1), buffer: &buffer)
        guard panel > 0 else { return }
        var y = area.y + area.height - panel
        func line(_ text: String, _ role: StyleRole = .normal) {
            guard y < area.maxY else { return }
            buffer.put(SafeText.sanitize(text), x: area.x + 1, y: y, width: width, alignment: .left, role: role)
            y += 1
        }
        if let row = retention.selected {
            line(row.identifier + (row.checksum.map { " · sha256 \($0.prefix(12))" } ?? "")
                 + " · " + (row.difference.map { $0 == .same ? "in Apple's list" : $0.rawValue } ?? "not compared with Apple's list yet"), .dim)
        } else {
            line("")
        }
        let defaults = retention.defaults
        line(defaults.isEmpty ? "No default message (\(retention.environment)): m makes the selected APPROVED message one"
                              : "Default messages (\(retention.environment)), product and locale:", .header)
        // Three lines for them: the third says how many more there are when they do not fit.
        for record in defaults.prefix(defaults.count > 3 ? 2 : 3) {
            let header = retention.records.first { $0.kind == .message && $0.identifier == record.content }.map(RetentionComparison.summary)
            line("  \(record.identifier.replacingOccurrences(of: " ", with: "  "))  → \(record.content)" + (header.map { "  \($0)" } ?? ""))
        }
        if defaults.count > 3 { line("  and \(defaults.count - 2) more: subdesk retention coverage lists them", .dim) }
        // Five lines for the performance test: its verdict, then its figures wrapped to the width.
        y = area.y + area.height - 5
        guard let result = retention.performance else {
            line("Performance test (sandbox): none run here; t runs Apple's with a sandbox purchase", .dim)
            return
        }
        let summary = result.summaryLines
        line("Performance test (sandbox): " + summary[0], verdictRole(result.verdict))
        for text in summary.dropFirst().flatMap({ TextWidth.wrap($0, toWidth: max(10, width - 2)) }) { line("  " + text) }
    }

    static func stateRole(_ state: String?) -> StyleRole? {
        switch state.map(RetentionReviewState.init) {
        case .approved?: return .success
        case .rejected?: return .error
        case .pending?: return .warning
        default: return nil
        }
    }

    static func verdictRole(_ verdict: RetentionPerformanceResult.Verdict) -> StyleRole {
        switch verdict {
        case .pass: return .success
        case .fail: return .error
        case .pending, .other: return .warning
        }
    }
}
