import Foundation

extension Store {
    // MARK: Notifications

    /// The body digest of the stored notification with this UUID, if one is stored.
    public func notificationDigest(uuid: String) throws -> String? {
        try db.first("SELECT body_sha256 FROM notifications WHERE notification_uuid = ?", [uuid]) { $0.string(0) }
    }

    /// The UUID of a stored notification whose body is byte-identical to one with this digest.
    public func notificationUUID(bodySHA256: String) throws -> String? {
        try db.first("SELECT notification_uuid FROM notifications WHERE body_sha256 = ? LIMIT 1", [bodySHA256]) { $0.string(0) }
    }

    /// - Parameter pieces: the body's JWS pieces as verification decoded them, when the
    ///   caller has them (the compact form is then built without decoding the body again).
    public func insertNotification(_ n: StoredNotification, pieces: NotificationPieces? = nil) throws {
        let e = n.event
        var format = 0
        var stored = n.body
        // Compact only what decodes back to the very same bytes; the rest is kept as it came.
        if let compact = try pieces.flatMap({ try CompactBody.encode(n.body, pieces: $0, headerId: headerId) })
            ?? CompactBody.encode(n.body, headerId: headerId) {
            format = 1
            stored = compact
        }
        try db.run("""
            INSERT INTO notifications (notification_uuid, version, type, subtype, signed_ms, received_ms,
                original_transaction_id, transaction_id, product_id, environment, ownership, body_sha256, body_format,
                body, source, bundle_id, grace_expires_ms, auto_renew, auto_renew_product_id)
            VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
            """, [e.notificationUUID, e.version, e.type.rawValue, e.subtype?.rawValue, e.signedDate, n.receivedDate,
                  e.originalTransactionId, e.transactionId, e.productId, e.environment, n.ownership, n.bodySHA256,
                  format, stored, n.source, n.bundleId, e.graceExpires, e.autoRenew, e.autoRenewProductId])
    }

    /// The app the newest stored notification about a subscription was signed for, if any says.
    public func notificationBundleId(originalTransactionId otid: String) throws -> String? {
        try db.first("""
            SELECT bundle_id FROM notifications WHERE original_transaction_id = ? AND bundle_id IS NOT NULL
            ORDER BY signed_ms DESC LIMIT 1
            """, [otid]) { $0.optionalString(0) } ?? nil
    }

    private func validateHeaderCache() {
        if headerCacheRollbacks != db.rollbacks {
            headerIds.removeAll()
            headerSegments.removeAll()
            headerCacheRollbacks = db.rollbacks
        }
    }

    /// The id of a JWS header segment, stored on first sight.
    /// Stores JWS header segments not stored yet, each in a write of its own, before a
    /// batch that needs them. Every body signed with one certificate chain carries the
    /// same header: PostgreSQL writers storing side by side would otherwise all insert it
    /// in their batches at once and wait on one another. Outside a write only; SQLite
    /// needs none of this.
    public func registerHeaders(_ segments: [String]) throws {
        guard db.dialect.writersRunSideBySide, !db.isInTransaction else { return }
        validateHeaderCache()
        for segment in segments where headerIds[LongTextKey(text: segment)] == nil {
            try db.run("INSERT OR IGNORE INTO jws_headers (segment) VALUES (?)", [segment])
            if let id = try db.first("SELECT id FROM jws_headers WHERE segment = ?", [segment], { $0.int64(0) }) {
                headerIds[LongTextKey(text: segment)] = id
                headerSegments[id] = segment
            }
        }
    }

    func headerId(_ segment: String) throws -> Int64 {
        validateHeaderCache()
        if let id = headerIds[LongTextKey(text: segment)] { return id }
        let id: Int64
        if let existing = try db.first("SELECT id FROM jws_headers WHERE segment = ?", [segment], { $0.int64(0) }) {
            id = existing
        } else {
            try db.run("INSERT INTO jws_headers (segment) VALUES (?)", [segment])
            id = try db.lastInsertRowID()
        }
        headerIds[LongTextKey(text: segment)] = id
        headerSegments[id] = segment
        return id
    }

    func headerSegment(_ id: Int64) throws -> String {
        validateHeaderCache()
        if let s = headerSegments[id] { return s }
        guard let s = try db.first("SELECT segment FROM jws_headers WHERE id = ?", [id], { $0.string(0) }) else {
            throw StoreError(operation: "read body", message: "JWS header #\(id) is missing", code: 0)
        }
        headerSegments[id] = s
        headerIds[LongTextKey(text: s)] = id
        return s
    }

    /// The body exactly as received, whatever form it is stored in.
    func body(format: Int, stored: Data) throws -> Data {
        switch format {
        case 0: return stored
        case 1: return try CompactBody.decode(stored, header: headerSegment)
        default: throw StoreError(operation: "read body", message: "unknown body format \(format)", code: 0)
        }
    }

    static let eventColumns = "notification_uuid, version, type, subtype, signed_ms, original_transaction_id, transaction_id, product_id, environment"

    static func event(_ r: SQLRow, from i: Int32 = 0) -> NotificationEvent {
        NotificationEvent(notificationUUID: r.string(i), version: r.int(i + 1), type: NotificationType(rawValue: r.string(i + 2)),
                          subtype: r.optionalString(i + 3).map(NotificationSubtype.init(rawValue:)), signedDate: r.int64(i + 4),
                          originalTransactionId: r.optionalString(i + 5), transactionId: r.optionalString(i + 6),
                          productId: r.optionalString(i + 7), environment: r.optionalString(i + 8))
    }

    /// `AND` the condition that a notification is `app`'s, and the value it binds; nothing without one.
    static func appCondition(_ app: AppScope?) -> (sql: String, values: [SQLBindable?]) {
        guard let app else { return ("", []) }
        return (" AND " + app.condition("bundle_id"), [app.bundleId])
    }

    /// Stored notifications received at or after `since`, newest first; with `app`, only its.
    public func notifications(since: Millis? = nil, limit: Int = 100, app: AppScope? = nil) throws -> [StoredNotification] {
        let own = Store.appCondition(app)
        return try db.rows("""
            SELECT \(Store.eventColumns), received_ms, body_sha256, body, source, body_format, bundle_id FROM notifications
            WHERE received_ms >= ?\(own.sql) ORDER BY received_ms DESC, id DESC LIMIT ?
            """, [since ?? 0] + own.values + [limit]) { r in
            StoredNotification(event: Store.event(r), receivedDate: r.int64(9), bodySHA256: r.string(10),
                               body: try body(format: r.int(13), stored: r.data(11)), source: r.optionalString(12),
                               bundleId: r.optionalString(14))
        }
    }

    /// Notifications received at or after `since` with a row id above `afterId`, in the
    /// order they were stored, `count` at a time: an export walks a store of any size in
    /// pages, holding one page in memory.
    public func notificationPage(since: Millis? = nil, afterId: Int64, count: Int,
                                 app: AppScope? = nil) throws -> [(id: Int64, notification: StoredNotification)] {
        let own = Store.appCondition(app)
        return try db.rows("""
            SELECT \(Store.eventColumns), received_ms, body_sha256, body, source, body_format, id FROM notifications
            WHERE received_ms >= ? AND id > ?\(own.sql) ORDER BY id LIMIT ?
            """, [since ?? 0, afterId] + own.values + [count]) { r in
            (r.int64(14), StoredNotification(event: Store.event(r), receivedDate: r.int64(9), bodySHA256: r.string(10),
                                              body: try body(format: r.int(13), stored: r.data(11)), source: r.optionalString(12)))
        }
    }

    /// When the newest notification of `app` was received; nil when it has none.
    public func lastNotificationReceived(app: AppScope) throws -> Millis? {
        let own = Store.appCondition(app)
        return try db.first("SELECT max(received_ms) FROM notifications WHERE 1 = 1\(own.sql)", own.values) { $0.optionalInt64(0) } ?? nil
    }

    /// When `app`'s newest stored notification of each environment was received.
    public func lastNotificationReceivedByEnvironment(app: AppScope) throws -> [String: Millis] {
        let own = Store.appCondition(app)
        var last: [String: Millis] = [:]
        try db.query("""
            SELECT environment, max(received_ms) FROM notifications WHERE environment IS NOT NULL\(own.sql) GROUP BY environment
            """, own.values) { last[$0.string(0)] = $0.int64(1) }
        return last
    }

    /// How many notifications were received at or after `since`.
    public func notificationCount(since: Millis, app: AppScope? = nil) throws -> Int {
        let own = Store.appCondition(app)
        return try db.first("SELECT count(*) FROM notifications WHERE received_ms >= ?\(own.sql)", [since] + own.values) { $0.int(0) } ?? 0
    }

    /// A stored notification's summary, without reading its body.
    public func notificationEvent(uuid: String) throws -> NotificationEvent? {
        try db.first("SELECT \(Store.eventColumns) FROM notifications WHERE notification_uuid = ?", [uuid]) { Store.event($0) }
    }

    /// A stored notification's event and the bundle id it was signed for (nil when unknown).
    func notificationEventAndApp(uuid: String) throws -> (NotificationEvent, String?)? {
        try db.first("SELECT \(Store.eventColumns), bundle_id FROM notifications WHERE notification_uuid = ?", [uuid]) {
            (Store.event($0), $0.optionalString(9))
        }
    }

    public func notification(uuid: String) throws -> StoredNotification? {
        try db.first("""
            SELECT \(Store.eventColumns), received_ms, body_sha256, body, source, body_format FROM notifications
            WHERE notification_uuid = ?
            """, [uuid]) { r in
            StoredNotification(event: Store.event(r), receivedDate: r.int64(9), bodySHA256: r.string(10),
                               body: try body(format: r.int(13), stored: r.data(11)), source: r.optionalString(12))
        }
    }

    public func notificationCount() throws -> Int {
        try db.first("SELECT count(*) FROM notifications") { $0.int(0) } ?? 0
    }
}

extension Store {
    /// Whether a notification with this UUID is stored.
    public func hasNotification(uuid: String) throws -> Bool {
        try db.first("SELECT 1 FROM notifications WHERE notification_uuid = ?", [uuid]) { _ in true } ?? false
    }

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
