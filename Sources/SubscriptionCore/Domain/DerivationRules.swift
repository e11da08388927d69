import Foundation

/// The rules the derivation counts by, passed in as the meaning table is
/// (`NotificationMeanings`): `current`, or (the reference test's variant) with one rule
/// turned back to how an earlier subdesk counted, so the test can show it catches each
/// (`SUBDESK_REFERENCE_BREAK=N` in that test), and a migration's test can write a share as
/// the subdesk before it did. No process but a test passes anything but `current`.
public struct DerivationRules: Sendable, Equatable {
    /// The rules an earlier subdesk counted otherwise.
    public enum Rule: Int, Sendable, CaseIterable {
        /// 1: a recovery within grace is a churn and a recovery; 2: a comeback counts in one
        /// period; 3: a prorated refund's money is at the period after; 4: a trial paid for after
        /// billing retry starts as `none`; 5: family-shared access moves money; 6: an upgrade's
        /// purchase refunded in part replaced nothing.
        /// 7: billing retry without grace, recovered where the previous expiry plus the previous
        /// period's length would end, counts as within grace; 8: a grace recovery's
        /// period counts from its purchase; 9: a month-end anniversary is moved on from the kept
        /// expiry; 10: an upgrade whose purchase was refunded in full replaced nothing; 11:
        /// cohort shares hold no `saved` value, as before cohorts were split by it; 12: no
        /// real-time save counts, as before they were.
        case graceRecovery = 1, comebackPeriods, proratedRefundPeriod, trialAfterRetry, familyMoney, upgradeRefundedInPart,
             retryTakenAsGrace, recoveryDuration, monthEndAnchor, upgradeRefundedInFull, cohortsUnsaved, realtimeUnsaved
    }

    /// The rule counted as an earlier subdesk did, if any.
    public let turnedBack: Rule?

    /// The rules as subdesk counts by them.
    public static let current = DerivationRules(turnedBack: nil)

    /// The current rules but `rule`, counted as an earlier subdesk did.
    public static func turningBack(_ rule: Rule?) -> DerivationRules { DerivationRules(turnedBack: rule) }

    /// Whether `rule` is counted as an earlier subdesk did.
    func isTurnedBack(_ rule: Rule) -> Bool { turnedBack == rule }
}
