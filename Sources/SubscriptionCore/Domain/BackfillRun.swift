/// A backfill from Get Notification History, as the store keeps it.
public struct BackfillRun: Equatable, Sendable {
    public var id: Int64
    public var environment: String
    public var since: Millis
    public var until: Millis
    public var onlyFailures: Bool
    public var operatorName: String
    public var started: Millis
    public var finished: Millis?
    /// The pagination token of the next page to ask for: nil before the first page (when
    /// `pages` is 0) and after the last.
    public var nextPage: String?
    public var pages: Int
    public var new: Int
    public var duplicates: Int
    public var rejected: Int
    /// The app it asked about (its bundle id); nil for a run of an earlier subdesk, or of a
    /// configuration that names no bundle id.
    public var bundleId: String? = nil

    public var isFinished: Bool { finished != nil }
}

/// A notification Apple says it sent that first reached the store through a backfill.
public struct DeliveryGap: Equatable, Sendable {
    public var notificationUUID: String
    public var backfillRun: Int64
    public var sendAttempts: [SendAttempt]
    public var found: Millis
    public var type: String?
    public var subtype: String?
    public var originalTransactionId: String?
    public var signedDate: Millis?
    /// The bundle id the notification was signed for.
    public var bundleId: String? = nil
}
