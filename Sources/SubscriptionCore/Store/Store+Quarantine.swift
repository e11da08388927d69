import Foundation

extension Store {
    // MARK: Quarantine and intake log

    /// Keeps a rejected body. The same body refused for the same reason again (a retrying
    /// sender, a flood of identical junk) is counted on its first entry, not stored again.
    /// - Parameters:
    ///   - body: what is kept of the body: all of it, or a prefix when `trueLength` is larger.
    ///   - trueLength: the body's length when `body` is only a prefix.
    ///   - budgetBytes: the most body bytes the quarantine keeps in all; past it, only the
    ///     digest, length and count of a new body are kept.
    @discardableResult
    public func quarantine(body: Data, reason: String, kind: RejectionClass, source: String?, receivedDate: Millis, bodySHA256: String,
                           trueLength: Int? = nil, budgetBytes: Int64? = nil,
                           bundleId: String? = nil) throws -> (id: Int64, bodyKept: Bool) {
        if let seen = try db.first("""
            SELECT id FROM quarantine WHERE body_sha256 = ? AND resolved_ms IS NULL AND reason = ? ORDER BY id LIMIT 1
            """, [bodySHA256, reason], { $0.int64(0) }) {
            try db.run("UPDATE quarantine SET times_seen = times_seen + 1, last_seen_ms = ?, source = ? WHERE id = ?",
                       [receivedDate, source, seen])
            return (seen, true)
        }
        let kept = body
        if let budgetBytes, try quarantineKeptBytes() + Int64(body.count) > budgetBytes {
            // Past the budget a new body keeps nothing of itself, so a row for each would still
            // grow the store with every request: they are counted on one row instead.
            return (try countPastBudget(reason: reason, kind: kind, source: source, receivedDate: receivedDate,
                                        bytes: trueLength ?? body.count), false)
        }
        try db.run("""
            INSERT INTO quarantine (received_ms, reason, reason_kind, body, body_sha256, source, body_bytes, times_seen, last_seen_ms,
                bundle_id)
            VALUES (?,?,?,?,?,?,?,1,?,?)
            """, [receivedDate, reason, kind.rawValue, kept, bodySHA256, source, trueLength ?? body.count, receivedDate, bundleId])
        return (try db.lastInsertRowID(), kept.count == body.count)
    }

    /// What stands for a body's digest on the row that counts bodies refused past the budget.
    static let pastBudgetDigest = "past-budget"

    /// Counts one more body refused past the budget on the row that counts them (times
    /// seen, their bytes, the latest reason and sender); its id.
    private func countPastBudget(reason: String, kind: RejectionClass, source: String?, receivedDate: Millis, bytes: Int) throws -> Int64 {
        let summary = "past the quarantine budget: refused bodies counted here, not kept; the latest: "
            + String(reason.prefix(200))
        if let row = try db.first("""
            SELECT id FROM quarantine WHERE body_sha256 = ? AND resolved_ms IS NULL ORDER BY id LIMIT 1
            """, [Store.pastBudgetDigest], { $0.int64(0) }) {
            try db.run("""
                UPDATE quarantine SET times_seen = times_seen + 1, body_bytes = body_bytes + ?, last_seen_ms = ?, source = ?,
                    reason = ?, reason_kind = ? WHERE id = ?
                """, [bytes, receivedDate, source, summary, kind.rawValue, row])
            return row
        }
        try db.run("""
            INSERT INTO quarantine (received_ms, reason, reason_kind, body, body_sha256, source, body_bytes, times_seen, last_seen_ms)
            VALUES (?,?,?,?,?,?,?,1,?)
            """, [receivedDate, summary, kind.rawValue, Data(), Store.pastBudgetDigest, source, bytes, receivedDate])
        return try db.lastInsertRowID()
    }

    /// The body bytes the quarantine keeps, resolved entries included.
    public func quarantineKeptBytes() throws -> Int64 {
        try db.first("SELECT coalesce(sum(length(body)), 0) FROM quarantine") { $0.int64(0) } ?? 0
    }

    /// Entries whose body was not kept whole (over the size limit, or past the budget).
    public func quarantineEntriesWithoutWholeBody() throws -> Int {
        try db.first("SELECT count(*) FROM quarantine WHERE length(body) < body_bytes") { $0.int(0) } ?? 0
    }

    /// Deletes quarantine entries last seen before `before`; returns how many and their body bytes.
    public func purgeQuarantine(before: Millis) throws -> (entries: Int, bytes: Int64) {
        let predicate = "coalesce(last_seen_ms, received_ms) < ?"
        let bytes = try db.first("SELECT coalesce(sum(length(body)), 0) FROM quarantine WHERE \(predicate)", [before]) { $0.int64(0) } ?? 0
        let entries = try db.run("DELETE FROM quarantine WHERE \(predicate)", [before])
        return (entries, bytes)
    }

    /// Quarantined bodies, newest first; resolved ones only when asked; with `app`, those
    /// naming its bundle id.
    public func quarantined(limit: Int = 100, includeResolved: Bool = false, ids: [Int64]? = nil,
                            app: AppScope? = nil) throws -> [QuarantineEntry] {
        var sql = """
            SELECT id, received_ms, reason, body, source, resolved_ms, resolution, coalesce(body_bytes, length(body)),
                times_seen, coalesce(last_seen_ms, received_ms), reason_kind, bundle_id FROM quarantine WHERE true
            """
        var values: [SQLBindable?] = []
        if !includeResolved { sql += " AND resolved_ms IS NULL" }
        if let ids {
            sql += " AND id IN (\(ids.map { _ in "?" }.joined(separator: ",")))"
            values += ids.map { $0 as SQLBindable? }
        }
        let own = Store.appCondition(app)
        sql += own.sql
        values += own.values
        values.append(limit)
        return try db.rows(sql + " ORDER BY id DESC LIMIT ?", values) { r in
            QuarantineEntry(id: r.int64(0), receivedDate: r.int64(1), reason: r.string(2), body: r.data(3),
                            source: r.optionalString(4), resolved: r.optionalInt64(5), resolution: r.optionalString(6),
                            bodyBytes: r.int(7), timesSeen: r.int(8), lastSeen: r.int64(9),
                            kind: RejectionClass(rawValue: r.string(10)) ?? .other, bundleId: r.optionalString(11))
        }
    }

    public func resolveQuarantine(id: Int64, resolution: String, at: Millis) throws {
        try db.run("UPDATE quarantine SET resolved_ms = ?, resolution = ? WHERE id = ?", [at, resolution, id])
    }

    /// Quarantined bodies not yet resolved by a replay.
    public func quarantineCount() throws -> Int {
        try db.first("SELECT count(*) FROM quarantine WHERE resolved_ms IS NULL") { $0.int(0) } ?? 0
    }

    /// Logs one intake outcome and counts it under `bundleId`, the app the body was signed
    /// for (nil when it could not be read).
    public func logIntake(_ e: IntakeLogEntry, app bundleId: String? = nil) throws {
        try db.run("""
            INSERT INTO intake_log (received_ms, result, notification_uuid, type, subtype,
                original_transaction_id, product_id, environment, detail, source, reason_kind) VALUES (?,?,?,?,?,?,?,?,?,?,?)
            """, [e.receivedDate, e.result.rawValue, e.notificationUUID, e.type, e.subtype,
                  e.originalTransactionId, e.productId, e.environment, e.detail, e.source, e.rejection?.rawValue])
        try countIntake(e, app: bundleId)
    }

    /// Adds one outcome to `intake_counts`, the counters the on-call metrics read. Called for
    /// every body intake answers, logged or not (a flood past the quarantine's budget logs
    /// one line a minute but counts every body), under its app (`bundleId`; '' unknown).
    func countIntake(_ e: IntakeLogEntry, app bundleId: String?) throws {
        let key = IntakeCountKey(bundleId: bundleId ?? "", environment: e.environment ?? "", type: e.type ?? "",
                                 outcome: e.result.rawValue, reason: e.result == .rejected ? (e.rejection ?? .other).rawValue : "")
        guard db.isInTransaction else { return try writeIntakeCount(key, count: 1, last: e.receivedDate) }
        let held = pendingIntakeCounts[key] ?? (0, e.receivedDate)
        pendingIntakeCounts[key] = (held.count + 1, max(held.last, e.receivedDate))
    }

    func writeIntakeCount(_ key: IntakeCountKey, count: Int, last: Millis) throws {
        let latest = "\(db.dialect.greatest)(intake_counts.last_ms, excluded.last_ms)"
        try db.run("""
            INSERT INTO intake_counts (bundle_id, environment, type, outcome, reason, count, last_ms) VALUES (?,?,?,?,?,?,?)
            ON CONFLICT (bundle_id, environment, type, outcome, reason)
            DO UPDATE SET count = intake_counts.count + excluded.count, last_ms = \(latest)
            """, [key.bundleId, key.environment, key.type, key.outcome, key.reason, count, last])
    }

    /// Whether a refusal logged at or after `since` says `mark` (through the time index).
    func hasIntakeLine(containing mark: String, since: Millis) throws -> Bool {
        try db.first("""
            SELECT 1 FROM intake_log WHERE received_ms >= ? AND result = 'rejected' AND detail LIKE ? LIMIT 1
            """, [since, "%" + mark + "%"]) { _ in true } ?? false
    }

    /// The app an intake log line is about: its notification's bundle id, else its
    /// subscription's (each found by its key); a refused body names neither.
    static let intakeLogApp = """
        coalesce((SELECT n.bundle_id FROM notifications n WHERE n.notification_uuid = l.notification_uuid),
            (SELECT s.bundle_id FROM subscriptions s WHERE s.original_transaction_id = l.original_transaction_id))
        """

    /// How far back among the newest intake lines a read for one app looks: each line's app
    /// is found through its notification or subscription, so a quiet app's read of a long
    /// log stays bounded.
    public static let appIntakeScan: Int64 = 50_000

    /// The id of the newest intake line (0 with none): how far a read has looked.
    public func newestIntakeLogId() throws -> Int64 {
        try db.first("SELECT coalesce(max(id), 0) FROM intake_log") { $0.int64(0) } ?? 0
    }

    /// Intake outcomes newer than `afterId`, newest first; with `app`, those about its
    /// notifications and subscriptions among the newest `appIntakeScan` lines.
    public func intakeLog(afterId: Int64 = 0, limit: Int = 200, app: AppScope? = nil) throws -> [IntakeLogEntry] {
        let own = Store.appCondition(app)
        let afterId = app == nil ? afterId : max(afterId, try newestIntakeLogId() - Store.appIntakeScan)
        return try db.rows("""
            SELECT * FROM (SELECT l.id, l.received_ms, l.result, l.notification_uuid, l.type, l.subtype, l.original_transaction_id,
                l.product_id, l.environment, l.detail, l.source, l.reason_kind, \(Store.intakeLogApp) AS bundle_id
                FROM intake_log l WHERE l.id > ?) AS logged WHERE true\(own.sql) ORDER BY id DESC LIMIT ?
            """, [afterId] + own.values + [limit]) { r in
            var entry = IntakeLogEntry(id: r.int64(0), receivedDate: r.int64(1),
                                       result: IntakeLogEntry.Result(rawValue: r.string(2)) ?? .rejected,
                                       notificationUUID: r.optionalString(3), type: r.optionalString(4),
                                       subtype: r.optionalString(5), originalTransactionId: r.optionalString(6),
                                       productId: r.optionalString(7), environment: r.optionalString(8), detail: r.optionalString(9),
                                       source: r.optionalString(10), rejection: r.optionalString(11).flatMap(RejectionClass.init(rawValue:)))
            entry.bundleId = r.optionalString(12)
            return entry
        }
    }

    /// Count of intake outcomes per minute over the last `minutes` minutes ending at `now`,
    /// oldest first; with `app`, of the lines about it.
    public func intakeRate(minutes: Int, now: Millis, app: AppScope? = nil) throws -> [Int] {
        let start = now - Millis(minutes) * 60_000
        var buckets = Array(repeating: 0, count: minutes)
        let own = Store.appCondition(app)
        let lines = app == nil ? "intake_log"
            : "(SELECT l.received_ms, \(Store.intakeLogApp) AS bundle_id FROM intake_log l WHERE l.received_ms >= ? AND l.received_ms < ?) AS logged"
        try db.query("""
            SELECT (received_ms - ?) / 60000 AS bucket, count(*) FROM \(lines)
            WHERE received_ms >= ? AND received_ms < ?\(own.sql) GROUP BY bucket
            """, [start] + (app == nil ? [] : [start, now]) + [start, now] + own.values) { r in
            let b = r.int(0)
            if b >= 0 && b < minutes { buckets[b] = r.int(1) }
        }
        return buckets
    }
}
