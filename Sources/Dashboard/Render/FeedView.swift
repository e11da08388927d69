import SubscriptionCore
import TerminalUI

/// The live feed: the intake rate, then every body's outcome as it arrives.
enum FeedView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 3 else { return }
        let feed = state.feed
        let y = area.y
        var x = area.x + 1
        let current = feed.rate.last ?? 0
        x += buffer.put("\(current)/min ", x: x, y: y, role: .title)
        let minutes = area.width >= 110 ? FeedState.rateMinutes : 20
        let spark = Sparkline.string(feed.rate.map(Double.init), width: minutes)
        x += buffer.put(spark, x: x, y: y, role: .sparkline)
        x += buffer.put(" \(minutes) min", x: x, y: y, role: .dim) + 3
        // Following the newest, held still (the selection moved away) or paused (Space).
        x += buffer.put(feed.arrivalText, x: x, y: y, role: feed.following && !feed.paused ? .success : .warning,
                        maxWidth: max(0, area.maxX - x)) + 3
        x = DashboardRenderer.fact("filter:", feed.filter.isEmpty ? "-" : feed.filter, x: x, y: y, maxX: area.maxX,
                                   role: feed.filter.isEmpty ? .normal : .match, buffer: &buffer) + 3
        let rows = feed.visible
        // The feed keeps the newest rows; say so once older ones have been let go.
        let older = feed.entries.count >= FeedState.capacity ? " (newest; older: subdesk notifications)" : ""
        if x < area.maxX {
            buffer.put("\(rows.count) rows" + older, x: x, y: y, width: area.maxX - x, alignment: .left, role: .dim)
        }

        // The pager's picture in one line, so watching the feed never hides a firing signal.
        let health = HealthView.summary(state)
        buffer.put(health.text, x: area.x + 1, y: y + 1, width: area.width - 2, alignment: .left, role: health.role)

        let wide = area.width >= 110
        let timeTitle = "TIME " + state.time.abbreviation(at: state.now)
        let plain: [TableColumn] = [
            TableColumn(timeTitle, width: .fixed(max(8, TextWidth.width(of: timeTitle)))),
            TableColumn("TYPE/SUBTYPE", width: .fixed(wide ? 40 : 22)),
            TableColumn("ORIGINAL TX", width: .fixed(16)),
            TableColumn("PRODUCT", width: .flex(wide ? 2 : 1)),
            TableColumn("ENV", width: .fixed(wide ? 10 : 4)),
            TableColumn("RESULT", width: .flex(wide ? 3 : 1)),
        ]
        let plainCells: [[TableCell]] = rows.map { entry in
            let rejected = entry.result == .rejected
            var result = rejected ? "REJECTED" : entry.result.rawValue
            if let detail = entry.detail, !rejected { result += " · " + detail }
            // Rows a backfill brought in say so: they arrived late, from Apple's history.
            if entry.source == "backfill" { result = "backfill: " + result }
            // A refused body has no type: its TYPE column says why it was refused instead.
            let type = rejected
                ? TableCell(entry.detail ?? "?", role: .error)
                : TableCell(FeedState.typeText(entry), role: Styling.role(forStoredType: entry.type, subtype: entry.subtype, in: state.meanings))
            return [
                TableCell(state.time.clock(entry.receivedDate)),
                type,
                TableCell(entry.originalTransactionId ?? "-"),
                TableCell(entry.productId ?? "-"),
                TableCell(DashboardRenderer.environmentLabel(entry.environment, short: !wide)),
                TableCell(result, role: Styling.role(for: entry.result)),
            ]
        }
        let (columns, cells) = DashboardRenderer.withAppColumn(plain, plainCells, bundleIds: rows.map(\.bundleId), state)
        let empty: String
        if !feed.loaded {
            empty = "loading…"
        } else if !feed.filter.isEmpty {
            empty = "no rows match the filter; Esc clears it"
        } else {
            empty = "waiting for notifications (try: subdesk simulate)"
        }
        TableView(columns: columns, rows: cells, selectedRow: cells.isEmpty ? nil : feed.selection,
                  scrollOffset: feed.scrollOffset, columnSpacing: wide ? 2 : 1, emptyText: empty)
            .render(in: area.inset(top: 2, left: 1, right: 1), buffer: &buffer)
    }
}
