import SubscriptionCore
import TerminalUI

/// The subscribers screen: status tabs with counts, sort and filter, and the table.
enum SubscribersView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 3 else { return }
        let list = state.subscribers
        statusTabs(state, x: area.x + 1, y: area.y, maxX: area.maxX, buffer: &buffer)

        var x = area.x + 1
        let y = area.y + 1
        let sort = list.query.sort == .expires
            ? (list.query.descending ? "expiry, latest first" : "expiry, soonest first")
            : (list.query.descending ? "last event, newest first" : "last event, oldest first")
        x = DashboardRenderer.fact("sort", sort, x: x, y: y, maxX: area.maxX, buffer: &buffer) + 3
        x = DashboardRenderer.fact("filter", list.query.text.isEmpty ? "-" : list.query.text, x: x, y: y, maxX: area.maxX,
                                   role: list.query.text.isEmpty ? .normal : .match, buffer: &buffer) + 3
        if list.loaded {
            // Only a count the store gave or the whole list in hand is exact; a window of pages is not.
            var total: Int?
            if list.searchCut {
                total = nil  // a bounded read found these; the list may hold more
            } else if list.atStart && list.atEnd {
                total = list.rows.count
            } else if list.query.text.isEmpty {
                total = list.statusFilter.map { list.statusCounts[$0] ?? 0 } ?? list.totalCount
            }
            var text = total.map { "\($0) subscription" + ($0 == 1 ? "" : "s") }
                ?? (list.searchCut ? "\(list.rows.count) found" : "more than \(list.rows.count) subscriptions")
            if list.searchCut {
                text += " in \(SubscriptionQuery.keystrokeScanLimit / 1000)k rows, Enter: all"
            }
            // Where the selection is: exact from the top of the list, or from its end when the
            // window touches it (G: 177/177), else only that it is past the rows in hand.
            if !list.rows.isEmpty {
                let fromEnd = list.rows.count - list.selection
                let position = list.atStart ? String(list.selection + 1)
                    : (list.atEnd && total != nil ? String(total! - fromEnd + 1) : "…")
                text += " · \(position)/\(total.map(String.init) ?? "\(list.rows.count)+")"
            }
            buffer.put(text, x: x, y: y, role: .dim, maxWidth: max(0, area.maxX - x))
        }

        let tableArea = area.inset(top: 2)
        let wide = area.width >= 110
        // A column with nothing to show in the rows in hand gives its room to USER and
        // PRODUCT: an override in force, a consent withdrawal are rare.
        let ids = list.rows.map(\.state.originalTransactionId)
        let overrideColumn = ids.contains { list.overrides[$0] != nil }
        let consentColumn = ids.contains { list.consentWithdrawn.contains($0) }
        var plainColumns: [TableColumn] = [
            TableColumn("USER", width: .flex(1)),
            TableColumn("ORIGINAL TX", width: .fixed(16)),
            TableColumn("PRODUCT", width: .flex(1)),
            TableColumn("STATUS", width: .fixed(wide ? 13 : 7)),
            TableColumn("EXPIRES (\(state.time.label))", width: .fixed(16)),
            TableColumn(wide ? "RENEW" : "AUTO", width: .fixed(wide ? 5 : 4)),
            TableColumn("ENV", width: .fixed(wide ? 10 : 4)),
        ]
        if consentColumn {
            // A parent or guardian withdrew consent: Apple stops the app, an operator has to act.
            plainColumns.insert(TableColumn(wide ? "CONSENT" : "C", width: .fixed(wide ? TextWidth.width(of: consentWide) : 1)), at: 4)
        }
        if overrideColumn {
            // An operator's override in force decides entitlement instead of Apple's state.
            plainColumns.insert(TableColumn(wide ? "OVERRIDE" : "OV", width: .fixed(wide ? 8 : 2)), at: 4)
        }
        let plainRows: [[TableCell]] = list.rows.map { row in
            let s = row.state
            var cells = [
                TableCell(userLabel(row.subscriber)),
                TableCell(s.originalTransactionId),
                TableCell(s.productId),
                TableCell(wide ? s.status.label : shortLabel(s.status), role: Styling.role(for: s.status)),
                TableCell(SubscriptionReport.listedEnd(s, accessEnded: list.accessEnded).map(state.time.minute) ?? "-"),
                TableCell(s.autoRenewStatus ? "on" : "off", role: s.autoRenewStatus ? nil : .dim),
                TableCell(DashboardRenderer.environmentLabel(s.environment, short: !wide)),
            ]
            if consentColumn { cells.insert(consentCell(list.consentWithdrawn.contains(s.originalTransactionId), wide: wide), at: 4) }
            if overrideColumn { cells.insert(overrideCell(list.overrides[s.originalTransactionId], wide: wide), at: 4) }
            return cells
        }
        // Several apps: each subscription's app, by its configured name (else its bundle id).
        let (columns, rows) = DashboardRenderer.withAppColumn(plainColumns, plainRows, bundleIds: list.rows.map(\.state.bundleId), state)
        let empty: String
        if !list.loaded {
            empty = "loading…"
        } else if !list.query.text.isEmpty || list.statusFilter != nil {
            empty = "no subscriptions match; Esc clears the filter, 0 shows every status"
        } else {
            empty = "no subscriptions in this store yet"
        }
        TableView(columns: columns, rows: rows, selectedRow: list.rows.isEmpty ? nil : list.selection,
                  scrollOffset: list.scrollOffset, columnSpacing: wide ? 2 : 1, emptyText: empty)
            .render(in: tableArea.inset(left: 1, right: 1), buffer: &buffer)
    }

    /// `grant`/`revoke` (`G`/`R` where narrow) for a row an override decides; blank otherwise.
    static func overrideCell(_ kind: Override.Kind?, wide: Bool) -> TableCell {
        guard let kind else { return TableCell("") }
        let text = wide ? kind.rawValue : (kind == .grant ? "G" : "R")
        return TableCell(text, role: kind == .grant ? .success : .error)
    }

    /// The marker of a subscription an open consent withdrawal concerns (`:consent` lists them).
    static let consentMark = "⊘"
    static let consentWide = consentMark + " withdrawn"

    static func consentCell(_ withdrawn: Bool, wide: Bool) -> TableCell {
        guard withdrawn else { return TableCell("") }
        return TableCell(wide ? consentWide : consentMark, role: .warning)
    }

    /// ` 0 all 144  1 active 96  2 grace 6 …`: the digit keys, what they show, and how many.
    static func statusTabs(_ state: DashboardState, x: Int, y: Int, maxX: Int, buffer: inout ScreenBuffer) {
        let list = state.subscribers
        var tabs: [(digit: String, label: String, count: Int?, role: StyleRole, selected: Bool)] = [
            ("0", "all", list.totalCount, .normal, list.statusFilter == nil),
        ]
        for (index, status) in Selectors.statusOrder.enumerated() {
            tabs.append((String(index + 1), tabLabel(status), list.totalCount == nil ? nil : list.statusCounts[status] ?? 0,
                         Styling.role(for: status), list.statusFilter == status))
        }
        // Large counts make the tabs wider than 80 columns: shorter labels and gaps first,
        // then a tab that still does not fit is cut with "…", never silently.
        func text(_ tab: (digit: String, label: String, count: Int?, role: StyleRole, selected: Bool)) -> String {
            tab.label + (tab.count.map { " \($0)" } ?? "")
        }
        func width(gap: Int) -> Int { tabs.map { 2 + TextWidth.width(of: text($0)) }.reduce(0, +) + gap * (tabs.count - 1) }
        var gap = 2
        if width(gap: gap) > maxX - x {
            tabs = tabs.map { tab in
                var short = tab
                if short.label == tabLabel(.billingRetry) { short.label = "retry" }
                return short
            }
        }
        if width(gap: gap) > maxX - x { gap = 1 }
        var column = x
        for tab in tabs where column < maxX {
            let label = text(tab)
            column += buffer.put(tab.digit, x: column, y: y, role: .hintKey, maxWidth: maxX - column)
            column += buffer.put(" ", x: column, y: y, maxWidth: maxX - column)
            let room = maxX - column
            guard room > 0 else { break }
            column += buffer.put(TextWidth.truncate(label, toWidth: room), x: column, y: y,
                                 role: tab.selected ? .selection : tab.role, maxWidth: room)
            column += gap
        }
    }

    static func tabLabel(_ status: SubscriptionStatus) -> String {
        switch status {
        case .active: return "active"
        case .gracePeriod: return "grace"
        case .billingRetry: return "billing retry"
        case .expired: return "expired"
        case .revoked: return "revoked"
        }
    }

    static func shortLabel(_ status: SubscriptionStatus) -> String {
        switch status {
        case .active: return "ACTIVE"
        case .gracePeriod: return "GRACE"
        case .billingRetry: return "RETRY"
        case .expired: return "EXPIRED"
        case .revoked: return "REVOKED"
        }
    }

    /// The user id when the app linked one, else `token` and the start of the appAccountToken
    /// (a subscriber known only by the token Apple carries), else a dash.
    static func userLabel(_ subscriber: Subscriber) -> String {
        if let user = subscriber.userId, !user.isEmpty { return user }
        if let token = subscriber.appAccountToken, !token.isEmpty { return "token " + String(token.prefix(8)) + "…" }
        return "-"
    }
}
