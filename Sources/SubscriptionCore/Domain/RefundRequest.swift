/// A customer's refund request as the store keeps it: opened by Apple's
/// CONSUMPTION_REQUEST, answered (or not) with Send Consumption Information, closed by the
/// REFUND or REFUND_DECLINED that follows.
public struct RefundRequest: Equatable, Sendable {
    /// Apple wants the consumption information within 12 hours of asking.
    public static let answerWindow: Millis = 12 * 3_600_000

    public var notificationUUID: String
    public var originalTransactionId: String?
    /// The transaction the customer asked to have refunded: the one to answer for.
    public var transactionId: String?
    public var environment: String?
    /// When Apple signed the CONSUMPTION_REQUEST.
    public var requested: Millis
    /// The JSON body last sent to Apple, who sent it, when, and what Apple said.
    public var answer: String?
    public var answeredBy: String?
    public var answered: Millis?
    public var answerOutcome: String?
    public var missed: Millis?
    public var closed: Millis?
    /// `REFUND` or `REFUND_DECLINED`.
    public var closedBy: String?
    public var closingUUID: String?
    /// The app the CONSUMPTION_REQUEST was signed for (its bundle id; nil when a store of an
    /// earlier subdesk could not tell): the app the answer is signed for.
    public var bundleId: String? = nil

    public var deadline: Millis { requested + Self.answerWindow }
    public var isAnswered: Bool { answerOutcome == "accepted" }

    public enum Stage: String, Sendable {
        /// Waiting for an answer, the deadline ahead.
        case open
        /// Apple accepted the answer; its decision is still to come.
        case answered
        /// The deadline passed without an accepted answer; Apple decides without one.
        case missed
        case refunded
        case declined
    }

    /// - Parameter meanings: which closing types refund and which decline.
    public func stage(now: Millis, meanings: NotificationMeanings = .standard) -> Stage {
        switch closedBy.flatMap({ meanings[NotificationType(rawValue: $0), nil]?.effect.refund }) {
        case .refunded: return .refunded
        case .declined: return .declined
        case .requested, nil: break
        }
        if isAnswered { return .answered }
        return now >= deadline ? .missed : .open
    }
}

extension RefundRequest {
    /// `5h12m left`, `missed 2h05m ago`, `answered`, `refunded`: where it stands, in words
    /// that fit a column.
    public func standing(now: Millis) -> String {
        func span(_ ms: Millis) -> String {
            let minutes = max(0, ms) / 60_000
            return minutes >= 60 ? "\(minutes / 60)h\(String(format: "%02d", minutes % 60))m" : "\(minutes)m"
        }
        switch stage(now: now) {
        case .open: return span(deadline - now) + " left"
        case .missed: return "missed " + span(now - deadline) + " ago"
        case .answered: return "answered"
        case .refunded: return "refunded"
        case .declined: return "declined"
        }
    }
}
