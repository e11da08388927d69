import Foundation

extension Store {
    /// Each product's subscription group as the stored transactions carry it (the group of
    /// its latest stored transaction that names one): what the retention rules' switch-plan
    /// answers are checked against.
    ///
    /// A seek per product, not a read of every transaction: the products are walked through
    /// the index on (product, purchase, group) (migration 42), the next one after each, and
    /// each one's latest purchase read from its end. The transactions of that purchase time
    /// (one, unless two share a millisecond) come back, and the larger group id wins here,
    /// not by the engine's collation, so both engines give the same answer. The latest
    /// purchase is ordered by purchase and group, as the index is: ordered by purchase alone
    /// PostgreSQL read it backwards through the purchase index instead, filtering.
    ///
    /// Measured on a store of synthetic transactions (six products): reading every
    /// transaction grouped took 3.1 to 4.4 s at 3M on SQLite and 345 ms at 1M on
    /// PostgreSQL; by seeks 8 ms and 1.1 ms. In purchase order it took about a minute at 1M
    /// subscriptions, past serve's statement bound on PostgreSQL.
    public func subscriptionGroups() throws -> [String: String] {
        var latest: [String: String] = [:]
        try db.query(Self.latestGroupsSQL) { row in
            let product = row.string(0), group = row.string(1)
            if let seen = latest[product], seen >= group { return }
            latest[product] = group
        }
        return latest
    }

    static let latestGroupsSQL = """
        WITH RECURSIVE products(product_id) AS (
            SELECT min(product_id) FROM transactions WHERE subscription_group IS NOT NULL
            UNION ALL
            SELECT (SELECT min(t.product_id) FROM transactions t
                    WHERE t.subscription_group IS NOT NULL AND t.product_id > products.product_id)
            FROM products WHERE products.product_id IS NOT NULL)
        SELECT t.product_id, t.subscription_group FROM products p
        JOIN transactions t ON t.product_id = p.product_id AND t.subscription_group IS NOT NULL
            AND t.purchase_ms = (SELECT l.purchase_ms FROM transactions l
                                 WHERE l.product_id = p.product_id AND l.subscription_group IS NOT NULL
                                 ORDER BY l.purchase_ms DESC, l.subscription_group DESC LIMIT 1)
        """
}

/// One real-time retention decision as the store logs it (`retention_decisions`, migration 38).
public struct RetentionDecision: Equatable, Sendable {
    public var requestId: String?
    public var originalTransactionId: String?
    public var appName: String?
    public var rule: String?
    public var answerKind: String?
    public var answerValue: String?
    /// `answered`, `no_rule`, `store_unavailable`, `offer_key_unreadable`, `refused:WHY`.
    public var outcome: String
    public var detail: String?
    public var decidedMs: Millis
    public var micros: Int64

    public init(response: RetentionResponse, decidedMs: Millis, micros: Int64) {
        requestId = response.request?.requestIdentifier
        originalTransactionId = response.request?.originalTransactionId
        appName = response.app
        outcome = response.outcome.key
        switch response.outcome {
        case .answered(let rule, let answer):
            (self.rule, answerKind, answerValue) = (rule, answer.kind, answer.value)
        case .fellBack(_, let rule):
            self.rule = rule
        case .refused(_, let detail):
            self.detail = detail
        }
        self.decidedMs = decidedMs
        self.micros = micros
    }
}

/// The columns of `retention_decisions` but its generated id, in the table's order.
enum RetentionDecisionColumn: Int, StoreColumn {
    case requestId, originalTransactionId, appName, rule, answerKind, answerValue, outcome, detail, decidedMs, micros

    func value(in d: RetentionDecision) -> SQLBindable? {
        switch self {
        case .requestId: return d.requestId
        case .originalTransactionId: return d.originalTransactionId
        case .appName: return d.appName
        case .rule: return d.rule
        case .answerKind: return d.answerKind
        case .answerValue: return d.answerValue
        case .outcome: return d.outcome
        case .detail: return d.detail
        case .decidedMs: return d.decidedMs
        case .micros: return d.micros
        }
    }
}

extension Store {
    static let decisionTable = StoreTable<RetentionDecisionColumn>("retention_decisions", key: .requestId)
    static let decisionInsert = "INSERT INTO retention_decisions (" + decisionTable.names.joined(separator: ", ") + ") VALUES ("
        + decisionTable.names.map { _ in "?" }.joined(separator: ", ") + ")"
    static let decisionSelection = decisionTable.selection()

    /// Logs one decision (intake's connection, in the committer's group).
    public func recordRetentionDecision(_ decision: RetentionDecision) throws {
        try db.run(Store.decisionInsert, Store.decisionTable.values(decision))
        if decision.outcome == RetentionOutcome.answeredKey { hasAnsweredRetentionRequests = true }
    }

    /// The decisions of one subscription, oldest first.
    public func retentionDecisions(originalTransactionId: String) throws -> [RetentionDecision] {
        try db.rows("SELECT \(Store.decisionSelection.list) FROM retention_decisions WHERE original_transaction_id = ? ORDER BY id",
                    [originalTransactionId]) { r in
            var d = RetentionDecision(response: RetentionResponse(status: 0, body: "", outcome: .fellBack(.noRule, rule: nil)),
                                      decidedMs: r.int64(8), micros: r.int64(9))
            (d.requestId, d.originalTransactionId, d.appName, d.rule) = (r.optionalString(0), r.optionalString(1), r.optionalString(2), r.optionalString(3))
            (d.answerKind, d.answerValue, d.outcome, d.detail) = (r.optionalString(4), r.optionalString(5), r.string(6), r.optionalString(7))
            return d
        }
    }

    /// The real-time requests the responder answered for one subscription, oldest first:
    /// what its share of the counts reads a real-time save from (`RealtimeSave`). Asks
    /// nothing while the store holds no answered request (known once one is logged here, or
    /// asked again a second after the last time), so intake pays for the read only in a
    /// store that uses the responder.
    func answeredRetentionRequests(originalTransactionId otid: String) throws -> [RealtimeRetentionAnswer] {
        if !hasAnsweredRetentionRequests {
            let now = DispatchTime.now().uptimeNanoseconds
            if let asked = answeredRetentionRequestsAsked, now - asked < 1_000_000_000 { return [] }
            answeredRetentionRequestsAsked = now
            hasAnsweredRetentionRequests = try db.first("SELECT 1 FROM retention_decisions WHERE outcome = ? LIMIT 1",
                                                        [RetentionOutcome.answeredKey]) { _ in true } ?? false
            guard hasAnsweredRetentionRequests else { return [] }
        }
        return try db.rows("""
            SELECT decided_ms, answer_kind, answer_value FROM retention_decisions
                WHERE original_transaction_id = ? AND outcome = ? ORDER BY decided_ms, id
            """, [otid, RetentionOutcome.answeredKey]) { r -> RealtimeRetentionAnswer? in
            guard let kind = r.optionalString(1).flatMap(RetentionAnswerKind.init(rawValue:)) else { return nil }
            return RealtimeRetentionAnswer(at: r.int64(0), kind: kind, value: r.optionalString(2) ?? "")
        }.compactMap { $0 }
    }
}
