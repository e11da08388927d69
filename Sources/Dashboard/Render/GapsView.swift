import SubscriptionCore
import TerminalUI

/// Notifications Apple says it sent that first arrived through a backfill, with Apple's
/// delivery attempts: what the webhook missed, and why Apple thinks it did.
enum GapsView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 2 else { return }
        let gaps = state.gaps
        let count = gaps.entries.count
        buffer.put("\(count) notification\(count == 1 ? "" : "s") Apple sent that first arrived through a backfill, newest found first",
                   x: area.x + 1, y: area.y, role: .title, maxWidth: area.width - 2)
        let wide = area.width >= 110
        let plain: [TableColumn] = [
            TableColumn("SIGNED (\(state.time.label))", width: .fixed(16)),
            TableColumn("TYPE/SUBTYPE", width: .fixed(wide ? 36 : 20)),
            TableColumn("ORIGINAL TX", width: .fixed(16)),
            TableColumn("APPLE'S ATTEMPTS", width: .flex(1)),
        ]
        let plainRows: [[TableCell]] = gaps.entries.map { gap in
            let what = [gap.type, gap.subtype].compactMap { $0 }.joined(separator: "/")
            let attempts = gap.sendAttempts.isEmpty ? "none reported"
                : "\(gap.sendAttempts.count): " + gap.sendAttempts.map { "\(state.time.clock($0.date)) \($0.result)" }.joined(separator: ", ")
            return [
                TableCell(gap.signedDate.map(state.time.minute) ?? "-"),
                TableCell(what.isEmpty ? "-" : what, role: Styling.role(forStoredType: gap.type, subtype: gap.subtype, in: state.meanings)),
                TableCell(gap.originalTransactionId ?? "-"),
                TableCell(attempts, role: gap.sendAttempts.contains { $0.result == "SUCCESS" } ? nil : .warning),
            ]
        }
        let (columns, rows) = DashboardRenderer.withAppColumn(plain, plainRows, bundleIds: gaps.entries.map(\.bundleId), state)
        TableView(columns: columns, rows: rows, selectedRow: rows.isEmpty ? nil : gaps.selection,
                  scrollOffset: gaps.scrollOffset, columnSpacing: wide ? 2 : 1,
                  emptyText: gaps.loaded ? "no gaps: every notification a backfill saw had arrived (subdesk backfill)" : "loading…")
            .render(in: area.inset(top: 1, left: 1, right: 1), buffer: &buffer)
    }
}
