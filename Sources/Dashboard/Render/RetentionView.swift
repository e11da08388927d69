import SubscriptionCore
import TerminalUI

/// `:retention`: Apple's retention messaging report, as `subdesk retention report` prints it:
/// the cancellation sheet's views, offers redeemed, plans switched, cancellations and the save
/// rate, by product, territory or message type, the total last.
enum RetentionView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 2 else { return }
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

        let columns = [
            TableColumn(report.grouping.rawValue.uppercased(), width: .flex(1)),
            TableColumn("VIEWS", width: .fixed(8), alignment: .right),
            TableColumn("OFFERS", width: .fixed(7), alignment: .right),
            TableColumn("SWITCHED", width: .fixed(8), alignment: .right),
            TableColumn("CANCELLED", width: .fixed(9), alignment: .right),
            TableColumn("SAVE RATE", width: .fixed(9), alignment: .right),
        ]
        func cells(_ label: String, _ f: RetentionFigures, role: StyleRole? = nil) -> [TableCell] {
            [TableCell(label, role: role), TableCell(String(f.views), role: role), TableCell(String(f.offersRedeemed), role: role),
             TableCell(String(f.plansSwitched), role: role), TableCell(String(f.cancellations), role: role),
             TableCell(f.saveRateText, role: role)]
        }
        let rows = report.groups.map { cells($0.label, $0.figures) } + [cells("total", report.total, role: .title)]
        let tableHeight = max(1, min(rows.count + 1, area.height - 2))
        TableView(columns: columns, rows: rows, selectedRow: nil, scrollOffset: 0, columnSpacing: 1, emptyText: "no rows")
            .render(in: Rect(x: area.x + 1, y: area.y + 1, width: width, height: tableHeight), buffer: &buffer)
        let foot = TextWidth.wrap("save rate = " + RetentionReport.saveRateDefinition + " · days as Apple's report dates them",
                                  toWidth: max(10, width))
        for (index, line) in foot.enumerated() where area.y + 1 + tableHeight + index < area.maxY {
            buffer.put(line, x: area.x + 1, y: area.y + 1 + tableHeight + index, width: width, alignment: .left, role: .dim)
        }
    }
}
