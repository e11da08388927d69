import SubscriptionCore
import TerminalUI

/// Which role draws a status, a notification type or an intake outcome.
///
/// Kept in one place so the list, the detail header, the timeline and the
/// feed colour the same thing the same way.
public enum Styling {
    public static func role(for status: SubscriptionStatus) -> StyleRole {
        switch status {
        case .active: return .badgeActive
        case .expired: return .badgeExpired
        case .billingRetry: return .badgeBillingRetry
        case .gracePeriod: return .badgeGrace
        case .revoked: return .badgeRevoked
        }
    }

    /// The role of a notification by what it means for the customer: money in, money at risk, access lost, a change.
    public static func role(forNotificationType type: String?, subtype: String?) -> StyleRole {
        guard let type else { return .normal }
        switch type {
        case "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "DID_RECOVER", "INITIAL_BUY", "INTERACTIVE_RENEWAL",
             "RENEWAL", "REFUND_REVERSED", "RENEWAL_EXTENDED":
            return .badgeActive
        case "DID_FAIL_TO_RENEW":
            return subtype == "GRACE_PERIOD" ? .badgeGrace : .badgeBillingRetry
        case "EXPIRED", "GRACE_PERIOD_EXPIRED":
            return .badgeExpired
        case "REFUND", "REVOKE", "CANCEL", "REFUND_DECLINED":
            return .badgeRevoked
        case "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "PRICE_INCREASE", "PRICE_INCREASE_CONSENT":
            return .accent
        default:
            return .normal
        }
    }

    /// The role of a timeline line: notifications by type, transactions by whether they stand or were taken back.
    public static func role(forTimelineKind kind: String, detail: String) -> StyleRole {
        switch kind {
        case "notification":
            let key = detail.split(separator: " ").first.map(String.init) ?? ""
            let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
            return role(forNotificationType: parts.first, subtype: parts.count > 1 ? parts[1] : nil)
        case "purchase", "renewal", "upgrade", "product_change":
            return .success
        case "refund", "revoke":
            return .badgeRevoked
        default:
            return .warning
        }
    }

    public static func role(for result: IntakeLogEntry.Result) -> StyleRole {
        switch result {
        case .stored: return .feedStored
        case .duplicate: return .feedDuplicate
        case .rejected: return .feedRejected
        }
    }
}
