import SubscriptionCore
import TerminalUI

/// Customers' refund requests: how long Apple still waits for an answer, why the customer
/// asked, and, for the selected request, what the store knows and the answer the policy
/// suggests.
enum RefundsView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height >= 2 else { return }
        let refunds = state.refunds
        let open = refunds.entries.filter { [.open, .answered].contains($0.request.stage(now: state.now)) }.count
        buffer.put("\(open) refund request\(open == 1 ? "" : "s") awaiting Apple (answer due 12 h after asking) · "
                   + "\(refunds.entries.count - open) closed",
                   x: area.x + 1, y: area.y, role: .title, maxWidth: area.width - 2)
        let wide = area.width >= 110
        var columns: [TableColumn] = [
            TableColumn("STANDING", width: .fixed(17)),
            TableColumn("ORIGINAL TX", width: .fixed(16)),
            TableColumn("REASON", width: .fixed(wide ? 25 : 11)),
            TableColumn("PRODUCT", width: .flex(1)),
        ]
        if wide { columns.append(TableColumn("DELIVERY", width: .fixed(11))) }
        columns.append(TableColumn("ASKED (\(state.time.label))", width: .fixed(16)))
        let plainRows: [[TableCell]] = refunds.entries.map { entry in
            let request = entry.request
            var row = [
                TableCell(request.standing(now: state.now), role: role(request.stage(now: state.now))),
                TableCell(request.originalTransactionId ?? "-"),
                TableCell(wide ? entry.facts.reason ?? "not given" : shortReason(entry.facts.reason)),
                TableCell(entry.facts.productId ?? "-"),
            ]
            if wide { row.append(TableCell(shortDelivery(entry.facts.delivery), role: entry.facts.delivery == .delivered ? nil : .warning)) }
            row.append(TableCell(state.time.minute(request.requested)))
            return row
        }
        let (appColumns, rows) = DashboardRenderer.withAppColumn(columns, plainRows, bundleIds: refunds.entries.map(\.request.bundleId), state)
        columns = appColumns
        let panel = area.height > Layout.refundsPanelHeight + 4 && !rows.isEmpty ? Layout.refundsPanelHeight : 0
        let table = area.inset(top: 1, left: 1, bottom: panel, right: 1)
        TableView(columns: columns, rows: rows, selectedRow: rows.isEmpty ? nil : refunds.selection,
                  scrollOffset: refunds.scrollOffset, columnSpacing: wide ? 2 : 1,
                  emptyText: refunds.loaded ? "no refund requests: Apple sends a CONSUMPTION_REQUEST when a customer asks for one" : "loading…")
            .render(in: table, buffer: &buffer)
        guard panel > 0, let entry = refunds.selected else { return }
        renderPanel(entry, state: state, in: Rect(x: area.x + 1, y: area.y + area.height - panel, width: area.width - 2, height: panel),
                    buffer: &buffer)
    }

    /// Apple's reasons in a word, for narrow terminals.
    static func shortReason(_ reason: String?) -> String {
        switch reason {
        case nil: return "-"
        case "UNINTENDED_PURCHASE": return "unintended"
        case "FULFILLMENT_ISSUE": return "fulfillment"
        case "UNSATISFIED_WITH_PURCHASE": return "unsatisfied"
        case let other?: return other.lowercased()
        }
    }

    /// The delivery status in a word; the panel spells it out.
    static func shortDelivery(_ delivery: ConsumptionAnswer.Delivery) -> String {
        switch delivery {
        case .delivered: return "delivered"
        case .qualityIssue: return "quality"
        case .wrongItem: return "wrong item"
        case .serverOutage: return "outage"
        case .other: return "withheld"
        }
    }

    static func role(_ stage: RefundRequest.Stage) -> StyleRole? {
        switch stage {
        case .open: return .warning
        case .missed: return .error
        case .answered, .declined, .refunded: return .dim
        }
    }

    /// The facts Apple asks for, each with where it came from, and what `a` would send.
    static func renderPanel(_ entry: RefundQueueEntry, state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        let f = entry.facts
        let request = entry.request
        buffer.put(String(repeating: "─", count: area.width), x: area.x, y: area.y, role: .border)
        // A line longer than the screen ends in "…"; Enter on the row opens the subscription whole.
        buffer.put("delivered: \(f.delivery.rawValue), \(f.deliveryWhy)", x: area.x, y: area.y + 1, width: area.width, alignment: .left)
        buffer.put("sample content: \(f.sampleContentProvided ? "yes" : "no"), \(f.sampleWhy)", x: area.x, y: area.y + 2,
                   width: area.width, alignment: .left)
        buffer.put("customer: " + (f.tenureDays.map { "\($0) days since the first purchase" } ?? "no paid purchase known")
                   + "; bought \(RefundRequestFacts.amounts(f.lifetimePurchased)); refunded \(RefundRequestFacts.amounts(f.lifetimeRefunded))",
                   x: area.x, y: area.y + 3, width: area.width, alignment: .left, role: .dim)
        let last: String
        switch request.stage(now: state.now) {
        case .open:
            last = (request.answerOutcome.map { "last attempt \($0) · " } ?? "")
                + "a sends: \(entry.suggested.summary)"
                + (entry.suggested.customerConsented ? "" : " (no consent on record: :answer PREF consented)")
        case .answered:
            last = "Apple accepted \(request.answeredBy ?? "?")'s answer \(request.answered.map(state.time.minute) ?? "") \(state.time.label); its decision is to come"
        case .missed:
            last = "no answer reached Apple by \(state.time.minute(request.deadline)) \(state.time.label); Apple decides without one"
        case .refunded, .declined:
            last = "Apple decided \(request.closedBy ?? "") \(request.closed.map(state.time.minute) ?? "") \(state.time.label)"
                + (request.isAnswered ? " after \(request.answeredBy ?? "?")'s answer" : "")
        }
        buffer.put(last, x: area.x, y: area.y + 4, width: area.width, alignment: .left,
                   role: request.stage(now: state.now) == .open ? .accent : .dim)
    }
}
