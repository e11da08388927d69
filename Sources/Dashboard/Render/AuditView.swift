import SubscriptionCore
import TerminalUI

/// The audit log, newest first, with the selected entry written out whole below the table.
enum AuditView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 6 else { return }
        let audit = state.audit
        let count = audit.entries.count
        var summary = count == AuditState.limit ? "the latest \(count) operator actions" : "\(count) operator action\(count == 1 ? "" : "s")"
        summary += ", newest first"
        var x = area.x + 1
        x += buffer.put(summary, x: x, y: area.y, role: .title, maxWidth: area.width - 2) + 3
        DashboardRenderer.fact("target:", audit.filter.isEmpty ? "all" : audit.filter, x: x, y: area.y, maxX: area.maxX - 1,
                               role: audit.filter.isEmpty ? .normal : .match, buffer: &buffer)

        let wide = area.width >= 110
        let plain: [TableColumn] = [
            TableColumn("WHEN (\(state.time.label))", width: .fixed(16)),
            TableColumn("OPERATOR", width: .fixed(wide ? 12 : 8)),
            TableColumn("ACTION", width: .fixed(wide ? 15 : 10)),
            TableColumn("TARGET", width: .fixed(wide ? 20 : 16)),
            TableColumn("REASON", width: .flex(wide ? 2 : 1)),
            TableColumn("OUTCOME", width: .flex(wide ? 3 : 2)),
        ]
        let plainRows: [[TableCell]] = audit.entries.map { entry in
            [
                TableCell(state.time.minute(entry.at)),
                TableCell(entry.operatorName),
                TableCell(actionLabel(entry.action, short: !wide)),
                TableCell(entry.target ?? "-"),
                TableCell(entry.reason ?? "-", role: entry.reason == nil ? .dim : nil),
                TableCell(entry.outcome, role: outcomeRole(entry)),
            ]
        }
        let empty: String
        if !audit.loaded {
            empty = "loading…"
        } else if !audit.filter.isEmpty {
            empty = "no operator action on \(audit.filter); Esc shows all"
        } else {
            empty = "no operator action yet (r revalidates, o overrides, on a subscription)"
        }
        let (columns, rows) = DashboardRenderer.withAppColumn(plain, plainRows, bundleIds: audit.entries.map(\.bundleId), state)
        let tableRows = Layout.auditRows(height: state.height)
        let table = Rect(x: area.x + 1, y: area.y + 1, width: area.width - 2, height: tableRows + 1)
        TableView(columns: columns, rows: rows, selectedRow: rows.isEmpty ? nil : audit.selection,
                  scrollOffset: audit.scrollOffset, columnSpacing: wide ? 2 : 1, emptyText: empty)
            .render(in: table, buffer: &buffer)

        let ruleY = table.maxY
        buffer.put(String(repeating: "─", count: area.width), x: area.x, y: ruleY, role: .border)
        guard audit.entries.indices.contains(audit.selection) else { return }
        let lines = TextWidth.wrap(SafeText.sanitize(describe(audit.entries[audit.selection], state)), toWidth: area.width - 2)
        for (index, line) in lines.prefix(2).enumerated() {
            let shown = index == 1 && lines.count > 2 ? TextWidth.truncate(line + " …", toWidth: area.width - 2) : line
            buffer.put(shown, x: area.x + 1, y: ruleY + 1 + index, role: index == 0 ? .normal : .dim, maxWidth: area.width - 2)
        }
    }

    /// `override_grant` reads as `override grant`, or `grant` where columns are scarce.
    static func actionLabel(_ action: String, short: Bool = false) -> String {
        if short && action.hasPrefix("override_") { return String(action.dropFirst("override_".count)) }
        return action.replacingOccurrences(of: "_", with: " ")
    }

    static func outcomeRole(_ entry: AuditEntry) -> StyleRole {
        if entry.outcome.hasPrefix("failed") { return .error }
        if entry.action.hasPrefix("override") { return .warning }
        return .normal
    }

    /// The whole entry in one sentence, for the lines under the table.
    static func describe(_ entry: AuditEntry, _ state: DashboardState) -> String {
        var text = "#\(entry.id) \(state.time.format(entry.at, "yyyy-MM-dd HH:mm:ss")) \(state.time.label), "
            + "\(entry.operatorName): \(actionLabel(entry.action))"
        if let target = entry.target { text += " \(target)" }
        text += " → \(entry.outcome)"
        if let reason = entry.reason { text += " · reason: \(reason)" }
        if let detail = entry.detail { text += " · \(detail)" }
        return text
    }
}
