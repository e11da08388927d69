import Foundation
import SubscriptionCore
import TerminalUI

enum RevalidateCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "revalidate", arguments: "ID", abstract: "ask Apple for a subscription's state, store it, print what changed",
        usage: "subdesk revalidate ID [--reason TEXT] [--dry-run] [--receipt-file FILE] [--json]",
        discussion: """
        Asks Apple for the subscription's current state, verifies the answer exactly as
        intake verifies notifications, stores it, and prints what changed (status and expiry
        before and after). ID is an originalTransactionId, a transactionId, a user id or an
        appAccountToken; with an API key, also a transaction id the store has never seen.
        The App Store Server API is asked (production first, the sandbox when production
        does not know the id); with no API key, the stored receipt goes to verifyReceipt.
        Every revalidation, failed or not, is written to the audit log.

        Exits 0 when revalidated, 1 when Apple could not be asked or its answer was refused,
        2 for a usage error or an unknown ID.
        """,
        options: [
            .reason,
            .flag(.dryRun, "ask and compare, but store and audit nothing"),
            .value(.receiptFile, "FILE", "send this base64 receipt to verifyReceipt instead"),
        ],
        groups: [.apple],
        action: .revalidation,
        run: run)

    static func run(_ context: Context) throws -> Int32 {
        guard let id = context.arguments.positionals.first, context.arguments.positionals.count == 1 else {
            throw UsageError("revalidate takes exactly one ID (see subdesk revalidate --help)")
        }
        var receipt: String?
        if let file = context.arguments.value(.receiptFile) {
            guard let data = FileManager.default.contents(atPath: file),
                  let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
                throw UsageError("receipt file \(file) cannot be read or is empty")
            }
            receipt = text
        }
        let revalidator = try context.makeRevalidator(maxConnections: 2)
        let result: RevalidationResult
        do {
            result = try revalidator.revalidate(id, reason: context.arguments.value(.reason), receipt: receipt,
                                                dryRun: context.arguments.has(.dryRun))
        } catch let error as RevalidationError {
            let message = "revalidate \(SafeText.sanitize(id)): \(SafeText.sanitize(error.description))"
            Output.error(message)
            let code: Int32
            if case .unknownSubscription = error { code = 2 } else { code = 1 }
            // A script that asked for JSON reads the failure as JSON too, as from every command.
            if context.wantsJSON {
                var object: [String: Any] = ["error": message, "exitCode": Int(code)]
                if let resumeAt = error.rateLimitResumeAt { object["retryAfter"] = DateText.iso(resumeAt) }
                Output.json(object)
            }
            return code
        }
        if context.wantsJSON {
            Output.json(result.jsonObject())
        } else {
            Output.line(render(result))
        }
        if result.disagreesWithApple, let apple = result.appleStatus, let after = result.after {
            Output.warn("Apple reports status \(apple) (\(SubscriptionStatus(rawValue: apple)?.name ?? "unknown")) "
                        + "but the state derived from its data is \(after.status.name)")
        }
        return 0
    }

    static func render(_ r: RevalidationResult) -> String {
        func state(_ s: SubscriptionState?) -> String {
            guard let s else { return "not in the store" }
            let expires = s.expiresDate.map { "expires \(DateText.minute($0)) UTC" } ?? "no expiry"
            return "\(s.status.label) (\(s.entitled ? "entitled" : "not entitled")), \(expires)"
        }
        var lines = ["\(r.dryRun ? "dry run: would revalidate" : "revalidated") \(SafeText.sanitize(r.originalTransactionId)) "
                     + "via \(r.source): \(r.changes.isEmpty ? "no change" : r.outcome.rawValue)"]
        lines.append("  before  \(state(r.before))")
        lines.append("  after   \(state(r.after))")
        for change in r.changes { lines.append("  - \(SafeText.sanitize(change))") }
        if let audit = r.auditId { lines.append("  audit #\(audit)") }
        return lines.joined(separator: "\n")
    }
}
