import Foundation

/// Renewal-date extensions asked of Apple (`renewal_extensions`): one subscription's, or a
/// product's for every active subscriber, with Apple's answer and, for a mass extension,
/// how it completed. The only code that names the table's columns (`store.extensions`).
public struct RenewalExtensionTable {
    let db: any SQLConnection
    /// Where its writes open.
    let transactions: any WriteTransactions

    /// The columns, in the table's order.
    enum Column: Int, StoreColumn {
        case id, requestIdentifier, originalTransactionId, productId, storefronts, days, reasonCode, reason, `operator`, requestedMs,
             outcome, effectiveMs, succeeded, failed, completedMs

        func value(in e: RenewalExtension) -> SQLBindable? {
            switch self {
            case .id: return e.id
            case .requestIdentifier: return e.requestIdentifier
            case .originalTransactionId: return e.originalTransactionId
            case .productId: return e.productId
            case .storefronts: return e.storefronts.isEmpty ? nil : e.storefronts.joined(separator: ",")
            case .days: return e.days
            case .reasonCode: return e.reasonCode
            case .reason: return e.reason
            case .operator: return e.operatorName
            case .requestedMs: return e.requested
            case .outcome: return e.outcome
            case .effectiveMs: return e.effective
            case .succeeded: return e.succeeded
            case .failed: return e.failed
            case .completedMs: return e.completed
            }
        }
    }

    static let table = StoreTable<Column>("renewal_extensions", key: .id)
    static let insert = table.insert(excluding: [.id])
    static let all = table.selection()

    static func renewalExtension(_ row: SQLRow) -> RenewalExtension {
        let r = all.row(row)
        return RenewalExtension(id: r.int64(.id), requestIdentifier: r.string(.requestIdentifier),
                                originalTransactionId: r.optionalString(.originalTransactionId), productId: r.optionalString(.productId),
                                storefronts: r.optionalString(.storefronts).map { $0.split(separator: ",").map(String.init) } ?? [],
                                days: r.int(.days), reasonCode: r.int(.reasonCode), reason: r.string(.reason),
                                operatorName: r.string(.operator), requested: r.int64(.requestedMs), outcome: r.string(.outcome),
                                effective: r.optionalInt64(.effectiveMs), succeeded: r.optionalInt(.succeeded), failed: r.optionalInt(.failed),
                                completed: r.optionalInt64(.completedMs))
    }

    /// Keeps an extension asked of Apple; its id (`e.id` is not written).
    @discardableResult
    public func record(_ e: RenewalExtension) throws -> Int64 {
        try db.run(Self.insert.sql, Self.insert.values(e))
        return try db.lastInsertRowID()
    }

    /// Keeps how a mass extension stands (Apple's status answers).
    public func update(requestIdentifier: String, outcome: String, succeeded: Int?, failed: Int?, completed: Millis?) throws {
        try transactions.write {
            try db.run("""
                UPDATE renewal_extensions SET outcome = ?, succeeded = ?, failed = ?, completed_ms = ? WHERE request_identifier = ?
                """, [outcome, succeeded, failed, completed, requestIdentifier])
        }
    }

    /// Extensions of one subscription (or, with nil, every mass extension), newest first.
    public func list(originalTransactionId: String?, limit: Int = 100) throws -> [RenewalExtension] {
        if let otid = originalTransactionId {
            return try db.rows("""
                SELECT \(Self.all.list) FROM renewal_extensions WHERE original_transaction_id = ? ORDER BY requested_ms DESC LIMIT ?
                """, [otid, limit], Self.renewalExtension)
        }
        return try db.rows("""
            SELECT \(Self.all.list) FROM renewal_extensions WHERE original_transaction_id IS NULL ORDER BY requested_ms DESC LIMIT ?
            """, [limit], Self.renewalExtension)
    }

    public func find(requestIdentifier: String) throws -> RenewalExtension? {
        try db.first("SELECT \(Self.all.list) FROM renewal_extensions WHERE request_identifier = ?", [requestIdentifier],
                     Self.renewalExtension)
    }

    /// Extensions asked of Apple whose outcome is not known yet.
    func pendingCount() throws -> Int {
        try db.count("SELECT count(*) FROM renewal_extensions WHERE outcome = 'pending'")
    }
}

extension Store {
    /// Renewal-date extensions asked of Apple.
    public var extensions: RenewalExtensionTable { RenewalExtensionTable(db: db, transactions: self) }
}
