import Foundation

/// Customers' refund requests (`refund_requests`): opened by Apple's CONSUMPTION_REQUEST,
/// answered (or not) with Send Consumption Information, closed by the REFUND or
/// REFUND_DECLINED that follows. The only code that names the table's columns
/// (`store.refundRequests`).
public struct RefundRequestTable {
    let db: any SQLConnection
    /// Where its writes open.
    let transactions: any WriteTransactions

    /// The columns, in the table's order.
    enum Column: Int, StoreColumn {
        case notificationUuid, originalTransactionId, transactionId, environment, requestedMs, answer, answeredBy, answeredMs,
             answerOutcome, missedMs, closedMs, closedBy, closingUuid, bundleId

        func value(in r: RefundRequest) -> SQLBindable? {
            switch self {
            case .notificationUuid: return r.notificationUUID
            case .originalTransactionId: return r.originalTransactionId
            case .transactionId: return r.transactionId
            case .environment: return r.environment
            case .requestedMs: return r.requested
            case .answer: return r.answer
            case .answeredBy: return r.answeredBy
            case .answeredMs: return r.answered
            case .answerOutcome: return r.answerOutcome
            case .missedMs: return r.missed
            case .closedMs: return r.closed
            case .closedBy: return r.closedBy
            case .closingUuid: return r.closingUUID
            case .bundleId: return r.bundleId
            }
        }
    }

    static let table = StoreTable<Column>("refund_requests", key: .notificationUuid)
    static let all = table.selection()

    static func request(_ row: SQLRow) -> RefundRequest {
        let r = all.row(row)
        return RefundRequest(notificationUUID: r.string(.notificationUuid), originalTransactionId: r.optionalString(.originalTransactionId),
                             transactionId: r.optionalString(.transactionId), environment: r.optionalString(.environment),
                             requested: r.int64(.requestedMs), answer: r.optionalString(.answer), answeredBy: r.optionalString(.answeredBy),
                             answered: r.optionalInt64(.answeredMs), answerOutcome: r.optionalString(.answerOutcome),
                             missed: r.optionalInt64(.missedMs), closed: r.optionalInt64(.closedMs), closedBy: r.optionalString(.closedBy),
                             closingUUID: r.optionalString(.closingUuid), bundleId: r.optionalString(.bundleId))
    }

    /// The queue: requests Apple has not decided yet (oldest first, so the nearest deadline
    /// leads), then, with `includeClosed`, decided ones newest first, at most `limit` in all.
    /// With `app`, only the requests about its purchases.
    public func queue(includeClosed: Bool = false, limit: Int = 500, app: AppScope? = nil) throws -> [RefundRequest] {
        let own = Store.appCondition(app)
        var result = try db.rows("""
            SELECT \(Self.all.list) FROM refund_requests WHERE closed_ms IS NULL\(own.sql) ORDER BY requested_ms, notification_uuid LIMIT ?
            """, own.values + [limit], Self.request)
        if includeClosed && result.count < limit {
            result += try db.rows("""
                SELECT \(Self.all.list) FROM refund_requests WHERE closed_ms IS NOT NULL\(own.sql) ORDER BY requested_ms DESC LIMIT ?
                """, own.values + [limit - result.count], Self.request)
        }
        return result
    }

    public func request(uuid: String) throws -> RefundRequest? {
        try db.first("SELECT \(Self.all.list) FROM refund_requests WHERE notification_uuid = ?", [uuid], Self.request)
    }

    /// One subscription's refund requests, newest first.
    public func requests(originalTransactionId otid: String) throws -> [RefundRequest] {
        try db.rows("""
            SELECT \(Self.all.list) FROM refund_requests WHERE original_transaction_id = ? ORDER BY requested_ms DESC
            """, [otid], Self.request)
    }

    /// Keeps what was sent for `uuid` and what Apple said to it.
    public func recordAnswer(uuid: String, answer: String, by operatorName: String, at: Millis, outcome: String) throws {
        try transactions.write {
            try db.run("""
                UPDATE refund_requests SET answer = ?, answered_by = ?, answered_ms = ?, answer_outcome = ? WHERE notification_uuid = ?
                """, [answer, operatorName, at, outcome, uuid])
        }
    }

    /// Notes that `uuid`'s deadline passed unanswered; true when this call noted it (so it
    /// is audited once, whoever notices first).
    public func markMissed(uuid: String, at: Millis) throws -> Bool {
        try transactions.write {
            try db.run("UPDATE refund_requests SET missed_ms = ? WHERE notification_uuid = ? AND missed_ms IS NULL", [at, uuid]) > 0
        }
    }

    /// What the open-requests read selects.
    enum Open: Int, SelectedValues {
        case count, oldest
        var sql: String { self == .count ? "count(*)" : "min(requested_ms)" }
    }

    /// How the answers sent have gone, each a sum over every request.
    enum Answers: Int, SelectedValues {
        case accepted, refused, late, notSent, failed
        var sql: String {
            switch self {
            case .accepted: return "sum(CASE WHEN answer_outcome = 'accepted' THEN 1 ELSE 0 END)"
            case .refused: return "sum(CASE WHEN answer_outcome LIKE 'refused%' THEN 1 ELSE 0 END)"
            case .late:
                return """
                    sum(CASE WHEN requested_ms + ? <= ?
                              AND (closed_ms IS NULL OR closed_ms > requested_ms + ?)
                              AND NOT (answer_outcome IS NOT NULL AND answer_outcome = 'accepted' AND answered_ms <= requested_ms + ?)
                             THEN 1 ELSE 0 END)
                    """
            case .notSent: return "sum(CASE WHEN answer_outcome LIKE 'not sent%' THEN 1 ELSE 0 END)"
            case .failed: return "sum(CASE WHEN answer_outcome LIKE 'failed%' THEN 1 ELSE 0 END)"
            }
        }
    }

    /// The refund requests' part of the on-call reading at `now`: the open ones and their
    /// nearest deadline, those missed in the last day, and how the answers went.
    func read(into r: inout OnCallReading, now: Millis) throws {
        // Open requests are the ones refund_requests_queue finds under closed_ms IS NULL.
        let window = RefundRequest.answerWindow
        try db.query("""
            SELECT \(Open.list) FROM refund_requests
            WHERE closed_ms IS NULL AND requested_ms > ? AND (answer_outcome IS NULL OR answer_outcome <> 'accepted')
            """, [now - window]) { row in
            let open = Open.row(row)
            r.openRefunds = open.int(.count)
            r.nextRefundDeadline = open.optionalInt64(.oldest).map { $0 + window }
        }
        r.refundsMissedLastDay = try db.count("""
            SELECT count(*) FROM refund_requests
            WHERE closed_ms IS NULL AND requested_ms > ? AND requested_ms <= ? AND (answer_outcome IS NULL OR answer_outcome <> 'accepted')
            """, [now - window - 86_400_000, now - window])
        try db.query("SELECT \(Answers.list) FROM refund_requests", [window, now, window, window]) { row in
            let sums = Answers.row(row)
            r.refundAnswersAccepted = sums.optionalInt(.accepted) ?? 0
            r.refundAnswersRefused = sums.optionalInt(.refused) ?? 0
            r.refundAnswersLate = sums.optionalInt(.late) ?? 0
            r.refundAnswersNotSent = sums.optionalInt(.notSent) ?? 0
            r.refundAnswersFailed = sums.optionalInt(.failed) ?? 0
        }
    }

    /// What the last answer read selects: when, and whether Apple took it (accepted or refused).
    enum LastAnswer: Int, SelectedValues {
        case at, answered
        var sql: String {
            self == .at ? "answered_ms" : "CASE WHEN answer_outcome = 'accepted' OR answer_outcome LIKE 'refused%' THEN 1 ELSE 0 END"
        }
    }

    /// The last answer sent to Apple, if any.
    func lastAnswer() throws -> AppleCallRecord? {
        try db.first("""
            SELECT \(LastAnswer.list) FROM refund_requests WHERE answered_ms IS NOT NULL AND answer_outcome IS NOT NULL
            ORDER BY answered_ms DESC LIMIT 1
            """) { row in
            let r = LastAnswer.row(row)
            return AppleCallRecord(at: r.int64(.at), answered: r.int(.answered) == 1, record: .refundAnswer)
        }
    }
}

extension Store {
    /// Customers' refund requests and their answers.
    public var refundRequests: RefundRequestTable { RefundRequestTable(db: db, transactions: self) }
}
