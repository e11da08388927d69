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

    /// The role of a notification by what it means for the customer (its row's tone in
    /// `meanings`): money in, money at risk, access lost, a change; plain for a type the table
    /// does not know.
    public static func role(forNotificationType type: NotificationType?, subtype: NotificationSubtype?,
                            in meanings: NotificationMeanings = .standard) -> StyleRole {
        guard let type, let meaning = meanings[type, subtype] else { return .normal }
        return role(for: meaning.tone)
    }

    /// A notification's role from the type and subtype a log or gap row keeps as text.
    public static func role(forStoredType type: String?, subtype: String?, in meanings: NotificationMeanings = .standard) -> StyleRole {
        role(forNotificationType: type.map(NotificationType.init(rawValue:)), subtype: subtype.map(NotificationSubtype.init(rawValue:)),
             in: meanings)
    }

    public static func role(for tone: NotificationMeaning.Tone) -> StyleRole {
        switch tone {
        case .gain: return .badgeActive
        case .grace: return .badgeGrace
        case .billingRetry: return .badgeBillingRetry
        case .ended: return .badgeExpired
        case .takenBack: return .badgeRevoked
        case .change: return .accent
        case .plain: return .normal
        }
    }

    /// The role of a timeline line: notifications by type, transactions by whether they stand or were taken back.
    public static func role(forTimeline event: TimelineEvent, in meanings: NotificationMeanings = .standard) -> StyleRole {
        switch event.kind {
        case .notification:
            return role(forNotificationType: event.notificationType, subtype: event.notificationSubtype, in: meanings)
        case .purchase, .renewal, .upgrade, .productChange:
            return .success
        case .refund, .revoke:
            return .badgeRevoked
        case .override, .operatorAction:
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
