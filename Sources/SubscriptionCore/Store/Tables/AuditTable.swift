import Foundation

/// The append-only audit log (`audit_log`): every operator action, who took it (on
/// PostgreSQL the server records the database user, whatever the client says), on what,
/// why and what came of it. Appended in the write that does what it records; never
/// changed (triggers refuse an UPDATE or DELETE, `AuditGuards`). The only code that names the
/// table's columns (`store.audit`).
public struct AuditTable {
    let db: any SQLConnection

    /// The columns, in the table's order.
    enum Column: Int, StoreColumn {
        case id, atMs, `operator`, action, target, reason, outcome, detail

        func value(in e: AuditEntry) -> SQLBindable? {
            switch self {
            case .id: return e.id
            case .atMs: return e.at
            case .operator: return e.operatorName
            case .action: return e.action
            case .target: return e.target
            case .reason: return e.reason
            case .outcome: return e.outcome
            case .detail: return e.detail
            }
        }
    }

    static let table = StoreTable<Column>("audit_log", key: .id)
    static let insert = table.insert(excluding: [.id])
    static let all = table.selection()

    static func entry(_ r: ColumnRow<Column>) -> AuditEntry {
        AuditEntry(id: r.int64(.id), at: r.int64(.atMs), operatorName: r.string(.operator), actionText: r.string(.action),
                   target: r.optionalString(.target), reason: r.optionalString(.reason), outcome: r.string(.outcome),
                   detail: r.optionalString(.detail))
    }

    /// Appends `e` and checks that the row was written: a trigger or rule on the audit log
    /// that drops it (RETURN NULL, DO INSTEAD NOTHING) fails the write, so the action it
    /// records, in the same transaction, is undone rather than left unaudited.
    @discardableResult
    public func append(_ e: AuditEntry) throws -> Int64 {
        let written = try db.run(Self.insert.sql, Self.insert.values(e))
        guard written == 1 else {
            throw StoreError(operation: "audit \(e.action)", message: """
                the audit entry was not written (something on audit_log dropped it; `subdesk doctor` names it): \
                the action it records is undone
                """, code: 0)
        }
        return try db.lastInsertRowID()
    }

    /// Entries at or after `since`, for `targets` when given, oldest first; with `app`, those
    /// whose target is one of its subscriptions or notifications; with `readsApp` (or `app`),
    /// each with the app of its target.
    public func entries(since: Millis? = nil, targets: [String]? = nil, limit: Int = 1000, app: AppScope? = nil,
                        readsApp: Bool = false) throws -> [AuditEntry] {
        let withApp = app != nil || readsApp
        var sql = "SELECT \(Self.all.list)" + (withApp ? ", \(Self.targetApp) AS bundle_id" : "") + " FROM audit_log a WHERE at_ms >= ?"
        var values: [SQLBindable?] = [since ?? 0]
        if let targets {
            sql += " AND target IN (\(SQLText.placeholders(targets.count)))"
            values += targets.map { $0 as SQLBindable? }
        }
        if let app {
            sql = "SELECT * FROM (\(sql)) AS entries WHERE " + app.condition("bundle_id")
            values.append(app.bundleId)
        }
        sql += " ORDER BY id DESC LIMIT ?"
        values.append(limit)
        return try db.rows(sql, values) { row in
            var entry = Self.entry(Self.all.row(row))
            if withApp { entry.bundleId = SelectedApp.row(row, from: Self.all.count).optionalString(.bundleId) }
            return entry
        }.reversed()
    }

    /// The app an entry's target belongs to: the subscription's, else the notification's it names.
    static let targetApp = """
        coalesce((SELECT s.bundle_id FROM subscriptions s WHERE s.original_transaction_id = a.target),
            (SELECT n.bundle_id FROM notifications n WHERE n.notification_uuid = a.target))
        """

    /// How far ahead of `now` an entry may be dated and still be read by `last`: a few
    /// minutes of clock skew between hosts, no more.
    public static let futureToleranceMillis: Int64 = 5 * 60_000

    /// The latest-dated entry of `action` (the last sweep, say), if any, the larger id first
    /// among entries of one millisecond; an entry dated more than `futureToleranceMillis`
    /// after `now` is ignored (one written before migration 23 with a far-future date would
    /// otherwise stay the last forever). With `trusted`, only one whose writer may write that
    /// action (`PostgresRoles.auditWriters`, or the owner): what on-call reads as a fact.
    public func last(action: AuditAction, trusted: Bool = false, now: Int64 = DateText.nowMillis()) throws -> AuditEntry? {
        let writers = trusted ? " AND " + db.dialect.auditWrittenBy(PostgresRoles.auditWriters(of: action)) : ""
        return try db.first("""
            SELECT \(Self.all.list) FROM audit_log
            WHERE action = ? AND at_ms <= ?\(writers) ORDER BY at_ms DESC, id DESC LIMIT 1
            """, [action.rawValue, now + Self.futureToleranceMillis]) { Self.entry(Self.all.row($0)) }
    }

    /// Revalidations that failed since `since`, counted only from the roles that may write them.
    func revalidationFailures(since: Millis) throws -> Int {
        try db.count("""
            SELECT count(*) FROM audit_log WHERE action = ? AND at_ms >= ? AND outcome = 'failed'
              AND \(db.dialect.auditWrittenBy(PostgresRoles.auditWriters(of: .revalidate)))
            """, [AuditAction.revalidate.rawValue, since])
    }

    /// What the last revalidation read selects: when, and whether Apple answered.
    enum LastRevalidation: Int, SelectedValues {
        case at, answered
        var sql: String { self == .at ? "at_ms" : "CASE WHEN outcome = 'failed' THEN 0 ELSE 1 END" }
    }

    /// The last revalidation at or before `now` (and the tolerance), from the roles that may write one.
    func lastRevalidation(now: Millis) throws -> AppleCallRecord? {
        try db.first("""
            SELECT \(LastRevalidation.list) FROM audit_log
            WHERE action = ? AND at_ms <= ? AND \(db.dialect.auditWrittenBy(PostgresRoles.auditWriters(of: .revalidate)))
            ORDER BY at_ms DESC, id DESC LIMIT 1
            """, [AuditAction.revalidate.rawValue, now + Self.futureToleranceMillis]) { row in
            let r = LastRevalidation.row(row)
            return AppleCallRecord(at: r.int64(.at), answered: r.int(.answered) == 1, record: .revalidation)
        }
    }

    /// Who is recorded as acting, given the name an operator gave: on PostgreSQL the database
    /// user (the audit log's trigger records it whatever the client says, and overrides and
    /// lifts must name the same person), elsewhere the name given.
    public func operatorOfRecord(_ given: String) -> String { db.recordedUser ?? given }
}

extension Store {
    /// The append-only log of operator actions.
    public var audit: AuditTable { AuditTable(db: db) }
}
