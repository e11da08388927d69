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
}

extension Store {
    /// Customers' refund requests and their answers.
    public var refundRequests: RefundRequestTable { RefundRequestTable(db: db, transactions: self) }
}
