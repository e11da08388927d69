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

extension Store {
    static let refundColumns = """
        notification_uuid, original_transaction_id, transaction_id, environment, requested_ms, answer, answered_by, answered_ms,
        answer_outcome, missed_ms, closed_ms, closed_by, closing_uuid, bundle_id
        """

    static func refundRequest(_ r: SQLRow) -> RefundRequest {
        RefundRequest(notificationUUID: r.string(0), originalTransactionId: r.optionalString(1), transactionId: r.optionalString(2),
                      environment: r.optionalString(3), requested: r.int64(4), answer: r.optionalString(5), answeredBy: r.optionalString(6),
                      answered: r.optionalInt64(7), answerOutcome: r.optionalString(8), missed: r.optionalInt64(9),
                      closed: r.optionalInt64(10), closedBy: r.optionalString(11), closingUUID: r.optionalString(12),
                      bundleId: r.optionalString(13))
    }

    /// The queue: requests Apple has not decided yet (oldest first, so the nearest deadline
    /// leads), then, with `includeClosed`, decided ones newest first, at most `limit` in all.
    /// With `app`, only the requests about its purchases.
    public func refundRequests(includeClosed: Bool = false, limit: Int = 500, app: AppScope? = nil) throws -> [RefundRequest] {
        let own = Store.appCondition(app)
        var result = try db.rows("""
            SELECT \(Store.refundColumns) FROM refund_requests WHERE closed_ms IS NULL\(own.sql) ORDER BY requested_ms, notification_uuid LIMIT ?
            """, own.values + [limit], Store.refundRequest)
        if includeClosed && result.count < limit {
            result += try db.rows("""
                SELECT \(Store.refundColumns) FROM refund_requests WHERE closed_ms IS NOT NULL\(own.sql) ORDER BY requested_ms DESC LIMIT ?
                """, own.values + [limit - result.count], Store.refundRequest)
        }
        return result
    }

    public func refundRequest(uuid: String) throws -> RefundRequest? {
        try db.first("SELECT \(Store.refundColumns) FROM refund_requests WHERE notification_uuid = ?", [uuid], Store.refundRequest)
    }

    /// One subscription's refund requests, newest first.
    public func refundRequests(originalTransactionId otid: String) throws -> [RefundRequest] {
        try db.rows("""
            SELECT \(Store.refundColumns) FROM refund_requests WHERE original_transaction_id = ? ORDER BY requested_ms DESC
            """, [otid], Store.refundRequest)
    }

    /// Keeps what was sent for `uuid` and what Apple said to it.
    public func recordRefundAnswer(uuid: String, answer: String, by operatorName: String, at: Millis, outcome: String) throws {
        try write {
            try db.run("""
                UPDATE refund_requests SET answer = ?, answered_by = ?, answered_ms = ?, answer_outcome = ? WHERE notification_uuid = ?
                """, [answer, operatorName, at, outcome, uuid])
        }
    }

    /// Notes that `uuid`'s deadline passed unanswered; true when this call noted it (so it
    /// is audited once, whoever notices first).
    public func markRefundMissed(uuid: String, at: Millis) throws -> Bool {
        try write {
            try db.run("UPDATE refund_requests SET missed_ms = ? WHERE notification_uuid = ? AND missed_ms IS NULL", [at, uuid]) > 0
        }
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
