import SubscriptionCore
import TerminalUI

/// Consent withdrawals (RESCIND_CONSENT): a parent or guardian withdrew consent, Apple stops
/// the app from launching for that user, and an operator has to act (end the account's
/// access, delete data, tell the family) and then mark it handled.
enum ConsentView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 2 else { return }
        let consent = state.consent
        let open = consent.openCount
        let handled = consent.entries.count - open
        // The counts first: the explanation after them is what a narrow screen cuts.
        let title = "\(open) open consent withdrawal\(open == 1 ? "" : "s") · \(handled) handled"
            + (consent.includeHandled || handled == 0 ? "" : " (a lists them)")
            + " · a parent or guardian withdrew consent: Apple stops the app for that user"
        buffer.put(title, x: area.x + 1, y: area.y, width: area.width - 2, alignment: .left, role: .title)

        let wide = area.width >= 110
        let plain: [TableColumn] = [
            TableColumn("SIGNED (\(state.time.label))", width: .fixed(16)),
            TableColumn("APP TRANSACTION", width: .fixed(wide ? 20 : 16)),
            TableColumn("SUBSCRIPTIONS", width: .flex(1)),
            TableColumn("ENV", width: .fixed(wide ? 10 : 4)),
            TableColumn("HANDLED", width: .flex(1)),
        ]
        let plainRows: [[TableCell]] = consent.visible.map { w in
            [
                TableCell(state.time.minute(w.signedDate)),
                TableCell(w.appTransactionId ?? "unreadable", role: w.appTransactionId == nil ? .warning : nil),
                subscriptionsCell(w),
                TableCell(DashboardRenderer.environmentLabel(w.environment, short: !wide)),
                handledCell(w, state: state, wide: wide),
            ]
        }
        let empty: String
        if !consent.loaded {
            empty = "loading…"
        } else if consent.entries.isEmpty {
            empty = "no consent withdrawals: Apple sends RESCIND_CONSENT when a parent or guardian withdraws consent"
        } else {
            empty = "no open consent withdrawals; a lists the handled ones"
        }
        let (columns, rows) = DashboardRenderer.withAppColumn(plain, plainRows, bundleIds: consent.visible.map(\.bundleId), state)
        let panel = area.height > Layout.consentPanelHeight + 4 && !rows.isEmpty ? Layout.consentPanelHeight : 0
        TableView(columns: columns, rows: rows, selectedRow: rows.isEmpty ? nil : consent.selection,
                  scrollOffset: consent.scrollOffset, columnSpacing: wide ? 2 : 1, emptyText: empty)
            .render(in: area.inset(top: 1, left: 1, bottom: panel, right: 1), buffer: &buffer)
        guard panel > 0, let selected = consent.selected else { return }
        renderPanel(selected, state: state,
                    in: Rect(x: area.x + 1, y: area.y + area.height - panel, width: area.width - 2, height: panel), buffer: &buffer)
    }

    /// The first subscription and how many more; Enter opens the first.
    static func subscriptionsCell(_ w: ConsentWithdrawal) -> TableCell {
        guard let first = w.originalTransactionIds.first else { return TableCell("no stored purchase", role: .dim) }
        let more = w.originalTransactionIds.count - 1
        return TableCell(first + (more > 0 ? " +\(more)" : ""))
    }

    /// `open` until an operator marks it handled, then who and when.
    static func handledCell(_ w: ConsentWithdrawal, state: DashboardState, wide: Bool) -> TableCell {
        guard let h = w.handled else { return TableCell("open", role: .warning) }
        let when = wide ? state.time.minute(h.at) : state.time.format(h.at, "MM-dd HH:mm")
        return TableCell("\(h.operatorName) \(when)", role: .dim)
    }

    /// The notification and the app download it names, then what was done or what `h` does.
    static func renderPanel(_ w: ConsentWithdrawal, state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        buffer.put(String(repeating: "─", count: area.width), x: area.x, y: area.y, role: .border)
        let app = w.appTransaction.map { $0.phrases.joined(separator: " · ") } ?? "app transaction unreadable"
        buffer.put(SafeText.sanitize("RESCIND_CONSENT \(w.notificationUUID) · \(app)"), x: area.x, y: area.y + 1,
                   width: area.width, alignment: .left)
        let last: String
        let role: StyleRole
        if let h = w.handled {
            last = "handled by \(h.operatorName) \(state.time.minute(h.at)) \(state.time.label)" + (h.reason.map { ": \($0)" } ?? "")
            role = .dim
        } else {
            last = "open: h marks it handled once done (end access, delete data, tell the family)"
            role = .accent
        }
        buffer.put(SafeText.sanitize(last), x: area.x, y: area.y + 2, width: area.width, alignment: .left, role: role)
    }
}
