/// The screens of the dashboard; the key table says which keys work on which.
public enum ScreenID: String, CaseIterable, Hashable, Sendable {
    case subscribers
    case detail
    case feed
    case daily
    case quarantine
    /// One quarantined body, opened from the quarantine list.
    case quarantineBody = "quarantine-body"
    /// Operator actions, newest first.
    case audit
    /// Notifications Apple sent that first arrived through a backfill.
    case gaps
    /// Customers' refund requests: Apple's deadline, the facts, the answer.
    case refunds
    /// Parents' and guardians' consent withdrawals (RESCIND_CONSENT) to act on.
    case consent
    /// Intake's health: each on-call signal, its limit, and whether it fires.
    case health
    /// The relay: each `[forward NAME]` target's pending, delivered, failed and dead deliveries.
    case forward
    /// Cohorts down, periods since their start across: retention, realized LTV, trial conversion.
    case cohorts
    /// Apple's retention messaging report: the cancellation sheet's views, saves and save rate.
    case retention

    /// The section title the help screen gives this screen's keys.
    public var helpSection: String {
        switch self {
        case .subscribers: return "Subscribers"
        case .detail: return "Subscriber detail"
        case .feed: return "Live feed"
        case .daily: return "Daily counts"
        case .quarantine: return "Quarantine"
        case .quarantineBody: return "Quarantined body"
        case .audit: return "Audit log"
        case .gaps: return "Delivery gaps"
        case .refunds: return "Refund requests"
        case .consent: return "Consent withdrawals"
        case .health: return "On-call health"
        case .forward: return "Forwarding"
        case .cohorts: return "Cohorts"
        case .retention: return "Retention messaging"
        }
    }
}
