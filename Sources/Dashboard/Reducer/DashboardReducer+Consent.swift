import Foundation
import SubscriptionCore

// MARK: - Consent withdrawals

extension DashboardReducer {
    static func applyConsent(_ withdrawals: [ConsentWithdrawal], _ state: inout DashboardState) {
        // The selection follows its withdrawal when one moves (handled, it goes below the open ones).
        let selected = state.consent.selected?.notificationUUID
        state.consent.entries = ConsentState.ordered(withdrawals)
        state.consent.loaded = true
        keepConsentSelection(selected, &state)
    }

    static func keepConsentSelection(_ uuid: String?, _ state: inout DashboardState) {
        let rows = state.consent.visible
        if let uuid, let index = rows.firstIndex(where: { $0.notificationUUID == uuid }) {
            state.consent.selection = index
        }
        var selection = state.consent.selection, scroll = state.consent.scrollOffset
        move(&selection, &scroll, by: 0, count: rows.count, visible: consentVisibleRows(state))
        state.consent.selection = selection
        state.consent.scrollOffset = scroll
    }

    static func consentVisibleRows(_ state: DashboardState) -> Int {
        max(1, Layout.listRows(height: state.height) - Layout.consentPanelHeight)
    }

    static func consentCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        if moveInList(command, &state.consent.selection, &state.consent.scrollOffset, count: state.consent.visible.count,
                      visible: consentVisibleRows(state)) { return [] }
        if command == .toggleHandled {
            let selected = state.consent.selected?.notificationUUID
            state.consent.includeHandled.toggle()
            keepConsentSelection(selected, &state)
            return []
        }
        guard let withdrawal = state.consent.selected else { return [] }
        switch command {
        case .open:
            guard let otid = withdrawal.originalTransactionIds.first else {
                flash("no stored purchase carries app transaction \(withdrawal.appTransactionId ?? "?"): "
                      + "subdesk consent looks it up at Apple with the App Store Server API key settings", &state)
                return []
            }
            if withdrawal.originalTransactionIds.count > 1 {
                flash("it concerns \(withdrawal.originalTransactionIds.count) subscriptions: "
                      + withdrawal.originalTransactionIds.joined(separator: ", ") + "; opened the first", &state)
            }
            return openDetail(otid, &state)
        case .markConsentHandled:
            if let handled = withdrawal.handled {
                flash("already handled by \(handled.operatorName) \(state.time.minute(handled.at)) \(state.time.label)", error: true, &state)
                return []
            }
            state.prompt = PromptState(kind: .consentReason(notificationUUID: withdrawal.notificationUUID))
            return []
        default:
            return []
        }
    }

    /// The reason typed for `h`: refused when empty (the audit entry must say what was done),
    /// else a y/n question before anything is recorded.
    static func askToMarkConsentHandled(_ uuid: String, reason: String, _ state: inout DashboardState) -> [DashboardEffect] {
        let trimmed = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            flash("not marked: a reason is required (say what was done for the family); h to try again", error: true, &state)
            return []
        }
        let subject = state.consent.entries.first { $0.notificationUUID == uuid }
        let concerns = subject.map { w in
            w.originalTransactionIds.isEmpty ? "no stored purchase" : w.originalTransactionIds.joined(separator: ", ")
        } ?? uuid
        state.confirmation = DashboardState.Confirmation(
            // The y/n comes first: a long reason is cut at the screen's edge, the question never.
            question: "Mark handled? y: yes, any other key: no · consent withdrawal for \(concerns): \(trimmed)",
            onYes: .record(.markConsentHandled(notificationUUID: uuid, reason: trimmed)))
        return []
    }
}
