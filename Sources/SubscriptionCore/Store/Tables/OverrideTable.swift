import Foundation

/// Operators' overrides of entitlement (`overrides`): a grant or a revoke of one
/// subscription, until a time or lifted, each with who placed it and why. Placed and lifted
/// only beside an audit entry (`Operations`). The only code that names the table's columns
/// (`store.overrides`).
public struct OverrideTable {
    let db: any SQLConnection

    /// The columns, in the table's order.
    enum Column: Int, StoreColumn {
        case id, originalTransactionId, kind, untilMs, reason, `operator`, createdMs, liftedMs, liftedBy, liftReason

        func value(in o: Override) -> SQLBindable? {
            switch self {
            case .id: return o.id
            case .originalTransactionId: return o.originalTransactionId
            case .kind: return o.kind.rawValue
            case .untilMs: return o.until
            case .reason: return o.reason
            case .operator: return o.operatorName
            case .createdMs: return o.created
            case .liftedMs: return o.lifted
            case .liftedBy: return o.liftedBy
            case .liftReason: return o.liftReason
            }
        }
    }

    static let table = StoreTable<Column>("overrides", key: .id)
    /// A new override: never lifted when placed.
    static let insert = table.insert(excluding: [.id, .liftedMs, .liftedBy, .liftReason])
    static let all = table.selection()

    static func override(_ row: SQLRow) -> Override {
        let r = all.row(row)
        return Override(id: r.int64(.id), originalTransactionId: r.string(.originalTransactionId),
                        kind: Override.Kind(rawValue: r.string(.kind)) ?? .grant, until: r.optionalInt64(.untilMs),
                        reason: r.string(.reason), operatorName: r.string(.operator), created: r.int64(.createdMs),
                        lifted: r.optionalInt64(.liftedMs), liftedBy: r.optionalString(.liftedBy), liftReason: r.optionalString(.liftReason))
    }

    /// Places `o` (its id and lift are not written); its id.
    public func insert(_ o: Override) throws -> Int64 {
        try db.run(Self.insert.sql, Self.insert.values(o))
        return try db.lastInsertRowID()
    }

    /// Lifts override `id` unless it is lifted already; whether this call lifted it.
    public func lift(id: Int64, by: String, reason: String, at: Millis) throws -> Bool {
        try db.run("UPDATE overrides SET lifted_ms = ?, lifted_by = ?, lift_reason = ? WHERE id = ? AND lifted_ms IS NULL",
                   [at, by, reason, id]) == 1
    }

    public func find(id: Int64) throws -> Override? {
        try db.first("SELECT \(Self.all.list) FROM overrides WHERE id = ?", [id], Self.override)
    }

    /// Overrides of the given subscriptions (all when nil), newest first.
    public func list(originalTransactionIds: [String]? = nil) throws -> [Override] {
        var sql = "SELECT \(Self.all.list) FROM overrides"
        var values: [SQLBindable?] = []
        if let ids = originalTransactionIds {
            sql += " WHERE original_transaction_id IN (\(SQLText.placeholders(ids.count)))"
            values = ids.map { $0 as SQLBindable? }
        }
        return try db.rows(sql + " ORDER BY created_ms DESC, id DESC", values, Self.override)
    }
}

extension Store {
    /// Operators' overrides of entitlement.
    public var overrides: OverrideTable { OverrideTable(db: db) }
}
