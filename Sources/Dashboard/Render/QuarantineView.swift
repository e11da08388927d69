import SubscriptionCore
import TerminalUI

/// Rejected bodies: the list with reasons, and one body read in full.
enum QuarantineView {
    static func renderList(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 2 else { return }
        let quarantine = state.quarantine
        let count = quarantine.entries.count
        let summary = count == QuarantineState.limit
            ? "the latest \(count) rejected bodies, newest first"
            : "\(count) rejected bod\(count == 1 ? "y" : "ies"), newest first"
        buffer.put(summary, x: area.x + 1, y: area.y, role: .title, maxWidth: area.width - 2)

        let wide = area.width >= 110
        let plain: [TableColumn] = [
            TableColumn("#", width: .fixed(5), alignment: .right),
            TableColumn("RECEIVED (\(state.time.label))", width: .fixed(19)),
            TableColumn("SIZE", width: .fixed(wide ? 8 : 6), alignment: .right),
            TableColumn("SOURCE", width: .flex(1)),
            TableColumn("REASON", width: .flex(wide ? 4 : 2)),
        ]
        let plainRows: [[TableCell]] = quarantine.entries.map { entry in
            [
                TableCell(String(entry.id)),
                TableCell(state.time.format(entry.receivedDate, "yyyy-MM-dd HH:mm:ss")),
                TableCell(byteCount(entry.body.count)),
                TableCell(entry.source ?? "-"),
                TableCell(entry.reason, role: .error),
            ]
        }
        let (columns, rows) = DashboardRenderer.withAppColumn(plain, plainRows, bundleIds: quarantine.entries.map(\.bundleId), state)
        TableView(columns: columns, rows: rows, selectedRow: rows.isEmpty ? nil : quarantine.selection,
                  scrollOffset: quarantine.scrollOffset, columnSpacing: wide ? 2 : 1,
                  emptyText: quarantine.loaded ? "nothing quarantined" : "loading…")
            .render(in: area.inset(top: 1, left: 1, right: 1), buffer: &buffer)
    }

    static func renderBody(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard let entry = state.quarantine.openEntry, area.height >= 4 else { return }
        let text = area.inset(left: 1, right: 1)
        var x = text.x
        x = DashboardRenderer.fact("#\(entry.id) received", state.time.format(entry.receivedDate, "yyyy-MM-dd HH:mm:ss") + " " + state.time.label,
                                   x: x, y: text.y, maxX: text.maxX, buffer: &buffer) + 3
        x = DashboardRenderer.fact("size", byteCount(entry.body.count), x: x, y: text.y, maxX: text.maxX, buffer: &buffer) + 3
        DashboardRenderer.fact("from", entry.source ?? "-", x: x, y: text.y, maxX: text.maxX, buffer: &buffer)
        buffer.put(String(repeating: "─", count: area.width), x: area.x, y: text.y + 1, role: .border)

        let lines = Selectors.wrappedBody(state)
        let visible = Layout.bodyRows(height: state.height)
        let start = min(state.quarantine.bodyScroll, max(0, lines.count - visible))
        let reasonLines = lines.firstIndex(of: "") ?? 0
        for (row, line) in lines.dropFirst(start).prefix(visible).enumerated() {
            buffer.put(line, x: text.x, y: text.y + 2 + row, role: start + row < reasonLines ? .error : .normal,
                       maxWidth: text.width)
        }
        if lines.count > visible {
            let position = " lines \(start + 1)-\(min(lines.count, start + visible)) of \(lines.count) "
            buffer.put(position, x: area.maxX - TextWidth.width(of: position) - 1, y: text.y + 1, role: .dim)
        }
    }

    static func byteCount(_ count: Int) -> String {
        count < 10_000 ? "\(count) B" : "\(count / 1024) KiB"
    }
}
