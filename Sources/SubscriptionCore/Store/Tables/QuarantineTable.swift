import Foundation

/// The quarantine: every body intake refused, kept with why (the refusal's words and kind),
/// counted again rather than stored again when the same body is refused for the same reason,
/// and resolved when a replay stores it. A budget bounds the body bytes kept: past it, new
/// refusals are counted on one row. The only code that names the `quarantine` table's columns
/// (`store.quarantine`).
public struct QuarantineTable {
    let db: any SQLConnection

    /// The columns, in the table's order.
    enum Column: Int, StoreColumn {
        case id, receivedMs, reason, body, bodySha256, source, resolvedMs, resolution, bodyBytes, timesSeen, lastSeenMs, bundleId,
             reasonKind

        func value(in row: NewRow) -> SQLBindable? {
            switch self {
            case .id, .resolvedMs, .resolution: return nil
            case .receivedMs, .lastSeenMs: return row.received
            case .reason: return row.reason
            case .body: return row.body
            case .bodySha256: return row.digest
            case .source: return row.source
            case .bodyBytes: return row.bytes
            case .timesSeen: return 1
            case .bundleId: return row.bundleId
            case .reasonKind: return row.kind.rawValue
            }
        }
    }

    /// What a newly refused body's row is written from.
    struct NewRow {
        var received: Millis
        var reason: String
        var kind: RejectionClass
        var body: Data
        var digest: String
        var source: String?
        var bytes: Int
        var bundleId: String?
    }

    static let table = StoreTable<Column>("quarantine", key: .id)
    static let insert = table.insert(excluding: [.id])
    /// What an entry is read from (the digest stays in the store).
    static let entry = table.selection(excluding: [.bodySha256])

    /// What stands for a body's digest on the row that counts bodies refused past the budget.
    static let pastBudgetDigest = "past-budget"

    /// Keeps a refused body. The same body refused for the same reason again (a retrying
    /// sender, a flood of identical junk) is counted on its first entry, not stored again.
    /// - Parameters:
    ///   - body: what is kept of the body: all of it, or a prefix when `trueLength` is larger.
    ///   - trueLength: the body's length when `body` is only a prefix.
    ///   - budgetBytes: the most body bytes the quarantine keeps in all; past it, only the
    ///     digest, length and count of a new body are kept.
    @discardableResult
    public func keep(body: Data, reason: String, kind: RejectionClass, source: String?, receivedDate: Millis, bodySHA256: String,
                     trueLength: Int? = nil, budgetBytes: Int64? = nil, bundleId: String? = nil) throws -> (id: Int64, bodyKept: Bool) {
        if let seen = try db.integer("""
            SELECT id FROM quarantine WHERE body_sha256 = ? AND resolved_ms IS NULL AND reason = ? ORDER BY id LIMIT 1
            """, [bodySHA256, reason]) {
            try db.run("UPDATE quarantine SET times_seen = times_seen + 1, last_seen_ms = ?, source = ? WHERE id = ?",
                       [receivedDate, source, seen])
            return (seen, true)
        }
        if let budgetBytes, try keptBytes() + Int64(body.count) > budgetBytes {
            // Past the budget a new body keeps nothing of itself, so a row for each would still
            // grow the store with every request: they are counted on one row instead.
            return (try countPastBudget(reason: reason, kind: kind, source: source, receivedDate: receivedDate,
                                        bytes: trueLength ?? body.count), false)
        }
        let row = NewRow(received: receivedDate, reason: reason, kind: kind, body: body, digest: bodySHA256, source: source,
                         bytes: trueLength ?? body.count, bundleId: bundleId)
        try db.run(Self.insert.sql, Self.insert.values(row))
        return (try db.lastInsertRowID(), true)
    }

    /// Counts one more body refused past the budget on the row that counts them (times
    /// seen, their bytes, the latest reason and sender); its id.
    private func countPastBudget(reason: String, kind: RejectionClass, source: String?, receivedDate: Millis, bytes: Int) throws -> Int64 {
        let summary = "past the quarantine budget: refused bodies counted here, not kept; the latest: "
            + String(reason.prefix(200))
        if let row = try db.integer("""
            SELECT id FROM quarantine WHERE body_sha256 = ? AND resolved_ms IS NULL ORDER BY id LIMIT 1
            """, [Self.pastBudgetDigest]) {
            try db.run("""
                UPDATE quarantine SET times_seen = times_seen + 1, body_bytes = body_bytes + ?, last_seen_ms = ?, source = ?,
                    reason = ?, reason_kind = ? WHERE id = ?
                """, [bytes, receivedDate, source, summary, kind.rawValue, row])
            return row
        }
        let counting = NewRow(received: receivedDate, reason: summary, kind: kind, body: Data(), digest: Self.pastBudgetDigest,
                              source: source, bytes: bytes, bundleId: nil)
        try db.run(Self.insert.sql, Self.insert.values(counting))
        return try db.lastInsertRowID()
    }

    /// The body bytes the quarantine keeps, resolved entries included.
    public func keptBytes() throws -> Int64 {
        try db.integer("SELECT coalesce(sum(length(body)), 0) FROM quarantine") ?? 0
    }

    /// Entries whose body was not kept whole (over the size limit, or past the budget).
    public func entriesWithoutWholeBody() throws -> Int {
        Int(try db.integer("SELECT count(*) FROM quarantine WHERE length(body) < body_bytes") ?? 0)
    }

    /// Deletes the entries last seen before `before`; how many and their body bytes.
    public func purge(before: Millis) throws -> (entries: Int, bytes: Int64) {
        let predicate = "coalesce(last_seen_ms, received_ms) < ?"
        let bytes = try db.integer("SELECT coalesce(sum(length(body)), 0) FROM quarantine WHERE \(predicate)", [before]) ?? 0
        let entries = try db.run("DELETE FROM quarantine WHERE \(predicate)", [before])
        return (entries, bytes)
    }

    /// Refused bodies, newest first; resolved ones only when asked; with `ids`, those; with
    /// `app`, those naming its bundle id.
    public func entries(limit: Int = 100, includeResolved: Bool = false, ids: [Int64]? = nil,
                        app: AppScope? = nil) throws -> [QuarantineEntry] {
        var sql = "SELECT \(Self.entry.list) FROM quarantine WHERE true"
        var values: [SQLBindable?] = []
        if !includeResolved { sql += " AND resolved_ms IS NULL" }
        if let ids {
            sql += " AND id IN (\(SQLText.placeholders(ids.count)))"
            values += ids.map { $0 as SQLBindable? }
        }
        let own = Store.appCondition(app)
        sql += own.sql
        values += own.values
        values.append(limit)
        return try db.rows(sql + " ORDER BY id DESC LIMIT ?", values) { row in
            let r = Self.entry.row(row)
            let body = r.data(.body), received = r.int64(.receivedMs)
            return QuarantineEntry(id: r.int64(.id), receivedDate: received, reason: r.string(.reason), body: body,
                                   source: r.optionalString(.source), resolved: r.optionalInt64(.resolvedMs),
                                   resolution: r.optionalString(.resolution), bodyBytes: r.optionalInt(.bodyBytes) ?? body.count,
                                   timesSeen: r.int(.timesSeen), lastSeen: r.optionalInt64(.lastSeenMs) ?? received,
                                   kind: RejectionClass(rawValue: r.string(.reasonKind)) ?? .other, bundleId: r.optionalString(.bundleId))
        }
    }

    /// Marks an entry resolved (a replay stored its body, or found it a duplicate).
    public func resolve(id: Int64, resolution: String, at: Millis) throws {
        try db.run("UPDATE quarantine SET resolved_ms = ?, resolution = ? WHERE id = ?", [at, resolution, id])
    }

    /// The entries not yet resolved by a replay.
    public func unresolvedCount() throws -> Int {
        Int(try db.integer("SELECT count(*) FROM quarantine WHERE resolved_ms IS NULL") ?? 0)
    }
}

extension Store {
    /// Refused bodies and what became of them.
    public var quarantine: QuarantineTable { QuarantineTable(db: db) }
}
