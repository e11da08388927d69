import SubscriptionCore
import TerminalUI

/// The `o` dialog as a `Dialog`: the subscription's standing, the form, and either what is
/// wrong with it or the question to confirm.
enum OverrideDialogView {
    /// Inside the frame: room at 80 columns for a question naming the subscription, the date and the zone.
    static let width = 72

    static func dialog(_ dialog: OverrideDialogState, state: DashboardState) -> Dialog {
        let time = state.time
        let id = dialog.originalTransactionId
        var body: [String] = []
        if let content = state.detail?.content, state.detail?.originalTransactionId == id {
            let apple = content.report.state
            body.append("Apple says \(apple.status.label), \(apple.entitled ? "entitled" : "not entitled").")
            if let o = content.report.entitlement.override {
                let end = o.until.map { "until \(time.minute($0)) \(time.label)" } ?? "until lifted"
                body.append("Override #\(o.id) in force: \(o.kind.rawValue) \(end), by \(o.operatorName).")
            } else {
                body.append("No override in force.")
            }
        }

        let fields = dialog.fields.map { field -> DialogField in
            switch field {
            case .action:
                return DialogField(label: "Action", value: "◂ \(dialog.action.rawValue) ▸")
            case .overrideNumber:
                return DialogField(label: "Override #", value: dialog.overrideNumber, placeholder: "required: the number to lift")
            case .until:
                return DialogField(label: "Until (\(time.label))", value: dialog.until,
                                   placeholder: dialog.action == .grant ? "required: 2026-12-31 or +7d" : "blank: until lifted")
            case .reason:
                return DialogField(label: "Reason", value: dialog.reason, placeholder: "required, for the audit log")
            }
        }

        let focus: Dialog.Focus
        if dialog.pending != nil {
            focus = .none
        } else {
            switch dialog.focus {
            case .field(let field): focus = dialog.fields.firstIndex(of: field).map(Dialog.Focus.field) ?? .none
            case .confirm: focus = .button(0)
            case .cancel: focus = .button(1)
            }
        }

        let note: String?
        let noteRole: StyleRole
        if let pending = dialog.pending {
            note = Selectors.confirmationQuestion(pending, state)
            noteRole = .warning
        } else {
            note = dialog.error
            noteRole = .error
        }
        let verb = dialog.action.rawValue.prefix(1).uppercased() + dialog.action.rawValue.dropFirst()
        // As wide as the screen allows, and no wider once a message appears, so the form does not
        // jump about as errors come and go; the question and most errors then fit on one line.
        let labelWidth = fields.map { TextWidth.width(of: $0.label) }.max() ?? 0
        return Dialog(title: "Override \(id)", body: body, fields: fields,
                      buttons: dialog.pending == nil ? [verb, "Cancel"] : ["y  yes", "n  no"],
                      focus: focus, note: note, noteRole: noteRole,
                      maximumWidth: width, minimumFieldWidth: width - 2 - labelWidth)
    }

    /// The hint bar while the dialog is open: its keys are not in the key table, so they are named here.
    static func hints(_ dialog: OverrideDialogState) -> [Hint] {
        if dialog.pending != nil { return [Hint("y", "yes, do it"), Hint("n", "back to the form"), Hint(Key.escape, "back")] }
        var hints = [Hint("Tab", "next field")]
        if dialog.focus == .field(.action) { hints.append(Hint("←/→", "action")) }
        hints += [Hint(Key.enter, "next / press button"), Hint(Key.escape, "cancel")]
        return hints
    }
}
