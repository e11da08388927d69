import SubscriptionCore
import TerminalUI

/// `:forward`: each `[forward NAME]` target as `subdesk forward status` lists it (the same
/// columns, the same cells), re-read as the outbox changes and as its ages move.
enum ForwardView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 2 else { return }
        let forward = state.forward
        let width = area.width - 2
        var y = area.y
        guard forward.loaded else {
            buffer.put("reading the outbox…", x: area.x + 1, y: y, width: width, alignment: .left, role: .dim)
            return
        }
        let rows = forward.rows
        let readAt = forward.readAt
        if state.forwardTargets.isEmpty {
            buffer.put("no [forward NAME] target is configured (see subdesk sample-config, [forward NAME])",
                       x: area.x + 1, y: y, width: width, alignment: .left, role: .warning)
            // The outbox may still hold deliveries owed to targets since taken out of the configuration.
            guard !rows.isEmpty else { return }
            y += 1
        } else {
            buffer.put(title(rows, state: state), x: area.x + 1, y: y, width: width, alignment: .left,
                       role: rows.contains { $0.dead > 0 } ? .error : rows.contains { $0.failedLastHour > 0 } ? .warning : .title)
        }
        y += 1

        let texts = rows.map { ForwardStatusText.cells($0, configured: state.forwardTargets.contains($0.target), now: readAt) }
        let header = ForwardStatusText.header
        let columns: [TableColumn] = header.indices.map { i in
            let widest = ([header[i]] + texts.map { $0[i] }).map { TextWidth.width(of: SafeText.sanitize($0)) }.max() ?? 0
            if i == header.count - 1 { return TableColumn(header[i], width: .flex(1)) }
            return TableColumn(header[i], width: .fixed(i == 0 ? min(widest, max(12, width / 4)) : widest),
                               alignment: i == 0 ? .left : .right)
        }
        let cells: [[TableCell]] = zip(rows, texts).map { row, text in
            text.enumerated().map { i, cell in
                switch i {
                case 2 where row.pending > 0: return TableCell(cell, role: ForwardLag.role(ForwardLag.level(of: row, now: readAt)))
                case 4 where row.failedLastHour > 0: return TableCell(cell, role: .warning)
                case 5 where row.dead > 0: return TableCell(cell, role: .error)
                case 6 where row.lastError != nil: return TableCell(cell, role: .dim)
                default: return TableCell(cell)
                }
            }
        }
        let tableHeight = min(cells.count + 1, max(1, area.maxY - y))
        TableView(columns: columns, rows: cells, columnSpacing: 2, emptyText: "nothing owed yet")
            .render(in: Rect(x: area.x + 1, y: y, width: width, height: tableHeight), buffer: &buffer)
        y += tableHeight + 1
        // Under the table, each target's last error as the row keeps it, and when it came.
        for row in rows where y < area.maxY {
            guard let error = row.lastError else { continue }
            let when = row.lastErrorAt.map { " at \(state.time.minute($0)) \(state.time.label)" } ?? ""
            buffer.put("▸ \(row.target)\(when): \(ForwardStatusText.error(error))", x: area.x + 1, y: y, width: width,
                       alignment: .left, role: .dim)
            y += 1
        }
    }

    /// `2 targets · 3 pending, oldest 1h 35m · 1 dead · as of 12:00:00 UTC · as subdesk forward status`.
    static func title(_ rows: [ForwardTargetStatus], state: DashboardState) -> String {
        let readAt = state.forward.readAt
        let pending = rows.reduce(0) { $0 + $1.pending }
        let dead = rows.reduce(0) { $0 + $1.dead }
        let oldest = rows.compactMap { ForwardStatusText.oldestAge($0, now: readAt) }.max()
        var parts = ["\(rows.count) target\(rows.count == 1 ? "" : "s")",
                     pending == 0 ? "nothing pending" : "\(pending) pending" + (oldest.map { ", oldest " + DateText.duration($0) } ?? "")]
        if dead > 0 { parts.append("\(dead) dead") }
        parts.append("as of \(state.time.clock(readAt)) \(state.time.abbreviation(at: readAt))")
        parts.append("as subdesk forward status")
        return parts.joined(separator: " · ")
    }
}
