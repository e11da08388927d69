import SubscriptionCore

/// What a key asks for, independent of which key it was.
///
/// The reducer acts on commands, never on raw keys, so rebinding a key is a
/// change to the key table alone.
public enum KeyCommand: Hashable, Sendable {
    // Moving
    case up, down, pageUp, pageDown, top, bottom
    /// Enter: open the selected row, or expand the selected timeline line.
    case open
    case back
    case quit
    case help
    case commandLine
    /// `/`: filter the current list.
    case filter
    case cycleZone
    /// `y`: put the selected row's id on the terminal's clipboard (OSC 52).
    case copyId

    // Subscriber detail: operator actions, both audited
    case revalidate
    case override

    // Refund requests
    /// `a`: send the suggested answer for the selected request (confirmed).
    case answerRefund

    // Consent withdrawals
    /// `h`: mark the selected withdrawal handled, with a reason (confirmed, audited).
    case markConsentHandled
    /// `a`: show handled withdrawals too, or only open ones.
    case toggleHandled

    // Retention messaging
    /// Tab: the report, or the console's messages, images and default messages.
    case switchRetentionPane
    /// `e`: the console's environment, Production or Sandbox.
    case cycleRetentionEnvironment
    /// `u`: read Apple's message and image lists, noting their review states.
    case refreshRetention
    /// `d`: delete the selected message or image at Apple (confirmed, audited).
    case deleteRetentionContent
    /// `m`: make the selected APPROVED message a default, for a product and locale (confirmed, audited).
    case makeRetentionDefault
    /// `t`: run Apple's performance test of the sandbox real-time URL (confirmed, audited).
    case retentionPerformanceTest

    // Subscribers
    /// A digit key: 1–5 pick a status, 0 shows all.
    case statusDigit
    case cycleStatus
    case toggleSort
    case reverseSort

    // Feed
    case pause

    // Daily counts
    case previousMetric, nextMetric
    /// Move the day columns sideways within the range.
    case earlierDays, laterDays
    case earlierRange, laterRange
    case cycleSegment
    /// Days, weeks or months per column; on the cohorts, month or week cohorts.
    case cyclePeriod

    // Cohorts
    /// Retention, realized LTV, trial conversion.
    case cycleCohortMetric
    /// Show earlier or later period columns of the triangle.
    case columnsLeft, columnsRight
}

extension KeyCommand {
    /// What the command writes to the store, so a login that may not is told before a dialog opens.
    public var write: StoreWrite? {
        switch self {
        case .revalidate: return .revalidation
        case .override: return .overrides
        case .answerRefund: return .refundAnswers
        case .markConsentHandled: return .consentHandling
        case .refreshRetention, .deleteRetentionContent, .makeRetentionDefault, .retentionPerformanceTest: return .retentionConsole
        default: return nil
        }
    }
}
