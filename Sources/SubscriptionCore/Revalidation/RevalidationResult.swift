import Foundation

/// What one revalidation found: the subscription before and after Apple's answer was
/// merged, and which service answered.
public struct RevalidationResult: Sendable {
    /// How the subscription moved, as the sweep counts it.
    public enum Outcome: String, Sendable, CaseIterable {
        /// A new period beyond the stored expiry, and active.
        case renewed
        /// Lost entitlement, or moved to another non-entitled status.
        case expired
        /// Something else changed (renewal preference, grace, billing retry...).
        case changed
        case unchanged
    }

    /// The id the operator gave.
    public var requestedId: String
    public var originalTransactionId: String
    public var source: RevalidationSource
    /// The stored state before (nil when the store had never heard of the subscription).
    public var before: SubscriptionState?
    public var after: SubscriptionState?
    public var outcome: Outcome
    /// One phrase per difference, e.g. `status EXPIRED -> ACTIVE`.
    public var changes: [String]
    /// Transactions of this subscription the store had never seen.
    public var newTransactionIds: [String]
    /// Apple's own status for the subscription (Server API only).
    public var appleStatus: Int?
    /// Every subscription the merge re-derived (a customer's other subscriptions come along).
    public var touched: [String]
    /// Transactions and renewal infos Apple sent, all verified.
    public var transactionCount: Int
    public var renewalCount: Int
    /// The audit entry written with the merge; nil for a dry run.
    public var auditId: Int64?
    public var dryRun: Bool

    static func outcome(before: SubscriptionState?, after: SubscriptionState?) -> Outcome {
        guard let after else { return .unchanged }
        if before == after { return .unchanged }
        if after.status == .active, (after.expiresDate ?? 0) > (before?.expiresDate ?? 0) { return .renewed }
        if !after.entitled, before.map({ $0.entitled || $0.status != after.status }) ?? true { return .expired }
        return .changed
    }

    static func changes(before: SubscriptionState?, after: SubscriptionState?, newTransactionIds: [String]) -> [String] {
        // To the second: a change within the minute must not read as "X -> X".
        func date(_ m: Millis?) -> String { m.map { DateText.second($0) + " UTC" } ?? "none" }
        func yes(_ b: Bool) -> String { b ? "yes" : "no" }
        var out: [String] = []
        switch (before, after) {
        case (nil, let a?):
            out.append("new to the store: \(a.status.label), expires \(date(a.expiresDate))")
        case (let b?, let a?):
            if b.status != a.status { out.append("status \(b.status.label) -> \(a.status.label)") }
            if b.entitled != a.entitled { out.append("entitled \(yes(b.entitled)) -> \(yes(a.entitled))") }
            if b.expiresDate != a.expiresDate { out.append("expires \(date(b.expiresDate)) -> \(date(a.expiresDate))") }
            if b.productId != a.productId { out.append("product \(b.productId) -> \(a.productId)") }
            if b.autoRenewStatus != a.autoRenewStatus {
                out.append("auto-renew \(b.autoRenewStatus ? "on" : "off") -> \(a.autoRenewStatus ? "on" : "off")")
            }
            if b.autoRenewProductId != a.autoRenewProductId {
                out.append("renews to \(b.autoRenewProductId ?? "none") -> \(a.autoRenewProductId ?? "none")")
            }
            if b.gracePeriodExpiresDate != a.gracePeriodExpiresDate {
                out.append("grace until \(date(b.gracePeriodExpiresDate)) -> \(date(a.gracePeriodExpiresDate))")
            }
            if b.isInBillingRetryPeriod != a.isInBillingRetryPeriod {
                out.append("billing retry \(yes(b.isInBillingRetryPeriod)) -> \(yes(a.isInBillingRetryPeriod))")
            }
            if b.expirationIntent != a.expirationIntent {
                out.append("expiration intent \(b.expirationIntent.map(String.init) ?? "none") -> \(a.expirationIntent.map(String.init) ?? "none")")
            }
            if b.latestTransactionId != a.latestTransactionId {
                out.append("latest transaction \(b.latestTransactionId ?? "none") -> \(a.latestTransactionId ?? "none")")
            }
        default:
            break
        }
        if !newTransactionIds.isEmpty {
            let noun = newTransactionIds.count == 1 ? "transaction" : "transactions"
            out.append("\(newTransactionIds.count) new \(noun): \(newTransactionIds.joined(separator: ", "))")
        }
        return out
    }

    /// The audit entry's outcome: the verdict and what changed.
    var auditOutcome: String {
        changes.isEmpty ? "no change" : "\(outcome.rawValue): " + changes.joined(separator: "; ")
    }

    /// The audit entry's detail: where the answer came from and how much it held.
    var auditDetail: String {
        var parts = ["source \(source)", "\(transactionCount) transactions and \(renewalCount) renewal infos verified"]
        if let s = appleStatus {
            parts.append("Apple status \(s) (\(SubscriptionStatus(rawValue: s)?.name ?? "unknown"))")
        }
        let others = touched.filter { $0 != originalTransactionId }
        if !others.isEmpty { parts.append("also re-derived \(others.joined(separator: ", "))") }
        return parts.joined(separator: "; ")
    }

    /// Whether Apple's own status disagrees with the one derived from what it sent.
    public var disagreesWithApple: Bool {
        guard let s = appleStatus, let after else { return false }
        return s != after.status.rawValue
    }

    public func jsonObject() -> [String: Any] {
        func snapshot(_ s: SubscriptionState?) -> Any {
            guard let s else { return NSNull() }
            return ["status": s.status.name, "entitled": s.entitled,
                    "expiresDate": s.expiresDate.map(DateText.iso) as Any? ?? NSNull(),
                    "autoRenewStatus": s.autoRenewStatus,
                    "autoRenewProductId": s.autoRenewProductId as Any? ?? NSNull(),
                    "productId": s.productId,
                    "latestTransactionId": s.latestTransactionId as Any? ?? NSNull()] as [String: Any]
        }
        return [
            "requestedId": requestedId,
            "originalTransactionId": originalTransactionId,
            "source": source.name,
            "environment": source.environment.rawValue,
            "before": snapshot(before),
            "after": snapshot(after),
            "outcome": outcome.rawValue,
            "changes": changes,
            "newTransactionIds": newTransactionIds,
            "appleStatus": appleStatus.map { SubscriptionStatus(rawValue: $0)?.name ?? String($0) } as Any? ?? NSNull(),
            "touched": touched,
            "auditId": auditId as Any? ?? NSNull(),
            "dryRun": dryRun,
        ]
    }
}
