/// A subscription's status, numbered as Apple numbers it (Get All Subscription Statuses).
public enum SubscriptionStatus: Int, CaseIterable, Sendable, Codable {
    case active = 1
    case expired = 2
    case billingRetry = 3
    case gracePeriod = 4
    case revoked = 5

    /// The name used in `--json` output and filters.
    public var name: String {
        switch self {
        case .active: return "active"
        case .expired: return "expired"
        case .billingRetry: return "billing_retry"
        case .gracePeriod: return "grace_period"
        case .revoked: return "revoked"
        }
    }

    /// The label for screens.
    public var label: String {
        switch self {
        case .active: return "ACTIVE"
        case .expired: return "EXPIRED"
        case .billingRetry: return "BILLING RETRY"
        case .gracePeriod: return "GRACE PERIOD"
        case .revoked: return "REVOKED"
        }
    }

    public init?(name: String) {
        let n = name.lowercased().replacingOccurrences(of: "-", with: "_")
        switch n {
        case "grace": self = .gracePeriod
        case "retry", "billing": self = .billingRetry
        default:
            guard let s = SubscriptionStatus.allCases.first(where: { $0.name == n }) else { return nil }
            self = s
        }
    }
}
