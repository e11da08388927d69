import Foundation
import SubscriptionCore
import TerminalUI

/// `subdesk consent`: consent withdrawals (RESCIND_CONSENT) to act on, and marking one handled.
enum ConsentCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "consent", arguments: "[handle UUID]",
        abstract: "consent withdrawals (RESCIND_CONSENT) to act on, and marking one handled",
        usage: """
        subdesk consent [--all] [--json]
        subdesk consent handle NOTIFICATION_UUID --reason TEXT [--operator NAME]
        """,
        discussion: """
        Lists consent withdrawals not yet handled, newest first (--all: handled ones too). A
        RESCIND_CONSENT means a parent or guardian withdrew consent and Apple stops the app
        from launching for that user: each row names the app transaction (the app download,
        with its platform, download date and version), the subscriptions whose transactions
        carry its appTransactionId, and whether an operator has handled it.

        A withdrawal that no stored purchase matches is resolved at Apple when the App Store
        Server API key settings are there: Get App Transaction Info, then the customer's
        statuses and history asked for by the appTransactionId, verified and stored
        (audited as app_transaction_lookup). Intake itself never asks Apple.

        `handle` marks one handled, with the reason (what was done for the family); audited
        as consent_handled with the notification UUID as its target. A withdrawal is handled once.
        """,
        options: [
            .flag(.all, "also the withdrawals already handled"),
            .value(.reason, "TEXT", "what was done for the family, for the audit log"),
            .operatorName,
        ],
        groups: [.apple],
        action: .consentHandling,
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        let p = context.arguments.positionals
        if p.first == "handle" {
            guard p.count == 2 else { throw UsageError("consent handle takes one notification UUID (see subdesk consent --help)") }
            return try handle(p[1], context)
        }
        guard p.isEmpty else { throw UsageError("unknown consent action \(SafeText.sanitize(p[0])) (handle, or no action to list)") }
        return try list(context)
    }

    static func list(_ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .reading)
        var withdrawals = try ConsentWithdrawal.load(store: store, includeHandled: context.arguments.has(.all), app: try context.appScope())
        if try resolveUnmatched(withdrawals, context) {
            withdrawals = try ConsentWithdrawal.load(store: store, includeHandled: context.arguments.has(.all), app: try context.appScope())
        }
        if context.wantsJSON {
            Output.json(withdrawals.map { $0.jsonObject() })
            return 0
        }
        if withdrawals.isEmpty {
            Output.line(context.arguments.has(.all) ? "no consent withdrawals" : "no consent withdrawals to handle (--all lists handled ones)")
            return 0
        }
        for w in withdrawals { Output.line(describe(w)) }
        return 0
    }

    /// `2026-05-31 00:00 UTC  <uuid>  consent withdrawn  app transaction 71134 · iOS · ...  subscriptions 12345  [open]`
    static func describe(_ w: ConsentWithdrawal) -> String {
        let app = w.appTransaction.map { $0.phrases.joined(separator: " · ") } ?? "app transaction unreadable"
        let subs = w.originalTransactionIds.isEmpty ? "no stored purchase" : "subscriptions " + w.originalTransactionIds.joined(separator: ", ")
        return SafeText.sanitize("\(DateText.minute(w.signedDate)) UTC  \(w.notificationUUID)  \(ConsentWithdrawal.badge)  \(app)  \(subs)  [\(w.statusText)]")
    }

    /// Asks Apple about withdrawals no stored purchase matches, when the key settings are
    /// there; says on stderr what it could not learn. Whether anything was asked.
    static func resolveUnmatched(_ withdrawals: [ConsentWithdrawal], _ context: Context) throws -> Bool {
        let unmatched = withdrawals.filter { $0.originalTransactionIds.isEmpty && $0.appTransactionId != nil }
        guard !unmatched.isEmpty else { return false }
        let revalidator = try context.makeRevalidator(maxConnections: 2)
        guard revalidator.hasServerAPIKey else {
            Output.warn("\(unmatched.count) consent withdrawal\(unmatched.count == 1 ? "" : "s") match no stored purchase; "
                        + "with the App Store Server API key they are looked up at Apple: \(revalidator.configuration.keyPlace.advice)")
            return false
        }
        for w in unmatched {
            guard let id = w.appTransactionId else { continue }
            do {
                // Asked of the app the withdrawal's app transaction was signed for.
                if try revalidator.resolveAppTransaction(id, reason: "consent withdrawal \(w.notificationUUID)",
                                                         app: w.appTransaction?.bundleId) == nil {
                    Output.warn("Apple has no app transaction \(SafeText.sanitize(id)) (consent withdrawal \(w.notificationUUID))")
                }
            } catch let error as RevalidationError {
                Output.warn("app transaction \(SafeText.sanitize(id)) at Apple: \(error.description)")
            }
        }
        return true
    }

    static func handle(_ uuid: String, _ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .existing)
        do {
            let entry = try Operations(store: store, operatorName: context.operatorName)
                .markConsentHandled(uuid, reason: context.arguments.value(.reason) ?? "")
            if context.wantsJSON {
                Output.json(["notificationUUID": uuid, "handled": true, "auditId": entry.id, "operator": entry.operatorName,
                             "at": entry.at, "detail": entry.detail as Any? ?? NSNull()])
            } else {
                Output.line(SafeText.sanitize("consent withdrawal \(uuid) marked handled by \(entry.operatorName) at \(DateText.minute(entry.at)) UTC (audit #\(entry.id)); \(entry.detail ?? "")"))
            }
            return 0
        } catch let e as OperationError {
            if context.wantsJSON { Output.json(["error": e.description]) }
            Output.error(SafeText.sanitize(e.description))
            return 2
        }
    }
}
