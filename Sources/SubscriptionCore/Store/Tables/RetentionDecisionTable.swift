import Foundation

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

/// Every real-time retention decision the responder made (`retention_decisions`, migration
/// 38): the only code that names the table's columns (`store.retentionDecisions`).
public struct RetentionDecisionTable {
    let db: any SQLConnection
    let memory: RetentionDecisionMemory

    /// The columns but the generated id, in the table's order.
    enum Column: Int, StoreColumn {
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

    static let table = StoreTable<Column>("retention_decisions", key: .requestId)
    static let insert = table.insert()
    static let all = table.selection()
    static let answers = table.selection([.decidedMs, .answerKind, .answerValue])

    /// Logs one decision (intake's connection, in the committer's group).
    public func record(_ decision: RetentionDecision) throws {
        try db.run(Self.insert.sql, Self.insert.values(decision))
        if decision.outcome == RetentionOutcome.answeredKey { memory.hasAnswered = true }
    }

    /// The decisions of one subscription, oldest first.
    public func of(originalTransactionId: String) throws -> [RetentionDecision] {
        try db.rows("SELECT \(Self.all.list) FROM retention_decisions WHERE original_transaction_id = ? ORDER BY id",
                    [originalTransactionId]) { row in
            let r = Self.all.row(row)
            var d = RetentionDecision(response: RetentionResponse(status: 0, body: "", outcome: .fellBack(.noRule, rule: nil)),
                                      decidedMs: r.int64(.decidedMs), micros: r.int64(.micros))
            (d.requestId, d.originalTransactionId, d.appName, d.rule)
                = (r.optionalString(.requestId), r.optionalString(.originalTransactionId), r.optionalString(.appName), r.optionalString(.rule))
            (d.answerKind, d.answerValue, d.outcome, d.detail)
                = (r.optionalString(.answerKind), r.optionalString(.answerValue), r.string(.outcome), r.optionalString(.detail))
            return d
        }
    }

    /// The real-time requests the responder answered for one subscription, oldest first:
    /// what its share of the counts reads a real-time save from (`RealtimeSave`). Asks
    /// nothing while the store holds no answered request (known once one is logged here, or
    /// asked again a second after the last time), so intake pays for the read only in a
    /// store that uses the responder.
    func answered(originalTransactionId otid: String) throws -> [RealtimeRetentionAnswer] {
        if !memory.hasAnswered {
            let now = DispatchTime.now().uptimeNanoseconds
            if let asked = memory.asked, now - asked < 1_000_000_000 { return [] }
            memory.asked = now
            memory.hasAnswered = try db.first("SELECT 1 FROM retention_decisions WHERE outcome = ? LIMIT 1",
                                              [RetentionOutcome.answeredKey]) { _ in true } ?? false
            guard memory.hasAnswered else { return [] }
        }
        return try db.rows("""
            SELECT \(Self.answers.list) FROM retention_decisions
                WHERE original_transaction_id = ? AND outcome = ? ORDER BY decided_ms, id
            """, [otid, RetentionOutcome.answeredKey]) { row -> RealtimeRetentionAnswer? in
            let r = Self.answers.row(row)
            guard let kind = r.optionalString(.answerKind).flatMap(RetentionAnswerKind.init(rawValue:)) else { return nil }
            return RealtimeRetentionAnswer(at: r.int64(.decidedMs), kind: kind, value: r.optionalString(.answerValue) ?? "")
        }.compactMap { $0 }
    }
}

/// Whether the store holds a real-time retention request the responder answered (once
/// true, for good), and when that was last asked while not (`RetentionDecisionTable.answered`).
final class RetentionDecisionMemory {
    var hasAnswered = false
    var asked: UInt64?
}
