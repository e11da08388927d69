import Foundation
import SubscriptionCore
import TerminalUI

// Operator actions from the detail screen (revalidate, override) and the audit log they write to.
extension DashboardReducer {
    /// Outcomes of operator actions stay up longer than other messages: they are read, not glanced at.
    static let outcomeFlashDuration: Millis = 10_000

    // MARK: - Revalidation

    static func startRevalidation(_ state: inout DashboardState) -> [DashboardEffect] {
        guard let detail = state.detail, detail.content != nil else {
            flash("nothing to revalidate until the subscription has loaded", &state)
            return []
        }
        if let running = state.revalidating {
            flash("already revalidating \(running); one at a time", &state)
            return []
        }
        state.revalidating = detail.originalTransactionId
        state.revalidationStarted = state.now
        return [.revalidate(originalTransactionId: detail.originalTransactionId)]
    }

    static func applyRevalidation(_ result: RevalidationResult, _ state: inout DashboardState) -> [DashboardEffect] {
        let id = result.originalTransactionId
        if state.revalidating == id || state.revalidating == result.requestedId { state.revalidating = nil }
        flash(revalidationSummary(result, state), duration: outcomeFlashDuration, &state)
        return reloadAfterOperation(on: id, &state)
    }

    static func applyRevalidationFailure(_ id: String, _ message: String, _ state: inout DashboardState) -> [DashboardEffect] {
        if state.revalidating == id { state.revalidating = nil }
        flash("revalidation failed\(showsDetail(of: id, state) ? "" : " for \(id)"): \(message)", error: true,
              duration: outcomeFlashDuration, &state)
        // A failure is audited too, so the timeline has a line for it.
        return reloadAfterOperation(on: id, &state)
    }

    /// `revalidated: renewed · EXPIRED → ACTIVE · expires 2026-11-10 09:14 → 2026-12-10 09:14 UTC · via …`:
    /// the verdict and the before/after that support reads first, the source last since it matters least.
    static func revalidationSummary(_ result: RevalidationResult, _ state: DashboardState) -> String {
        let time = state.time
        func status(_ s: SubscriptionState?) -> String { s?.status.label ?? "not stored" }
        func expiry(_ s: SubscriptionState?) -> String { s?.expiresDate.map(time.minute) ?? "none" }
        let id = result.originalTransactionId
        var parts = ["revalidated\(showsDetail(of: id, state) ? "" : " " + id): "
                     + (result.changes.isEmpty ? "no change" : result.outcome.rawValue)]
        let before = status(result.before), after = status(result.after)
        parts.append(before == after ? after : "\(before) → \(after)")
        let was = expiry(result.before), now = expiry(result.after)
        parts.append((was == now ? "expires \(now)" : "expires \(was) → \(now)") + " " + time.label)
        parts.append("via \(result.source)")
        return parts.joined(separator: " · ")
    }

    static func showsDetail(of id: String, _ state: DashboardState) -> Bool {
        state.screen == .detail && state.detail?.originalTransactionId == id
    }

    /// What an operator action changed is in the store now: reload the screen that shows it.
    static func reloadAfterOperation(on id: String, _ state: inout DashboardState) -> [DashboardEffect] {
        if showsDetail(of: id, state) { return [.loadDetail(originalTransactionId: id)] }
        if state.screen == .audit { return [.loadAudit(filter: state.audit.filter)] }
        return []
    }

    // MARK: - Override dialog

    static func openOverrideDialog(_ state: inout DashboardState) -> [DashboardEffect] {
        guard let detail = state.detail, let content = detail.content else {
            flash("the subscription has not loaded yet", &state)
            return []
        }
        // With an override in force, ending it is the likelier errand; its number is filled in either way.
        let inForce = content.report.entitlement.override
        var dialog = OverrideDialogState(originalTransactionId: detail.originalTransactionId,
                                         action: inForce == nil ? .grant : .lift,
                                         overrideNumber: inForce.map { String($0.id) } ?? "")
        // Nothing to lift without an override in force: the dialog offers grant and revoke only.
        dialog.canLift = inForce != nil
        state.overrideDialog = dialog
        return []
    }

    static func handleDialogKey(_ key: Key, _ state: inout DashboardState) -> [DashboardEffect] {
        guard var dialog = state.overrideDialog else { return [] }
        if let pending = dialog.pending {
            switch key {
            case .char("y"), .char("Y"):
                state.overrideDialog = nil
                return [.applyOverride(pending)]
            case .char("n"), .char("N"), .escape:
                dialog.pending = nil
                dialog.focus = .confirm
                state.overrideDialog = dialog
            default:
                break
            }
            return []
        }

        let stops = dialog.stops
        func moveFocus(_ step: Int) {
            let index = stops.firstIndex(of: dialog.focus) ?? 0
            dialog.focus = stops[(index + step + stops.count) % stops.count]
        }
        func cycleAction(_ step: Int) {
            let all = dialog.actions
            let index = all.firstIndex(of: dialog.action) ?? 0
            dialog.action = all[(index + step + all.count) % all.count]
            dialog.error = nil
        }
        func edit(_ change: (inout String) -> Void) {
            guard case .field(let field) = dialog.focus, field != .action else { return }
            switch field {
            case .overrideNumber: change(&dialog.overrideNumber)
            case .until: change(&dialog.until)
            case .reason: change(&dialog.reason)
            case .action: break
            }
            dialog.error = nil
        }

        switch (key, dialog.focus) {
        case (.escape, _):
            state.overrideDialog = nil
            return []
        case (.tab, _), (.down, _):
            moveFocus(1)
        case (.backTab, _), (.up, _):
            moveFocus(-1)
        case (.left, .field(.action)):
            cycleAction(-1)
        case (.right, .field(.action)), (.char(" "), .field(.action)):
            cycleAction(1)
        case (.char(let c), .field(.action)):
            if let action = dialog.actions.first(where: { $0.rawValue.first == c.lowercased().first }) {
                dialog.action = action
                dialog.error = nil
            }
        case (.left, .cancel), (.right, .confirm):
            dialog.focus = dialog.focus == .confirm ? .cancel : .confirm
        case (.right, .cancel), (.left, .confirm):
            break
        case (.enter, .cancel):
            state.overrideDialog = nil
            return []
        case (.enter, .confirm):
            switch checkOverride(dialog, state) {
            case .success(let request):
                dialog.pending = request
                dialog.error = nil
            case .failure(let problem):
                dialog.error = problem.message
                dialog.focus = .field(problem.field)
            }
        case (.enter, .field):
            moveFocus(1)
        case (.char(let c), .field):
            edit { $0.append(c) }
        case (.backspace, .field):
            edit { if !$0.isEmpty { $0.removeLast() } }
        case (.ctrl("u"), .field):
            edit { $0 = "" }
        default:
            break
        }
        state.overrideDialog = dialog
        return []
    }

    /// Why the form cannot be confirmed, and the field to fix.
    struct DialogProblem: Error, Equatable {
        var message: String
        var field: OverrideDialogState.Field
    }

    /// Turns the form into a request `Operations` will accept, or says what is wrong, checking
    /// in field order so the message matches the field the cursor goes to.
    static func checkOverride(_ dialog: OverrideDialogState, _ state: DashboardState) -> Result<OverrideRequest, DialogProblem> {
        let time = state.time
        let id = dialog.originalTransactionId
        let overrides = state.detail?.originalTransactionId == id ? state.detail?.content?.report.overrides ?? [] : []
        let reason = dialog.reason.trimmingCharacters(in: .whitespacesAndNewlines)

        func until(required: Bool) -> Result<Millis?, DialogProblem> {
            let text = dialog.until.trimmingCharacters(in: .whitespaces)
            if text.isEmpty {
                return required ? .failure(DialogProblem(message: "until: a grant needs an end (\(OperatorDate.accepted))", field: .until))
                    : .success(nil)
            }
            guard let date = OperatorDate.parse(text, now: state.now, zone: time.zone) else {
                return .failure(DialogProblem(message: "until: \(text) is not a date (\(OperatorDate.accepted))", field: .until))
            }
            guard date > state.now else {
                return .failure(DialogProblem(message: "until: \(time.minute(date)) \(time.label) has already passed", field: .until))
            }
            return .success(date)
        }

        let kind: OverrideRequest.Kind
        switch dialog.action {
        case .grant:
            switch until(required: true) {
            case .success(let date): kind = .grant(until: date ?? state.now)
            case .failure(let problem): return .failure(problem)
            }
        case .revoke:
            switch until(required: false) {
            case .success(let date): kind = .revoke(until: date)
            case .failure(let problem): return .failure(problem)
            }
        case .lift:
            let open = overrides.filter { $0.lifted == nil }
            let known = open.isEmpty ? "this subscription has none open" : "open: " + open.map { "#\($0.id)" }.joined(separator: ", ")
            let text = dialog.overrideNumber.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else {
                return .failure(DialogProblem(message: "override: which one to lift? (\(known))", field: .overrideNumber))
            }
            guard let number = Int64(text.drop { $0 == "#" }) else {
                return .failure(DialogProblem(message: "override: \(text) is not an override number (\(known))", field: .overrideNumber))
            }
            guard let target = overrides.first(where: { $0.id == number }) else {
                return .failure(DialogProblem(message: "override: #\(number) is not one of this subscription's (\(known))",
                                              field: .overrideNumber))
            }
            guard target.lifted == nil else {
                return .failure(DialogProblem(message: "override: #\(number) was already lifted (\(known))", field: .overrideNumber))
            }
            kind = .lift(overrideId: number)
        }
        guard !reason.isEmpty else {
            return .failure(DialogProblem(message: "reason: required, it goes to the audit log", field: .reason))
        }
        return .success(OverrideRequest(originalTransactionId: id, kind: kind, reason: reason))
    }

    static func applyOverrideResult(_ request: OverrideRequest, _ result: Override, inForce: String,
                                    _ state: inout DashboardState) -> [DashboardEffect] {
        let id = request.originalTransactionId
        let text: String
        switch request.kind {
        case .grant, .revoke:
            text = "override #\(result.id) placed on \(id); \(inForce)"
        case .lift:
            text = "override #\(result.id) lifted from \(id); \(inForce)"
        }
        flash(text, duration: outcomeFlashDuration, &state)
        return reloadAfterOperation(on: id, &state)
    }

    // MARK: - Audit log

    static func auditCommand(_ command: KeyCommand, _ state: inout DashboardState) -> [DashboardEffect] {
        if moveInList(command, &state.audit.selection, &state.audit.scrollOffset, count: state.audit.entries.count,
                      visible: Layout.auditRows(height: state.height)) { return [] }
        switch command {
        case .filter:
            state.prompt = PromptState.filter(replacing: state.audit.filter)
            return []
        case .open:
            guard state.audit.entries.indices.contains(state.audit.selection) else { return [] }
            guard let target = state.audit.entries[state.audit.selection].target else {
                flash("this entry is about no one subscription (a sweep covers many)", &state)
                return []
            }
            return openDetail(target, &state)
        default:
            return []
        }
    }

    static func setAuditFilter(_ text: String, _ state: inout DashboardState) -> [DashboardEffect] {
        resetAudit(filter: text, &state)
        return [.loadAudit(filter: text)]
    }

    /// Rows of another filter would show under this one's name until the answer comes, so they go.
    static func resetAudit(filter: String, _ state: inout DashboardState) {
        guard filter != state.audit.filter else { return }
        state.audit = AuditState()
        state.audit.filter = filter
    }

    static func applyAudit(_ filter: String, _ entries: [AuditEntry], _ state: inout DashboardState) {
        // An answer for a filter since replaced would show the wrong rows.
        guard filter == state.audit.filter else { return }
        replaceKeepingSelection(&state.audit, with: entries, id: \.id, visible: Layout.auditRows(height: state.height))
    }
}
