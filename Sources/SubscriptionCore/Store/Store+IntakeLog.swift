import Foundation

extension Store {
    // MARK: Intake log

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
