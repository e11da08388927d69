/// A backfill from Get Notification History, as the store keeps it.
public struct BackfillRun: Equatable, Sendable {
    public var id: Int64
    public var environment: String
    public var since: Millis
    public var until: Millis
    public var onlyFailures: Bool
    public var operatorName: String
    public var started: Millis
    public var finished: Millis?
    /// The pagination token of the next page to ask for: nil before the first page (when
    /// `pages` is 0) and after the last.
    public var nextPage: String?
    public var pages: Int
    public var new: Int
    public var duplicates: Int
    public var rejected: Int
    /// The app it asked about (its bundle id); nil for a run of an earlier subdesk, or of a
    /// configuration that names no bundle id.
    public var bundleId: String? = nil

    public var isFinished: Bool { finished != nil }
}

/// A notification Apple says it sent that first reached the store through a backfill.
public struct DeliveryGap: Equatable, Sendable {
    public var notificationUUID: String
    public var backfillRun: Int64
    public var sendAttempts: [SendAttempt]
    public var found: Millis
    public var type: String?
    public var subtype: String?
    public var originalTransactionId: String?
    public var signedDate: Millis?
    /// The bundle id the notification was signed for.
    public var bundleId: String? = nil
}

extension Store {
    static let backfillColumns = """
        id, environment, since_ms, until_ms, only_failures, operator, started_ms, finished_ms, next_page, pages,
        new, duplicates, rejected, bundle_id
        """

    static func backfillRun(_ r: SQLRow) -> BackfillRun {
        BackfillRun(id: r.int64(0), environment: r.string(1), since: r.int64(2), until: r.int64(3), onlyFailures: r.bool(4),
                    operatorName: r.string(5), started: r.int64(6), finished: r.optionalInt64(7), nextPage: r.optionalString(8),
                    pages: r.int(9), new: r.int(10), duplicates: r.int(11), rejected: r.int(12), bundleId: r.optionalString(13))
    }

    public func startBackfill(environment: String, since: Millis, until: Millis, onlyFailures: Bool,
                              operatorName: String, now: Millis, bundleId: String? = nil) throws -> BackfillRun {
        try write {
            try db.run("""
                INSERT INTO backfill_runs (environment, since_ms, until_ms, only_failures, operator, started_ms, bundle_id)
                VALUES (?,?,?,?,?,?,?)
                """, [environment, since, until, onlyFailures, operatorName, now, bundleId])
            return try backfillRun(id: try db.lastInsertRowID())!
        }
    }

    public func backfillRun(id: Int64) throws -> BackfillRun? {
        try db.first("SELECT \(Store.backfillColumns) FROM backfill_runs WHERE id = ?", [id], Store.backfillRun)
    }

    /// The newest backfill that did not finish, to resume.
    public func unfinishedBackfill() throws -> BackfillRun? {
        try db.first("SELECT \(Store.backfillColumns) FROM backfill_runs WHERE finished_ms IS NULL ORDER BY id DESC LIMIT 1",
                     [], Store.backfillRun)
    }

    /// Newest first.
    public func backfillRuns(limit: Int = 20) throws -> [BackfillRun] {
        try db.rows("SELECT \(Store.backfillColumns) FROM backfill_runs ORDER BY id DESC LIMIT ?", [limit], Store.backfillRun)
    }

    /// Records a page as done: what it found and where the next starts. Called inside the
    /// write that stored the page's notifications, so a run stopped at any point resumes
    /// from the first page not wholly stored.
    public func recordBackfillPage(_ run: Int64, nextPage: String?, new: Int, duplicates: Int, rejected: Int) throws {
        try db.run("""
            UPDATE backfill_runs SET next_page = ?, pages = pages + 1, new = new + ?, duplicates = duplicates + ?,
                rejected = rejected + ? WHERE id = ?
            """, [nextPage, new, duplicates, rejected, run])
    }

    public func finishBackfill(_ run: Int64, now: Millis) throws {
        try write { try db.run("UPDATE backfill_runs SET finished_ms = ?, next_page = NULL WHERE id = ?", [now, run]) }
    }

    public func recordGap(notificationUUID: String, run: Int64, attempts: [SendAttempt], now: Millis) throws {
        try db.run("""
            INSERT INTO delivery_gaps (notification_uuid, backfill_run, send_attempts, found_ms) VALUES (?,?,?,?)
            ON CONFLICT (notification_uuid) DO NOTHING
            """, [notificationUUID, run, SendAttempt.json(attempts), now])
    }

    /// Newest found first, with what the notification was; with `app`, its notifications'.
    public func deliveryGaps(limit: Int = 500, app: AppScope? = nil) throws -> [DeliveryGap] {
        let own: (sql: String, values: [SQLBindable?]) = app.map { (" WHERE " + $0.condition("n.bundle_id"), [$0.bundleId]) } ?? ("", [])
        return try db.rows("""
            SELECT g.notification_uuid, g.backfill_run, g.send_attempts, g.found_ms, n.type, n.subtype,
                n.original_transaction_id, n.signed_ms, n.bundle_id
            FROM delivery_gaps g LEFT JOIN notifications n ON n.notification_uuid = g.notification_uuid\(own.sql)
            ORDER BY g.found_ms DESC, n.signed_ms DESC LIMIT ?
            """, own.values + [limit]) { r in
            DeliveryGap(notificationUUID: r.string(0), backfillRun: r.int64(1), sendAttempts: SendAttempt.parse(r.string(2)),
                        found: r.int64(3), type: r.optionalString(4), subtype: r.optionalString(5),
                        originalTransactionId: r.optionalString(6), signedDate: r.optionalInt64(7), bundleId: r.optionalString(8))
        }
    }

    /// Whether a notification with this UUID is stored.
    public func hasNotification(uuid: String) throws -> Bool {
        try db.first("SELECT 1 FROM notifications WHERE notification_uuid = ?", [uuid]) { _ in true } ?? false
    }
}

extension Store {
    /// When the notification `uuid` was stored, if it is.
    public func notificationReceived(uuid: String) throws -> Millis? {
        try db.first("SELECT received_ms FROM notifications WHERE notification_uuid = ?", [uuid]) { $0.int64(0) }
    }

    /// Notifications of `type` received at or after `since`, oldest first.
    public func notifications(type: NotificationType, receivedSince since: Millis) throws -> [(uuid: String, received: Millis)] {
        try db.rows("""
            SELECT notification_uuid, received_ms FROM notifications WHERE type = ? AND received_ms >= ? ORDER BY received_ms, id
            """, [type.rawValue, since]) { (uuid: $0.string(0), received: $0.int64(1)) }
    }
}

extension Store {
    /// Gives the subscriber `id` an app account token (a UUID), unless another subscriber
    /// already has it.
    public func setAppAccountToken(_ token: String, subscriberId id: Int64) throws {
        try write {
            if let other = try db.first("SELECT id FROM subscribers WHERE app_account_token = ?", [token], { $0.int64(0) }), other != id {
                throw StoreError(operation: "set token", message: "app account token \(token) belongs to subscriber #\(other)", code: 0)
            }
            try db.run("UPDATE subscribers SET app_account_token = ? WHERE id = ?", [token, id])
        }
    }
}
